import Foundation
import TernCore
import TernRelational
import TernTestSupport
import Testing

@testable import TernSQLite

extension SQLiteStore {
    /// The details of SQLite's plan for a statement (`EXPLAIN QUERY PLAN`).
    fileprivate func queryPlan(_ sql: SQL) throws -> [String] {
        try connection.fetchAll(SQL(unsafeSQL: "EXPLAIN QUERY PLAN " + sql.text, arguments: sql.arguments))
            .compactMap { $0.last?.string }
    }
}

@Suite struct PredicateSQLTests {
    /// A store with the conformance model and its equivalence data.
    private static func conformanceStore(in folder: TemporaryDirectory) async throws -> SQLiteStore {
        let store = try SQLiteStore(at: folder.path("p.sqlite"), model: ConformanceModel.model)
        _ = try await store.save(try await StoreConformance.equivalenceData(keys: store))
        return store
    }

    @Test func valuesAreBoundNeverInterpolated() async throws {
        let folder = try TemporaryDirectory()
        let store = try await Self.conformanceStore(in: folder)
        let hostile = ["'); DROP TABLE ZSAMPLE; --", "\" OR 1=1 --", "x%_*?\\", "Ǆ'\u{0}"]
        for value in hostile {
            for format in ["string == %@", "string BEGINSWITH[cd] %@", "string LIKE %@", "string IN {%@, 'b'}"] {
                let predicate = try FetchPredicate(format, arguments: [.value(.string(value))])
                let request = StoreFetchRequest(entityName: "Sample", predicate: predicate)
                let statement = try #require(try await store.translatedFetch(request), "\(format) translates")
                #expect(!statement.sql.text.contains(value))
                #expect(statement.sql.arguments.contains(.text(value)))
                #expect(!statement.sql.text.contains("'"))
                _ = try await store.fetch(request)
            }
        }
        #expect(try await store.count(StoreFetchRequest(entityName: "Sample")) == 14)
    }

    @Test func emitsJoinsSubqueriesAndOrder() async throws {
        let folder = try TemporaryDirectory()
        let store = try await Self.conformanceStore(in: folder)
        let joined = StoreFetchRequest(
            entityName: "Pet", predicate: try FetchPredicate("owner.team.name ==[c] 'red' AND owner.age > 18"),
            sortDescriptors: [FetchSort(key: "owner.name", caseInsensitive: true)])
        let statement = try #require(try await store.translatedFetch(joined))
        #expect(statement.isOrdered)
        #expect(statement.sql.text.components(separatedBy: "LEFT JOIN").count == 3)  // owner and owner.team, once each
        #expect(statement.sql.text.contains("COLLATE TERN_STRING_C ASC, t0.Z_PK"))
        #expect(statement.sql.text.contains("TERN_COMPARE("))
        let quantified = StoreFetchRequest(
            entityName: "Person", predicate: try FetchPredicate("ALL pets.name BEGINSWITH 'T' AND pets.@count > 1"))
        let text = try #require(try await store.translatedFetch(quantified)).sql.text
        #expect(text.contains("NOT EXISTS (SELECT 1 FROM"))
        #expect(text.contains("(SELECT COUNT(*) FROM"))
        let manyToMany = StoreFetchRequest(
            entityName: "Book", predicate: try FetchPredicate("ANY authors.name == 'Ann'"))
        #expect(try #require(try await store.translatedFetch(manyToMany)).sql.text.contains("JOIN"))
        var limited = StoreFetchRequest(entityName: "Sample", predicate: try FetchPredicate("integer16 > 0"))
        limited.limit = 2
        limited.offset = 1
        let window = try #require(await store.translatedCount(limited))
        #expect(window.text.hasPrefix("SELECT COUNT(*) FROM (SELECT 1 FROM"))
        #expect(window.text.hasSuffix("LIMIT ? OFFSET ?)"))
    }

    /// A to-one relationship compared with nil tests its foreign key, through the joins of the
    /// key path before it.
    @Test func toOneRelationshipsCompareWithNilInSQL() async throws {
        let folder = try TemporaryDirectory()
        let store = try await Self.conformanceStore(in: folder)
        let cases = [
            ("owner == nil", #"(t0."ZOWNER" IS NULL)"#, 0), ("owner != nil", #"(t0."ZOWNER" IS NOT NULL)"#, 0),
            ("owner.team == nil", #"(t1."ZTEAM" IS NULL)"#, 1),
        ]
        for (format, condition, joins) in cases {
            let request = StoreFetchRequest(entityName: "Pet", predicate: try FetchPredicate(format))
            let text = try #require(try await store.translatedFetch(request), "\(format)").sql.text
            #expect(text.contains(condition), "\(format): \(text)")
            #expect(text.components(separatedBy: "LEFT JOIN").count == joins + 1, "\(format): \(text)")
        }
        let all = try await store.count(StoreFetchRequest(entityName: "Pet"))
        let without = try await store.count(
            StoreFetchRequest(entityName: "Pet", predicate: try FetchPredicate("owner == nil")))
        let with = try await store.count(
            StoreFetchRequest(entityName: "Pet", predicate: try FetchPredicate("owner != nil")))
        #expect(without == 1 && with == all - 1)
    }

    @Test func untranslatablePredicatesFallBackToSwift() async throws {
        let folder = try TemporaryDirectory()
        let store = try await Self.conformanceStore(in: folder)
        for format in [
            "decimal > 1", "string == 3", "owner IN {nil}", "pets.name CONTAINS 'Tom'", "string MATCHES '('",
        ] {
            let entity = format.contains("owner") ? "Pet" : format.contains("pets") ? "Person" : "Sample"
            let request = StoreFetchRequest(entityName: entity, predicate: try FetchPredicate(format))
            #expect(try await store.translatedFetch(request) == nil, "\(format)")
        }
        // A broken regular expression is reported as Swift evaluation reports it.
        await #expect(throws: TernError.self) {
            try await store.fetch(
                StoreFetchRequest(entityName: "Sample", predicate: try FetchPredicate("string MATCHES '('")))
        }
        // Most of the equivalence table runs in SQL.
        var translated = 0
        for testCase in StoreConformance.predicateCases {
            let predicate = try FetchPredicate(testCase.format, arguments: testCase.arguments)
            let request = StoreFetchRequest(entityName: testCase.entity, predicate: predicate)
            if try await store.translatedFetch(request) != nil { translated += 1 }
        }
        #expect(StoreConformance.predicateCases.count >= 60)
        #expect(translated >= StoreConformance.predicateCases.count - 8)
    }

    @Test func countWithPredicateOnIndexedAttributeUsesIndex() async throws {
        var rank = AttributeDescription(name: "rank", type: .integer64)
        rank.isIndexed = true
        let model = ManagedObjectModel(entities: [
            EntityDescription(name: "Item", attributes: [rank, AttributeDescription(name: "label", type: .string)])
        ])
        let folder = try TemporaryDirectory()
        let store = try SQLiteStore(at: folder.path("i.sqlite"), model: model)
        let keys = try await store.newPrimaryKeys(forEntity: "Item", count: 50)
        let rows = keys.map { key in
            StoreRow(
                reference: RowReference(entityName: "Item", primaryKey: key), attributes: ["rank": .integer(key % 7)])
        }
        _ = try await store.save(StoreChangeSet(inserted: rows))
        let request = StoreFetchRequest(entityName: "Item", predicate: try FetchPredicate("rank == 3"))
        let sql = try #require(await store.translatedCount(request))
        let plan = try await store.queryPlan(sql)
        #expect(plan.contains { $0.contains("USING") && $0.contains("INDEX") && $0.contains("ZRANK") }, "\(plan)")
        #expect(try await store.count(request) == rows.filter { $0.attributes["rank"] == .integer(3) }.count)
    }
}
