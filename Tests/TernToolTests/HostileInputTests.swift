import Foundation
import TernCore
import TernFormats
import TernMigration
import TernRelational
import TernSQLite
import TernTestSupport
import Testing

/// Every file of the hostile corpus in `Tests/Fixtures/Hostile` (made by
/// `Scripts/make-hostile-corpus`, plus the fuzzers' regression cases) goes through its reader
/// and the `tern` commands: a clear error or a success, never a crash or a hang, and the file
/// left byte-for-byte as it was.
@Suite struct HostileInputTests {
    /// The hostile corpus folder.
    static let root = Fixtures.url("Hostile")

    /// The names of the files in one folder of the corpus, sorted (none when it does not exist).
    static func files(_ folder: String) -> [String] {
        let names =
            (try? FileManager.default.contentsOfDirectory(atPath: root.appendingPathComponent(folder).path)) ?? []
        return names.filter { !$0.hasPrefix(".") }.sorted()
    }

    /// How far a hostile store gets: the first step that must fail, if any.
    enum Step: Int, Comparable, Sendable {
        case metadata, open, read, none

        static func < (lhs: Step, rhs: Step) -> Bool { lhs.rawValue < rhs.rawValue }
    }

    /// The step each store must fail at; stores not listed may fail anywhere or not at all
    /// (bit flips that land in unused bytes leave a readable store).
    static let storeFailures: [String: Step] = [
        "empty.sqlite": .metadata,
        "not-sqlite.sqlite": .metadata,
        "truncated-header.sqlite": .metadata,
        "truncated-first-page.sqlite": .metadata,
        "flip-page-size.sqlite": .metadata,
        "metadata-garbage.sqlite": .metadata,
        "metadata-not-a-dictionary.sqlite": .metadata,
        "metadata-cycle.sqlite": .metadata,
        "metadata-wrong-types.sqlite": .metadata,
        "metadata-no-row.sqlite": .metadata,
        "metadata-no-table.sqlite": .metadata,
        "modelcache-garbage.sqlite": .open,
        "modelcache-truncated.sqlite": .open,
        "modelcache-not-an-archive.sqlite": .open,
        "modelcache-uncompressed.sqlite": .open,
        "modelcache-bomb.sqlite": .open,
        "primarykey-no-rows.sqlite": .open,
        "primarykey-no-table.sqlite": .metadata,
        "primarykey-unknown-name.sqlite": .open,
        "primarykey-duplicate-name.sqlite": .open,
        "table-missing.sqlite": .open,
        "column-missing.sqlite": .open,
        "external-data-traversal.sqlite": .read,
    ]

    /// Checks that an error is one of Tern's typed errors with a message.
    static func expectClear(_ error: any Error, _ file: String) {
        switch error {
        case let error as SQLiteError: #expect(!error.message.isEmpty, "\(file)")
        case let error as TernError: #expect(!error.message.isEmpty, "\(file)")
        case let error as MigrationError: #expect(!error.message.isEmpty, "\(file)")
        case let error as RecordError: #expect(!error.message.isEmpty, "\(file)")
        default: Issue.record("\(file): untyped error \(error)")
        }
    }

    /// Runs `tern` and checks the outcome: success, or status 1 with exactly one `error:` line
    /// (detail lines may follow it, as the command-line contract allows: a model's problems, one a
    /// line).
    ///
    /// - Returns: Whether the command succeeded.
    static func runTool(_ arguments: [String], _ file: String) async -> Bool {
        let result = await ToolRunner.run(arguments)
        if result.status == 0 { return true }
        #expect(result.status == 1, "\(file): tern \(arguments[0]) exited with \(result.status)")
        #expect(result.errorLines.first?.hasPrefix("error: ") == true, "\(file): \(result.standardError)")
        #expect(result.errorLines.filter { $0.hasPrefix("error: ") }.count == 1, "\(file): \(result.standardError)")
        #expect(
            result.errorLines.dropFirst().allSatisfy { $0.trimmingCharacters(in: .whitespaces).hasPrefix("- ") },
            "\(file): \(result.standardError)")
        return false
    }

    // MARK: - Stores

    /// How far a store gets through metadata, opening read-only and reading every row.
    static func furthestStep(_ url: URL, _ file: String) async -> Step {
        do {
            _ = try SQLiteStore.metadata(at: url)
        } catch {
            expectClear(error, file)
            return .metadata
        }
        let store: SQLiteStore
        do {
            store = try SQLiteStore(at: url, configuration: .readOnly)
        } catch {
            expectClear(error, file)
            return .open
        }
        do {
            for entity in store.model.entities where !entity.isAbstract {
                _ = try await store.fetch(StoreFetchRequest(entityName: entity.name))
            }
        } catch {
            expectClear(error, file)
            return .read
        }
        return .none
    }

    @Test(arguments: files("Stores"))
    func storeGivesAClearError(_ file: String) async throws {
        let tmp = try TemporaryDirectory()
        let url = try tmp.copy(Self.root.appendingPathComponent("Stores/\(file)"))
        let original = try Data(contentsOf: url)

        let failed = await Self.furthestStep(url, file)
        if let expected = Self.storeFailures[file] {
            #expect(failed == expected, "\(file) should fail at \(expected), not \(failed)")
        }
        #expect(try Data(contentsOf: url) == original, "\(file) was changed by reading it")

        let infoSucceeded = await Self.runTool(["info", url.path], file)
        // `tern info` reads metadata and counts rows, but needs no model: it may get further.
        if failed == .metadata {
            #expect(!infoSucceeded, "\(file): tern info read metadata the library refuses")
        }
        let output = tmp.url.appendingPathComponent("export.json")
        // A value that cannot be read is exported as null with a warning; with --strict it fails
        // as the library does.
        let exportSucceeded = await Self.runTool(["export", url.path, "--strict", "-o", output.path], file)
        if failed != .none {
            #expect(!exportSucceeded, "\(file): tern export --strict read a store the library cannot read")
        }
        if !exportSucceeded {
            #expect(!FileManager.default.fileExists(atPath: output.path), "\(file): a failed export left output")
        }
        if failed == .read {
            let lenient = await ToolRunner.run(["export", url.path, "-o", output.path])
            if lenient.status == 0 {
                #expect(
                    lenient.errorLines.contains { $0.hasPrefix("warning: ") },
                    "\(file): a value read as null without a warning")
            } else {
                #expect(!FileManager.default.fileExists(atPath: output.path), "\(file): a failed export left output")
            }
        }
        // Every case is damage `tern verify` must find: it exits 1, with its summary line first.
        let verify = await ToolRunner.run(["verify", url.path])
        #expect(verify.status == 1, "\(file): tern verify exited with \(verify.status): \(verify.standardOutput)")
        #expect(verify.errorLines.first?.hasPrefix("error: ") == true, "\(file): \(verify.standardError)")
        #expect(try Data(contentsOf: url) == original, "\(file) was changed by tern")
        try await Self.migrateGivesAClearErrorOrKeepsEveryRow(url, file, original: original)
    }

    /// The SampleModel bundle most hostile stores come from, and its versions' order.
    static let sampleModel = (
        bundle: "CoreDataPlus/SampleModel/SampleModel.xcdatamodeld", order: "SampleModel,SampleModel2,SampleModel3"
    )

    /// The stores `tern migrate` must refuse even though it can read them.
    static let migrateFailures: Set<String> = ["primarykey-wrong-entity-numbers.sqlite"]

    /// The rows of each entity table (`Z` and a letter) of a SQLite file, or nil when it cannot be read.
    static func entityRowCounts(_ url: URL) -> [String: Int64]? {
        guard let connection = try? Connection(path: url.path, configuration: .readOnly),
            let tables = try? connection.fetchAll(
                "SELECT name FROM sqlite_master WHERE type = 'table' AND name GLOB 'Z[A-Z]*'")
        else { return nil }
        var counts: [String: Int64] = [:]
        for case .text(let table)? in tables.map(\.first) {
            guard let count = try? connection.fetchValue("SELECT COUNT(*) FROM \(.identifier(table))")?.int64 else {
                return nil
            }
            counts[table] = count
        }
        return counts
    }

    /// `tern migrate` to SampleModel3: a clear error with the store unchanged, or a migration
    /// that keeps every row of every entity table the store had.
    static func migrateGivesAClearErrorOrKeepsEveryRow(_ url: URL, _ file: String, original: Data) async throws {
        let before = entityRowCounts(url)
        let result = await ToolRunner.run([
            "migrate", url.path, "--model", Fixtures.url(sampleModel.bundle).path, "--order", sampleModel.order,
            "--to", "SampleModel3", "--quiet",
        ])
        let migrated = result.status == 0
        if !migrated {
            // One error line; the lines under it, if any, list the problems.
            #expect(result.status == 1, "\(file): tern migrate exited with \(result.status)")
            #expect(result.errorLines.first?.hasPrefix("error: ") == true, "\(file): \(result.standardError)")
            #expect(result.errorLines.filter { $0.hasPrefix("error:") }.count == 1, "\(file): \(result.standardError)")
        }
        if migrateFailures.contains(file) { #expect(!migrated, "\(file): tern migrate accepted a damaged store") }
        guard migrated else {
            #expect(try Data(contentsOf: url) == original, "\(file) was changed by a failed tern migrate")
            return
        }
        let after = entityRowCounts(url)
        for (table, count) in before ?? [:] {
            #expect(
                after?[table] == count, "\(file): \(table) had \(count) rows, \(after?[table] ?? -1) after tern migrate"
            )
        }
    }

    @Test func storeCorpusCoversEachKindOfDamage() {
        let stores = Self.files("Stores")
        for kind in [
            "empty", "not-sqlite", "truncated-", "flip-", "metadata-", "modelcache-bomb", "primarykey-",
            "external-data-traversal",
        ] {
            #expect(stores.contains { $0.hasPrefix(kind) }, "no \(kind) case; run Scripts/make-hostile-corpus")
        }
        #expect(Set(Self.storeFailures.keys).isSubset(of: stores))
    }

    // MARK: - Model XML

    @Test(arguments: files("ModelXML"))
    func modelXMLGivesAClearError(_ file: String) async throws {
        let source = Self.root.appendingPathComponent("ModelXML/\(file)")
        let original = try Data(contentsOf: source)
        // Malformed or unsafe XML is refused by the reader; a well-formed but inconsistent model
        // (duplicates, dangling names, cycles) is read, and refused by validation.
        var readerRefused = false
        do {
            let model = try XcodeModel.model(fromContents: original, path: file)
            _ = model.entityVersionHashes
            #expect(throws: TernError.self, "\(file) was read and validates") { try model.validate() }
        } catch {
            Self.expectClear(error, file)
            readerRefused = true
        }

        let tmp = try TemporaryDirectory()
        let folder = tmp.url.appendingPathComponent("Hostile.xcdatamodel")
        try FileManager.default.createDirectory(at: folder, withIntermediateDirectories: true)
        let contents = folder.appendingPathComponent("contents")
        try original.write(to: contents)
        let succeeded = await Self.runTool(["model", folder.path], file)
        if readerRefused {
            #expect(!succeeded, "\(file): tern model accepted a file the reader refuses")
        }
        #expect(try Data(contentsOf: contents) == original)
    }
}
