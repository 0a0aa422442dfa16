import Foundation
import TernCore
import TernTestSupport
import Testing

@testable import TernSQLite

/// Rows saved with keys of their own (copies, `tern convert`) raise the primary-key counter, so
/// the store verifies clean and Core Data never hands their keys out again. Found by the crash
/// harness: converted stores had `Z_MAX` 0 under thousands of rows.
@Suite struct PrimaryKeyCounterTests {
    static func model() throws -> ManagedObjectModel {
        try ManagedObjectModel {
            Entity("Item") { Attribute("value", .integer64) }
            Entity("Special", parent: "Item") { Attribute("extra", .string) }
        }
    }

    @Test func rowsInsertedWithTheirOwnKeysRaiseTheirRootsCounter() async throws {
        let folder = try TemporaryDirectory()
        let url = folder.path("Items.sqlite")
        let store = try SQLiteStore(at: url, model: try Self.model())
        let rows = [(5, "Item"), (9, "Special"), (3, "Item")].map { key, entity in
            StoreRow(
                reference: RowReference(entityName: entity, primaryKey: Int64(key)), attributes: ["value": .integer(1)])
        }
        _ = try await store.save(StoreChangeSet(inserted: rows))
        let report = try await StoreVerifier.verify(storeAt: url)
        #expect(report.problems.isEmpty, "\(report.problems)")
        // The counter is the hierarchy's: the next key follows the largest one saved, 9.
        #expect(try await store.newPrimaryKeys(forEntity: "Item", count: 1) == [10])
        // A later save with smaller keys never lowers it.
        _ = try await store.save(
            StoreChangeSet(inserted: [
                StoreRow(reference: RowReference(entityName: "Item", primaryKey: 7), attributes: ["value": .integer(2)])
            ]))
        #expect(try await store.newPrimaryKeys(forEntity: "Special", count: 1) == [11])
    }
}
