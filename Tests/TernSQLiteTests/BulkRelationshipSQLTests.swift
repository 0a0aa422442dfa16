import Foundation
import TernCore
import TernMigration
import TernTestSupport
import Testing

@testable import TernSQLite

/// Stage 2 of default-policy mappings set in SQL (#24) gives what the Swift path gives, row for
/// row: to-ones, ordered one-to-manys, many-to-manys, a self-referential tree, filtered-out and
/// dangling objects; and a mapping SQL cannot set as Swift does stays in Swift.
@Suite struct BulkRelationshipSQLTests {
    /// Migrates and returns each entity's rows and the mappings whose relationships were set in SQL.
    static func migrate(_ rows: [StoreRow], mapping: String = BulkRelationshipFixture.mapping, compiled: Bool)
        async throws -> (
            rows: [[StoreRow]], relationshipsInSQL: [String]
        )
    {
        let directory = try TemporaryDirectory()
        let url = directory.path("Library.sqlite")
        let model = try BulkRelationshipFixture.model()
        try await MigrationStores.make(at: url, model: model.versions[0].model, rows: rows)
        var options = MigrationOptions(batchSize: 16)
        options.compilesMappingsToSQL = compiled
        let recorder = EventRecorder()
        try await SQLiteStoreMigrator().migrateStore(
            at: url, model: model, mappings: [try StepMapping(jsonData: Data(mapping.utf8))], options: options,
            onEvent: { recorder.record($0) })
        let inSQL = recorder.events.compactMap { event -> String? in
            if case .relationshipsSetAsSQL(_, let name) = event { return name }
            return nil
        }
        var result: [[StoreRow]] = []
        for entity in BulkRelationshipFixture.entities {
            result.append(try await MigrationStores.rows(of: entity, at: url, model: model.versions[1].model))
        }
        return (result, inSQL)
    }

    static func expectSameRows(
        _ sql: [[StoreRow]], _ swift: [[StoreRow]], sourceLocation: SourceLocation = #_sourceLocation
    ) {
        for (entity, (left, right)) in zip(BulkRelationshipFixture.entities, zip(sql, swift)) {
            #expect(left.count == right.count, "\(entity)", sourceLocation: sourceLocation)
            for (row, expected) in zip(left, right) {
                #expect(row.reference == expected.reference, sourceLocation: sourceLocation)
                #expect(row.attributes == expected.attributes, sourceLocation: sourceLocation)
                #expect(row.toOne == expected.toOne, "\(row.reference)", sourceLocation: sourceLocation)
                #expect(row.toMany == expected.toMany, "\(row.reference)", sourceLocation: sourceLocation)
            }
        }
    }

    @Test func setsEveryKindOfRelationshipAsTheSwiftPathDoes() async throws {
        let rows = BulkRelationshipFixture.rows(shelves: 40)
        let sql = try await Self.migrate(rows, compiled: true)
        let swift = try await Self.migrate(rows, compiled: false)
        #expect(sql.relationshipsInSQL == ["ShelfToShelf", "BookToBook", "TagToTag", "FolderToFolder"])
        #expect(swift.relationshipsInSQL.isEmpty)
        Self.expectSameRows(sql.rows, swift.rows)
        // The fixture exercises what it claims: ordered books, dropped short books, tags, a tree.
        let shelves = sql.rows[0]
        #expect(shelves.contains { ($0.toMany["books"]?.count ?? 0) >= 2 })
        #expect(sql.rows[1].count < rows.filter { $0.reference.entityName == "Book" }.count)
        #expect(sql.rows[2].contains { ($0.toMany["books"]?.count ?? 0) >= 2 })
        #expect(sql.rows[3].filter { $0.toOne["parent"] != nil }.count == 9)
        #expect(sql.rows[3].contains { ($0.toMany["children"]?.count ?? 0) == 3 })
    }

    @Test func aRelationshipSQLCannotSetAsSwiftDoesStaysInSwift() async throws {
        // A key path through two relationships has no SQL form: BookToBook stays in Swift, the
        // others still run in SQL, and the store is the Swift path's.
        let mapping = BulkRelationshipFixture.mapping.replacingOccurrences(
            of: #""tags": "destinationInstances($source.tags)""#,
            with: #""tags": "destinationInstances($source.shelf.books)""#)
        #expect(mapping != BulkRelationshipFixture.mapping)
        let rows = BulkRelationshipFixture.rows(shelves: 12)
        let sql = try await Self.migrate(rows, mapping: mapping, compiled: true)
        let swift = try await Self.migrate(rows, mapping: mapping, compiled: false)
        #expect(sql.relationshipsInSQL == ["ShelfToShelf", "TagToTag", "FolderToFolder"])
        Self.expectSameRows(sql.rows, swift.rows)
    }

    @Test func aDanglingKeyLeavesTheRelationshipNilOnBothPaths() async throws {
        // Folders' parent keys that point at no folder dangle: both paths leave them nil.
        var rows = BulkRelationshipFixture.rows(shelves: 6)
        rows.append(
            StoreRow(
                reference: RowReference(entityName: "Folder", primaryKey: 99), attributes: ["name": .string("orphan")],
                toOne: ["parent": RowReference(entityName: "Folder", primaryKey: 1234)]))
        let sql = try await Self.migrate(rows, compiled: true)
        let swift = try await Self.migrate(rows, compiled: false)
        #expect(sql.relationshipsInSQL.contains("FolderToFolder"))
        Self.expectSameRows(sql.rows, swift.rows)
    }

    @Test func planForecastsWhichMappingsSetTheirRelationshipsInSQL() throws {
        let model = try BulkRelationshipFixture.model()
        func forecast(_ mapping: String) throws -> [String: MappingRunner.SQLForecast.Relationships?] {
            let step = try StepMapping(jsonData: Data(mapping.utf8))
            let entries = try MappingRunner.sqlForecast(
                step.passes, policies: MigrationPolicyRegistry(), sourceModel: model.versions[0].model,
                destinationModel: model.versions[1].model, runsFilterAsSQL: { _, _ in true })
            return Dictionary(uniqueKeysWithValues: entries.map { ($0.mapping, $0.relationships) })
        }
        let all = try forecast(BulkRelationshipFixture.mapping)
        #expect(all["BookToBook"] == .some(.sql) && all["FolderToFolder"] == .some(.sql))
        let twoSteps = try forecast(
            BulkRelationshipFixture.mapping.replacingOccurrences(
                of: #""tags": "destinationInstances($source.tags)""#,
                with: #""tags": "destinationInstances($source.shelf.books)""#))
        #expect(twoSteps["BookToBook"] == .some(.swift("tags: only one relationship of the source is read in SQL")))
        #expect(twoSteps["TagToTag"] == .some(.sql))
    }
}
