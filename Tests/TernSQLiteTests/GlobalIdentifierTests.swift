import Foundation
import TernCore
import TernRelational
import TernTestSupport
import Testing

@testable import TernSQLite

/// Global identities (sync's object UUIDs) in `TERNSYNC_OBJECT`.
@Suite struct GlobalIdentifierTests {
    static var tracking: SQLiteConfiguration {
        var configuration = SQLiteConfiguration()
        configuration.tracksGlobalIdentifiers = true
        return configuration
    }

    @Test func insertsGetIdentitiesAndDeletesKeepThem() async throws {
        let tmp = try TemporaryDirectory()
        let url = tmp.url.appendingPathComponent("ids.sqlite")
        let store = try SQLiteStore(at: url, model: HistoryConformance.model, configuration: Self.tracking)
        #expect(store.tracksGlobalIdentifiers)
        let keys = try await store.newPrimaryKeys(forEntity: "Dessert", count: 2)
        let rows = keys.map { StoreRow(reference: RowReference(entityName: "Dessert", primaryKey: $0)) }
        _ = try await store.save(StoreChangeSet(inserted: rows))
        let first = try #require(try await store.globalIdentity(of: rows[0].reference))
        let second = try #require(try await store.globalIdentity(of: rows[1].reference))
        #expect(first.identifier != second.identifier && !first.isDeleted)
        #expect(try await store.globalIdentity(withIdentifier: first.identifier) == first)

        _ = try await store.save(StoreChangeSet(deleted: [rows[0].reference: 1]))
        let deleted = try #require(try await store.globalIdentity(withIdentifier: first.identifier))
        #expect(deleted.isDeleted && deleted.reference == rows[0].reference)
        #expect(try await store.globalIdentity(withIdentifier: UUID()) == nil)

        // Reopened without the option, the store keeps tracking and the identities stay.
        let reopened = try SQLiteStore(at: url, model: HistoryConformance.model)
        #expect(reopened.tracksGlobalIdentifiers)
        #expect(try await reopened.globalIdentity(of: rows[1].reference) == second)
    }

    @Test func existingObjectsGetIdentitiesWhenTrackingStarts() async throws {
        let tmp = try TemporaryDirectory()
        let url = try tmp.copy(Fixtures.url("CoreDataPlus/SampleModel/Fixtures/SampleModel_V1.sqlite"))
        let plain = try SQLiteStore(at: url)
        #expect(!plain.tracksGlobalIdentifiers)
        await #expect(throws: TernError.self) { try await plain.globalIdentity(withIdentifier: UUID()) }

        let store = try SQLiteStore(at: url, configuration: Self.tracking)
        let counts = try Connection(path: url.path, configuration: .readOnly).fetchAll(
            """
            SELECT COUNT(*), COUNT(DISTINCT ZUUID), MIN(length(ZUUID)), MAX(length(ZUUID)) FROM TERNSYNC_OBJECT
            """)
        // 115 cars, 5 sport cars, 5 expensive sport cars, 20 people.
        #expect(counts == [[.integer(145), .integer(145), .integer(16), .integer(16)]])
        let person = try #require(try await store.globalIdentity(of: RowReference(entityName: "Person", primaryKey: 1)))
        #expect(!person.isDeleted)
        // A second open finds every object identified and writes nothing, even while another
        // connection holds the write lock.
        let writer = try Connection(path: url.path, configuration: SQLiteConfiguration())
        try writer.execute("BEGIN IMMEDIATE")
        var configuration = Self.tracking
        configuration.busyTimeout = .milliseconds(50)
        _ = try SQLiteStore(at: url, configuration: configuration)
        try writer.execute("ROLLBACK")
        let again = try Connection(path: url.path, configuration: .readOnly).fetchValue(
            "SELECT COUNT(*) FROM TERNSYNC_OBJECT")
        #expect(again == .integer(145))
        let report = try await StoreVerifier.verify(storeAt: url)
        #expect(report.problems.isEmpty)
    }
}
