import Foundation
import TernCore
import TernFormats
import TernRelational
import TernSQLite
import TernTestSupport
import Testing

/// Export → import reproduces every stored value bit for bit: dates with all the digits their
/// double needs, rounded rather than truncated, in every era; doubles, floats and decimals.
@Suite struct ExactValueRoundTripTests {
    /// Awkward dates: milliseconds that a truncating writer loses, fractions finer than a
    /// millisecond, before 1970 and 2001, after 2038, and near the ends of a second.
    static let intervals: [Double] = [
        326_633_490.001, 326_633_490.002, 326_633_490.999, 737_057_647.288, 0, 0.0005, -0.0005, -1.0005,
        -0.001, -0.999_999_9, 1e-9, -1e-9, 86_399.9996, 86_399.999_999_9, -978_307_200.5, -1_000_000_000.123_456,
        1_200_000_000.123_456_7, 2_000_000_000.000_001, 536_457_599.999, 536_457_600.0001,
        -63_200_000_000.25, 252_000_000_000.75,
    ]

    static func randomIntervals(count: Int) -> [Double] {
        var generator = SplitMix64(state: 2026)
        return (0..<count).map { index in
            let raw = Double(Int64(bitPattern: generator.next()) % 4_000_000_000_000_000) / 1_000_000
            // Every third one a millisecond value, the others any double the range holds.
            return index % 3 == 0 ? (raw * 1_000).rounded() / 1_000 : raw / 1_000
        }
    }

    @Test func datesReadBackBitForBit() throws {
        for interval in Self.intervals + Self.randomIntervals(count: 20_000) {
            let date = Date(timeIntervalSinceReferenceDate: interval)
            let text = ISO8601Text.string(from: date)
            let back = try #require(ISO8601Text.date(from: text), "\(text) does not read")
            #expect(
                back.timeIntervalSinceReferenceDate.bitPattern == interval.bitPattern,
                "\(interval) was written \(text) and read back as \(back.timeIntervalSinceReferenceDate)")
        }
    }

    @Test func millisecondsAreRoundedNotTruncated() {
        let text = { (interval: Double) in ISO8601Text.string(from: Date(timeIntervalSinceReferenceDate: interval)) }
        #expect(text(326_633_490.001) == "2011-05-09T11:31:30.001Z")
        #expect(text(0) == "2001-01-01T00:00:00.000Z")
        #expect(text(1.5) == "2001-01-01T00:00:01.500Z")
        #expect(text(0.0005) == "2001-01-01T00:00:00.0005Z")
        #expect(text(-0.0005) == "2000-12-31T23:59:59.9995Z")
        #expect(text(-0.001) == "2000-12-31T23:59:59.999Z")
        // Whole-millisecond dates give the format style's text wherever it rounds right.
        for interval in Self.randomIntervals(count: 3_000).enumerated().filter({ $0.offset % 3 == 0 }).map(\.element) {
            let date = Date(timeIntervalSinceReferenceDate: interval)
            let styled = Date(timeIntervalSinceReferenceDate: (interval * 1_000).rounded() / 1_000 + 0.000_01)
                .formatted(Date.ISO8601FormatStyle(includingFractionalSeconds: true))
            #expect(ISO8601Text.string(from: date) == styled, "\(interval)")
        }
    }

    @Test func readsOtherISO8601Forms() throws {
        let expected = Date(timeIntervalSinceReferenceDate: 326_633_490.25)
        for text in [
            "2011-05-09T11:31:30.25Z", "2011-05-09T11:31:30.250000000000000000Z", "2011-05-09T13:31:30.25+02:00",
            "2011-05-09T08:01:30.25-0330", "2011-05-09t11:31:30.25z", "2011-05-09T11:31:30,25Z",
        ] {
            #expect(ISO8601Text.date(from: text) == expected, "\(text)")
        }
        #expect(ISO8601Text.date(from: "2011-05-09T11:31:30Z") == Date(timeIntervalSinceReferenceDate: 326_633_490))
        // Years outside 1…9999 in ISO 8601's expanded form.
        let early = Date(timeIntervalSinceReferenceDate: -63_200_000_000.25)
        #expect(ISO8601Text.string(from: early).hasPrefix("-0002-"))
        #expect(ISO8601Text.date(from: ISO8601Text.string(from: early)) == early)
        #expect(ISO8601Text.string(from: Date(timeIntervalSinceReferenceDate: 400_000_000_000)).hasPrefix("+14676-"))
        for bad in [
            "2011-02-29T00:00:00Z", "2011-05-09T24:00:00Z", "2011-05-09T11:31:30.Z", "2011-05-09T11:31:30", "x",
            "12011-05-09T11:31:30Z", "-011-05-09T11:31:30Z",
        ] {
            #expect(ISO8601Text.date(from: bad) == nil, "\(bad)")
        }
    }

    /// A store of one entity with a date, a double, a float and a decimal, written through the
    /// store, exported with `tern export`, imported into a new store with `tern import`: the
    /// stored columns are the same bits.
    @Test(arguments: ["json", "tsv"])
    func exportThenImportStoresTheSameBits(format: String) async throws {
        let model = try ManagedObjectModel {
            Entity("Reading") {
                Attribute("when", .date)
                Attribute("value", .double)
                Attribute("ratio", .float)
                Attribute("amount", .decimal)
            }
        }
        let tmp = try TemporaryDirectory()
        let modelURL = tmp.path("Readings.xcdatamodeld")
        try XcodeModel.write(
            VersionedModel(name: "Readings", versions: [ModelVersion(name: "Readings", model: model)]), to: modelURL)
        let source = tmp.path("Source.sqlite")
        let intervals = Self.intervals + Self.randomIntervals(count: 500)
        do {
            let store = try SQLiteStore(at: source, model: model)
            let keys = try await store.newPrimaryKeys(forEntity: "Reading", count: intervals.count)
            let rows = zip(keys, intervals).map { key, interval in
                StoreRow(
                    reference: RowReference(entityName: "Reading", primaryKey: key),
                    attributes: [
                        "when": .date(Date(timeIntervalSinceReferenceDate: interval)), "value": .double(interval / 7),
                        "ratio": .double(Double(Float(interval / 3))),
                        "amount": .decimal(Decimal(string: "\(Int64(interval)).0123456789") ?? 0),
                    ])
            }
            _ = try await store.save(StoreChangeSet(inserted: rows))
        }
        // Core Data writes NSDecimalNumber.notANumber as the text NaN in a DECIMAL column.
        do {
            let connection = try Connection(path: source.path, configuration: SQLiteConfiguration())
            try connection.execute("UPDATE ZREADING SET ZAMOUNT = 'NaN' WHERE Z_PK IN (2, 5)")
        }
        let file = tmp.path("readings.\(format)")
        var export = ["export", source.path, "--model", modelURL.path, "-o", file.path, "--quiet", "--format", format]
        if format == "tsv" { export += ["--entity", "Reading"] }
        let exported = await ToolRunner.run(export)
        #expect(exported.status == 0, "\(exported.standardError)")
        let destination = tmp.path("Destination.sqlite")
        let created = await ToolRunner.run(["create", destination.path, "--model", modelURL.path])
        #expect(created.status == 0, "\(created.standardError)")
        var load = ["import", destination.path, "--model", modelURL.path, file.path, "--format", format]
        if format == "tsv" { load += ["--entity", "Reading"] }
        let imported = await ToolRunner.run(load)
        #expect(imported.status == 0, "\(imported.standardError)")
        #expect(try Self.storedValues(source) == Self.storedValues(destination))
        #expect(try Self.storedValues(destination).count == intervals.count)
        #expect(try Self.storedValues(destination).filter { $0.hasSuffix("|tNaN") }.count == 2)
    }

    /// Every row's stored columns as text that keeps the bits: reals as their bit patterns.
    static func storedValues(_ url: URL) throws -> [String] {
        let connection = try Connection(path: url.path, configuration: .readOnly)
        let sql: SQL = "SELECT ZWHEN, ZVALUE, ZRATIO, ZAMOUNT FROM ZREADING ORDER BY ZWHEN, ZVALUE"
        return try connection.fetchAll(sql).map { row in
            row.map { value in
                switch value {
                case .real(let number): "r\(number.bitPattern)"
                case .integer(let number): "i\(number)"
                case .text(let text): "t\(text)"
                case .null: "null"
                case .blob(let data): "b\(data.base64EncodedString())"
                }
            }.joined(separator: "|")
        }
    }
}
