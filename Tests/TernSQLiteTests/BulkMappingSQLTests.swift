import Foundation
import TernCore
import TernMigration
import TernTestSupport
import Testing

@testable import TernSQLite

/// Mappings compiled to one `INSERT … SELECT` (#24) give what the Swift path gives, value for
/// value, and hand back to Swift every store the statement cannot migrate as Swift does.
@Suite struct BulkMappingSQLTests {
    static func model() throws -> VersionedModel {
        try VersionedModel("Events") {
            ModelVersion("v1") {
                Entity("Event") {
                    Attribute("id", .integer64)
                    Attribute("name", .string)
                    Attribute("stamp", .date)
                    Attribute("flag", .boolean)
                    Attribute("small", .integer16)
                }
            }
            ModelVersion("v2") {
                Entity("Printed") {
                    Attribute("id", .integer64)
                    Attribute("printed", .string)
                    Attribute("seconds", .double)
                    Attribute("name", .string)
                    Attribute("flag", .boolean)
                    Attribute("label", .string)
                    Attribute("wide", .integer32)
                    Attribute("ratio", .double)
                    Attribute("kept", .string).default(.string("default"))
                    Relationship("stamp", to: "Stamp", inverse: "printed")
                }
                Entity("Stamp") {
                    Attribute("id", .integer64)
                    Attribute("stamp", .date)
                    Relationship("printed", to: "Printed", inverse: "stamp")
                }
            }
        }
    }

    /// Two passes: the first compiles to SQL; the second too, and its relationship is set in
    /// Swift from the first one's associations.
    static let mapping = #"""
        {"source": "v1", "destination": "v2", "passes": [
          {"name": "One", "entityMappings": [
            {"name": "EventToPrinted", "kind": "transform", "source": "Event", "destination": "Printed",
             "attributes": {"id": "$source.id", "name": "$source.name", "flag": "$source.flag",
               "printed": "formatDate($source.stamp, \"yyyy-MM-dd'T'HH:mm:ss '100%'\")",
               "seconds": "timeInterval($source.stamp)", "label": "\"fixed\"", "wide": "$source.small",
               "ratio": "$source.id"}}]},
          {"name": "Two", "entityMappings": [
            {"name": "EventToStamp", "kind": "transform", "source": "Event", "destination": "Stamp",
             "attributes": {"id": "$source.id", "stamp": "$source.stamp"},
             "relationships": {"printed": "destinationInstances(\"EventToPrinted\", $source)"}},
            {"kind": "remove", "source": "Event"}]}]}
        """#

    /// Dates at the edges the two paths could disagree on: before 1970, after 2038, a leap
    /// second's neighbours, fractions just below a whole second, whole seconds (stored as integers).
    static let edgeDates: [Double] = [
        0, 0.5, 0.9996, -0.0004, -0.9996, -1_000_000_000.25, -978_307_200, -978_307_200.001, 1_200_000_000.999_9,
        2_200_000_000, 504_921_599, 504_921_599.999, 504_921_600, 504_921_600.000_1, 7_000_000_000.5,
        -12_200_000_000, 252_000_000_000, 86_399.999_999, -86_400.000_001, 123.456_789_012,
    ]

    static func rows(dates: [Double?]) -> [StoreRow] {
        dates.enumerated().map { index, date in
            var attributes: [String: AttributeValue] = [
                "id": .integer(Int64(index) * 7 - 20), "flag": .bool(index % 3 == 0),
                "small": .integer(Int64(index * 1000 - 9000)),
            ]
            if index % 5 != 4 { attributes["name"] = .string("événement \(index)") }
            if let date { attributes["stamp"] = .date(Date(timeIntervalSinceReferenceDate: date)) }
            // Gaps in the keys: the destination keys and the association runs must not follow them.
            let key = Int64(index < 70 ? index + 1 : index * 3)
            return StoreRow(
                reference: RowReference(entityName: "Event", primaryKey: key), version: 1, attributes: attributes)
        }
    }

    /// Migrates a store of `rows` with mappings compiled to SQL or not; returns the rows of both
    /// destination entities and the mappings that ran as SQL.
    static func migrate(_ rows: [StoreRow], compiled: Bool) async throws -> (
        printed: [StoreRow], stamps: [StoreRow], asSQL: [String]
    ) {
        let model = try model()
        let directory = try TemporaryDirectory()
        let url = directory.path("Events.sqlite")
        try await MigrationStores.make(at: url, model: model.versions[0].model, rows: rows)
        var options = MigrationOptions(batchSize: 16)
        options.compilesMappingsToSQL = compiled
        let recorder = EventRecorder()
        try await SQLiteStoreMigrator().migrateStore(
            at: url, model: model, mappings: [try StepMapping(jsonData: Data(mapping.utf8))], options: options,
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
        var generator = SeededGenerator(seed: 24)
        var dates: [Double?] = Self.edgeDates
        for _ in 0..<150 {
            // Whole, millisecond and arbitrary fractions, from 1600 to 9900.
            let seconds = Double.random(in: -12_000_000_000...250_000_000_000, using: &generator)
            switch Int.random(in: 0..<3, using: &generator) {
            case 0: dates.append(seconds.rounded(.down))
            case 1: dates.append((seconds * 1000).rounded(.down) / 1000)
            default: dates.append(seconds)
            }
        }
        dates.append(nil)
        let rows = Self.rows(dates: dates)
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
        #expect(first == .string("2001-01-01T00:00:00 100%"))
    }

    @Test func handsADateDatePatternCannotFormatBackToSwift() async throws {
        // 1500 is before the Gregorian calendar's start: Swift formats it with DateFormatter.
        let rows = Self.rows(dates: [0, -15_800_000_000, 60])
        let bulk = try await Self.migrate(rows, compiled: true)
        let swift = try await Self.migrate(rows, compiled: false)
        // EventToStamp shares EventToPrinted's walk over Event, after it: it stays in Swift too,
        // so that each event's destinations keep the order they were made in.
        #expect(bulk.asSQL.isEmpty)
        #expect(bulk.printed.map(\.attributes) == swift.printed.map(\.attributes))
        #expect(bulk.stamps.map(\.toOne) == swift.stamps.map(\.toOne))
    }
}

/// A small deterministic generator (SplitMix64), so that a failure can be replayed.
struct SeededGenerator: RandomNumberGenerator {
    private var state: UInt64

    init(seed: UInt64) { state = seed }

    mutating func next() -> UInt64 {
        state &+= 0x9E37_79B9_7F4A_7C15
        var value = state
        value = (value ^ (value >> 30)) &* 0xBF58_476D_1CE4_E5B9
        value = (value ^ (value >> 27)) &* 0x94D0_49BB_1331_11EB
        return value ^ (value >> 31)
    }
}
