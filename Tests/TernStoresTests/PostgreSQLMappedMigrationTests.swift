import Foundation
import Synchronization
import TernCore
import TernMigration
import TernRelational
import TernSQLite
import TernStores
import TernTestSupport
import Testing

@testable import TernPostgreSQL

/// Fails in stage 2 on the `failing`-th destination object whose relationships it sets, after
/// earlier batches were written: a failure in the middle of a mapped step.
private struct FailsOnNthRelationships: EntityMigrationPolicy {
    /// A counter shared by the policy's copies.
    final class Counter: Sendable {
        let value = Mutex(0)
    }

    let counter = Counter()
    let failing: Int

    func createRelationships(
        forDestination destination: RowReference, mapping: EntityMapping, manager: any MigrationManager
    )
        throws(MigrationError)
    {
        let count = counter.value.withLock { count in
            count += 1
            return count
        }
        guard count < failing else { throw MigrationError(.evaluationFailed, "planted failure") }
        try DefaultMigrationPolicy.setRelationships(of: destination, mapping: mapping, manager: manager)
    }
}

/// Mapped steps on PostgreSQL stream table to table on the server and give, row for row and key
/// for key, what the same steps give on SQLite; failures leave the old store and no scratch schema.
@Suite(.enabled(if: PostgreSQLTestServer.isAvailable, PostgreSQLTestServer.skipComment))
struct PostgreSQLMappedMigrationTests {
    /// The songs model's v1 → v2 step as a mapping: songs' titles upper-cased, playlists' songs
    /// set through the associations (ordered in v2), books and pages copied.
    static let songsStep = #"""
        {"source": "v1", "destination": "v2", "passes": [{"name": "Only", "entityMappings": [
          {"name": "BookToBook", "kind": "transform", "source": "Book", "destination": "Book",
           "attributes": {"title": "$source.title"},
           "relationships": {"pages": "destinationInstances(\"PageToPage\", $source.pages)"}},
          {"name": "PageToPage", "kind": "copy", "source": "Page", "destination": "Page"},
          {"name": "SongToSong", "kind": "transform", "source": "Song", "destination": "Song",
           "attributes": {"title": "uppercase($source.title)"}},
          {"name": "PlaylistToPlaylist", "kind": "custom", "source": "Playlist", "destination": "Playlist",
           "policy": "Playlists",
           "relationships": {"songs": "destinationInstances(\"SongToSong\", $source.songs)"}}]}]}
        """#

    /// Books with pages, and playlists holding songs in a shuffled order: enough objects for
    /// several batches of each entity.
    static func songRows(count: Int) -> [StoreRow] {
        typealias Row = PostgreSQLInPlaceChangeTests
        var generator = SplitMix64(state: 20_261_130)
        var rows: [StoreRow] = []
        var playlists: [Int: [Int]] = [:]
        var songPlaylists: [Int: [Int]] = [:]
        for key in 1...count {
            let pages = (0..<Int(generator.next() % 4)).map { count + key * 4 + $0 }
            rows.append(
                Row.row(
                    "Book", key, ["title": .string("book \(key)"), "isbn": .string("\(key % 7)")],
                    toMany: ["pages": Row.ref("Page", pages)]))
            for page in pages {
                rows.append(
                    Row.row("Page", page, ["number": .integer(Int64(page))], toOne: ["book": Row.ref("Book", [key])[0]])
                )
            }
            for song in Set((0..<Int(generator.next() % 5)).map { _ in Int(generator.next() % UInt64(count)) + 1 }) {
                playlists[key, default: []].append(song)
                songPlaylists[song, default: []].append(key)
            }
        }
        for key in 1...count {
            rows.append(Row.row("Playlist", key, [:], toMany: ["songs": Row.ref("Song", playlists[key] ?? [])]))
            let title: AttributeValue? = key % 5 == 0 ? nil : .string("song \(key) ü")
            rows.append(
                Row.row(
                    "Song", key, title.map { ["title": $0] } ?? [:],
                    toMany: ["playlists": Row.ref("Playlist", songPlaylists[key] ?? [])]))
        }
        return rows
    }

    /// The names of the scratch schemas of the store at a URL that exist on the server.
    static func scratchSchemas(of url: String) throws -> [String] {
        let location = try PostgreSQLLocation(url)
        let schema = try #require(location.schema)
        let connection = try Connection(location)
        let names = [schema + "_tern_migrating", schema + "_tern_migrating_step"].map(Connection.indexName)
        return try connection.fetchAll("SELECT nspname::text FROM pg_namespace ORDER BY 1").compactMap {
            $0.first?.string
        }
        .filter(names.contains)
    }

    @Test(arguments: [1, 7, 1000])
    func aMappedStepWithOrderedAndManyToManyRelationshipsAndCountsGivesWhatSQLiteGives(batchSize: Int) async throws {
        let model = try PostgreSQLInPlaceChangeTests.songs()
        let folder = try TemporaryDirectory()
        let rows = Self.songRows(count: batchSize == 1 ? 12 : 60)
        let (sqlite, postgreSQL) = try await PostgreSQLMigrationTests.stores(
            model, version: "v1", rows: rows, in: folder)
        var options = MigrationOptions(batchSize: batchSize)
        options.policies.register(DefaultMigrationPolicy(), named: "Playlists")
        let mapping = try StepMapping(jsonData: Data(Self.songsStep.utf8))
        let expected = try await StoreMigrator().migrateStore(
            at: .file(sqlite), model: model, mappings: [mapping], options: options)
        let events = EventLog()
        let progress = Progress(totalUnitCount: 1)
        let report = try await PostgreSQLMigrator().migrateStore(
            at: postgreSQL, model: model, mappings: [mapping], options: options, progress: progress,
            onEvent: { events.append($0) })
        #expect(report.plan.steps.map(\.kind) == [.mapping] && report.inPlaceSteps.isEmpty)
        #expect(report.objectsPerStep == expected.objectsPerStep && report.objectsPerStep[0] == rows.count)
        #expect(events.startedSteps == [0] && events.finishedSteps == [0] && progress.fractionCompleted == 1)
        let v2 = model.versions[1].model
        try await PostgreSQLMigrationTests.expectSameContents(sqlite: sqlite, postgreSQL: postgreSQL, model: v2)
        // Counts and titles as the mapping says; the next key follows the old ones.
        let counts = try await PostgreSQLInPlaceChangeTests.pageCounts(
            sqlite: sqlite, postgreSQL: postgreSQL, model: v2)
        #expect(counts.contains { $0 != .integer(0) })
        let store = try PostgreSQLStore(url: postgreSQL, model: v2)
        let songs = try await store.fetch(StoreFetchRequest(entityName: "Song"))
        #expect(songs.contains { $0.attributes["title"] == .string("SONG 1 Ü") })
        let sqliteStore = try SQLiteStore(at: sqlite, model: v2)
        #expect(
            try await store.newPrimaryKeys(forEntity: "Song", count: 1)
                == sqliteStore.newPrimaryKeys(forEntity: "Song", count: 1))
        #expect(
            MigrationJournal(metadata: try PostgreSQLStore.metadata(at: postgreSQL)).entries.map(\.kind) == ["mapping"])
        #expect(try Self.scratchSchemas(of: postgreSQL).isEmpty)
        try PostgreSQLStore.destroy(at: postgreSQL)
    }

    @Test(arguments: [1, 3])
    func fivePassesRunInDependencyOrderAsOnSQLite(batchSize: Int) async throws {
        let model = try SchoolVersions.model()
        let folder = try TemporaryDirectory()
        let (sqlite, postgreSQL) = try await PostgreSQLMigrationTests.stores(
            model, version: "v1", rows: SchoolVersions.rows(), in: folder)
        let mapping = try StepMapping(jsonData: Data(SchoolVersions.passes.utf8))
        let options = MigrationOptions(batchSize: batchSize)
        let sqliteEvents = EventLog()
        try await StoreMigrator().migrateStore(
            at: .file(sqlite), model: model, mappings: [mapping], options: options, onEvent: { sqliteEvents.append($0) }
        )
        let events = EventLog()
        try await PostgreSQLMigrator().migrateStore(
            at: postgreSQL, model: model, mappings: [mapping], options: options, onEvent: { events.append($0) })
        #expect(events.mappingCounts == sqliteEvents.mappingCounts)
        #expect(
            events.mappingCounts == [
                "PersonToPerson:1", "StudentToStudent:3", "CourseToCourse:1", "ClassToClass:2",
                "RegistrationToRegistration:4",
            ])
        try await PostgreSQLMigrationTests.expectSameContents(
            sqlite: sqlite, postgreSQL: postgreSQL, model: model.versions[1].model)
        try PostgreSQLStore.destroy(at: postgreSQL)
    }

    /// Associations of every shape (several destinations per source, a destination of several
    /// sources, keys with gaps) as runs: each lookup direction, and stage 2 once per destination
    /// in creation order, as on SQLite.
    @Test(arguments: [1, 7, 1000])
    func associationRunsOfEveryShapeGiveWhatSQLiteGives(batchSize: Int) async throws {
        let model = try TwinVersions.model()
        let folder = try TemporaryDirectory()
        let (sqlite, postgreSQL) = try await PostgreSQLMigrationTests.stores(
            model, version: "v1", rows: TwinVersions.rows, in: folder)
        let (sqliteCalls, calls) = (TwinVersions.Calls(), TwinVersions.Calls())
        var options = MigrationOptions(batchSize: batchSize)
        options.policies.register(TwinVersions.TwinPolicy(calls: sqliteCalls), named: "Twins")
        try await StoreMigrator().migrateStore(
            at: .file(sqlite), model: model, mappings: [TwinVersions.mapping()], options: options)
        options.policies.register(TwinVersions.TwinPolicy(calls: calls), named: "Twins")
        try await PostgreSQLMigrator().migrateStore(
            at: postgreSQL, model: model, mappings: [TwinVersions.mapping()], options: options)
        try await PostgreSQLMigrationTests.expectSameContents(
            sqlite: sqlite, postgreSQL: postgreSQL, model: model.versions[1].model)
        #expect(calls.all == sqliteCalls.all)
        #expect(calls.all.count == TwinVersions.keys.count * 2 && Set(calls.all).count == calls.all.count)
        #expect(try Self.scratchSchemas(of: postgreSQL).isEmpty)
        try PostgreSQLStore.destroy(at: postgreSQL)
    }

    /// Independent mappings of one source entity, in two passes, share one walk over the source
    /// table on the server (each event is read once for both destination objects), as on SQLite.
    @Test func independentMappingsOfTwoPassesShareOneWalkAsOnSQLite() async throws {
        let model = try VersionedModel("Events") {
            ModelVersion("Event") { Entity("Event") { Attribute("timeStamp", .date) } }
            ModelVersion("Event 2") {
                Entity("PrintedEvent") { Attribute("printedDate", .string) }
                Entity("TimeStampEvent") { Attribute("timeStamp", .double) }
            }
        }
        // Keys with gaps, every seventh event without a date, three pages of ten.
        let rows = (1...25).map { (index: Int) -> StoreRow in
            var attributes: [String: AttributeValue] = [:]
            if index % 7 != 0 {
                attributes["timeStamp"] = .date(Date(timeIntervalSinceReferenceDate: Double(index) * 3_601.5))
            }
            return StoreRow(
                reference: RowReference(entityName: "Event", primaryKey: Int64(index * 2)), version: 1,
                attributes: attributes)
        }
        let folder = try TemporaryDirectory()
        let (sqlite, postgreSQL) = try await PostgreSQLMigrationTests.stores(
            model, version: "Event", rows: rows, in: folder)
        let mapping = try StepMapping(
            jsonData: Data(
                #"""
                {"source": "Event", "destination": "Event 2", "passes": [
                  {"name": "One", "entityMappings": [{"name": "EventToPrintedEvent", "kind": "custom", "source": "Event",
                    "destination": "PrintedEvent", "policy": "Recording",
                    "attributes": {"printedDate": "formatDate($source.timeStamp, \"yyyy-MM-dd HH:mm:ss\")"}}]},
                  {"name": "Two", "entityMappings": [{"name": "EventToTimeStampEvent", "kind": "custom", "source": "Event",
                    "destination": "TimeStampEvent", "policy": "Recording",
                    "attributes": {"timeStamp": "timeInterval($source.timeStamp)"}},
                    {"kind": "remove", "source": "Event"}]}]}
                """#.utf8))
        let (sqliteLog, log) = (StageOneLog(), StageOneLog())
        var options = MigrationOptions(batchSize: 10)
        options.policies.register(RecordingPolicy(log: sqliteLog, independent: true), named: "Recording")
        try await StoreMigrator().migrateStore(at: .file(sqlite), model: model, mappings: [mapping], options: options)
        options.policies.register(RecordingPolicy(log: log, independent: true), named: "Recording")
        let report = try await PostgreSQLMigrator().migrateStore(
            at: postgreSQL, model: model, mappings: [mapping], options: options)
        // One walk: each event gives its PrintedEvent, then its TimeStampEvent.
        let keys = rows.map(\.reference.primaryKey)
        #expect(log.entries == keys.flatMap { ["EventToPrintedEvent \($0)", "EventToTimeStampEvent \($0)"] })
        #expect(log.entries == sqliteLog.entries)
        #expect(report.objectsPerStep == [50])
        try await PostgreSQLMigrationTests.expectSameContents(
            sqlite: sqlite, postgreSQL: postgreSQL, model: model.versions[1].model)
        try PostgreSQLStore.destroy(at: postgreSQL)
    }

    @Test func inferredStepsBuiltBesideKeepKeysInATableSharedBySubentitiesAsOnSQLite() async throws {
        let model = try VersionedModel("School") {
            SchoolVersions.version("v1", number: .integer32, courseName: "name")
            SchoolVersions.version("v2", number: .integer64, courseName: "name")
        }
        // Students before the person in key order, and a gap where objects were deleted.
        let rows = SchoolVersions.rows().map { row in
            guard row.reference.entityName == "Person" else { return row }
            var moved = row
            moved.reference = RowReference(entityName: "Person", primaryKey: 9)
            return moved
        }
        let folder = try TemporaryDirectory()
        let (sqlite, postgreSQL) = try await PostgreSQLMigrationTests.stores(
            model, version: "v1", rows: rows, in: folder)
        var options = MigrationOptions(batchSize: 2)
        options.strategy = .rebuild
        let expected = try await StoreMigrator().migrateStore(at: .file(sqlite), model: model, options: options)
        let report = try await PostgreSQLMigrator().migrateStore(at: postgreSQL, model: model, options: options)
        #expect(report.plan.steps.map(\.kind) == [.inferred] && report.inPlaceSteps.isEmpty)
        #expect(report.objectsPerStep == expected.objectsPerStep)
        let v2 = model.versions[1].model
        try await PostgreSQLMigrationTests.expectSameContents(sqlite: sqlite, postgreSQL: postgreSQL, model: v2)
        let people = try await PostgreSQLStore(url: postgreSQL, model: v2, readOnly: true).fetch(
            StoreFetchRequest(entityName: "Person"))
        #expect(Set(people.map(\.reference.primaryKey)) == [2, 3, 4, 9])
        try PostgreSQLStore.destroy(at: postgreSQL)
    }

    @Test func aFailureOnTheNthObjectOfALaterBatchLeavesTheOldStoreAndNoScratchSchema() async throws {
        let model = try PostgreSQLInPlaceChangeTests.songs()
        let folder = try TemporaryDirectory()
        let (_, postgreSQL) = try await PostgreSQLMigrationTests.stores(
            model, version: "v1", rows: Self.songRows(count: 30), in: folder)
        let v1 = model.versions[0].model
        let before = try await PostgreSQLMigrationTests.contents(
            of: try PostgreSQLStore(url: postgreSQL, model: v1, readOnly: true))
        let metadata = try PostgreSQLStore.metadata(at: postgreSQL)
        var options = MigrationOptions(batchSize: 4)
        options.policies.register(FailsOnNthRelationships(failing: 17), named: "Playlists")
        let mapping = try StepMapping(jsonData: Data(Self.songsStep.utf8))
        let error = await #expect(throws: MigrationError.self) {
            try await PostgreSQLMigrator().migrateStore(
                at: postgreSQL, model: model, mappings: [mapping], options: options)
        }
        #expect(error?.message.contains("planted failure") == true)
        #expect(try PostgreSQLStore.metadata(at: postgreSQL) == metadata)
        #expect(
            try await PostgreSQLMigrationTests.contents(
                of: try PostgreSQLStore(url: postgreSQL, model: v1, readOnly: true)) == before)
        #expect(try Self.scratchSchemas(of: postgreSQL).isEmpty)
        options.policies.register(DefaultMigrationPolicy(), named: "Playlists")
        let report = try await PostgreSQLMigrator().migrateStore(
            at: postgreSQL, model: model, mappings: [mapping], options: options)
        #expect(report.cleanedUpFiles.isEmpty && report.objectsPerStep == [before.values.reduce(0) { $0 + $1.count }])
        try PostgreSQLStore.destroy(at: postgreSQL)
    }

    @Test func scratchSchemasAKilledMigrationLeftAreDroppedByTheNextRun() async throws {
        let model = try RecipeVersions.model(breaking: true)
        let folder = try TemporaryDirectory()
        let (sqlite, postgreSQL) = try await PostgreSQLMigrationTests.stores(
            model, version: "v3", rows: RecipeVersions.rows(for: "v3"), in: folder)
        let location = try PostgreSQLLocation(postgreSQL)
        let schema = try #require(location.schema)
        let leftovers = [schema + "_tern_migrating", schema + "_tern_migrating_step"].map(Connection.indexName)
        for name in leftovers {
            let connection = try Connection(try PostgreSQLLocation(location.connectionString(schema: name)))
            try connection.execute(#"CREATE TABLE "ZRECIPE" ("Z_PK" bigint PRIMARY KEY)"#)
            try connection.execute(#"INSERT INTO "ZRECIPE" VALUES (42)"#)
        }
        #expect(try Self.scratchSchemas(of: postgreSQL) == leftovers.sorted())
        var options = MigrationOptions(batchSize: 2)
        options.policies.register(MinutesAsText(), named: "MinutesAsText")
        let mapping = try StepMapping(jsonData: Data(PostgreSQLMigrationTests.customStep.utf8))
        try await StoreMigrator().migrateStore(at: .file(sqlite), model: model, mappings: [mapping], options: options)
        let report = try await PostgreSQLMigrator().migrateStore(
            at: postgreSQL, model: model, mappings: [mapping], options: options)
        #expect(report.cleanedUpFiles == [leftovers.map { "schema \($0)" }.joined(separator: ", ")])
        #expect(report.plan.steps.count == 2 && report.inPlaceSteps.isEmpty)
        try await PostgreSQLMigrationTests.expectSameContents(
            sqlite: sqlite, postgreSQL: postgreSQL, model: model.versions[4].model)
        #expect(try Self.scratchSchemas(of: postgreSQL).isEmpty)
        try PostgreSQLStore.destroy(at: postgreSQL)
    }
}

extension EventLog {
    /// Each entity mapping started, as `name:objects`.
    var mappingCounts: [String] {
        events.withLock { events in
            events.compactMap { event in
                if case .entityMappingStarted(_, let name, let count) = event { "\(name):\(count)" } else { nil }
            }
        }
    }
}
