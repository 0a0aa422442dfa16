import Foundation
import TernCore
import TernRelational
import TernTestSupport
import Testing

@testable import TernSQLite

/// SQLite errors keep what caused them, instead of turning it into text.
@Suite struct ErrorCauseTests {
    @Test func aDamagedModelCacheKeepsTheDecodingError() async throws {
        let tmp = try TemporaryDirectory()
        let url = tmp.path("Notes.sqlite")
        let model = try ManagedObjectModel { Entity("Note") { Attribute("title", .string) } }
        _ = try await SQLiteStore(at: url, model: model).save(
            StoreChangeSet(inserted: [
                StoreRow(
                    reference: RowReference(entityName: "Note", primaryKey: 1), attributes: ["title": .string("a")])
            ]))
        do {
            let connection = try SQLiteStore.openExisting(url, configuration: SQLiteConfiguration())
            try connection.executeOnce("UPDATE Z_MODELCACHE SET Z_CONTENT = x'0011223344556677'")
        }
        let error = try #require(throws: TernError.self) { try SQLiteStore(at: url) }
        #expect(error.code == .schemaMismatch)
        #expect(error.message.contains("Z_MODELCACHE"))
        let cause = try #require(error.underlyingError)
        #expect(!(cause is SQLiteError), "the cause is the decoding failure, not another SQLite error")
        // Opened with its model, the store is fine.
        #expect(try await SQLiteStore(at: url, model: model).count(StoreFetchRequest(entityName: "Note")) == 1)
    }
}
