import Foundation
import TernCore
import TernMigration
import TernTestSupport
import Testing

@testable import TernSQLite

/// Mappings compiled to one `INSERT … SELECT` (#24) give what the Swift path gives, value for
/// value, and hand back to Swift every store the statement cannot migrate as Swift does.
@Suite struct BulkMappingSQLTests {
    /// Migrates a store of `rows` with mappings compiled to SQL or not; returns the rows of both
    /// destination entities and the mappings that ran as SQL.
    static func migrate(_ rows: [StoreRow], compiled: Bool) async throws -> (
        printed: [StoreRow], stamps: [StoreRow], asSQL: [String]
    ) {
        let model = try BulkMappingFixture.model()
        let directory = try TemporaryDirectory()
        let url = directory.path("Events.sqlite")
        try await MigrationStores.make(at: url, model: model.versions[0].model, rows: rows)
        var options = MigrationOptions(batchSize: 16)
        options.compilesMappingsToSQL = compiled
        let recorder = EventRecorder()
        try await SQLiteStoreMigrator().migrateStore(
            at: url, model: model, mappings: [try StepMapping(jsonData: Data(BulkMappingFixture.mapping.utf8))],
            options: options,
            onEvent: { recorder.record($0) })
        let asSQL = recorder.events.compactMap { event -> String? in
            if case .entityMappingRanAsSQL(_, let name) = event { return name }
            return nil
        }
        let v2 = model.versions[1].model
        return (
            try await MigrationStores.rows(of: "Printed", at: url, model: v2),
            try await MigrationStores.rows(of: "Stamp", at: url, model: v2), asSQL
        )
    }

    @Test func givesTheSwiftPathsRowsOverEdgeAndGeneratedDates() async throws {
        let rows = BulkMappingFixture.rows(dates: BulkMappingFixture.dates())
        let bulk = try await Self.migrate(rows, compiled: true)
        let swift = try await Self.migrate(rows, compiled: false)
        #expect(bulk.asSQL == ["EventToPrinted", "EventToStamp"])
        #expect(swift.asSQL.isEmpty)
        #expect(bulk.printed.count == rows.count)
        for (sql, expected) in zip(bulk.printed, swift.printed) {
            #expect(sql.reference == expected.reference)
            #expect(sql.attributes == expected.attributes)
            #expect(sql.toOne == expected.toOne)
        }
        for (sql, expected) in zip(bulk.stamps, swift.stamps) {
            #expect(sql.reference == expected.reference)
            #expect(sql.attributes == expected.attributes)
            #expect(sql.toOne == expected.toOne)
        }
        #expect(bulk.printed.count == swift.printed.count && bulk.stamps.count == swift.stamps.count)
        // The printed text is DatePattern's: literal text and `%` kept.
        let first = try #require(bulk.printed.first?.attributes["printed"])
        #expect(first == .string(BulkMappingFixture.firstPrinted))
    }

    @Test func handsADateDatePatternCannotFormatBackToSwift() async throws {
        // 1500 is before the Gregorian calendar's start: Swift formats it with DateFormatter.
        let rows = BulkMappingFixture.rows(dates: [0, -15_800_000_000, 60])
        let bulk = try await Self.migrate(rows, compiled: true)
        let swift = try await Self.migrate(rows, compiled: false)
        // EventToStamp shares EventToPrinted's walk over Event, after it: it stays in Swift too,
        // so that each event's destinations keep the order they were made in.
        #expect(bulk.asSQL.isEmpty)
        #expect(bulk.printed.map(\.attributes) == swift.printed.map(\.attributes))
        #expect(bulk.stamps.map(\.toOne) == swift.stamps.map(\.toOne))
    }
}
