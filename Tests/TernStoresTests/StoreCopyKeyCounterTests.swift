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
    static func storeWithDeletedObjects(_ kind: StoreKind, in folder: TemporaryDirectory) async throws
        -> any PersistentStore
    {
        let store = try await filledStore(kind, in: folder, name: "source")
        let keys = try await store.newPrimaryKeys(forEntity: "Publisher", count: 2)
        let publishers = keys.map {
            StoreRow(reference: SampleRows.reference("Publisher", $0), attributes: ["name": .string("Gone")])
        }
        let versions = try await store.save(StoreChangeSet(inserted: publishers)).newVersions
        let bike = SampleRows.reference("Bike", 100)
        let bikeVersion = try #require(try await store.rows(for: [bike]).first?.version)
        var deleted = versions
        deleted[bike] = bikeVersion
        _ = try await store.save(StoreChangeSet(deleted: deleted))
        return store
    }

    /// Expects the next new publisher and car of a store not to get a key the source ever gave:
    /// Publisher 1 is the largest left but 3 was handed out; Car 6 is the largest of the
    /// `Vehicle` hierarchy left but Bike 100 was. Stores whose format has one counter for every
    /// entity (Core Data's XML `nextObjectID`) hand out keys above the largest of all; the others
    /// hand out exactly the next key of each hierarchy.
    static func expectNoKeyHandedOutAgain(
        by store: any PersistentStore, perHierarchy: Bool, _ what: String,
        sourceLocation: SourceLocation = #_sourceLocation
    ) async throws {
        let keys =
            try await store.newPrimaryKeys(forEntity: "Publisher", count: 1)
            + store.newPrimaryKeys(forEntity: "Car", count: 1)
        #expect(keys.count == 2 && keys[0] > 3 && keys[1] > 100, "\(what): \(keys)", sourceLocation: sourceLocation)
        if perHierarchy { #expect(keys == [4, 101], "\(what)", sourceLocation: sourceLocation) }
    }

    /// Whether a store of that kind counts keys per inheritance hierarchy, as SQLite does.
    static func countsPerHierarchy(_ kinds: StoreKind...) -> Bool { !kinds.contains(.xml) }

    @Test(arguments: [StoreKind.sqlite, .binary, .xml, .inMemory], fileKinds)
    func aCopyNeverHandsOutAKeyItsSourceGaveADeletedObject(from source: StoreKind, to destination: StoreKind)
        async throws
    {
        let folder = try TemporaryDirectory()
        let store = try await Self.storeWithDeletedObjects(source, in: folder)
        do {
            let copy = try await StoreFiles.copy(store, to: folder.path("copy"), kind: destination)
            #expect(try await contents(of: copy) == contents(of: store))
        }
        // The file records the counters: the copy, opened again, hands out what the source would.
        let reopened = try StoreFiles.open(at: folder.path("copy"), kind: destination, model: ConformanceModel.model)
        try await Self.expectNoKeyHandedOutAgain(
            by: reopened, perHierarchy: Self.countsPerHierarchy(source, destination),
            "\(source) copied to \(destination)")
        try await Self.expectNoKeyHandedOutAgain(by: store, perHierarchy: Self.countsPerHierarchy(source), "\(source)")
    }

    @Test(arguments: fileKinds)
    func aStoreMovedIntoMemoryKeepsTheCounters(from source: StoreKind) async throws {
        let folder = try TemporaryDirectory()
        let store = try await Self.storeWithDeletedObjects(source, in: folder)
        let coordinator = PersistentStoreCoordinator(model: ConformanceModel.model)
        try await coordinator.addStore(store)
        let moved = try await coordinator.copyStore(store, to: nil, kind: .inMemory)
        try await Self.expectNoKeyHandedOutAgain(
            by: moved, perHierarchy: Self.countsPerHierarchy(source), "\(source) moved into memory")
    }

    @Test(
        .enabled(if: PostgreSQLTestServer.isAvailable, PostgreSQLTestServer.skipComment),
        arguments: [StoreKind.sqlite, .xml])
    func aPostgreSQLCopyAndItsCopyBackKeepTheCounters(from source: StoreKind) async throws {
        let folder = try TemporaryDirectory()
        let store = try await Self.storeWithDeletedObjects(source, in: folder)
        let url = try PostgreSQLTestServer.freshStoreURL(prefix: "keys")
        let copy = try await StoreFiles.copy(store, toPostgreSQL: url)
        let back = try await StoreFiles.copy(copy, to: folder.path("back"), kind: .sqlite)
        let exact = Self.countsPerHierarchy(source)
        try await Self.expectNoKeyHandedOutAgain(by: copy, perHierarchy: exact, "\(source) copied to PostgreSQL")
        try await Self.expectNoKeyHandedOutAgain(
            by: back, perHierarchy: exact, "\(source) through PostgreSQL to SQLite")
    }
}
