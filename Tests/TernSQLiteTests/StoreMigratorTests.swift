import Foundation
import TernCore
import TernFormats
import TernMigration
import TernRelational
import TernTestSupport
import Testing

@testable import TernSQLite

/// Files of the migration tests, shared with `TernMigrationTests`.
enum MigrationFiles {
    static let root = URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent()
        .appendingPathComponent("TernMigrationTests/Fixtures")
    static var eventModel: URL { root.appendingPathComponent("EventModel.xcdatamodeld") }
    static var eventSplit: URL { root.appendingPathComponent("EventSplit.json") }
}

/// Building and reading stores for migration tests.
enum MigrationStores {
    /// Creates a store for a model with rows (their keys as given) and closes it.
    static func make(at url: URL, model: ManagedObjectModel, rows: [StoreRow]) async throws {
        let store = try SQLiteStore(at: url, model: model)
        var start = 0
        while start < rows.count {
            let batch = Array(rows[start..<min(rows.count, start + 5_000)])
            _ = try await store.save(StoreChangeSet(inserted: batch))
            start += batch.count
        }
    }

    /// Every row of exactly an entity, by primary key.
    static func rows(of entity: String, at url: URL, model: ManagedObjectModel) async throws -> [StoreRow] {
        let store = try SQLiteStore(at: url, model: model, configuration: .readOnly)
        return try await store.fetch(StoreFetchRequest(entityName: entity)).filter { $0.reference.entityName == entity }
            .sorted { $0.reference.primaryKey < $1.reference.primaryKey }
    }
}

@Suite struct StoreMigratorTests {
    let events: VersionedModel

    init() throws {
        events = try XcodeModel.readVersionedModel(at: MigrationFiles.eventModel)
    }

    static let stamps: [Double] = [0, 86_400 * 365 + 3_723, -1_000]

    func eventStore(in directory: TemporaryDirectory) async throws -> URL {
        let url = directory.path("Events.sqlite")
        var rows = Self.stamps.enumerated().map { index, stamp in
            StoreRow(
                reference: RowReference(entityName: "Event", primaryKey: Int64(index + 1)), version: 1,
                attributes: ["timeStamp": .date(Date(timeIntervalSinceReferenceDate: stamp))])
        }
        rows.append(StoreRow(reference: RowReference(entityName: "Event", primaryKey: 4), version: 1))
        try await MigrationStores.make(at: url, model: events.versions[0].model, rows: rows)
        return url
    }

    @Test func migratesTheEventExampleInTwoPassesOnSQLite() async throws {
        let directory = try TemporaryDirectory()
        let url = try await eventStore(in: directory)
        let mapping = try StepMapping(contentsOf: MigrationFiles.eventSplit)
        let progress = Progress(totalUnitCount: 0)
        let report = try await SQLiteStoreMigrator().migrateStore(
            at: url, model: events, mappings: [mapping], progress: progress)
        #expect(report.plan.steps.map(\.kind) == [.mapping])
        #expect(report.objectsPerStep == [8])  // two passes read the four events
        #expect(progress.completedUnitCount == progress.totalUnitCount && progress.totalUnitCount == 1)

        let target = events.versions[1].model
        let metadata = try SQLiteStore.metadata(at: url)
        #expect(target.isCompatible(with: metadata))
        let printed = try await MigrationStores.rows(of: "PrintedEvent", at: url, model: target)
        #expect(
            printed.map { $0.attributes["printedDate"] }
                == [
                    .string("2001-01-01 00:00:00"), .string("2002-01-01 01:02:03"), .string("2000-12-31 23:43:20"), nil,
                ])
        let timed = try await MigrationStores.rows(of: "TimeStampEvent", at: url, model: target)
        let expected: [AttributeValue?] = [.double(0), .double(86_400 * 365 + 3_723), .double(-1_000), nil]
        #expect(timed.map { $0.attributes["timeStamp"] } == expected)
        let journal = MigrationJournal(metadata: metadata)
        #expect(journal.entries.map { "\($0.from)→\($0.to) \($0.kind)" } == ["Event→Event 2 mapping"])
        #expect(
            try FileManager.default.contentsOfDirectory(atPath: directory.url.path).filter { $0.contains("migrating") }
                .isEmpty)
    }
}
