import Foundation
import TernCore
import TernMigration
import TernMigrationTesting
import TernSQLite
import TernStores

/// `tern check-migrations MODEL [--stores DIR] [--mapping FILE]… [--mappings DIR] [--json]`: the
/// "users who skipped versions" matrix for CI.
struct CheckMigrationsCommand: Command {
    /// The model to check.
    static let model = ArgumentDefinition.positional("MODEL", help: ModelSelection.modelHelp)
    /// A folder of real stores to check too.
    static let stores = ArgumentDefinition.option(
        "stores", value: "DIR", help: "A folder of real stores to migrate too (copies; the stores are never written).")
    /// Mapping files, repeatable.
    static let mapping = MigrationArguments.mapping
    /// A folder of mapping files.
    static let mappings = ArgumentDefinition.option(
        "mappings", value: "DIR",
        help: "A folder whose mapping files (.json, .xcmappingmodel, .cdm) are used for the steps they cover.")
    /// Sample objects per entity.
    static let objects = ArgumentDefinition.option(
        "objects", value: "N", help: "Sample objects of each concrete entity in each generated store (default: 5).")

    /// The command's name, arguments and help.
    static let configuration = CommandConfiguration(
        name: "check-migrations",
        abstract: "Migrates a sample store of every version, and every given store, to the current version.",
        discussion: """
            For every version of the model but the current one, makes a SQLite store of valid
            sample objects (--objects of each concrete entity: required values and links, inverses,
            counts within bounds, distinct values), migrates it to the current version as `tern
            migrate` would, and checks the result: every object the plan carries over is there,
            the values an inferred step carries unchanged are the same, the store is at the
            current version and verifies clean (but for what the migration relaxed and reported,
            as Core Data relaxes it). Each store of --stores DIR is copied and checked the same
            way. Mappings come from --mapping files (JSON, .xcmappingmodel, .cdm) and every such
            file in --mappings DIR; tern runs no Swift policies, so a mapping that names one is
            refused (run MigrationTesting in the app's tests for those).

            Prints a table: source (a version, or a store's file name), steps, objects, result
            ("ok", or the failure naming the step, the entity and the property) and time. Exits 0
            when every source passes, 1 otherwise ("error: N of M sources fail to migrate" on
            stderr). This is what a CI job runs to catch a migration that passes on the developer's
            phone and fails on users' phones that skipped versions.

            --json prints {"current": NAME, "passed": BOOL, "results": [{"source": TEXT, "store":
            BOOL, "steps": INT, "objects": INT, "passed": BOOL, "error": TEXT|null, "code":
            CODE|null, "seconds": NUMBER}]}; on failure it is printed too, with the error on stderr.
            """,
        arguments: [model, ModelSelection.version, ModelSelection.order, stores, mapping, mappings, objects, .json],
        examples: [
            "tern check-migrations Recipes.xcdatamodeld",
            "tern check-migrations Recipes.xcdatamodeld --stores Tests/Stores --mappings Migrations --json",
        ])

    /// The model.
    var selection: ModelSelection
    /// The stores folder as typed.
    var storesPath: String?
    /// The mapping files as typed.
    var mappingPaths: [String]
    /// The mappings folder as typed.
    var mappingsPath: String?
    /// Sample objects per entity.
    var objectsPerEntity: Int
    /// Whether to print JSON.
    var json: Bool

    /// Makes the command from its parsed command line.
    init(_ arguments: ParsedArguments) throws(ValidationError) {
        guard let selection = try ModelSelection.parse(Self.model, from: arguments) else {
            throw ValidationError("missing argument \(Self.model.valueName)")
        }
        self.selection = selection
        storesPath = arguments.value(of: Self.stores)
        mappingPaths = arguments.values(of: Self.mapping)
        mappingsPath = arguments.value(of: Self.mappings)
        objectsPerEntity = 5
        if let text = arguments.value(of: Self.objects) {
            guard let count = Int(text), count >= 0 else {
                throw ValidationError("--objects takes a count, not '\(text)'")
            }
            objectsPerEntity = count
        }
        json = arguments.isSet(.json)
    }

    /// Runs the matrix and prints it.
    func run(in context: CommandContext) async throws {
        let model = try selection.read(in: context)
        let environment = context.environment
        var mappingFiles = mappingPaths
        if let mappingsPath {
            let folder = environment.url(forPath: mappingsPath)
            mappingFiles += try Self.files(in: folder, describedAs: "--mappings") { url in
                ["json"].contains(url.pathExtension.lowercased())
                    || StepMapping.xcodeMappingExtensions.contains(url.pathExtension.lowercased())
            }.map(\.path)
        }
        let mappings = try MigrationArguments.mappings(at: mappingFiles, model: model, in: context).map(\.mapping)
        var stores: [URL] = []
        if let storesPath {
            stores = try Self.files(in: environment.url(forPath: storesPath), describedAs: "--stores") { url in
                let name = url.lastPathComponent
                let isCompanion = name.hasPrefix(".") || ["-wal", "-shm", "-journal"].contains { name.hasSuffix($0) }
                return !isCompanion && (try? StoreFiles.kind(ofStoreAt: url)) != nil
            }
        }
        let results = await MigrationTesting.check(
            model: model, mappings: mappings, objectsPerEntity: objectsPerEntity, stores: stores)
        let failed = results.filter { !$0.passed }.count
        let document = Self.document(results, current: model.currentVersion.name)
        if json {
            guard failed == 0 else {
                throw CommandFailure("\(failed) of \(results.count) sources fail to migrate", report: document)
            }
            context.printJSON(document)
            return
        }
        let table = Self.table(results, current: model.currentVersion.name)
        guard failed > 0 else {
            context.print(table)
            return
        }
        // The table is the result asked for, so it is printed on stdout also when a source fails.
        environment.output.write(table + "\n", to: .standardOutput)
        throw CommandFailure(
            "\(failed) of \(results.count) sources fail to migrate",
            details: results.compactMap { $0.failure.map(\.message) })
    }

    // MARK: - Rendering

    /// The files of a folder that pass a test, sorted by name.
    static func files(in folder: URL, describedAs option: String, where test: (URL) -> Bool) throws -> [URL] {
        let names: [String]
        do {
            names = try FileManager.default.contentsOfDirectory(atPath: folder.path)
        } catch {
            throw CommandFailure("cannot read the folder \(folder.path) given with \(option); check the path")
        }
        return names.sorted().map { folder.appendingPathComponent($0) }.filter(test)
    }

    /// The table the command prints.
    static func table(_ results: [MigrationTesting.CheckResult], current: String) -> String {
        var rows = [["source", "steps", "objects", "result", "time"]]
        for result in results {
            let source = result.isStore ? URL(fileURLWithPath: result.source).lastPathComponent : result.source
            rows.append([
                source, result.report.map { String($0.plan.steps.count) } ?? "-", String(result.objects),
                result.failure.map { "failed: " + summary(of: $0) } ?? "ok", seconds(result.duration) + " s",
            ])
        }
        let widths = (0..<4).map { column in rows.map { $0[column].count }.max() ?? 0 }
        let lines = rows.map { row in
            (0..<4).map { row[$0].padding(toLength: widths[$0], withPad: " ", startingAt: 0) }.joined(separator: "  ")
                + "  " + row[4]
        }
        let passed = results.filter(\.passed).count
        return (["Migrations to \(current):"] + lines + ["\(passed) of \(results.count) sources migrate."])
            .joined(separator: "\n")
    }

    /// A failure in one line of at most 120 characters: the migration's own message when it
    /// failed, the check's otherwise (the whole text is on stderr).
    static func summary(of failure: MigrationTestError) -> String {
        let text = (failure.underlyingError as? MigrationError)?.message ?? failure.message
        let line = text.split(separator: "\n").first.map(String.init) ?? text
        return line.count > 120 ? String(line.prefix(119)) + "…" : line
    }

    /// The `--json` document.
    static func document(_ results: [MigrationTesting.CheckResult], current: String) -> JSONValue {
        .object([
            "current": .string(current),
            "passed": .bool(results.allSatisfy(\.passed)),
            "results": .array(
                results.map { result in
                    .object([
                        "source": .string(result.source), "store": .bool(result.isStore),
                        "steps": .integer(Int64(result.report?.plan.steps.count ?? 0)),
                        "objects": .integer(Int64(result.objects)), "passed": .bool(result.passed),
                        "error": .string(result.failure?.message), "code": .string(result.failure?.code.rawValue),
                        "seconds": .double(Double(seconds(result.duration)) ?? 0),
                    ])
                }),
        ])
    }

    /// A duration in seconds, with three decimals.
    static func seconds(_ duration: Duration) -> String {
        let (whole, fraction) = duration.components
        return String(format: "%.3f", Double(whole) + Double(fraction) / 1e18)
    }
}
