import Foundation
import TernCore
import TernRelational
import TernSQLite
import TernTestSupport
import Testing

@testable import TernPostgreSQL

/// As on SQLite: a row whose `Z_ENT` disagrees with the only entity of its table is one of that
/// entity's objects, and verification warns about it; in a shared table `Z_ENT` still decides.
@Suite(.enabled(if: PostgreSQLTestServer.isAvailable, PostgreSQLTestServer.skipComment))
struct PostgreSQLUnsharedTableTests {
    @Test func theRowIsCountedFetchedAndWarnedAboutAsItsTablesEntity() async throws {
        let model = try ManagedObjectModel {
            Entity("Cook") { Attribute("name", .string) }
            Entity("Dish") { Attribute("title", .string) }
            Entity("Item") { Attribute("label", .string) }
            Entity("Special", parent: "Item") { Attribute("extra", .string) }
        }
        func reference(_ entity: String, _ key: Int64) -> RowReference {
            RowReference(entityName: entity, primaryKey: key)
        }
        let url = try PostgreSQLTestServer.freshStoreURL(prefix: "unshared")
        let store = try PostgreSQLStore(url: url, model: model)
        var rows = [StoreRow(reference: reference("Cook", 1), attributes: ["name": .string("Ada")])]
        for key in try await store.newPrimaryKeys(forEntity: "Dish", count: 4) {
            rows.append(StoreRow(reference: reference("Dish", key), attributes: ["title": .string("d\(key)")]))
        }
        rows.append(StoreRow(reference: reference("Item", 1), attributes: ["label": .string("plain")]))
        rows.append(StoreRow(reference: reference("Special", 2), attributes: ["label": .string("fancy")]))
        _ = try await store.save(StoreChangeSet(inserted: rows))
        let connection = try TernPostgreSQL.Connection(try PostgreSQLLocation(url))
        try connection.execute(#"UPDATE "ZDISH" SET "Z_ENT" = 1 WHERE "Z_PK" = 2"#)
        try connection.execute(#"UPDATE "ZITEM" SET "Z_ENT" = 3 WHERE "Z_PK" = 2"#)

        let reader = try PostgreSQLStore(url: url, model: model)
        #expect(try await reader.count(StoreFetchRequest(entityName: "Dish")) == 4)
        #expect(try await reader.count(StoreFetchRequest(entityName: "Cook")) == 1)
        #expect(try await reader.count(StoreFetchRequest(entityName: "Special")) == 0)
        let dishes = try await reader.fetch(
            StoreFetchRequest(entityName: "Dish", sortDescriptors: [FetchSort(key: "title")]))
        #expect(dishes.map(\.reference) == (1...4).map { reference("Dish", $0) })
        let matching = try await reader.fetch(
            StoreFetchRequest(entityName: "Dish", predicate: try FetchPredicate("title == 'd2'")))
        #expect(matching.map(\.reference) == [reference("Dish", 2)])
        #expect(
            try await reader.fetchReferences(
                StoreFetchRequest(entityName: "Dish", sortDescriptors: [FetchSort(key: "title")]))
                == (1...4).map { reference("Dish", $0) })
        #expect(try await reader.rows(for: [reference("Dish", 2)]).map(\.reference) == [reference("Dish", 2)])
        #expect(
            try await reader.fetch(StoreFetchRequest(entityName: "Item")).map(\.reference) == [
                reference("Item", 1), reference("Item", 2),
            ])

        let report = try await reader.verify()
        #expect(report.isClean, "\(report.problems)")
        #expect(report.warnings.map(\.kind) == [.entityNumberMismatch])
        #expect(report.warnings.first?.entityName == "Dish")
        #expect(report.warnings.first?.primaryKey == 2)
    }
}
