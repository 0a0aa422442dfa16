import Foundation
import TernCore
import TernRelational
import TernSQLite
import TernTestSupport
import Testing

@testable import TernPostgreSQL

/// Opening a store creates its schema; several processes opening the same new store at once
/// must all succeed, whichever of them creates the schema.
@Suite(.enabled(if: PostgreSQLTestServer.isAvailable, PostgreSQLTestServer.skipComment))
struct PostgreSQLSchemaCreationTests {
    @Test func aSchemaAnotherConnectionCreatesMeanwhileIsUsed() async throws {
        let url = try PostgreSQLTestServer.freshStoreURL(prefix: "race")
        let location = try PostgreSQLLocation(url)
        let schema = try #require(location.schema)
        let base = try PostgreSQLLocation(PostgreSQLTestServer.connectionString())
        // Another connection creates the schema in a transaction it keeps open…
        let holder = try TernPostgreSQL.Connection(base)
        try holder.execute("BEGIN")
        try holder.execute("CREATE SCHEMA \(.identifier(schema))")
        // The store's opening blocks its thread on the lock until the holder commits: it runs on a
        // thread of its own, not on one of the test run's few cooperative threads, which every
        // other test (and this test's watcher) needs meanwhile.
        let opening = Self.onOwnThread { try PostgreSQLStore(url: url, model: ConformanceModel.model).identifier }
        // …until the store's own CREATE SCHEMA IF NOT EXISTS waits on it.
        let watcher = try TernPostgreSQL.Connection(base)
        var waiting = false
        for _ in 0..<200 where !waiting {
            let found = try watcher.fetchAll(
                "SELECT count(*) FROM pg_stat_activity WHERE wait_event_type = 'Lock' AND query LIKE 'CREATE SCHEMA IF NOT EXISTS%'"
            )
            waiting = found.first?.first?.int64 == 1
            if !waiting { try await Task.sleep(for: .milliseconds(25)) }
        }
        try holder.execute("COMMIT")
        #expect(waiting, "the store's connection never waited on the other's schema")
        let identifier = try await opening.value
        // The store works in the schema: reopened, it is the same store.
        #expect(try PostgreSQLStore(url: url, model: ConformanceModel.model).identifier == identifier)
    }

    /// Runs blocking work on a thread of its own and hands back its result as a task.
    static func onOwnThread<Value: Sendable>(
        _ work: @escaping @Sendable () throws -> Value
    ) -> Task<Value, any Error> {
        Task {
            try await withCheckedThrowingContinuation { continuation in
                let thread = Thread { continuation.resume(with: Result { try work() }) }
                thread.start()
            }
        }
    }
}
