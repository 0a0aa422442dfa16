import Foundation
import TernCore
import TernMigration
import TernSQLite
import TernStores

/// The seeds' Event split: each `Event` becomes a `PrintedEvent` (the date as text,
/// `yyyy-MM-dd HH:mm:ss` in UTC) and a `TimeStampEvent` (the date as seconds, a Double), and
/// `Event` goes. Run as a JSON mapping of two passes or with two Swift attribute policies. The baseline
/// creates both tables, copies each row into them from one `SELECT`, and drops `ZEVENT`, in one
/// transaction, timed with its close (the checkpoint), as Tern is with its fsync and swap.
struct MappedMigrationScenario: ScenarioImplementation {
    /// `mappedMigrationJSON` or `mappedMigrationSwift`.
    let scenario: Scenario

    /// `Event` and `Event 2`, where the split happened.
    static func model() throws -> VersionedModel {
        try VersionedModel("Events") {
            ModelVersion("Event") { EventData.entity() }
            ModelVersion("Event 2") {
                Entity("PrintedEvent") {
                    Attribute("id", .integer64)
                    Attribute("printedDate", .string)
                }
                Entity("TimeStampEvent") {
                    Attribute("id", .integer64)
                    Attribute("timeStamp", .double)
                }
            }
        }
    }

    /// The split as a JSON mapping file (`docs/MappingFormat.md`'s example, with `id` kept).
    static let jsonMapping = #"""
        {"source": "Event", "destination": "Event 2", "passes": [
          {"name": "StepOne", "entityMappings": [
            {"name": "EventToPrintedEvent", "kind": "transform", "source": "Event", "destination": "PrintedEvent",
             "attributes": {"id": "$source.id", "printedDate": "formatDate($source.timeStamp, \"yyyy-MM-dd HH:mm:ss\")"}}]},
          {"name": "StepTwo", "entityMappings": [
            {"name": "EventToTimeStampEvent", "kind": "transform", "source": "Event", "destination": "TimeStampEvent",
             "attributes": {"id": "$source.id", "timeStamp": "timeInterval($source.timeStamp)"}},
            {"kind": "remove", "source": "Event"}]}]}
        """#

    /// The same passes with Swift policies instead of value expressions.
    static let policyMapping = #"""
        {"source": "Event", "destination": "Event 2", "passes": [
          {"name": "StepOne", "entityMappings": [
            {"name": "EventToPrintedEvent", "kind": "custom", "source": "Event", "destination": "PrintedEvent",
             "policy": "PrintedEventPolicy"}]},
          {"name": "StepTwo", "entityMappings": [
            {"name": "EventToTimeStampEvent", "kind": "custom", "source": "Event", "destination": "TimeStampEvent",
             "policy": "TimeStampEventPolicy"},
            {"kind": "remove", "source": "Event"}]}]}
        """#

    func runTern(_ input: ScenarioInput) async throws -> Timing {
        let model = try Self.model()
        let json = scenario == .mappedMigrationJSON ? Self.jsonMapping : Self.policyMapping
        var options = MigrationOptions()
        options.policies.register(PrintedEventPolicy(), named: "PrintedEventPolicy")
        options.policies.register(TimeStampEventPolicy(), named: "TimeStampEventPolicy")
        var watch = Stopwatch()
        watch.start()
        let mapping = try StepMapping(jsonData: Data(json.utf8))
        try await StoreMigrator().migrateStore(
            at: .file(input.store), model: model, mappings: [mapping], options: options)
        watch.stop()
        return watch.timing(checksum: 0)
    }

    func runBaseline(_ input: ScenarioInput) async throws -> Timing {
        var watch = Stopwatch()
        watch.start()
        do {
            let database = try RawDatabase.openStore(input.store)
            try database.execute("BEGIN IMMEDIATE")
            try database.execute(
                """
                CREATE TABLE ZPRINTEDEVENT ( Z_PK INTEGER PRIMARY KEY, Z_ENT INTEGER, Z_OPT INTEGER, ZID INTEGER, \
                ZPRINTEDDATE VARCHAR )
                """)
            try database.execute(
                """
                CREATE TABLE ZTIMESTAMPEVENT ( Z_PK INTEGER PRIMARY KEY, Z_ENT INTEGER, Z_OPT INTEGER, ZID INTEGER, \
                ZTIMESTAMP FLOAT )
                """)
            do {
                let select = try database.prepare("SELECT Z_PK, ZID, ZTIMESTAMP FROM ZEVENT ORDER BY Z_PK")
                let printed = try database.prepare(
                    "INSERT INTO ZPRINTEDEVENT (Z_PK, Z_ENT, Z_OPT, ZID, ZPRINTEDDATE) VALUES (?, 1, 1, ?, ?)")
                let stamped = try database.prepare(
                    "INSERT INTO ZTIMESTAMPEVENT (Z_PK, Z_ENT, Z_OPT, ZID, ZTIMESTAMP) VALUES (?, 2, 1, ?, ?)")
                var formatter = DateText()
                while try select.step() {
                    let key = select.int64(0)
                    let seconds = select.double(2)
                    printed.bind(key, at: 1)
                    printed.bind(select.int64(1), at: 2)
                    formatter.format(seconds) { printed.bind(text: $0, at: 3) }
                    _ = try printed.step()
                    printed.reset()
                    stamped.bind(key, at: 1)
                    stamped.bind(select.int64(1), at: 2)
                    stamped.bind(seconds, at: 3)
                    _ = try stamped.step()
                    stamped.reset()
                }
            }
            try database.execute("DROP TABLE ZEVENT")
            try database.execute(
                """
                UPDATE Z_PRIMARYKEY SET Z_NAME = 'PrintedEvent' WHERE Z_NAME = 'Event'; \
                INSERT INTO Z_PRIMARYKEY (Z_ENT, Z_NAME, Z_SUPER, Z_MAX) SELECT 2, 'TimeStampEvent', 0, Z_MAX FROM Z_PRIMARYKEY
                """)
            try database.execute("COMMIT")
        }
        // Timed with the close, as Tern's migration is timed with its fsync and swap: the last
        // connection to close checkpoints the write-ahead log into the store.
        watch.stop()
        return watch.timing(checksum: 0)
    }

    func runShell(_ input: ScenarioInput) async throws -> Timing {
        try SQLiteShell.run(store: input.store, script: SQLiteShell.splitScript)
    }

    func checksum(_ input: ScenarioInput) throws -> Int64? {
        let database = try RawDatabase(path: input.store.path)
        // Year, month, day, hour, minute and second of the text, so that the format is compared too.
        let parts = [(1, 4), (6, 2), (9, 2), (12, 2), (15, 2), (18, 2)].map {
            "TOTAL(CAST(substr(ZPRINTEDDATE, \($0.0), \($0.1)) AS INTEGER))"
        }
        return try database.checksum(
            """
            SELECT COUNT(*), TOTAL(ZID), TOTAL(LENGTH(ZPRINTEDDATE)), \(parts.joined(separator: ", ")) FROM ZPRINTEDEVENT
            """)
            &+ database.checksum("SELECT COUNT(*), TOTAL(ZID), TOTAL(ZTIMESTAMP) FROM ZTIMESTAMPEVENT")
            &+ database.checksum("SELECT COUNT(*) * 1000000 FROM sqlite_master WHERE name = 'ZEVENT'")
    }
}

/// Stage 1 of `EventToPrintedEvent` in Swift: the date as `yyyy-MM-dd HH:mm:ss` text, computed
/// from the source values as an attribute policy (the engine hands it the values of its page and
/// writes the result with its prepared `INSERT`).
struct PrintedEventPolicy: AttributeMigrationPolicy {
    let sourceAttributeNames = ["id", "timeStamp"]
    let destinationAttributeNames = ["id", "printedDate"]

    func destinationValues(from source: [AttributeValue?], into destination: inout [AttributeValue?])
        throws(MigrationError)
    {
        destination[0] = source[0]
        if case .date(let date)? = source[1] {
            var formatter = DateText()
            destination[1] = .string(
                formatter.format(date.timeIntervalSinceReferenceDate) { String(decoding: $0, as: UTF8.self) })
        }
    }
}

/// Stage 1 of `EventToTimeStampEvent` in Swift: the date as seconds since 2001.
struct TimeStampEventPolicy: AttributeMigrationPolicy {
    let sourceAttributeNames = ["id", "timeStamp"]
    let destinationAttributeNames = ["id", "timeStamp"]

    func destinationValues(from source: [AttributeValue?], into destination: inout [AttributeValue?])
        throws(MigrationError)
    {
        destination[0] = source[0]
        if case .date(let date)? = source[1] { destination[1] = .double(date.timeIntervalSinceReferenceDate) }
    }
}
