import Foundation
import TernCore
import TernFormats
import TernSQLite
import TernTestSupport
import Testing

/// `tern migrate` killed with SIGKILL at random moments over a store of 50,000 rows: each time the
/// store must open as the complete old version or the complete new one, and migrating again must
/// finish with every row. `TERN_CRASH_ITERATIONS` sets the number of kills (20 by default; the long
/// run uses 200 or more).
@Suite(.serialized) struct MigrationCrashTests {
    static let rowCount = 50_000

    /// v1 `Item(name, value: Int32)`; v2 renames `name` to `title`, widens `value` and adds `note`.
    static func model() throws -> VersionedModel {
        try VersionedModel("Items") {
            ModelVersion("v1") {
                Entity("Item") {
                    Attribute("name", .string)
                    Attribute("value", .integer32)
                }
            }
            ModelVersion("v2") {
                Entity("Item") {
                    Attribute("title", .string).renamed(from: "name")
                    Attribute("value", .integer64)
                    Attribute("note", .string)
                }
            }
        }
    }

    /// Checks that the store is all of v1 or all of v2; returns the version name.
    static func check(_ url: URL, model: VersionedModel) async throws -> String {
        let metadata = try SQLiteStore.metadata(at: url)
        let version = try #require(model.version(matching: metadata), "the store matches neither version")
        let store = try SQLiteStore(at: url, model: version.model, configuration: .readOnly)
        let rows = try await store.fetch(StoreFetchRequest(entityName: "Item"))
        #expect(rows.count == rowCount)
        let key = version.name == "v1" ? "name" : "title"
        var seen = Set<Int64>()
        for row in rows {
            guard case .integer(let value)? = row.attributes["value"], row.attributes[key] == .string("item \(value)") else {
                Issue.record("row \(row.reference) lost its values in \(version.name)")
                break
            }
            seen.insert(value)
        }
        #expect(seen.count == rowCount)
        return version.name
    }

    @Test func killedMigrationsLeaveTheOldOrTheNewStoreAndFinishWhenRunAgain() async throws {
        guard let executable = ToolRunner.executable else {
            Issue.record("the tern executable is not built")
            return
        }
        let iterations = Int(ProcessInfo.processInfo.environment["TERN_CRASH_ITERATIONS"] ?? "") ?? 20
        let model = try Self.model()
        let directory = try TemporaryDirectory()
        let modelURL = directory.path("Items.xcdatamodeld")
        try XcodeModel.write(model, to: modelURL)
        let template = directory.path("Template.sqlite")
        let rows = (1...Self.rowCount).map { key in
            StoreRow(reference: RowReference(entityName: "Item", primaryKey: Int64(key)), version: 1,
                     attributes: ["name": .string("item \(key)"), "value": .integer(Int64(key))])
        }
        do {
            let store = try SQLiteStore(at: template, model: model.versions[0].model)
            for start in stride(from: 0, to: rows.count, by: 10_000) {
                _ = try await store.save(StoreChangeSet(inserted: Array(rows[start..<min(rows.count, start + 10_000)])))
            }
        }
        func migrate(_ store: URL) throws -> Process {
            let process = Process()
            process.executableURL = executable
            process.arguments = ["migrate", store.path, "--model", modelURL.path, "--order", "v1,v2", "--quiet"]
            process.standardOutput = FileHandle.nullDevice
            process.standardError = FileHandle.nullDevice
            try process.run()
            return process
        }
        // One full run sets the window the kills fall in.
        let clock = ContinuousClock()
        let store = directory.path("Items.sqlite")
        try FileManager.default.copyItem(at: template, to: store)
        let start = clock.now
        let full = try migrate(store)
        full.waitUntilExit()
        let window = clock.now - start
        #expect(full.terminationStatus == 0)
        #expect(try await Self.check(store, model: model) == "v2")

        var generator = SplitMix64(state: 2026)
        var outcomes: [String: Int] = [:]
        for _ in 0..<iterations {
            try FileManager.default.removeItem(at: store)
            try FileManager.default.copyItem(at: template, to: store)
            let process = try migrate(store)
            let delay = Double.random(in: 0...1.1, using: &generator) * Double(window.components.seconds * 1_000
                + window.components.attoseconds / 1_000_000_000_000_000)
            try await Task.sleep(for: .milliseconds(Int(delay)))
            kill(process.processIdentifier, SIGKILL)
            process.waitUntilExit()
            let version = try await Self.check(store, model: model)
            outcomes[version, default: 0] += 1
            let again = try migrate(store)
            again.waitUntilExit()
            #expect(again.terminationStatus == 0)
            #expect(try await Self.check(store, model: model) == "v2")
            let leftovers = try FileManager.default.contentsOfDirectory(atPath: directory.url.path).filter { $0.contains("migrating") }
            #expect(leftovers.isEmpty)
        }
        #expect(outcomes.values.reduce(0, +) == iterations)
    }
}
