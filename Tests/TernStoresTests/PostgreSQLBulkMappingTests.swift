import Foundation
import Synchronization
import TernCore
import TernMigration
import TernSQLite
import TernStores
import TernTestSupport
import Testing

@testable import TernPostgreSQL

/// Mappings compiled to one `INSERT … SELECT` on a PostgreSQL store (#24) give what the Swift
/// path gives, on PostgreSQL and on SQLite, value for value, and hand back to Swift every store
/// the statement cannot migrate as Swift does.
@Suite(.enabled(if: PostgreSQLTestServer.isAvailable, PostgreSQLTestServer.skipComment))
struct PostgreSQLBulkMappingTests {
    /// The destination rows of a migration, and the mappings that ran as SQL.
    struct Result {
        var contents: [String: [String]]
        var asSQL: [String]
        /// The `printed` value of the destination object with the smallest key.
        var firstPrinted: AttributeValue?
    }

    /// Migrates a new PostgreSQL store of `rows` with mappings compiled to SQL or not.
    static func migratePostgreSQL(_ rows: [StoreRow], compiled: Bool) async throws -> Result {
        let model = try BulkMappingFixture.model()
        let url = try PostgreSQLTestServer.freshStoreURL(prefix: "bulk")
        defer { try? PostgreSQLStore.destroy(at: url) }
        do {
            let store = try PostgreSQLStore(url: url, model: model.versions[0].model)
            _ = try await store.save(StoreChangeSet(inserted: rows))
        }
        var options = MigrationOptions(batchSize: 16)
        options.compilesMappingsToSQL = compiled
        let events = EventLog()
        _ = try await PostgreSQLMigrator().migrateStore(
            at: url, model: model, mappings: [try StepMapping(jsonData: Data(BulkMappingFixture.mapping.utf8))],
            options: options, onEvent: { events.append($0) })
        let store = try PostgreSQLStore(url: url, model: model.versions[1].model, readOnly: true)
        let printed = try await store.fetch(StoreFetchRequest(entityName: "Printed")).min {
            $0.reference < $1.reference
        }
        return Result(
            contents: try await PostgreSQLMigrationTests.contents(of: store), asSQL: events.asSQL,
            firstPrinted: printed?.attributes["printed"])
    }

    /// Migrates a SQLite store of `rows` in Swift.
    static func migrateSQLite(_ rows: [StoreRow]) async throws -> [String: [String]] {
        let model = try BulkMappingFixture.model()
        let folder = try TemporaryDirectory()
        let url = folder.path("Events.sqlite")
        do {
            let store = try SQLiteStore(at: url, model: model.versions[0].model)
            _ = try await store.save(StoreChangeSet(inserted: rows))
        }
        var options = MigrationOptions(batchSize: 16)
        options.compilesMappingsToSQL = false
        _ = try await StoreMigrator().migrateStore(
            at: .file(url), model: model, mappings: [try StepMapping(jsonData: Data(BulkMappingFixture.mapping.utf8))],
            options: options)
        let store = try SQLiteStore(at: url, model: model.versions[1].model, configuration: .readOnly)
        return try await PostgreSQLMigrationTests.contents(of: store)
    }

    /// Keys with gaps (`row_number()` gives the destination keys) and without (the source key
    /// plus an offset does), not starting at 1.
    @Test(arguments: [nil, 40] as [Int64?])
    func givesTheSwiftPathsRowsOverEdgeAndGeneratedDates(denseFrom: Int64?) async throws {
        let rows = BulkMappingFixture.rows(dates: BulkMappingFixture.dates(), denseFrom: denseFrom)
        let bulk = try await Self.migratePostgreSQL(rows, compiled: true)
        let swift = try await Self.migratePostgreSQL(rows, compiled: false)
        #expect(bulk.asSQL == ["EventToPrinted", "EventToStamp"])
        #expect(swift.asSQL.isEmpty)
        #expect(bulk.contents["Printed"]?.count == rows.count)
        #expect(bulk.contents == swift.contents)
        #expect(try await Self.migrateSQLite(rows) == bulk.contents)
        #expect(bulk.firstPrinted == .string(BulkMappingFixture.firstPrinted))
    }

    @Test(arguments: [-15_800_000_000, Double.infinity, -Double.infinity, 1e300])
    func handsADateDatePatternCannotFormatBackToSwift(date: Double) async throws {
        // 1500 is before the Gregorian calendar's start: Swift formats it with DateFormatter.
        let rows = BulkMappingFixture.rows(dates: [0, date, 60])
        let bulk = try await Self.migratePostgreSQL(rows, compiled: true)
        let swift = try await Self.migratePostgreSQL(rows, compiled: false)
        // EventToStamp shares EventToPrinted's walk over Event, after it: it stays in Swift too.
        #expect(bulk.asSQL.isEmpty)
        #expect(bulk.contents == swift.contents)
        #expect(bulk.contents["Printed"]?.count == 3)
    }
}

extension EventLog {
    /// The entity mappings that ran as SQL, in order.
    var asSQL: [String] {
        events.withLock {
            $0.compactMap { event in
                if case .entityMappingRanAsSQL(_, let name) = event { name } else { nil }
            }
        }
    }
}
