import Foundation
import Synchronization
import TernCore
import TernRelational
import TernSQLite
import TernTestSupport
import Testing

@testable import TernPostgreSQL

/// Merge-policy conflicts are resolved inside the save's transaction on PostgreSQL too: the
/// conflicting rows are locked (`SELECT … FOR UPDATE`) and read in the transaction that writes
/// the resolved change set, so no other writer can slip in between the check and the write.
@Suite(.enabled(if: PostgreSQLTestServer.isAvailable, PostgreSQLTestServer.skipComment))
struct PostgreSQLConflictResolutionTests {
    static func pet(_ key: Int64, version: Int64 = 0, _ name: String) -> StoreRow {
        StoreRow(
            reference: RowReference(entityName: "Pet", primaryKey: key), version: version,
            attributes: ["name": .string(name)])
    }

    @Test func theResolverRunsWithTheRowsLockedAndItsResultIsWritten() async throws {
        let url = try PostgreSQLTestServer.freshStoreURL(prefix: "resolve")
        let a = try PostgreSQLStore(url: url, model: ConformanceModel.model)
        let b = try PostgreSQLStore(url: url, model: ConformanceModel.model)
        let key = try await a.newPrimaryKeys(forEntity: "Pet", count: 1)[0]
        let reference = RowReference(entityName: "Pet", primaryKey: key)
        _ = try await a.save(StoreChangeSet(inserted: [Self.pet(key, "Rex")]))
        _ = try await b.save(StoreChangeSet(updated: [Self.pet(key, version: 1, "Max")]))
        let location = try PostgreSQLLocation(url)
        let seen = Mutex<[String]>([])
        let resolver = StoreConflictResolver { changes, conflicts, stored in
            // Another writer tries to take the row between the check and the write.
            do {
                let intruder = try TernPostgreSQL.Connection(location)
                _ = try intruder.fetchAll(#"SELECT 1 FROM "ZPET" FOR UPDATE NOWAIT"#)
                seen.withLock { $0.append("intruder locked the row") }
            } catch {
                seen.withLock { $0.append((error as? PostgreSQLError)?.sqlState == "55P03" ? "locked" : "\(error)") }
            }
            let row = try #require(stored[reference])
            seen.withLock { $0.append("\(conflicts.count) \(row.version)") }
            var resolved = changes
            resolved.updated = [Self.pet(key, version: row.version, "Max and Rex")]
            return resolved
        }
        let store: any PersistentStore = a
        let result = try await store.save(
            StoreChangeSet(updated: [Self.pet(key, version: 1, "Rex II")]), resolvingConflictsWith: resolver)
        #expect(seen.withLock { $0 } == ["locked", "1 2"])
        #expect(result.newVersions[reference] == 3)
        let row = try #require(try await b.rows(for: [reference]).first)
        #expect(row.version == 3)
        #expect(row.attributes["name"] == .string("Max and Rex"))
    }
}
