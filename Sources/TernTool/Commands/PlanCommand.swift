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
            the reason, and suggests a mapping; --mapping gives mappings for some steps: JSON
            mapping files, Xcode .xcmappingmodel bundles or compiled .cdm files (see
            docs/MappingFormat.md). Several Xcode mapping models of one step are its passes, run
            in the order given. As Core Data finds a mapping model in the app's bundle, the Xcode
            mapping model in the model's folder (or in --mappings DIR) whose versions are the
            store's and the target is used for that step, unless a --mapping starts at the
            store's version; two such mapping models are refused as ambiguous. A mapping model
            whose expression Tern cannot translate, or that names a custom policy (tern has no
            Swift policies), is refused before anything is read, naming the mapping model, the
            entity mapping, the property and the expression.

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
            when `tern migrate` runs them. Under a mapped step of a SQLite or PostgreSQL store,
            each entity mapping says whether it runs as one INSERT … SELECT or in Swift, and why:
            a custom policy, a filter the store's dialect cannot translate, an expression without
            an SQL form, a conversion SQL could do otherwise, or an earlier mapping of its walk
            over the same source that runs in Swift (see docs/MappingsAsSQL.md). A mapping with
            relationship mappings also says whether it sets them in SQL, one statement each, or in
            Swift, and why. A value the statement cannot handle as Swift does still sends a
            mapping back to Swift when it runs.

            --json prints {"source": NAME, "destination": NAME, "executable": BOOL, "steps":
            [{"from": NAME, "to": NAME, "kind": "inferred"|"mapping"|"none", "changes": [STRING],
            "problems": [STRING], "warnings": [STRING], "mapping": null|{"from":
            "--mapping"|"--mappings"|"model folder", "paths": [PATH]}, "entityMappings":
            null|[{"name": NAME, "sql": BOOL, "reason": null|STRING, "relationshipsSQL":
            null|BOOL, "relationshipsReason": null|STRING}]}]}: "mapping" says where a
            mapped step's mapping came from, "entityMappings" how a mapped step's entity mappings run. The forecast is the result asked for, so it is printed
            on stdout also when a step cannot run; then "executable" is false, the exit status is 1
            and stderr has the error lines.
            """,
        arguments: MigrationArguments.definitions + [.json],
        examples: [
            "tern plan Recipes.sqlite --model Recipes.xcdatamodeld",
            "tern plan Events.sqlite --model Events.xcdatamodeld --mapping EventSplit.json --json",
            "tern plan Events.sqlite --model Events.xcdatamodeld --mapping StepOne.xcmappingmodel --mapping StepTwo.xcmappingmodel",
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
        let loaded = try migration.load(in: context)
        let (store, model, mappings) = (loaded.store, loaded.model, loaded.mappings)
        let plan: MigrationPlan
        do {
            plan = try StoreMigrator().plan(
                forStoreAt: store.location, model: model, to: migration.target, mappings: mappings)
        } catch let error as MigrationError {
            throw MigrationArguments.failure(error, model: model)
        } catch let error as PostgreSQLError {
            throw CommandFailure("cannot read the store at \(store.displayName): \(StoreFile.message(of: error))")
        }
        let failure = Self.failure(of: plan, model: model)
        let kind = try? store.kind()
        let forecasts = plan.steps.map { Self.sqlForecast(of: $0, model: model, storeKind: kind) }
        guard json else {
            if let failure { throw failure }
            context.print(Self.text(plan, forecasts: forecasts))
            return
        }
        let document = Self.document(plan, origins: loaded.origins, forecasts: forecasts)
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

    /// Which entity mappings of a mapped step run as one `INSERT … SELECT` (#24), and why the
    /// others do not; nil for other steps.
    ///
    /// - Parameters:
    ///   - step: The step.
    ///   - model: The versions.
    ///   - storeKind: The store's kind: SQLite files and PostgreSQL stores compile mappings to
    ///     SQL, each translating filters with its own dialect.
    static func sqlForecast(of step: MigrationPlan.Step, model: VersionedModel, storeKind: StoreFile.Kind?)
        -> [MappingRunner.SQLForecast]?
    {
        guard step.kind == .mapping, let source = model.version(named: step.from)?.model,
            let destination = model.version(named: step.to)?.model
        else { return nil }
        let runsFilter: (FetchPredicate, String) -> Bool =
            storeKind == .postgres
            ? { PostgreSQLStore.runsMigrationFilterAsSQL($0, of: $1, in: source) }
            : { SQLiteStoreMigrator.runsMigrationFilterAsSQL($0, of: $1, in: source) }
        guard
            let forecast = try? MappingRunner.sqlForecast(
                step.mappings, policies: MigrationPolicyRegistry(), sourceModel: source, destinationModel: destination,
                runsFilterAsSQL: runsFilter)
        else {
            return nil
        }
        guard storeKind == .sqlite || storeKind == .postgres else {
            let reason = "only SQLite and PostgreSQL stores run mappings as SQL"
            return forecast.map {
                MappingRunner.SQLForecast(
                    mapping: $0.mapping, reason: reason, relationships: $0.relationships.map { _ in .swift(reason) })
            }
        }
        return forecast
    }

    /// The plan in words, each mapped step followed by how its entity mappings run.
    static func text(_ plan: MigrationPlan, forecasts: [[MappingRunner.SQLForecast]?]) -> String {
        plan.description(
            notes: forecasts.map { forecast in
                (forecast ?? []).flatMap { entry in
                    var lines = [
                        entry.reason.map { "\(entry.mapping): runs in Swift: \($0)" }
                            ?? "\(entry.mapping): runs as one INSERT … SELECT"
                    ]
                    switch entry.relationships {
                    case .sql: lines.append("\(entry.mapping): sets its relationships in SQL, one statement each")
                    case .swift(let reason):
                        lines.append("\(entry.mapping): sets its relationships in Swift: \(reason)")
                    case nil: break
                    }
                    return lines
                }
            })
    }

    /// The forecast as the JSON document `--json` prints, each mapped step with where its mapping came from.
    static func document(
        _ plan: MigrationPlan, origins: [MappingOrigin.Step: MappingOrigin] = [:],
        forecasts: [[MappingRunner.SQLForecast]?] = []
    ) -> JSONValue {
        .object([
            "source": .string(plan.source),
            "destination": .string(plan.destination),
            "executable": .bool(plan.isExecutable),
            "steps": .array(
                plan.steps.enumerated().map { index, step in
                    .object([
                        "entityMappings": (index < forecasts.count ? forecasts[index] : nil).map { forecast in
                            .array(
                                forecast.map { entry in
                                    var relationshipReason: JSONValue = .null
                                    if case .swift(let reason) = entry.relationships {
                                        relationshipReason = .string(reason)
                                    }
                                    return .object([
                                        "name": .string(entry.mapping), "sql": .bool(entry.reason == nil),
                                        "reason": entry.reason.map { .string($0) } ?? .null,
                                        "relationshipsSQL": entry.relationships.map { .bool($0 == .sql) } ?? .null,
                                        "relationshipsReason": relationshipReason,
                                    ])
                                })
                        } ?? .null,
                        "from": .string(step.from), "to": .string(step.to), "kind": .string(step.kind.rawValue),
                        "changes": .array(step.changes.map { .string($0.summary) }),
                        "problems": .array(step.problems.map { .string($0.description) }),
                        "warnings": .array(step.warnings.map { .string($0.message) }),
                        "mapping": step.kind == .mapping
                            ? origins[MappingOrigin.Step(from: step.from, to: step.to)].map { origin in
                                .object([
                                    "from": .string(origin.source.rawValue),
                                    "paths": .array(origin.paths.map { .string($0) }),
                                ])
                            } ?? .null : .null,
                    ])
                }),
        ])
    }
}
