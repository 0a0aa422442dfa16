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
        /// The `token` of each `Label`, in key order (text mapping only).
        var tokens: [AttributeValue?] = []
    }

    /// Migrates a new PostgreSQL store of `rows` with mappings compiled to SQL or not.
    static func migratePostgreSQL(
        _ rows: [StoreRow], compiled: Bool, text: Bool = false, filter: String? = nil, mapping: String? = nil
    ) async throws -> Result {
        let model = try text ? BulkMappingFixture.textModel() : BulkMappingFixture.model()
        let mapping =
            mapping ?? filter.map(BulkMappingFixture.textMapping(filter:))
            ?? (text ? BulkMappingFixture.textMapping : BulkMappingFixture.mapping)
        let url = try PostgreSQLTestServer.freshStoreURL(prefix: "bulk")
        defer { try? PostgreSQLStore.destroy(at: url) }
        do {
            let store = try PostgreSQLStore(url: url, model: model.versions[0].model)
            _ = try await store.save(StoreChangeSet(inserted: rows))
        }
        var options = MigrationOptions(
            batchSize: 16, environment: ExpressionEnvironment(now: BulkMappingFixture.textNow))
        options.compilesMappingsToSQL = compiled
        let events = EventLog()
        _ = try await PostgreSQLMigrator().migrateStore(
            at: url, model: model, mappings: [try StepMapping(jsonData: Data(mapping.utf8))],
            options: options, onEvent: { events.append($0) })
        let store = try PostgreSQLStore(url: url, model: model.versions[1].model, readOnly: true)
        let printed =
            text
            ? nil : try await store.fetch(StoreFetchRequest(entityName: "Printed")).min { $0.reference < $1.reference }
        let tokens =
            text
            ? try await store.fetch(StoreFetchRequest(entityName: "Label")).sorted { $0.reference < $1.reference }
                .map { $0.attributes["token"] ?? nil } : []
        return Result(
            contents: try await PostgreSQLMigrationTests.contents(of: store), asSQL: events.asSQL,
            firstPrinted: printed?.attributes["printed"], tokens: tokens)
    }

    /// Migrates a SQLite store of `rows` in Swift.
    static func migrateSQLite(
        _ rows: [StoreRow], text: Bool = false, filter: String? = nil, mapping: String? = nil
    ) async throws -> [String: [String]] {
        let model = try text ? BulkMappingFixture.textModel() : BulkMappingFixture.model()
        let mapping =
            mapping ?? filter.map(BulkMappingFixture.textMapping(filter:))
            ?? (text ? BulkMappingFixture.textMapping : BulkMappingFixture.mapping)
        let folder = try TemporaryDirectory()
        let url = folder.path("Events.sqlite")
        do {
            let store = try SQLiteStore(at: url, model: model.versions[0].model)
            _ = try await store.save(StoreChangeSet(inserted: rows))
        }
        var options = MigrationOptions(
            batchSize: 16, environment: ExpressionEnvironment(now: BulkMappingFixture.textNow))
        options.compilesMappingsToSQL = false
        _ = try await StoreMigrator().migrateStore(
            at: .file(url), model: model, mappings: [try StepMapping(jsonData: Data(mapping.utf8))],
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

    /// Filters run in the statement as the store translates fetch predicates, with the rows and
    /// keys the Swift path gives on both stores.
    @Test(arguments: ["count > 0 AND flag == YES", "name BEGINSWITH[c] 'a' OR owner.rank >= 1", "owner.active == YES"])
    func filtersGiveTheSwiftPathsRows(filter: String) async throws {
        let rows = BulkMappingFixture.textRows(count: 60, includesNUL: false) {
            $0.unicodeScalars.allSatisfy(\.isASCII)
        }
        let bulk = try await Self.migratePostgreSQL(rows, compiled: true, text: true, filter: filter)
        // PostgreSQL's fetch translation takes text comparisons other than equality back to Swift.
        #expect(bulk.asSQL == (filter.contains("BEGINSWITH") ? [] : ["ItemToLabel"]), "\(filter)")
        #expect(
            bulk.contents
                == (try await Self.migratePostgreSQL(rows, compiled: false, text: true, filter: filter)).contents)
        #expect(try await Self.migrateSQLite(rows, text: true, filter: filter) == bulk.contents, "\(filter)")
    }

    @Test func textConversionsAndIntegerArithmeticGiveTheSwiftPathsRows() async throws {
        let all = BulkMappingFixture.textRows(includesNUL: false)
        let ascii = BulkMappingFixture.textRows(includesNUL: false) { $0.unicodeScalars.allSatisfy(\.isASCII) }
        let bulk = try await Self.migratePostgreSQL(ascii, compiled: true, text: true)
        #expect(bulk.asSQL == ["ItemToLabel"])
        #expect(bulk.contents["Label"]?.count == ascii.filter { $0.reference.entityName == "Item" }.count)
        #expect(bulk.contents == (try await Self.migratePostgreSQL(ascii, compiled: false, text: true)).contents)
        #expect(try await Self.migrateSQLite(ascii, text: true) == bulk.contents)
        // Names outside ASCII send the mapping to Swift: the same rows.
        let mixed = try await Self.migratePostgreSQL(all, compiled: true, text: true)
        #expect(mixed.asSQL.isEmpty)
        #expect(try await Self.migrateSQLite(all, text: true) == mixed.contents)
        // A double out of range (SQLSTATE 22003) sends it to Swift, which gives an infinity.
        var huge = ascii
        huge[1].attributes["weight"] = .double(1e308)
        huge[1].attributes["count"] = .integer(Int64(Int32.max))
        let hugeResult = try await Self.migratePostgreSQL(huge, compiled: true, text: true)
        #expect(hugeResult.asSQL.isEmpty)
        #expect(try await Self.migrateSQLite(huge, text: true) == hugeResult.contents)
        // An overflow (SQLSTATE 22003) sends it to Swift too, which fails the migration.
        var overflowing = ascii
        overflowing[0].attributes["id"] = .integer(.max)
        overflowing[0].attributes["count"] = .integer(5)
        await #expect(
            performing: { try await Self.migratePostgreSQL(overflowing, compiled: true, text: true) },
            throws: { ($0 as? MigrationError)?.code == .evaluationFailed })
    }

    @Test func uuidMakesRandomUUIDsInSQL() async throws {
        let mapping = BulkMappingFixture.textMapping.replacingOccurrences(
            of: #""id": "$source.id","#, with: #""id": "$source.id", "token": "uuid()","#)
        #expect(mapping != BulkMappingFixture.textMapping)
        let rows = BulkMappingFixture.textRows(count: 30, includesNUL: false) {
            $0.unicodeScalars.allSatisfy(\.isASCII)
        }
        let result = try await Self.migratePostgreSQL(rows, compiled: true, text: true, mapping: mapping)
        #expect(result.asSQL == ["ItemToLabel"])
        let tokens = result.tokens.compactMap { token -> UUID? in
            if case .uuid(let uuid)? = token { return uuid }
            return nil
        }
        #expect(tokens.count == rows.filter { $0.reference.entityName == "Item" }.count)
        #expect(Set(tokens).count == tokens.count)
        #expect(tokens.allSatisfy { $0.uuid.6 >> 4 == 4 && $0.uuid.8 >> 6 == 2 })
    }

    @Test func numbersPostgreSQLCannotReadOrComputeAsSwiftGoBackToSwift() async throws {
        let ascii = BulkMappingFixture.textRows(count: 10, includesNUL: false) {
            $0.unicodeScalars.allSatisfy(\.isASCII)
        }
        // Text Swift reads as a number in another form, or past 18 digits: the same rows.
        for code in ["1.5", "\u{00A0}5", "9223372036854775807"] {
            var rows = ascii
            rows[2].attributes["code"] = .string(code)
            let bulk = try await Self.migratePostgreSQL(rows, compiled: true, text: true)
            #expect(bulk.asSQL.isEmpty, "\(code)")
            #expect(try await Self.migrateSQLite(rows, text: true) == bulk.contents, "\(code)")
        }
        // Dates in text formatDate would not write, or before 1583: the same rows.
        for (attribute, day) in [
            ("day", "2024-01-05 10:20:30 "), ("day", "2024-1-5 10:20:30"), ("day", "1500-01-01 00:00:00"),
            ("iso", "2024-02-30T00:00:00Z"), ("iso", "2024-01-05T24:00:00Z"), ("iso", "2024-01-05T10:20:30+01:00"),
        ] {
            var rows = ascii
            rows[2].attributes[attribute] = .string(day)
            let bulk = try await Self.migratePostgreSQL(rows, compiled: true, text: true)
            #expect(bulk.asSQL.isEmpty, "\(day)")
            #expect(try await Self.migrateSQLite(rows, text: true) == bulk.contents, "\(day)")
        }
        // Negative zero keeps its sign, as Swift's Double reads it.
        var negativeZero = ascii
        negativeZero[2].attributes["amount"] = .string("-0.0")
        let zero = try await Self.migratePostgreSQL(negativeZero, compiled: true, text: true)
        #expect(zero.asSQL == ["ItemToLabel"])
        #expect(zero.contents == (try await Self.migratePostgreSQL(negativeZero, compiled: false, text: true)).contents)
        // A tiny quotient (SQLSTATE 22003) goes to Swift, which gives zero.
        let tiny = BulkMappingFixture.textMapping.replacingOccurrences(
            of: #""weightShare": "$source.weight / 0.5""#, with: #""weightShare": "$source.weight / 1e300""#)
        let tinyResult = try await Self.migratePostgreSQL(ascii, compiled: true, text: true, mapping: tiny)
        #expect(tinyResult.asSQL.isEmpty)
        #expect(try await Self.migrateSQLite(ascii, text: true, mapping: tiny) == tinyResult.contents)
        // A zero divisor, a double outside bigint and text that is no number fail as in Swift.
        var failing: [(String, [StoreRow])] = []
        for replacement in [
            #""countShare": "$source.weight / $source.count""#, #""countShare": "integer($source.weight)""#,
        ] {
            let mapping = BulkMappingFixture.textMapping.replacingOccurrences(
                of: #""countShare": "$source.count / 3""#, with: replacement)
            #expect(mapping != BulkMappingFixture.textMapping)
            failing.append((mapping, ascii))
        }
        for (attribute, text) in [("code", "abc"), ("day", "2024-02-30 00:00:00"), ("day", "2024-01-05 24:00:00")] {
            var unreadable = ascii
            unreadable[3].attributes[attribute] = .string(text)
            failing.append((BulkMappingFixture.textMapping, unreadable))
        }
        for (mapping, rows) in failing {
            await #expect(
                performing: { try await Self.migratePostgreSQL(rows, compiled: true, text: true, mapping: mapping) },
                throws: { ($0 as? MigrationError)?.code == .evaluationFailed })
        }
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
