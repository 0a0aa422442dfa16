import Foundation
import TernCore
import TernStores
import TernTestSupport
import Testing

/// A copy keeps primary keys, so it must keep the primary-key counters too (`Z_MAX`): a key the
/// source gave an object since deleted is never handed out again, or an object ID saved before
/// the copy (in a URI, a history token, another store) would name a new object.
@Suite struct StoreCopyKeyCounterTests {
    /// The sample rows, then a publisher inserted and deleted and the bike (the `Vehicle`
    /// hierarchy's largest key, 100) deleted: the counters stay above every row.
    static func storeWithDeletedObjects(_ kind: StoreKind, in folder: TemporaryDirectory) async throws -> any PersistentStore {
        let store = try await filledStore(kind, in: folder, name: "source")
        let keys = try await store.newPrimaryKeys(forEntity: "Publisher", count: 2)
        let publishers = keys.map { StoreRow(reference: SampleRows.reference("Publisher", $0), attributes: ["name": .string("Gone")]) }
        let versions = try await store.save(StoreChangeSet(inserted: publishers)).newVersions
        let bike = SampleRows.reference("Bike", 100)
        let bikeVersion = try #require(try await store.rows(for: [bike]).first?.version)
        var deleted = versions
        deleted[bike] = bikeVersion
        _ = try await store.save(StoreChangeSet(deleted: deleted))
        return store
    }

    /// The keys the next new publisher and car get.
    static func nextKeys(of store: any PersistentStore) async throws -> [Int64] {
        try await store.newPrimaryKeys(forEntity: "Publisher", count: 1) + store.newPrimaryKeys(forEntity: "Car", count: 1)
    }

    @Test(arguments: [StoreKind.sqlite, .binary, .xml, .inMemory], fileKinds)
    func aCopyNeverHandsOutAKeyItsSourceGaveADeletedObject(from source: StoreKind, to destination: StoreKind) async throws {
        let folder = try TemporaryDirectory()
        let store = try await Self.storeWithDeletedObjects(source, in: folder)
        do {
            let copy = try await StoreFiles.copy(store, to: folder.path("copy"), kind: destination)
            #expect(try await contents(of: copy) == contents(of: store))
        }
        // Publisher 1 is the largest left, 3 was handed out; Car 6 is the largest left, Bike 100
        // was. The file records it: the copy, opened again, hands out what the source would.
        let reopened = try StoreFiles.open(at: folder.path("copy"), kind: destination, model: ConformanceModel.model)
        #expect(try await Self.nextKeys(of: reopened) == [4, 101])
        #expect(try await Self.nextKeys(of: store) == [4, 101])
    }

    @Test(arguments: fileKinds)
    func aStoreMovedIntoMemoryKeepsTheCounters(from source: StoreKind) async throws {
        let folder = try TemporaryDirectory()
        let store = try await Self.storeWithDeletedObjects(source, in: folder)
        let coordinator = PersistentStoreCoordinator(model: ConformanceModel.model)
        try await coordinator.addStore(store)
        let moved = try await coordinator.migrateStore(store, to: nil, kind: .inMemory)
        #expect(try await Self.nextKeys(of: moved) == [4, 101])
    }

    @Test(.enabled(if: PostgreSQLTestServer.isAvailable, PostgreSQLTestServer.skipComment), arguments: [StoreKind.sqlite, .xml])
    func aPostgreSQLCopyAndItsCopyBackKeepTheCounters(from source: StoreKind) async throws {
        let folder = try TemporaryDirectory()
        let store = try await Self.storeWithDeletedObjects(source, in: folder)
        let url = try PostgreSQLTestServer.freshStoreURL(prefix: "keys")
        let copy = try await StoreFiles.copy(store, toPostgreSQL: url)
        let back = try await StoreFiles.copy(copy, to: folder.path("back"), kind: .sqlite)
        #expect(try await Self.nextKeys(of: copy) == [4, 101])
        #expect(try await Self.nextKeys(of: back) == [4, 101])
    }
}
