import Foundation
import TernCore
import TernMigration
import TernSQLite
import TernStores

/// `tern migrate STORE --model MODEL [--to V] [--mapping FILE]… [--destination PATH] [--type T]`:
/// migrates a store in place (atomically) or to a destination.
struct MigrateCommand: Command {
    /// Where the migrated store goes.
    static let destination = ArgumentDefinition.option(
        "destination", value: "PATH", help: "Writes the migrated store here and leaves the source as it was.")
    /// Whether inferred steps run in place.
    static let strategy = ArgumentDefinition.option(
        "strategy", value: "S",
        help: "automatic (default: inferred steps in place, in one transaction), in-place (fail if a step cannot), "
            + "or rebuild (every step built beside the store).")
    /// The migrated store's type.
    static let type = ArgumentDefinition.option(
        "type", value: "T", help: "The migrated store's type: sqlite, binary or xml (default: the source's).")

    /// The command's name, arguments and help.
    static let configuration = CommandConfiguration(
        name: "migrate",
        abstract: "Migrates a store to a model version, in place (atomically) or to a destination.",
        discussion: """
            Follows the plan `tern plan` shows. When every step is inferred, the migration runs in
            place: SQL in one transaction (ALTER TABLE where it can, table rebuilds otherwise),
            without loading objects. Otherwise (a --mapping step, --destination, --strategy
            rebuild, or a change the in-place planner cannot express) each step is built into a
            temporary file beside the store, read in batches, and the migrated store replaces the
            source with an atomic rename once it is complete and on disk. Either way an
            interrupted migration leaves the old store or the new one, and running the command
            again finishes the job (leftover temporary files are removed first). External binary
            data files no row references any more are removed at the end. The store records each
            applied step with a checksum of its mapping; a mapping edited since it ran is
            reported. A store already at the target version is left as it is.

            Binary and XML stores migrate the same way, loaded whole (they are one archive): the
            migrated file is written beside the store and renamed over it. --type writes another
            type (a SQLite store changes type only with --destination).
            """,
        arguments: MigrationArguments.definitions + [destination, type, strategy, .progress, .quiet],
        examples: [
            "tern migrate Recipes.sqlite --model Recipes.xcdatamodeld",
            "tern migrate Events.sqlite --model Events.xcdatamodeld --mapping EventSplit.json --destination New.sqlite",
            "tern migrate Recipes.binary --model Recipes.xcdatamodeld --type xml --destination Recipes.xml",
        ])

    /// The store, model, target and mappings.
    var migration: MigrationArguments
    /// The destination as typed, if any.
    var destinationPath: String?
    /// The migrated store's type; the source's when nil.
    var kind: StoreKind?
    /// How inferred steps run.
    var strategy = MigrationStrategy.automatic

    /// Makes the command from its parsed command line.
    init(_ arguments: ParsedArguments) throws(ValidationError) {
        migration = try MigrationArguments(arguments)
        destinationPath = arguments.value(of: Self.destination)
        if let name = arguments.value(of: Self.strategy) {
            guard let strategy = MigrationStrategy(rawValue: name == "in-place" ? "inPlace" : name) else {
                throw ValidationError("unknown strategy '\(name)'; use automatic, in-place or rebuild")
            }
            self.strategy = strategy
        }
        if let type = arguments.value(of: Self.type) {
            guard let kind = StoreFile.Kind(rawValue: type) else {
                throw ValidationError("unknown store type '\(type)'; use sqlite, binary or xml")
            }
            guard let storeKind = kind.storeKind else {
                throw ValidationError("migrate writes SQLite, binary or XML stores, not \(type)")
            }
            self.kind = storeKind
        }
    }

    /// Migrates the store with a progress bar, then says what it did.
    func run(in context: CommandContext) async throws {
        let (store, model, mappings) = try migration.load(in: context)
        var options = MigrationOptions(destination: destinationPath.map(context.environment.url(forPath:)))
        options.strategy = strategy
        let progress = Progress(totalUnitCount: 1)
        let bar = context.progressBar("migrating", for: progress)
        let report: MigrationReport
        do {
            defer { bar.finish() }
            // SQLite stores stream through StoreMigrator; binary and XML ones (and type changes) are loaded whole.
            report = try await StoreFiles.migrateStore(
                at: store.url, model: model, to: migration.target, mappings: mappings, kind: kind, options: options,
                progress: progress)
        } catch let error as MigrationError {
            throw CommandFailure(error.message, details: error.failures.map(\.description))
        } catch let error as SQLiteError {
            throw CommandFailure("the migration failed: \(error.message)")
        } catch let error as TernError {
            throw CommandFailure("the migration failed: \(error.message)")
        }
        for file in report.cleanedUpFiles { context.note("removed \(file), left by an interrupted migration") }
        for step in report.editedMappings { context.note("the mapping of step \(step) changed since it was applied") }
        let place = destinationPath ?? migration.storePath
        if report.plan.isEmpty {
            context.print("\(place) is already at version \(report.plan.destination)")
        } else {
            let objects = report.objectsPerStep.reduce(0, +)
            context.print(
                "migrated \(place) from \(report.plan.source) to \(report.plan.destination) in \(report.plan.steps.count) "
                    + "step(s), \(objects) object(s) read")
        }
    }
}
