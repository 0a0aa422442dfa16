import Foundation
import TernCore
import TernPostgreSQL
import TernSQLite
import TernSync
import TernTestSupport
import Testing

/// Push and pull killed with `SIGKILL` at random moments (``CrashHarness``, `tern-crash-helper
/// sync`): after every kill, running sync again converges and the devices export identical data,
/// with nothing lost and nothing doubled. A handful of kills per case; `TERN_CRASH_LONG=1` runs 200.
@Suite(.serialized, .enabled(if: PostgreSQLTestServer.isAvailable, PostgreSQLTestServer.skipComment))
struct SyncCrashTests {
    /// Objects per page in the killed runs: small, so that a run has many pages to be killed between.
    static let pageSize = 2

    /// `tern-crash-helper`, built beside the tests.
    static func helper() throws -> URL {
        try #require(CrashHarness.builtExecutable(named: "tern-crash-helper"), "tern-crash-helper is not built")
    }

    /// A device store with the starter recipes, more recipes with steps, and edits in separate
    /// transactions, never synced.
    static func makeDevice(_ name: String, in directory: TemporaryDirectory, server: String) async throws -> URL {
        let device = try await SyncTestDevice(name, in: directory, server: server, seeded: true)
        try await device.addRecipes(CrashHarness.isLong ? 200 : 40, prefix: "crash")
        for index in 0..<4 {
            try await device.edit { context in
                try await SyncTestDevice.recipe("crash-\(index)", in: context)[attribute: "servings"] = .integer(
                    Int64(20 + index))
            }
        }
        return device.store.url
    }

    /// Copies a store's files (main, WAL, shared memory) over another's.
    static func copyStore(_ source: URL, to destination: URL) throws {
        for suffix in ["", "-wal", "-shm"] {
            let from = URL(fileURLWithPath: source.path + suffix)
            let to = URL(fileURLWithPath: destination.path + suffix)
            try? FileManager.default.removeItem(at: to)
            if FileManager.default.fileExists(atPath: from.path) { try FileManager.default.copyItem(at: from, to: to) }
        }
    }

    /// After a killed push: pushes again, then a new device pulls everything; it must hold
    /// exactly the device's data, and both converge.
    static func pushAgainAndCompare(
        _ device: SyncTestDevice, server: String, in directory: TemporaryDirectory, state: String
    ) async throws {
        _ = try await device.engine.push()
        let other = try await SyncTestDevice(
            "other-\(UUID().uuidString)", in: directory, server: server, seeded: false, pageSize: Self.pageSize)
        _ = try await other.engine.pull()
        let expected = try await device.export()
        let pulled = try await other.export()
        guard pulled == expected else {
            throw CrashHarness.Failure("after a kill \(state), a second push left the server with other data")
        }
        try await converge([device, other])
        try? FileManager.default.removeItem(at: other.store.url)
    }

    @Test func aKilledPushLosesNothing() async throws {
        let helper = try Self.helper()
        let directory = try TemporaryDirectory()
        let template = try await Self.makeDevice(
            "template", in: directory, server: try PostgreSQLTestServer.freshStoreURL())
        let store = directory.url.appendingPathComponent("device.sqlite")
        var server = ""
        try await CrashHarness(name: "sync push", iterations: CrashHarness.iterations(short: 5)).run(
            reset: {
                try Self.copyStore(template, to: store)
                server = try PostgreSQLTestServer.freshStoreURL(prefix: "crash")
            },
            launch: { try CrashHarness.launch(helper, ["sync", "push", store.path, server, String(Self.pageSize)]) },
            check: { finished in
                let device = try SyncTestDevice(opening: store, server: server, pageSize: Self.pageSize)
                let state: String
                if try await device.store.syncState(forKey: "snapshotCursor") != nil {
                    state = "in the snapshot"
                } else if try await device.store.syncState(forKey: "pushed") != nil {
                    state = "pushed"
                } else {
                    state = "not started"
                }
                if finished, state != "pushed" { throw CrashHarness.Failure("the push did not finish: \(state)") }
                try await Self.pushAgainAndCompare(device, server: server, in: directory, state: state)
                return state
            })
    }

    @Test func aKilledPushOfOneLargeTransactionLosesNothing() async throws {
        let helper = try Self.helper()
        let directory = try TemporaryDirectory()
        let template = try await Self.makeDevice(
            "template", in: directory, server: try PostgreSQLTestServer.freshStoreURL())
        let store = directory.url.appendingPathComponent("device.sqlite")
        var server = ""
        var last = ""
        // A device that pushed its snapshot, then saved one transaction of many changes: its push
        // travels in parts of 2 changes.
        func prepare() async throws {
            try Self.copyStore(template, to: store)
            server = try PostgreSQLTestServer.freshStoreURL(prefix: "crash")
            let device = try SyncTestDevice(opening: store, server: server)
            _ = try await device.engine.push()
            try await device.addRecipes(CrashHarness.isLong ? 100 : 20, prefix: "large")
            last = try await device.store.currentHistoryToken()?.description ?? ""
        }
        try await prepare()
        try await CrashHarness(name: "sync push in parts", iterations: CrashHarness.iterations(short: 5)).run(
            reset: {},
            launch: { try CrashHarness.launch(helper, ["sync", "push", store.path, server, String(Self.pageSize)]) },
            check: { finished in
                let device = try SyncTestDevice(opening: store, server: server, pageSize: Self.pageSize)
                let state = try await device.store.syncState(forKey: "pushed") == last ? "pushed" : "in parts"
                if finished, state != "pushed" { throw CrashHarness.Failure("the push did not finish: \(state)") }
                try await Self.pushAgainAndCompare(device, server: server, in: directory, state: state)
                try await prepare()
                return state
            })
    }

    @Test func aKilledPullLosesNothing() async throws {
        let helper = try Self.helper()
        let directory = try TemporaryDirectory()
        let server = try PostgreSQLTestServer.freshStoreURL(prefix: "crash")
        let source = try SyncTestDevice(
            opening: try await Self.makeDevice("source", in: directory, server: server), server: server)
        _ = try await source.engine.sync()
        let expected = try await source.export()
        let empty = try await SyncTestDevice("empty", in: directory, server: server, seeded: false).store.url
        let store = directory.url.appendingPathComponent("device.sqlite")
        try await CrashHarness(name: "sync pull", iterations: CrashHarness.iterations(short: 5)).run(
            reset: { try Self.copyStore(empty, to: store) },
            launch: { try CrashHarness.launch(helper, ["sync", "pull", store.path, server, String(Self.pageSize)]) },
            check: { finished in
                let device = try SyncTestDevice(opening: store, server: server, pageSize: Self.pageSize)
                let cursor = try await device.store.syncState(forKey: "pulled")
                let staged = try await device.store.stagedSyncCursor() != nil
                let applied = cursor != nil && cursor != "0"
                let state = staged ? "downloading" : applied ? "pulled" : "not started"
                if finished, state != "pulled" { throw CrashHarness.Failure("the pull did not finish: \(state)") }
                // One transaction: before it commits the device holds none of the server's objects.
                if !applied, try await device.count("Recipe") != 0 {
                    throw CrashHarness.Failure("a pull killed \(state) left part of its objects")
                }
                _ = try await device.engine.pull()
                guard try await device.export() == expected else {
                    throw CrashHarness.Failure("after a kill \(state), pulling again left other data than the server's")
                }
                guard try await device.store.syncStates(withPrefix: "pending/").isEmpty else {
                    throw CrashHarness.Failure("references were left aside after the pull finished")
                }
                return state
            })
    }
}
