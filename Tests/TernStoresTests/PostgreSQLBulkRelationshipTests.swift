import Foundation
import Synchronization
import TernCore
import TernMigration
import TernStores
import TernTestSupport
import Testing

@testable import TernPostgreSQL

/// Stage 2 set in SQL on a PostgreSQL store (#24) gives what the Swift path gives, row for row.
@Suite(.enabled(if: PostgreSQLTestServer.isAvailable, PostgreSQLTestServer.skipComment))
struct PostgreSQLBulkRelationshipTests {
    /// Migrates a new store of `rows`; returns each entity's rows and the mappings whose
    /// relationships were set in SQL.
    static func migrate(_ rows: [StoreRow], mapping: String, compiled: Bool) async throws -> (
        rows: [[StoreRow]], relationshipsInSQL: [String]
    ) {
        let model = try BulkRelationshipFixture.model()
        let url = try PostgreSQLTestServer.freshStoreURL(prefix: "bulkrel")
        defer { try? PostgreSQLStore.destroy(at: url) }
        do {
            let store = try PostgreSQLStore(url: url, model: model.versions[0].model)
            _ = try await store.save(StoreChangeSet(inserted: rows))
        }
        var options = MigrationOptions(batchSize: 16)
        options.compilesMappingsToSQL = compiled
        let events = EventLog()
        _ = try await PostgreSQLMigrator().migrateStore(
            at: url, model: model, mappings: [try StepMapping(jsonData: Data(mapping.utf8))], options: options,
            onEvent: { events.append($0) })
        let store = try PostgreSQLStore(url: url, model: model.versions[1].model, readOnly: true)
        var result: [[StoreRow]] = []
        for entity in BulkRelationshipFixture.entities {
            result.append(
                try await store.fetch(StoreFetchRequest(entityName: entity)).filter {
                    $0.reference.entityName == entity
                }
                .sorted { $0.reference < $1.reference })
        }
        let inSQL = events.events.withLock {
            $0.compactMap { event in
                if case .relationshipsSetAsSQL(_, let name) = event { name } else { nil }
            }
        }
        return (result, inSQL)
    }

    @Test(arguments: [false, true]) func setsEveryKindOfRelationshipAsTheSwiftPathDoes(twoStepKeyPath: Bool)
        async throws
    {
        var mapping = BulkRelationshipFixture.mapping
        if twoStepKeyPath {
            mapping = mapping.replacingOccurrences(
                of: #""tags": "destinationInstances($source.tags)""#,
                with: #""tags": "destinationInstances($source.shelf.books)""#)
        }
        let rows = BulkRelationshipFixture.rows(shelves: 24)
        let sql = try await Self.migrate(rows, mapping: mapping, compiled: true)
        let swift = try await Self.migrate(rows, mapping: mapping, compiled: false)
        #expect(
            sql.relationshipsInSQL
                == (twoStepKeyPath
                    ? ["ShelfToShelf", "TagToTag", "FolderToFolder"]
                    : ["ShelfToShelf", "BookToBook", "TagToTag", "FolderToFolder"]))
        #expect(swift.relationshipsInSQL.isEmpty)
        for (entity, (left, right)) in zip(BulkRelationshipFixture.entities, zip(sql.rows, swift.rows)) {
            #expect(left.count == right.count, "\(entity)")
            for (row, expected) in zip(left, right) {
                #expect(row.reference == expected.reference)
                #expect(row.attributes == expected.attributes)
                #expect(row.toOne == expected.toOne, "\(row.reference)")
                #expect(row.toMany == expected.toMany, "\(row.reference)")
            }
        }
        #expect(sql.rows[0].contains { ($0.toMany["books"]?.count ?? 0) >= 2 })
        #expect(sql.rows[3].contains { ($0.toMany["children"]?.count ?? 0) == 3 })
    }
}
