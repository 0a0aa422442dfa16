import Foundation
import TernCore
import TernSQLite
import TernStores
import TernTestSupport
import Testing

/// Every writing operation killed with `SIGKILL` at random moments (``CrashHarness``): after each
/// kill the store must open, verify clean with ``StoreVerifier``, and hold the complete old state
/// or the complete new one, with no committed row lost.
///
/// Ordinary runs use small stores and a few kills per case; `TERN_CRASH_LONG=1` runs 200 kills
/// per case on stores of 50,000 rows (see RELIABILITY.md). Container relocation and binary-store
/// migration have their cases beside the container's tests (`ContainerCrashTests`,
/// `AtomicContainerTests`), sync's in `SyncCrashTests`.
@Suite(.serialized) struct CrashHarnessTests {
    /// The `tern` binary and `tern-crash-helper`, built beside the tests.
    static func executables() throws -> (tern: URL, helper: URL) {
        let tern = try #require(ToolRunner.executable, "the tern executable is not built")
        let helper = try #require(
            CrashHarness.builtExecutable(named: "tern-crash-helper"), "tern-crash-helper is not built")
        return (tern, helper)
    }

    /// The state of a store that started with rows 1…n: all of them (old) or 1…2n (new).
    static func insertState(_ scenario: CrashScenario, _ url: URL) async throws -> String {
        let contents = try await scenario.contents(of: url)
        let n = scenario.rowCount
        let isNew = contents.names.count > n
        try scenario.expect(contents, keys: 1...(isNew ? 2 * n : n)) { "item \($0)" }
        return isNew ? "new" : "old"
    }

    // MARK: - Saving

    @Test func aKilledContextSaveLeavesEveryRowOldOrEveryRowNew() async throws {
        let (_, helper) = try Self.executables()
        let scenario = try CrashScenario()
        let template = try await scenario.makeStore("Template.sqlite")
        let store = scenario.path("Items.sqlite")
        try await CrashHarness(name: "save", iterations: CrashHarness.iterations()).run(
            reset: { try scenario.restore(template, to: store) },
            launch: { try CrashHarness.launch(helper, ["save", store.path]) },
            check: { finished in
                let contents = try await scenario.contents(of: store)
                let isNew = contents.names[1]?.hasSuffix(" saved") == true
                try scenario.expect(contents, keys: 1...scenario.rowCount) { "item \($0)" + (isNew ? " saved" : "") }
                if finished, !isNew { throw CrashHarness.Failure("the save did not change the store") }
                return isNew ? "new" : "old"
            })
    }

    @Test func aKilledBatchInsertLeavesTheOldRowsOrAllTheNewOnes() async throws {
        let (_, helper) = try Self.executables()
        let scenario = try CrashScenario()
        let template = try await scenario.makeStore("Template.sqlite")
        let store = scenario.path("Items.sqlite")
        try await CrashHarness(name: "batch insert", iterations: CrashHarness.iterations()).run(
            reset: { try scenario.restore(template, to: store) },
            launch: { try CrashHarness.launch(helper, ["batch-insert", store.path, String(scenario.rowCount)]) },
            check: { finished in
                let state = try await Self.insertState(scenario, store)
                if finished, state != "new" { throw CrashHarness.Failure("the batch insert did not change the store") }
                return state
            })
    }

    @Test func aKilledImportLeavesTheOldRowsOrAllTheImportedOnes() async throws {
        let (tern, _) = try Self.executables()
        let scenario = try CrashScenario()
        let template = try await scenario.makeStore("Template.sqlite")
        let store = scenario.path("Items.sqlite")
        let records = scenario.path("items.tsv")
        let n = scenario.rowCount
        let lines = ((n + 1)...(2 * n)).map { "item \($0)\t\($0)" }
        try Data((["name\tvalue"] + lines).joined(separator: "\n").utf8).write(to: records)
        let arguments = [
            "import", store.path, "--model", scenario.modelURL.path, "--order", CrashScenario.order, records.path,
            "--entity", "Item", "--quiet",
        ]
        try await CrashHarness(name: "import", iterations: CrashHarness.iterations()).run(
            reset: { try scenario.restore(template, to: store) },
            launch: { try CrashHarness.launch(tern, arguments) },
            check: { finished in
                let state = try await Self.insertState(scenario, store)
                if finished, state != "new" { throw CrashHarness.Failure("the import did not change the store") }
                return state
            })
    }

    // MARK: - Copying

    @Test(arguments: ["sqlite", "binary"])
    func aKilledConvertLeavesNoDestinationOrACompleteOneAndTheSourceUnchanged(type: String) async throws {
        let (tern, _) = try Self.executables()
        let scenario = try CrashScenario()
        let source = try await scenario.makeStore("Source.sqlite")
        let bytes = try Data(contentsOf: source)
        let destination = scenario.path("Converted.\(type)")
        try await CrashHarness(name: "convert to \(type)", iterations: CrashHarness.iterations()).run(
            reset: { try StoreFiles.destroy(at: destination) },
            launch: {
                try CrashHarness.launch(tern, ["convert", source.path, destination.path, "--type", type])
            },
            check: { finished in
                guard try Data(contentsOf: source) == bytes else { throw CrashHarness.Failure("the source changed") }
                guard FileManager.default.fileExists(atPath: destination.path) else {
                    if finished { throw CrashHarness.Failure("the convert made no store") }
                    return "old"
                }
                try await scenario.expectConverted(destination, isSQLite: type == "sqlite")
                return "new"
            })
    }

    @Test func aKilledReplaceLeavesTheOldOrTheNewStoreAndTheSourceUnchanged() async throws {
        let (_, helper) = try Self.executables()
        let scenario = try CrashScenario()
        let template = try await scenario.makeStore("Template.sqlite")
        let source = try await scenario.makeStore("Source.sqlite", suffix: " replaced")
        let bytes = try Data(contentsOf: source)
        let store = scenario.path("Items.sqlite")
        try await CrashHarness(name: "replace", iterations: CrashHarness.iterations()).run(
            reset: { try scenario.restore(template, to: store) },
            launch: { try CrashHarness.launch(helper, ["replace", store.path, source.path]) },
            check: { finished in
                guard try Data(contentsOf: source) == bytes else { throw CrashHarness.Failure("the source changed") }
                let contents = try await scenario.contents(of: store)
                let isNew = contents.names[1]?.hasSuffix(" replaced") == true
                try scenario.expect(contents, keys: 1...scenario.rowCount) { "item \($0)" + (isNew ? " replaced" : "") }
                if finished, !isNew { throw CrashHarness.Failure("the replace did not change the store") }
                return isNew ? "new" : "old"
            })
    }

    // MARK: - Migrating

    /// A migration kind: where it starts and ends, the mapping files it takes and the strategy
    /// (`automatic` runs inferred steps in place, in one transaction; `rebuild` builds every step
    /// beside the store).
    struct Migration: Sendable, CustomStringConvertible {
        var description: String
        var from: String
        var to: String
        var mapped: Bool
        var strategy = "automatic"
    }

    static let migrations = [
        Migration(description: "inferred in place", from: "v1", to: "v2", mapped: false),
        Migration(description: "inferred rebuilt beside", from: "v1", to: "v2", mapped: false, strategy: "rebuild"),
        Migration(description: "mapped", from: "v2", to: "v3", mapped: true),
        Migration(description: "progressive chain (in place, then mapped)", from: "v1", to: "v3", mapped: true),
    ]

    @Test(arguments: migrations)
    func aKilledMigrationLeavesTheOldOrTheNewVersionAndFinishesWhenRunAgain(migration: Migration) async throws {
        let (tern, _) = try Self.executables()
        let scenario = try CrashScenario()
        let template = try await scenario.makeStore("Template.sqlite", version: migration.from)
        let store = scenario.path("Items.sqlite")
        let mapping = scenario.path("Label.json")
        try Data(CrashScenario.mappingJSON.utf8).write(to: mapping)
        var arguments = [
            "migrate", store.path, "--model", scenario.modelURL.path, "--order", CrashScenario.order,
            "--to", migration.to, "--strategy", migration.strategy, "--quiet",
        ]
        if migration.mapped { arguments += ["--mapping", mapping.path] }
        /// The state, after checking every row of it.
        func state() async throws -> String {
            let contents = try await scenario.contents(of: store)
            guard [migration.from, migration.to].contains(contents.version) else {
                throw CrashHarness.Failure(
                    "the store is at \(contents.version), neither \(migration.from) nor \(migration.to)")
            }
            let mapped = contents.version == "v3"
            try scenario.expect(contents, keys: 1...scenario.rowCount) { mapped ? "ITEM \($0)" : "item \($0)" }
            if mapped, let key = (1...scenario.rowCount).first(where: { contents.labels[Int64($0)] != "#\($0)" }) {
                throw CrashHarness.Failure("row \(key) has the label \(contents.labels[Int64(key)] ?? "nil")")
            }
            return contents.version == migration.from ? "old" : "new"
        }
        var kills = 0
        try await CrashHarness(name: "migrate \(migration)", iterations: CrashHarness.iterations()).run(
            reset: { try scenario.restore(template, to: store) },
            launch: { try CrashHarness.launch(tern, arguments) },
            check: { finished in
                let found = try await state()
                if finished {
                    guard found == "new" else { throw CrashHarness.Failure("the migration did not change the store") }
                    return found
                }
                // Every other kill, the next run must clean up and finish the job.
                kills += 1
                if kills % 2 == 1 {
                    let again = try CrashHarness.launch(tern, arguments)
                    again.waitUntilExit()
                    guard again.terminationStatus == 0 else { throw CrashHarness.Failure("migrating again failed") }
                    guard try await state() == "new" else { throw CrashHarness.Failure("migrating again did nothing") }
                    let leftovers = try scenario.leftovers(containing: "migrating")
                    guard leftovers.isEmpty else {
                        throw CrashHarness.Failure("files left after migrating again: \(leftovers)")
                    }
                }
                return found
            })
    }
}
