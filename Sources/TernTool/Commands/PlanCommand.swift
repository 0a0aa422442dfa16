import Foundation
import TernCore
import TernMigration
import TernPostgreSQL
import TernSQLite
import TernStores

/// `tern plan STORE --model MODEL [--to V] [--mapping FILE]… [--json]`: the migration forecast,
/// without touching the store.
struct PlanCommand: Command {
    /// The command's name, arguments and help.
    static let configuration = CommandConfiguration(
        name: "plan",
        abstract: "Shows how a store would migrate to a model version, without touching it.",
        discussion: """
            Finds the model version that wrote the store from its entity hashes, then lists each step
            to the target version (--to, or the current version) with its kind (inferred, mapping or
            none) and its changes. A step that cannot be inferred names the entity, the property and
            the reason, and suggests a mapping; --mapping gives mapping files (JSON, see
            docs/MappingFormat.md) for some steps.

            Without mapping files the plan is one inferred step straight from the store's version
            to the target, as Core Data does. The versions between are walked step by step only
            where --mapping files cover intermediate steps, or, when the direct step cannot be
            inferred, if --order gives the versions' order: Tern never guesses a chain from version
            names. A store already at the target version needs no step.

            Exits 1 when the store cannot migrate, as `tern migrate` would fail: when a step cannot
            be inferred and no mapping was given for it (stderr has the error line and, under it,
            one line per change naming the step, the entity and property, the reason and the
            mapping to write), when no version wrote the store, or when the target is older than
            the store's version (Tern never downgrades). A CI job can run plan alone as a check.

            The first step is checked against the store's data, as Core Data's lightweight
            migration decides from it: a new required attribute or to-one relationship without a
            default is a problem only when the entity has objects, one that becomes required only
            when objects lack it; to-many bounds that tighten, links to objects a relationship can
            no longer hold (dropped) and integers a narrower type cannot hold are listed as
            warnings with their counts ("warning:" lines under the step). Later steps are checked
            when `tern migrate` runs them.

            --json prints {"source": NAME, "destination": NAME, "executable": BOOL, "steps":
            [{"from": NAME, "to": NAME, "kind": "inferred"|"mapping"|"none", "changes": [STRING],
            "problems": [STRING], "warnings": [STRING]}]}. The forecast is the result asked for, so it is printed on stdout
            also when a step cannot run; then "executable" is false, the exit status is 1 and
            stderr has the error lines.
            """,
        arguments: MigrationArguments.definitions + [.json],
        examples: [
            "tern plan Recipes.sqlite --model Recipes.xcdatamodeld",
            "tern plan Events.sqlite --model Events.xcdatamodeld --mapping EventSplit.json --json",
        ])

    /// The store, model, target and mappings.
    var migration: MigrationArguments
    /// Whether to print JSON.
    var json: Bool

    /// Makes the command from its parsed command line.
    init(_ arguments: ParsedArguments) throws(ValidationError) {
        migration = try MigrationArguments(arguments)
        json = arguments.isSet(.json)
    }

    /// Plans the migration and prints it.
    func run(in context: CommandContext) async throws {
        let (store, model, mappings) = try migration.load(in: context)
        let plan: MigrationPlan
        do {
            if store.isPostgreSQL {
                plan = try PostgreSQLMigrator().plan(
                    forStoreAt: store.path, model: model, to: migration.target, mappings: mappings)
            } else {
                plan = try StoreFiles.migrationPlan(forStoreAt: store.url, model: model, to: migration.target, mappings: mappings)
            }
        } catch let error as MigrationError {
            throw MigrationArguments.failure(error, model: model)
        } catch let error as PostgreSQLError {
            throw CommandFailure("cannot read the store at \(store.displayName): \(StoreFile.message(of: error))")
        }
        let failure = Self.failure(of: plan, model: model)
        guard json else {
            if let failure { throw failure }
            context.print(plan.description)
            return
        }
        let document = Self.document(plan)
        if let failure { throw CommandFailure(failure.message, details: failure.details, report: document) }
        context.printJSON(document)
    }

    // MARK: - Rendering

    /// Why the plan cannot run, as `migrate` would fail on it: nil when every step can run.
    ///
    /// - Parameters:
    ///   - plan: The plan.
    ///   - model: The model it was made with, for the hint on `--order`.
    static func failure(of plan: MigrationPlan, model: VersionedModel) -> CommandFailure? {
        do {
            try plan.requireExecutable()
            return nil
        } catch {
            return MigrationArguments.failure(error, model: model)
        }
    }

    /// The forecast as the JSON document `--json` prints.
    static func document(_ plan: MigrationPlan) -> JSONValue {
        .object([
            "source": .string(plan.source),
            "destination": .string(plan.destination),
            "executable": .bool(plan.isExecutable),
            "steps": .array(
                plan.steps.map { step in
                    .object([
                        "from": .string(step.from), "to": .string(step.to), "kind": .string(step.kind.rawValue),
                        "changes": .array(step.changes.map { .string($0.summary) }),
                        "problems": .array(step.problems.map { .string($0.description) }),
                        "warnings": .array(step.warnings.map { .string($0.message) }),
                    ])
                }),
        ])
    }
}

/// The arguments `plan` and `migrate` share: the store, `--model` with `--version`/`--order`,
/// `--to` and the `--mapping` files.
struct MigrationArguments: Sendable {
    /// The store to migrate.
    static let store = ArgumentDefinition.positional("STORE", help: StoreFile.help)
    /// The app's model.
    static let model = ArgumentDefinition.option("model", value: "MODEL", help: ModelSelection.modelHelp)
    /// The target version.
    static let target = ArgumentDefinition.option(
        "to", value: "V", help: "The version to migrate to (default: the model's current version).")
    /// Mapping files, repeatable.
    static let mapping = ArgumentDefinition.option(
        "mapping", value: "FILE", isRepeatable: true,
        help: "A JSON mapping file for one step (see docs/MappingFormat.md).")
    /// Every shared definition, in help order.
    static let definitions = [store, model, ModelSelection.version, ModelSelection.order, target, mapping]

    /// The store as typed.
    var storePath: String
    /// The model.
    var selection: ModelSelection
    /// The target version, if given.
    var target: String?
    /// The mapping files as typed.
    var mappingPaths: [String]

    /// Reads the shared arguments.
    ///
    /// - Throws: ``ValidationError`` when the store or the model is missing.
    init(_ arguments: ParsedArguments) throws(ValidationError) {
        storePath = try arguments.requiredValue(of: Self.store)
        guard let selection = try ModelSelection.parse(Self.model, from: arguments) else {
            throw ValidationError("a migration needs the app's model; give it with --model")
        }
        self.selection = selection
        target = arguments.value(of: Self.target)
        mappingPaths = arguments.values(of: Self.mapping)
    }

    /// The failure a migration error makes: its message, one detail line per change that needs
    /// a mapping and, when a direct step was refused for a model whose version order was guessed
    /// from names, a last line saying how a step-by-step migration would be allowed.
    ///
    /// - Parameters:
    ///   - error: The planner's or migrator's error.
    ///   - model: The model the migration used.
    /// - Returns: The failure to throw.
    /// - Complexity: O(*n*) in the number of failures.
    static func failure(_ error: MigrationError, model: VersionedModel) -> CommandFailure {
        var details = error.failures.map(\.description)
        if error.code == .notInferable, !model.hasExplicitOrder, model.versions.count > 2 {
            details.append(orderHint)
        }
        return CommandFailure(error.message, details: details)
    }

    /// How to migrate step by step when the direct step is refused and the order was guessed.
    static let orderHint =
        "tern infers one step straight from the store's version to the target, as Core Data does, and never walks "
        + "an order guessed from version names; to migrate step by step through the versions between, give their "
        + "order with --order (oldest first, comma-separated) or a --mapping for the intermediate steps"

    /// Reads the store's location, the model and the mapping files.
    ///
    /// - Throws: ``CommandFailure`` when the store is not a store Tern knows or a file cannot be read.
    func load(in context: CommandContext) throws -> (StoreFile, VersionedModel, [StepMapping]) {
        let store = StoreFile(storePath, environment: context.environment)
        _ = try store.kind()  // SQLite, binary and XML stores migrate; anything else fails here.
        let model = try selection.read(in: context)
        var mappings: [StepMapping] = []
        for path in mappingPaths {
            do {
                mappings.append(try StepMapping(contentsOf: context.environment.url(forPath: path)))
            } catch {
                throw CommandFailure("cannot read the mapping file \(path): \(error.message)")
            }
        }
        return (store, model, mappings)
    }
}
