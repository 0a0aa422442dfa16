import Foundation
import Synchronization
import TernCore
import TernMigration
import TernTestSupport
import Testing

@testable import TernSQLite

/// Mappings compiled to one `INSERT … SELECT` (#24) give what the Swift path gives, value for
/// value, and hand back to Swift every store the statement cannot migrate as Swift does.
@Suite struct BulkMappingSQLTests {
    /// Migrates a store of `rows` with a mapping compiled to SQL or not; returns the rows of each
    /// destination entity named and the mappings that ran as SQL.
    static func migrate(
        _ rows: [StoreRow], model: VersionedModel, mapping: String, entities: [String], compiled: Bool,
        environment: ExpressionEnvironment = ExpressionEnvironment(now: BulkMappingFixture.textNow)
    ) async throws -> (rows: [[StoreRow]], asSQL: [String]) {
        let directory = try TemporaryDirectory()
        let url = directory.path("Store.sqlite")
        try await MigrationStores.make(at: url, model: model.versions[0].model, rows: rows)
        var options = MigrationOptions(batchSize: 16, environment: environment)
        options.compilesMappingsToSQL = compiled
        let recorder = EventRecorder()
        try await SQLiteStoreMigrator().migrateStore(
            at: url, model: model, mappings: [try StepMapping(jsonData: Data(mapping.utf8))], options: options,
            onEvent: { recorder.record($0) })
        let asSQL = recorder.events.compactMap { event -> String? in
            if case .entityMappingRanAsSQL(_, let name) = event { return name }
            return nil
        }
        var result: [[StoreRow]] = []
        for entity in entities {
            result.append(try await MigrationStores.rows(of: entity, at: url, model: model.versions[1].model))
        }
        return (result, asSQL)
    }

    /// ``migrate(_:model:mapping:entities:compiled:)`` with the dates fixture.
    static func migrate(_ rows: [StoreRow], compiled: Bool) async throws -> (
        printed: [StoreRow], stamps: [StoreRow], asSQL: [String]
    ) {
        let result = try await migrate(
            rows, model: BulkMappingFixture.model(), mapping: BulkMappingFixture.mapping,
            entities: ["Printed", "Stamp"], compiled: compiled)
        return (result.rows[0], result.rows[1], result.asSQL)
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

    /// Migrates a store of `Item` rows with the text mapping, compiled to SQL or not; returns the
    /// `Label` rows and the mappings that ran as SQL.
    static func migrateText(
        _ rows: [StoreRow], compiled: Bool, filter: String? = nil, mapping: String = BulkMappingFixture.textMapping
    ) async throws -> (labels: [StoreRow], asSQL: [String]) {
        let result = try await migrate(
            rows, model: BulkMappingFixture.textModel(),
            mapping: filter.map(BulkMappingFixture.textMapping(filter:)) ?? mapping,
            entities: ["Label"], compiled: compiled)
        return (result.rows[0], result.asSQL)
    }

    /// The text rows whose names SQL changes and trims as Swift does: ASCII without NUL.
    static func asciiTextRows(count: Int = 120) -> [StoreRow] {
        BulkMappingFixture.textRows(count: count) { name in
            name.unicodeScalars.allSatisfy { $0.isASCII && $0 != "\u{0}" }
        }
    }

    @Test func textConversionsAndIntegerArithmeticGiveTheSwiftPathsRows() async throws {
        let rows = Self.asciiTextRows()
        let bulk = try await Self.migrateText(rows, compiled: true)
        let swift = try await Self.migrateText(rows, compiled: false)
        #expect(bulk.asSQL == ["ItemToLabel"])
        #expect(swift.asSQL.isEmpty)
        let items = rows.filter { $0.reference.entityName == "Item" }.count
        #expect(bulk.labels.count == items && swift.labels.count == items)
        for (sql, expected) in zip(bulk.labels, swift.labels) {
            #expect(sql.reference == expected.reference)
            #expect(sql.attributes == expected.attributes, "\(expected.attributes["lower"] ?? nil)")
        }
        let trimmed = try #require(bulk.labels.first { $0.attributes["upper"] == .string("\u{0B}\u{0C}\r X \r\n") })
        #expect(trimmed.attributes["trimmed"] == .string("x"))
        #expect(trimmed.attributes["stamped"] == .date(BulkMappingFixture.textNow))
        // The owner’s values come through the relationship, the team's through two.
        #expect(
            bulk.labels.contains {
                $0.attributes["ownerName"] == .string(" bob ") && $0.attributes["ownerRank"] == .integer(32768)
            })
        Self.expectValuesOfTheLaterForms(bulk.labels)
    }

    /// The forms added on 5 December give values, not only nil: integers read from text, dates
    /// formatted through the relationship, names two relationships away, quotients and shifted dates.
    static func expectValuesOfTheLaterForms(_ labels: [StoreRow], sourceLocation: SourceLocation = #_sourceLocation) {
        let values = { (name: String) in Set(labels.compactMap { $0.attributes[name] ?? nil }) }
        #expect(
            values("code")
                == [42, -7, 12, 7, -999_999_999_999_999_999, 0, 123_456_789_012_345_678].reduce(into: []) {
                    $0.insert(AttributeValue.integer($1))
                }, sourceLocation: sourceLocation)
        #expect(values("teamName") == [.string("RED")], sourceLocation: sourceLocation)
        #expect(values("teamFounded") == [.double(-400.5)], sourceLocation: sourceLocation)
        #expect(
            values("ownerSince") == [
                .string("1601-09-21 15:59:59"), .string("2001-01-01 00:00:00"),
                .string("9004-03-19 08:53:20"), .string("2000-12-31 23:59:59"),
            ], sourceLocation: sourceLocation)
        #expect(values("countShare").contains(.double(14)), sourceLocation: sourceLocation)
        #expect(
            [0.1, 3.14, -0.5, 12.25, 123_456_789_012_345, 0.000_000_000_000_01, 2.675].allSatisfy {
                values("amount").contains(.double($0))
            }, sourceLocation: sourceLocation)
        #expect(values("amount").count > 100, sourceLocation: sourceLocation)
        // number(text) into a Double: the same doubles for decimals, integers' doubles for codes.
        #expect(values("numberAmount") == values("amount"), sourceLocation: sourceLocation)
        #expect(
            values("numberCode")
                == Set(
                    values("code").compactMap { value -> AttributeValue? in
                        if case .integer(let number) = value { return .double(Double(number)) }
                        return nil
                    }), sourceLocation: sourceLocation)
        #expect(
            values("sinceSeconds") == [
                .integer(-12_600_000_000), .integer(0), .integer(221_000_000_000), .integer(-1),
            ],
            sourceLocation: sourceLocation)
        #expect(values("weightShare").contains(.double(.infinity)), sourceLocation: sourceLocation)
        #expect(
            values("later").contains(.date(BulkMappingFixture.textNow.addingTimeInterval(42))),
            sourceLocation: sourceLocation)
        // Dates read from text: the first and last second, midnight of 2001, and many others.
        let days = values("day")
        for seconds in [-13_190_860_800, 252_423_993_599, -12_649_305_600, 0] as [Double] {
            #expect(days.contains(.date(Date(timeIntervalSinceReferenceDate: seconds))), sourceLocation: sourceLocation)
        }
        #expect(days.count > 100 && values("week").count > 100, sourceLocation: sourceLocation)
        #expect(values("iso") == days, sourceLocation: sourceLocation)
        #expect(
            values("week").contains(.date(Date(timeIntervalSinceReferenceDate: -60))), sourceLocation: sourceLocation)
    }

    @Test func textSQLCannotChangeAsSwiftDoesGoesBackToSwiftAndAnOverflowFailsAsInSwift() async throws {
        // A name outside ASCII, or with a NUL, sends the mapping to Swift: the same rows.
        for name in BulkMappingFixture.edgeNames.filter({ !$0.unicodeScalars.allSatisfy(\.isASCII) }) + ["a\u{0}b"] {
            var rows = Self.asciiTextRows(count: 10)
            rows[2].attributes["name"] = .string(name)
            let bulk = try await Self.migrateText(rows, compiled: true)
            #expect(bulk.asSQL.isEmpty, "\(name)")
            #expect(
                bulk.labels.map(\.attributes)
                    == (try await Self.migrateText(rows, compiled: false)).labels.map(\.attributes))
        }
        // Infinity times zero is NaN, which SQLite reads as NULL: the mapping goes to Swift.
        var nan = Self.asciiTextRows(count: 10)
        nan[1].attributes["weight"] = .double(.infinity)
        nan[1].attributes["count"] = .integer(0)
        let bulkNaN = try await Self.migrateText(nan, compiled: true)
        #expect(bulkNaN.asSQL.isEmpty)
        #expect(
            bulkNaN.labels.map(\.attributes)
                == (try await Self.migrateText(nan, compiled: false)).labels.map(\.attributes))
        // id + count and -id overflow: SQL hands the rows to Swift, which fails the migration.
        for id in [Int64.max, .min] {
            var rows = Self.asciiTextRows(count: 10)
            rows[0].attributes["id"] = .integer(id)
            rows[0].attributes["count"] = .integer(5)
            await #expect(
                performing: { try await Self.migrateText(rows, compiled: true) },
                throws: { ($0 as? MigrationError)?.code == .evaluationFailed })
        }
    }

    @Test func numbersSQLCannotReadOrComputeAsSwiftGoBackToSwift() async throws {
        // Text Swift reads as a number in another form, or past 18 digits: the same rows.
        let amounts = ["1e3", ".5", "5.", "1234567890123456", "0.1234567890123456", "inf", "nan", "0x1p3", "\u{00A0}1"]
        for (attribute, code) in ["1.5", "\u{00A0}5", "9223372036854775807", " 1e3", "12\u{0}"].map({ ("code", $0) })
            + amounts.map({ ("amount", $0) })
        {
            var rows = Self.asciiTextRows(count: 10)
            rows[2].attributes[attribute] = .string(code)
            let bulk = try await Self.migrateText(rows, compiled: true)
            #expect(bulk.asSQL.isEmpty, "\(code)")
            #expect(
                bulk.labels.map(\.attributes)
                    == (try await Self.migrateText(rows, compiled: false)).labels.map(\.attributes),
                "\(code)")
        }
        // Text that is no number, a zero divisor, and a double outside Int64 fail as in Swift.
        var mappings: [(String, [StoreRow])] = []
        for (attribute, code) in [("code", "abc"), ("code", "5\n"), ("amount", "1,5"), ("amount", "1.5.2")] {
            var rows = Self.asciiTextRows(count: 10)
            rows[3].attributes[attribute] = .string(code)
            mappings.append((BulkMappingFixture.textMapping, rows))
        }
        for replacement in [
            #""countShare": "$source.weight / $source.count""#, #""countShare": "integer($source.weight)""#,
        ] {
            let mapping = BulkMappingFixture.textMapping.replacingOccurrences(
                of: #""countShare": "$source.count / 3""#, with: replacement)
            #expect(mapping != BulkMappingFixture.textMapping)
            mappings.append((mapping, Self.asciiTextRows(count: 10)))
        }
        for (mapping, rows) in mappings {
            for compiled in [true, false] {
                await #expect(
                    performing: { try await Self.migrateText(rows, compiled: compiled, mapping: mapping) },
                    throws: { ($0 as? MigrationError)?.code == .evaluationFailed })
            }
        }
    }

    @Test func datesSQLCannotReadAsSwiftGoBackToSwift() async throws {
        // Text DateFormatter reads though formatDate would not write it, and a date before 1583
        // (Julian in DateFormatter): the same rows.
        // ISO8601FormatStyle reads offsets, fractions, 30 February (as 1 March) and 24:00 too.
        let days = [
            "2024-1-5 10:20:30", " 2024-01-05 10:20:30", "2024-01-05 10:20:30 ", "02024-01-05 10:20:30",
            "1500-01-01 00:00:00",
        ].map { ("day", $0) }
        let isoTexts = [
            "2024-01-05T10:20:30+01:00", "2024-01-05T10:20:30.5Z", "2024-02-30T00:00:00Z", "2024-01-05T24:00:00Z",
            "2024-01-05T10:20:30Z ",
        ].map { ("iso", $0) }
        for (attribute, day) in days + isoTexts {
            var rows = Self.asciiTextRows(count: 10)
            rows[2].attributes[attribute] = .string(day)
            let bulk = try await Self.migrateText(rows, compiled: true)
            #expect(bulk.asSQL.isEmpty, "\(day)")
            #expect(
                bulk.labels.map(\.attributes)
                    == (try await Self.migrateText(rows, compiled: false)).labels.map(\.attributes),
                "\(day)")
        }
        // Text it cannot read (30 February, another separator, hour 24) fails as in Swift.
        for day in ["2024-02-30 00:00:00", "2024-01-05T10:20:30", "2024-01-05 24:00:00", "x"] {
            var rows = Self.asciiTextRows(count: 10)
            rows[1].attributes["day"] = .string(day)
            for compiled in [true, false] {
                await #expect(
                    "\(day)", performing: { try await Self.migrateText(rows, compiled: compiled) },
                    throws: { ($0 as? MigrationError)?.code == .evaluationFailed })
            }
        }
    }

    /// `uuid()` makes a random UUID per row in SQL, as `UUID()` does; a migration's own
    /// generator (a test's) keeps the mapping in Swift, with its UUIDs.
    @Test func uuidMakesRandomUUIDsInSQLAndAGivenGeneratorsInSwift() async throws {
        let mapping = BulkMappingFixture.textMapping.replacingOccurrences(
            of: #""id": "$source.id","#, with: #""id": "$source.id", "token": "uuid()","#)
        #expect(mapping != BulkMappingFixture.textMapping)
        let rows = Self.asciiTextRows(count: 30)
        let (model, items) = (try BulkMappingFixture.textModel(), rows.filter { $0.reference.entityName == "Item" })
        let random = try await Self.migrate(rows, model: model, mapping: mapping, entities: ["Label"], compiled: true)
        #expect(random.asSQL == ["ItemToLabel"])
        let tokens = random.rows[0].compactMap { label -> UUID? in
            if case .uuid(let token)? = label.attributes["token"] { return token }
            return nil
        }
        #expect(tokens.count == items.count && Set(tokens).count == tokens.count)
        // Version 4 and the RFC 4122 variant, as UUID() makes them.
        #expect(tokens.allSatisfy { $0.uuid.6 >> 4 == 4 && $0.uuid.8 >> 6 == 2 })
        // A UUID attribute is copied byte for byte.
        let swift = try await Self.migrate(rows, model: model, mapping: mapping, entities: ["Label"], compiled: false)
        #expect(random.rows[0].map { $0.attributes["ref"] ?? nil } == swift.rows[0].map { $0.attributes["ref"] ?? nil })
        #expect(random.rows[0].contains { $0.attributes["ref"] != nil })
        let counter = Mutex(0)
        let given = ExpressionEnvironment(now: BulkMappingFixture.textNow) {
            counter.withLock { count in
                count += 1
                return UUID(uuid: (0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, UInt8(count)))
            }
        }
        let fixed = try await Self.migrate(
            rows, model: model, mapping: mapping, entities: ["Label"], compiled: true, environment: given)
        #expect(fixed.asSQL.isEmpty)
        #expect(
            fixed.rows[0].map { $0.attributes["token"] ?? nil }
                == (1...items.count).map { .uuid(UUID(uuid: (0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, UInt8($0)))) }
        )
    }

    /// Filters run in the statement as the store translates fetch predicates, and keep the rows,
    /// keys and order the Swift path gives; one SQL cannot express sends the mapping to Swift.
    @Test(arguments: [
        "count > 0 AND flag == YES", "name BEGINSWITH[c] 'a' OR owner.rank >= 1", "name == nil OR owner.name == nil",
        "owner != nil AND count > 0",
        "NOT (name CONTAINS 'x')", "owner.active == YES", "name IN {'Plain', 'I', ' '}", "count > owner.rank",
    ])
    func filtersGiveTheSwiftPathsRows(filter: String) async throws {
        let rows = Self.asciiTextRows(count: 60)
        let bulk = try await Self.migrateText(rows, compiled: true, filter: filter)
        let swift = try await Self.migrateText(rows, compiled: false, filter: filter)
        // Key path against key path has no SQL form in the fetch translation: that mapping runs in
        // Swift. A relationship against nil tests its foreign key (since 6 December).
        let inSwift = filter == "count > owner.rank"
        #expect(bulk.asSQL == (inSwift ? [] : ["ItemToLabel"]), "\(filter)")
        #expect(!swift.labels.isEmpty && swift.labels.count < rows.count - 5, "\(filter): \(swift.labels.count)")
        #expect(bulk.labels.map(\.reference) == swift.labels.map(\.reference), "\(filter)")
        #expect(bulk.labels.map(\.attributes) == swift.labels.map(\.attributes), "\(filter)")
    }
}
