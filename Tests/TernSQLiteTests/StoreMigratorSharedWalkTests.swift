import Foundation
import TernCore
import TernFormats
import TernMigration
import TernRelational
import TernTestSupport
import Testing

@testable import TernSQLite

/// Stage 1 of independent mappings of one source entity, across passes, in one walk over the
/// source: the seeds' Event split reads each event once for both destination objects.
@Suite struct StoreMigratorSharedWalkTests {
    let events: VersionedModel

    init() throws {
        events = try XcodeModel.readVersionedModel(at: MigrationFiles.eventModel)
    }

    /// 2,500 events (three source pages of 1,000), every seventh without a date, keys with gaps.
    func eventStore(in directory: TemporaryDirectory) async throws -> URL {
        let url = directory.path("Events.sqlite")
        let rows = (1...2_500).map { (index: Int) -> StoreRow in
            var attributes: [String: AttributeValue] = [:]
            if index % 7 != 0 {
                attributes["timeStamp"] = .date(Date(timeIntervalSinceReferenceDate: Double(index) * 3_601.5))
            }
            return StoreRow(
                reference: RowReference(entityName: "Event", primaryKey: Int64(index * 2)), version: 1,
                attributes: attributes)
        }
        try await MigrationStores.make(at: url, model: events.versions[0].model, rows: rows)
        return url
    }

    /// The seeds' split with both entity mappings run by recording policies.
    func recordedSplit(independent: Bool, log: StageOneLog) throws -> (StepMapping, MigrationOptions) {
        var mapping = try StepMapping(contentsOf: MigrationFiles.eventSplit)
        var options = MigrationOptions(batchSize: 1_000)
        for pass in mapping.passes.indices {
            for index in mapping.passes[pass].entityMappings.indices
            where mapping.passes[pass].entityMappings[index].kind == .transform {
                mapping.passes[pass].entityMappings[index].kind = .custom
                mapping.passes[pass].entityMappings[index].policyName = "Recording"
            }
        }
        options.policies.register(RecordingPolicy(log: log, independent: independent), named: "Recording")
        return (mapping, options)
    }

    /// Every destination row of the split, described with its key and values.
    func migratedRows(at url: URL) async throws -> [String] {
        let target = events.versions[1].model
        var described: [String] = []
        for entity in ["PrintedEvent", "TimeStampEvent"] {
            for row in try await MigrationStores.rows(of: entity, at: url, model: target) {
                let values = row.attributes.sorted { $0.key < $1.key }.map { "\($0.key)=\($0.value)" }
                described.append("\(row.reference) v\(row.version) \(values.joined(separator: " "))")
            }
        }
        return described
    }

    @Test func independentMappingsOfTwoPassesShareOneWalkWithTheSameResult() async throws {
        let directory = try TemporaryDirectory()
        let shared = try await eventStore(in: directory)
        let apart = directory.path("Apart.sqlite")
        try FileManager.default.copyItem(at: shared, to: apart)
        let keys = (1...2_500).map { $0 * 2 }

        let sharedLog = StageOneLog()
        let (sharedMapping, sharedOptions) = try recordedSplit(independent: true, log: sharedLog)
        let progress = Progress(totalUnitCount: 0)
        let report = try await SQLiteStoreMigrator().migrateStore(
            at: shared, model: events, mappings: [sharedMapping], options: sharedOptions, progress: progress)
        // One walk: each event gives its PrintedEvent, then its TimeStampEvent.
        #expect(sharedLog.entries == keys.flatMap { ["EventToPrintedEvent \($0)", "EventToTimeStampEvent \($0)"] })
        #expect(report.objectsPerStep == [5_000])
        #expect(progress.completedUnitCount == progress.totalUnitCount && progress.totalUnitCount == 1)

        let apartLog = StageOneLog()
        let (apartMapping, apartOptions) = try recordedSplit(independent: false, log: apartLog)
        try await SQLiteStoreMigrator().migrateStore(
            at: apart, model: events, mappings: [apartMapping], options: apartOptions)
        // Policies that do not say they are independent keep Core Data's order: one pass after the other.
        #expect(
            apartLog.entries == keys.map { "EventToPrintedEvent \($0)" } + keys.map { "EventToTimeStampEvent \($0)" })

        let sharedRows = try await migratedRows(at: shared)
        #expect(sharedRows.count == 5_000)
        #expect(sharedRows == (try await migratedRows(at: apart)))
        #expect(sharedRows.first == ("PrintedEvent/p1 v1 printedDate=\(AttributeValue.string("2001-01-01 01:00:01"))"))
    }
}

/// The association table when mappings that share a walk associate in turns.
@Suite struct MigrationAssociationTableTests {
    @Test func interleavedMappingsKeepARunEachAndAnswerLookups() throws {
        let directory = try TemporaryDirectory()
        let connection = try Connection(
            path: directory.path("A.sqlite").path, configuration: SQLiteConfiguration(journalMode: .delete))
        let table = try AssociationTable(connection: connection, flushLimit: 1_000)
        func ref(_ entity: String, _ key: Int64) -> RowReference { RowReference(entityName: entity, primaryKey: key) }
        for key in Int64(1)...200 {
            try table.associate(source: ref("Event", key), withDestination: ref("Printed", key), mapping: "A")
            try table.associate(source: ref("Event", key), withDestination: ref("Stamp", key + 1_000), mapping: "B")
        }
        // Before anything is written, lookups see the open runs.
        #expect(try table.destinations(of: ref("Event", 200), mapping: "A") == [ref("Printed", 200)])
        #expect(try table.sources(of: ref("Stamp", 1_200), mapping: "B") == [ref("Event", 200)])
        try table.flush()
        // Runs of 64 per mapping: 4 each, not one per association.
        #expect(try connection.fetchValue("SELECT COUNT(*) FROM TERN_ASSOCIATION")?.int64 == 8)
        #expect(try table.destinations(of: ref("Event", 7), mapping: nil) == [ref("Printed", 7), ref("Stamp", 1_007)])
        #expect(try table.destinations(of: ref("Event", 130), mapping: "B") == [ref("Stamp", 1_130)])
        var printed: [Int64] = []
        try table.forEachDestination(mapping: "A", pageSize: 3) { printed.append($0.primaryKey) }
        #expect(printed == Array(1...200))
    }

    /// A page of a mapping's runs is read in order from an index: sorting every run of the mapping
    /// again for each page made walking destinations quadratic in the store's size.
    @Test func pagesOfRunsAreReadInOrderWithoutASort() throws {
        let directory = try TemporaryDirectory()
        let connection = try Connection(
            path: directory.path("P.sqlite").path, configuration: SQLiteConfiguration(journalMode: .delete))
        _ = try AssociationTable(connection: connection, flushLimit: 10)
        let plan = try connection.fetchAll(
            "EXPLAIN QUERY PLAN " + AssociationTable.runPage(mapping: "A", after: 5, limit: 100)
        )
        .compactMap { $0.last?.string }
        #expect(
            plan.count == 1 && plan.allSatisfy { $0.contains("USING INDEX") && !$0.contains("TEMP B-TREE") }, "\(plan)")
    }

    /// Lookups answer what the associations say, whether their runs are written, finished or
    /// open, and whether or not the key lies within the written runs (a lookup outside them runs
    /// no query).
    @Test func lookupsAnswerFromWrittenFinishedAndOpenRuns() throws {
        let directory = try TemporaryDirectory()
        let connection = try Connection(
            path: directory.path("L.sqlite").path, configuration: SQLiteConfiguration(journalMode: .delete))
        let table = try AssociationTable(connection: connection, flushLimit: 2)
        var generator = SplitMix64(state: 7)
        var made: [(mapping: String, source: Int64, destination: Int64)] = []
        var next: [String: Int64] = ["A": 1, "B": 1_000]
        func ref(_ entity: String, _ key: Int64) -> RowReference { RowReference(entityName: entity, primaryKey: key) }
        func expectLookups(_ keys: ClosedRange<Int64>) throws {
            for source in keys {
                for mapping in ["A", "B"] {
                    let expected = made.filter { $0.mapping == mapping && $0.source == source }.map {
                        ref("Printed", $0.destination)
                    }
                    #expect(try table.destinations(of: ref("Event", source), mapping: mapping) == expected)
                    for destination in expected {
                        #expect(try table.sources(of: destination, mapping: mapping) == [ref("Event", source)])
                    }
                }
            }
        }
        // A walk in key order, two mappings in turns, with gaps and a source that makes two objects.
        var source: Int64 = 0
        for step in 0..<400 {
            source += Int64.random(in: 1...3, using: &generator)
            for mapping in ["A", "B"] where step % 7 != 3 || mapping == "A" {
                for _ in 0..<(source % 50 == 0 ? 2 : 1) {
                    let destination = next[mapping, default: 1]
                    next[mapping] = destination + Int64.random(in: 1...2, using: &generator)
                    try table.associate(
                        source: ref("Event", source), withDestination: ref("Printed", destination), mapping: mapping)
                    made.append((mapping, source, destination))
                }
            }
            // While the walk goes on: the current key (open runs), and earlier ones (written runs).
            if step % 40 == 39 { try expectLookups(max(1, source - 90)...(source + 2)) }
        }
        try expectLookups(1...(source + 5))
        try table.flush()
        try expectLookups(1...(source + 5))
        #expect(try connection.fetchValue("SELECT COUNT(*) FROM TERN_ASSOCIATION")?.int64 ?? 0 > 20)
    }

    /// A range of associations (what a mapping run as SQL records) writes the rows that as many
    /// single associations write: the same runs, `ORD`, `SEQ` and freshness, also when the range
    /// continues an open run, when another mapping's associations come between, and when a
    /// range is longer than a flush of runs.
    @Test func aRangeWritesWhatItsSingleAssociationsWrite() throws {
        let directory = try TemporaryDirectory()
        var generator = SplitMix64(state: 64)
        // (mapping, source start, destination start, count): some continue the previous range.
        var ranges: [(String, Int64, Int64, Int64)] = [("A", 1, 1, 200), ("A", 201, 201, 5), ("B", 1, 500, 3)]
        for _ in 0..<40 {
            let mapping = Bool.random(using: &generator) ? "A" : "B"
            let start = Int64.random(in: 1...2_000, using: &generator)
            ranges.append(
                (
                    mapping, start, start + Int64.random(in: 0...3, using: &generator),
                    .random(in: 1...150, using: &generator)
                ))
        }
        ranges.append(("A", 10_000, 20_000, 64 * 7 + 3))
        func rows(usingRanges: Bool) throws -> [[DatabaseValue]] {
            let connection = try Connection(
                path: directory.path("\(usingRanges).sqlite").path,
                configuration: SQLiteConfiguration(journalMode: .delete))
            let table = try AssociationTable(connection: connection, flushLimit: 3)
            for (mapping, source, destination, count) in ranges {
                if usingRanges {
                    try table.associateRange(
                        sourceEntity: "Event", sourceStart: source, destinationEntity: "Printed",
                        destinationStart: destination, count: count, mapping: mapping)
                } else {
                    for offset in 0..<count {
                        try table.associate(
                            sourceEntity: "Event", sourceKey: source + offset, destinationEntity: "Printed",
                            destinationKey: destination + offset, mapping: mapping)
                    }
                }
            }
            try table.flush()
            return try connection.fetchAll("SELECT * FROM TERN_ASSOCIATION ORDER BY ORD")
        }
        let single = try rows(usingRanges: false)
        #expect(single.count > 60)
        #expect(try rows(usingRanges: true) == single)
    }
}

/// The seeds' `EventToPrintedEvent` as an attribute policy: the date as `yyyy-MM-dd HH:mm:ss` in UTC.
struct PrintedDatePolicy: AttributeMigrationPolicy {
    let sourceAttributeNames = ["timeStamp"]
    var destinationAttributeNames = ["printedDate"]

    func destinationValues(from source: [AttributeValue?], into destination: inout [AttributeValue?])
        throws(MigrationError)
    {
        guard case .date(let date)? = source[0] else { return }
        let formatter = DateFormatter()
        formatter.locale = Locale(identifier: "en_US_POSIX")
        formatter.timeZone = TimeZone(identifier: "UTC")
        formatter.dateFormat = "yyyy-MM-dd HH:mm:ss"
        destination[0] = .string(formatter.string(from: date))
    }
}

/// The seeds' `EventToTimeStampEvent` as an attribute policy; the seconds go through the
/// attribute's type conversion (an integer stored in a Double attribute).
struct WholeSecondsPolicy: AttributeMigrationPolicy {
    let sourceAttributeNames = ["timeStamp"]
    let destinationAttributeNames = ["timeStamp"]

    func destinationValues(from source: [AttributeValue?], into destination: inout [AttributeValue?])
        throws(MigrationError)
    {
        guard case .date(let date)? = source[0] else { return }
        destination[0] = .integer(Int64(date.timeIntervalSinceReferenceDate.rounded(.down)))
    }
}

/// Attribute policies on SQLite: the engine's one-piece stage 1 against the JSON mapping.
@Suite struct AttributeMigrationPolicyTests {
    let events: VersionedModel

    init() throws {
        events = try XcodeModel.readVersionedModel(at: MigrationFiles.eventModel)
    }

    /// The seeds' split with attribute policies, or with the JSON mapping's expressions.
    func split(policies: Bool) throws -> (StepMapping, MigrationOptions) {
        var mapping = try StepMapping(contentsOf: MigrationFiles.eventSplit)
        var options = MigrationOptions(batchSize: 700)
        if policies {
            mapping.passes[0].entityMappings[0].kind = .custom
            mapping.passes[0].entityMappings[0].policyName = "Printed"
            mapping.passes[1].entityMappings[0].kind = .custom
            mapping.passes[1].entityMappings[0].policyName = "Seconds"
            options.policies.register(PrintedDatePolicy(), named: "Printed")
            options.policies.register(WholeSecondsPolicy(), named: "Seconds")
        } else {
            mapping.passes[1].entityMappings[0].attributeMappings = [
                PropertyMapping("timeStamp", try ValueExpression("timeInterval($source.timeStamp)"))
            ]
        }
        return (mapping, options)
    }

    @Test func attributePoliciesGiveWhatTheJSONMappingGives() async throws {
        let directory = try TemporaryDirectory()
        let url = try await StoreMigratorSharedWalkTests().eventStore(in: directory)
        let json = directory.path("JSON.sqlite")
        try FileManager.default.copyItem(at: url, to: json)
        let (policyMapping, policyOptions) = try split(policies: true)
        try await SQLiteStoreMigrator().migrateStore(
            at: url, model: events, mappings: [policyMapping], options: policyOptions)
        let (jsonMapping, jsonOptions) = try split(policies: false)
        try await SQLiteStoreMigrator().migrateStore(
            at: json, model: events, mappings: [jsonMapping], options: jsonOptions)

        let target = events.versions[1].model
        let printed = try await MigrationStores.rows(of: "PrintedEvent", at: url, model: target)
        #expect(printed.count == 2_500)
        #expect(
            printed.map(\.attributes)
                == (try await MigrationStores.rows(of: "PrintedEvent", at: json, model: target)).map(\.attributes))
        #expect(printed[6].attributes["printedDate"] == nil)  // the seventh event has no date
        let stamps = try await MigrationStores.rows(of: "TimeStampEvent", at: url, model: target)
        let jsonStamps = try await MigrationStores.rows(of: "TimeStampEvent", at: json, model: target)
        #expect(stamps.count == 2_500)
        // Whole seconds, converted to the Double attribute: 3,601.5 s after 2001 is stored as 3,601.
        #expect(stamps[0].attributes["timeStamp"] == .double(3_601))
        #expect(
            zip(stamps, jsonStamps).allSatisfy { stamp, json in
                switch (stamp.attributes["timeStamp"], json.attributes["timeStamp"]) {
                case (nil, nil): true
                case (.double(let whole)?, .double(let exact)?): whole == exact.rounded(.down)
                default: false
                }
            })
    }

    @Test func anUnknownDestinationAttributeNamesTheMappingAndProperty() async throws {
        let directory = try TemporaryDirectory()
        let url = try await StoreMigratorSharedWalkTests().eventStore(in: directory)
        let (mapping, base) = try split(policies: true)
        var options = base
        var wrong = PrintedDatePolicy()
        wrong.destinationAttributeNames = ["printedDay"]
        options.policies.register(wrong, named: "Printed")
        let before = try Data(contentsOf: url)
        let error = await #expect(throws: MigrationError.self) {
            try await SQLiteStoreMigrator().migrateStore(at: url, model: events, mappings: [mapping], options: options)
        }
        #expect(error?.code == .invalidMapping)
        #expect(error?.mappingName == "EventToPrintedEvent" && error?.propertyName == "printedDay")
        #expect(try Data(contentsOf: url) == before)
    }
}
