import Foundation
import TernCore
import TernMigration
import TernPostgreSQL
import TernRelational
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
        "type", value: "T", help: "The migrated store's type: sqlite, binary, xml or postgres (default: the source's).")
    /// How long to wait for another process's migration of a PostgreSQL store.
    static let lockTimeout = ArgumentDefinition.option(
        "lock-timeout", value: "S",
        help:
            "PostgreSQL stores: seconds to wait while another process migrates the store (default: as long as it takes)."
    )

    /// The command's name, arguments and help.
    static let configuration = CommandConfiguration(
        name: "migrate",
        abstract: "Migrates a store to a model version, in place (atomically) or to a destination.",
        discussion: """
            Follows the plan `tern plan` shows: without mapping files, one inferred migration
            straight from the store's version to the target, as Core Data does, or the Xcode
            mapping model for that step found in the model's folder or --mappings DIR. --mapping
            takes JSON mapping files, .xcmappingmodel bundles and compiled .cdm files. It walks the
            version chain step by step only where --mapping files cover intermediate steps, or
            when --order gives the order; it never guesses a chain from version names. When the
            direct inference is impossible, it fails before touching anything and names each
            change that needs a mapping. When every step is inferred, the migration runs in
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

            Some changes are decided from the store's data, as Core Data's lightweight migration
            decides them: a new required attribute or to-one relationship without a default is
            refused only when the entity has objects, and one that becomes required only when
            objects lack it (the error names the count); to-many bounds that tighten, links to
            objects a relationship can no longer hold (they are dropped) and integers a narrower
            type cannot hold are relaxed and reported, each as a warning line on stderr with its
            count, and the links dropped are counted on the last line.

            Binary and XML stores migrate the same way, loaded whole (they are one archive): the
            migrated file is written beside the store and renamed over it. --type writes another
            type (a SQLite store changes type only with --destination).

            A PostgreSQL store (postgres://user@host/db?schema=s) migrates in its own schema under
            a session advisory lock, so one process migrates it at a time: another one waits
            (--lock-timeout) and then finds it migrated. Inferred steps run as DDL in one
            transaction; other plans are built in a scratch schema and swapped in by one
            transaction. --destination postgres://… --type postgres copies any store into a new
            PostgreSQL schema and migrates it there; a PostgreSQL store with --destination FILE
            is copied into the file (--type, default sqlite) and migrated there. The source is
            left as it was; a failed migration removes the destination.
            """,
        arguments: MigrationArguments.definitions + [destination, type, strategy, lockTimeout, .progress, .quiet],
        examples: [
            "tern migrate Recipes.sqlite --model Recipes.xcdatamodeld",
            "tern migrate Events.sqlite --model Events.xcdatamodeld --mapping EventSplit.json --destination New.sqlite",
            "tern migrate Recipes.binary --model Recipes.xcdatamodeld --type xml --destination Recipes.xml",
            "tern migrate 'postgres://app@db.example.com/recipes?schema=kitchen' --model Recipes.xcdatamodeld",
        ])

    /// The store, model, target and mappings.
    var migration: MigrationArguments
    /// The destination as typed, if any.
    var destinationPath: String?
    /// The migrated store's type; the source's when nil.
    var kind: StoreKind?
    /// How inferred steps run.
    var strategy = MigrationStrategy.automatic
    /// How long to wait for the migration lock of a PostgreSQL store; nil waits as long as it takes.
    var lockTimeout: Duration?

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
        if let text = arguments.value(of: Self.lockTimeout) {
            guard let seconds = Double(text), seconds >= 0, seconds.isFinite else {
                throw ValidationError("--lock-timeout takes a number of seconds, not '\(text)'")
            }
            lockTimeout = .milliseconds(Int64(seconds * 1000))
        }
    }

    /// Migrates the store with a progress bar, then says what it did.
    func run(in context: CommandContext) async throws {
        let loaded = try migration.load(in: context)
        let (store, model, mappings) = (loaded.store, loaded.model, loaded.mappings)
        let destination = destinationPath.map { StoreFile($0, environment: context.environment) }
        try checkTypes(of: store, destination: destination)
        var options = MigrationOptions(destination: destination?.location)
        options.strategy = strategy
        options.lockTimeout = lockTimeout
        let (environment, isQuiet) = (context.environment, context.isQuiet)
        let progress = Progress(totalUnitCount: 1)
        let bar = context.progressBar("migrating", for: progress)
        let report: MigrationReport
        do {
            defer { bar.finish() }
            report = try await StoreMigrator().migrateStore(
                at: store.location, model: model, to: migration.target, mappings: mappings, kind: kind,
                options: options,
                progress: progress,
                onEvent: { event in
                    if case .waitingForMigrationLock(let holder) = event, !isQuiet {
                        environment.output.write(
                            "waiting: another process is migrating the store (\(holder))\n", to: .standardError)
                    }
                })
        } catch let error as MigrationError {
            throw MigrationArguments.failure(error, model: model)
        } catch let error as CommandFailure {
            throw error
        } catch {
            throw CommandFailure("the migration failed: \(StoreFile.message(of: error))")
        }
        for file in report.cleanedUpFiles { context.note("removed \(file), left by an interrupted migration") }
        for step in report.editedMappings { context.note("the mapping of step \(step) changed since it was applied") }
        for warning in report.warnings { context.warn(warning.message) }
        let place = destination?.displayName ?? store.displayName
        if report.plan.isEmpty {
            context.print("\(place) is already at version \(report.plan.destination)")
        } else {
            let objects = report.objectsPerStep.reduce(0, +)
            let dropped = report.droppedLinks > 0 ? ", \(report.droppedLinks) link(s) dropped" : ""
            context.print(
                "migrated \(place) from \(report.plan.source) to \(report.plan.destination) in \(report.plan.steps.count) "
                    + "step(s), \(objects) object(s) read\(dropped)")
        }
    }

    /// Refuses, in the command's words, a `--type` that the store or destination cannot have
    /// when PostgreSQL is involved: a PostgreSQL store is named by a URL, and a file by a path.
    private func checkTypes(of store: StoreFile, destination: StoreFile?) throws {
        guard store.isPostgreSQL || kind == .postgreSQL || destination?.isPostgreSQL == true else { return }
        guard let destination else {
            guard store.isPostgreSQL else {
                throw CommandFailure("a migration into a PostgreSQL store needs --destination postgres://…")
            }
            guard kind == nil || kind == .postgreSQL else {
                throw CommandFailure(
                    "a PostgreSQL store migrates in its own schema; give --destination for another type")
            }
            return
        }
        let destinationKind = kind ?? (destination.isPostgreSQL ? .postgreSQL : store.isPostgreSQL ? .sqlite : nil)
        guard (destinationKind == .postgreSQL) == destination.isPostgreSQL else {
            throw CommandFailure(
                destination.isPostgreSQL
                    ? "\(destination.displayName) is a PostgreSQL URL; use --type postgres"
                    : "a PostgreSQL destination is a postgres:// URL, not \(destination.path)")
        }
    }
}
