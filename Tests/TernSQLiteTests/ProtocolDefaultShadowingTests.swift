import Foundation
import TernCore
import TernRelational
import TernTestSupport
import Testing

@testable import TernSQLite

/// Every `PersistentStore` requirement with a default implementation is answered by the SQLite
/// store's own implementation, whether it is called on the concrete type, through the protocol
/// existential or through a generic. A synchronous method satisfying an `async` requirement loses
/// to the protocol extension's default when called on the concrete type with `await` (Swift
/// prefers the `async` overload there): `fetchValues` and `fetchPage` were such methods, so direct
/// calls read every row of every match through the default instead of the SQL (issue #10).
@Suite struct ProtocolDefaultShadowingTests {
    /// A store of two playlists, "A" and "B", whose second row's external cover reference is
    /// hostile: reading that row whole fails, reading only names (or only the first page) does not.
    static func store(in folder: TemporaryDirectory, history: Bool = false) async throws -> SQLiteStore {
        let url = folder.path("Media.sqlite")
        var configuration = SQLiteConfiguration()
        configuration.externalStorageThreshold = 64
        configuration.recordsHistory = history
        let store = try SQLiteStore(
            at: url, model: SQLiteStoreWritingTests.libraryModel(), configuration: configuration)
        let keys = try await store.newPrimaryKeys(forEntity: "Playlist", count: 2)
        let rows = zip(keys, ["A", "B"]).map { key, name in
            StoreRow(
                reference: RowReference(entityName: "Playlist", primaryKey: key),
                attributes: [
                    "name": .string(name), "cover": .data(Data(repeating: UInt8(key), count: 5000)),
                ])
        }
        try await store.save(StoreChangeSet(inserted: rows))
        let raw = try Connection(path: url.path, configuration: SQLiteConfiguration())
        let hostile = Data([2]) + Data("../../../../etc/passwd".utf8) + Data([0])
        try raw.execute("UPDATE ZPLAYLIST SET ZCOVER = \(hostile) WHERE Z_PK = \(keys[1])")
        return store
    }

    static var namesOnly: StoreFetchRequest {
        var request = StoreFetchRequest(entityName: "Playlist", sortDescriptors: [FetchSort(key: "name")])
        request.propertiesToFetch = ["name"]
        return request
    }

    static func names(_ values: [[String: AttributeValue]]) -> [AttributeValue?] { values.map { $0["name"] } }

    @Test func fetchValuesIsTheStoresOwnEverywhere() async throws {
        let folder = try TemporaryDirectory()
        let store = try await Self.store(in: folder)
        // The whole rows cannot be read, so the default (which reads them) would throw.
        await #expect(throws: TernError.self) { try await store.fetch(Self.namesOnly) }
        func generic<Store: PersistentStore>(_ store: Store) async throws -> [[String: AttributeValue]] {
            try await store.fetchValues(Self.namesOnly)
        }
        let existential: any PersistentStore = store
        #expect(Self.names(try await store.fetchValues(Self.namesOnly)) == [.string("A"), .string("B")])
        #expect(Self.names(try await existential.fetchValues(Self.namesOnly)) == [.string("A"), .string("B")])
        #expect(Self.names(try await generic(store)) == [.string("A"), .string("B")])
    }

    @Test func fetchPageIsTheStoresOwnEverywhere() async throws {
        let folder = try TemporaryDirectory()
        let store = try await Self.store(in: folder)
        // The default reads every match for each page, so it would trip over the second row.
        let request = StoreFetchRequest(entityName: "Playlist", sortDescriptors: [FetchSort(key: "name")])
        func generic<Store: PersistentStore>(_ store: Store) async throws -> StoreFetchPage {
            try await store.fetchPage(request, after: nil, size: 1)
        }
        let existential: any PersistentStore = store
        let pages = [
            try await store.fetchPage(request, after: nil, size: 1),
            try await existential.fetchPage(request, after: nil, size: 1),
            try await generic(store),
        ]
        for page in pages {
            #expect(page.rows.map { $0.attributes["name"] } == [.string("A")])
            #expect(page.next != nil)
        }
    }

    @Test func historyAndSynchronousReadsAreTheStoresOwnEverywhere() async throws {
        let folder = try TemporaryDirectory()
        let store = try await Self.store(in: folder, history: true)
        let existential: any PersistentStore = store
        func generic<Store: PersistentStore>(_ store: Store) async throws -> (Bool, HistoryToken?) {
            (store.recordsHistory, try await store.currentHistoryToken())
        }
        #expect(store.recordsHistory && existential.recordsHistory)
        let tokens = [
            try await store.currentHistoryToken(), try await existential.currentHistoryToken(),
            try await generic(store).1,
        ]
        #expect(tokens.allSatisfy { $0 != nil })
        #expect(try await existential.fetchHistory(HistoryFetchRequest()).count == 1)
        let first = RowReference(entityName: "Playlist", primaryKey: 1)
        #expect(try existential.rowsSynchronously(for: [first]).count == 1)
        #expect(try store.rowsSynchronously(for: [first]).count == 1)
    }
}
