import Foundation
import TernCore
import TernFormats
import TernTestSupport
import Testing

@testable import TernSQLite

/// Rows streamed into a SQLite store in one transaction: batch inserts fed by a handler, and
/// imports of files that only insert.
@Suite struct StreamedInsertTests {
    /// `Event` with a default, a required attribute, a bounded one and an optional relationship.
    static func model() throws -> ManagedObjectModel {
        try ManagedObjectModel {
            Entity("Event") {
                Attribute("id", .integer64).required()
                Attribute("name", .string)
                Attribute("amount", .integer64).range(0...1_000)
                Attribute("kind", .string).default(.string("plain"))
                Attribute("when", .date)
                Relationship("tag", to: "Tag", inverse: "events")
            }
            Entity("Tag") {
                Attribute("label", .string)
                Relationship("events", to: "Event", inverse: "tag").toMany()
            }
        }
    }

    func context(at url: URL, configuration: SQLiteConfiguration = SQLiteConfiguration()) async throws -> (
        ObjectContext, SQLiteStore
    ) {
        let model = try Self.model()
        let store = try SQLiteStore(at: url, model: model, configuration: configuration)
        let coordinator = PersistentStoreCoordinator(model: model)
        try await coordinator.addStore(store)
        return (ObjectContext(coordinator: coordinator), store)
    }

    func count(_ context: ObjectContext) async throws -> Int {
        try await context.count(for: FetchRequest(entityName: "Event"))
    }

    @Test func batchesStreamIntoOneTransactionWithDefaultsAndConsecutiveKeys() async throws {
        let tmp = try TemporaryDirectory()
        let (context, store) = try await context(at: tmp.path("Events.sqlite"))
        let events = context.changes()
        var next = 0
        let inserted = try await context.batchInsert(entityName: "Event") {
            guard next < 25_000 else { return nil }
            defer { next += 5_000 }
            return (next..<next + 5_000).map { ["id": .integer(Int64($0)), "amount": .integer(Int64($0 % 1_000))] }
        }
        #expect(inserted == 25_000)
        #expect(try await count(context) == 25_000)
        let rows = try await store.fetch(StoreFetchRequest(entityName: "Event"))
        #expect(rows.allSatisfy { $0.attributes["kind"] == .string("plain") && $0.version == 1 })
        #expect(Set(rows.map(\.reference.primaryKey)) == Set(1...25_000))
        // Other contexts hear of the rows in events of at most 10,000 IDs.
        var heard = 0
        for await event in events {
            #expect(event.inserted.count <= 10_000)
            heard += event.inserted.count
            if heard == 25_000 { break }
        }
        #expect(heard == 25_000)
        // Z_MAX follows: the next keys come after the streamed ones.
        #expect(try await store.newPrimaryKeys(forEntity: "Event", count: 1) == [25_001])
    }

    @Test func aFailingBatchLeavesNothingWritten() async throws {
        let tmp = try TemporaryDirectory()
        let (context, store) = try await context(at: tmp.path("Events.sqlite"))
        var options = BatchOptions.unchecked
        options.validatesValues = true
        await #expect(throws: TernError.self) {
            var next = 0
            _ = try await context.batchInsert(entityName: "Event", options: options) {
                guard next < 3 else { return nil }
                defer { next += 1 }
                // The third batch breaks the range rule of `amount`.
                return (0..<1_000).map { ["id": .integer(Int64($0)), "amount": .integer(next == 2 ? 5_000 : 1)] }
            }
        }
        #expect(try await count(context) == 0)
        // A value of the wrong type is refused too, even without validation.
        await #expect(throws: TernError.self) {
            _ = try await context.batchInsert(entityName: "Event", objects: [["id": .string("one")]])
        }
        #expect(try await count(context) == 0)
        #expect(try await store.newPrimaryKeys(forEntity: "Event", count: 1) == [1])
    }

    @Test func historyRecordsEachStreamedBatch() async throws {
        let tmp = try TemporaryDirectory()
        var configuration = SQLiteConfiguration()
        configuration.recordsHistory = true
        let (context, store) = try await context(at: tmp.path("Events.sqlite"), configuration: configuration)
        var batches = [(0..<3).map { ["id": AttributeValue.integer(Int64($0))] }, [["id": .integer(9)]]]
        let inserted = try await context.batchInsert(entityName: "Event") {
            batches.isEmpty ? nil : batches.removeFirst()
        }
        #expect(inserted == 4)
        // Rows in column order are recorded the same way.
        var rowBatches: [RowBatch] = [2, 1].map { size in
            var batch = RowBatch(columns: ["id"])
            for id in 0..<size { batch.append(.integer(Int64(id))) }
            return batch
        }
        #expect(
            try await context.batchInsertRows(
                entityName: "Event", batches: { rowBatches.isEmpty ? nil : rowBatches.removeFirst() }) == 3)
        let history = try await store.fetchHistory(HistoryFetchRequest())
        #expect(history.map(\.changes.count) == [3, 1, 2, 1])
    }

    // MARK: - Imports that only insert

    func writeEvents(_ count: Int, to url: URL, badLine: Int? = nil, extra: String = "") throws {
        var text = "id\tname\tamount\tkind\n"
        for index in 0..<count {
            let amount = index + 2 == badLine ? "many" : String(index % 1_000)
            text += "\(index)\tEvent \(index)\t\(amount)\t\(index % 2 == 0 ? "" : "special")\n"
        }
        try (text + extra).write(to: url, atomically: true, encoding: .utf8)
    }

    @Test func importThatOnlyInsertsStreamsAndKeepsImportSemantics() async throws {
        let tmp = try TemporaryDirectory()
        let (context, _) = try await context(at: tmp.path("Events.sqlite"))
        let file = tmp.path("events.tsv")
        try writeEvents(12_000, to: file)
        let progress = Progress(totalUnitCount: 0)
        let summary = try await context.importRecords(
            from: file, options: RecordImportOptions(format: .tsv, entityName: "Event"), progress: progress)
        #expect(summary.inserted == ["Event": 12_000] && summary.updatedCount == 0)
        #expect(progress.completedUnitCount == progress.totalUnitCount && progress.totalUnitCount > 0)
        #expect(try await count(context) == 12_000)
        // An empty field is nil even when the attribute has a default; a column-less one gets it.
        let values = try await context.fetchDictionaries(
            FetchRequest(
                entityName: "Event", predicate: try FetchPredicate("id < 2"), sortDescriptors: [FetchSort(key: "id")]))
        #expect(
            values == [
                ["id": .integer(0), "name": .string("Event 0"), "amount": .integer(0)],
                ["id": .integer(1), "name": .string("Event 1"), "amount": .integer(1), "kind": .string("special")],
            ])
        let noKind = tmp.path("nokind.tsv")
        try "id\tname\n7\tSeven\n".write(to: noKind, atomically: true, encoding: .utf8)
        _ = try await context.importRecords(
            from: noKind, options: RecordImportOptions(format: .tsv, entityName: "Event"))
        let seven = try await context.fetchDictionaries(
            FetchRequest(entityName: "Event", predicate: try FetchPredicate("id == 7 AND name == 'Seven'")))
        #expect(seven.first?["kind"] == .string("plain"))
    }

    /// The error of importing a TSV file of events that must fail.
    func failure(importing file: URL, into context: ObjectContext) async throws -> RecordError? {
        do {
            _ = try await context.importRecords(
                from: file, options: RecordImportOptions(format: .tsv, entityName: "Event"))
            Issue.record("the import should fail")
            return nil
        } catch let error as RecordError {
            return error
        }
    }

    @Test func aBadRecordAfterSeveralBatchesLeavesTheStoreUntouched() async throws {
        let tmp = try TemporaryDirectory()
        let (context, _) = try await context(at: tmp.path("Events.sqlite"))
        let file = tmp.path("events.tsv")
        try writeEvents(11_000, to: file, badLine: 10_500)
        let badValue = try await failure(importing: file, into: context)
        #expect(badValue?.code == .invalidValue && badValue?.line == 10_500 && badValue?.column == 3)
        #expect(badValue?.message.contains("Event.amount") == true)
        #expect(try await count(context) == 0)
        // A required attribute with an empty field, and a rule broken in the last record.
        try writeEvents(100, to: file, extra: "\tNo id\t1\t\n")
        let missing = try await failure(importing: file, into: context)
        #expect(missing?.code == .invalidValue && missing?.line == 102 && missing?.column == 1)
        try writeEvents(100, to: file, extra: "100\tBig\t5000\t\n")
        let broken = try await failure(importing: file, into: context)
        #expect(broken?.code == .saveFailed && broken?.line == 102 && broken?.column == 3)
        #expect(broken?.underlyingError is TernError, "the store's refusal is kept as the cause")
        #expect(broken?.message.contains("Event.amount") == true && broken?.message.contains("5000") == false)
        #expect(try await count(context) == 0)
        #expect(await context.hasChanges == false)
    }
}
