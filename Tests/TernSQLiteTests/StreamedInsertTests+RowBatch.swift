import Foundation
import TernCore
import TernTestSupport
import Testing

@testable import TernSQLite

/// Batch inserts of rows in column order (`RowBatch`) into a SQLite store.
extension StreamedInsertTests {
    @Test func rowBatchesInsertInColumnOrderWithDefaultsNilsAndConsecutiveKeys() async throws {
        let tmp = try TemporaryDirectory()
        let (context, store) = try await context(at: tmp.path("Events.sqlite"))
        var rows = RowBatch(columns: ["amount", "id", "name"], reservingCapacity: 3)
        rows.append(row: [.integer(7), .integer(1), .string("one")])
        rows.append(row: [nil, .integer(2), nil])
        rows.append(.integer(9))
        rows.append(.integer(3))
        #expect(!rows.isComplete)
        rows.append(.string("three"))
        #expect(rows.count == 3 && rows.isComplete)
        let ids = try await context.batchInsert(entityName: "Event", rows: rows)
        #expect(ids.map(\.primaryKey) == [1, 2, 3])
        let stored = try await store.fetch(
            StoreFetchRequest(entityName: "Event", sortDescriptors: [FetchSort(key: "id")]))
        #expect(
            stored.map(\.attributes) == [
                ["id": .integer(1), "amount": .integer(7), "name": .string("one"), "kind": .string("plain")],
                ["id": .integer(2), "kind": .string("plain")],
                ["id": .integer(3), "amount": .integer(9), "name": .string("three"), "kind": .string("plain")],
            ])
        #expect(stored.allSatisfy { $0.version == 1 })
        // A nil value in a column stays nil, even for an attribute with a default.
        var explicit = RowBatch(columns: ["id", "kind"])
        explicit.append(row: [.integer(4), nil])
        _ = try await context.batchInsert(entityName: "Event", rows: explicit)
        let fourth = try await store.fetch(
            StoreFetchRequest(entityName: "Event", predicate: try FetchPredicate("id == 4")))
        #expect(fourth.map(\.attributes) == [["id": .integer(4)]])
        // Streamed batches share one transaction and Z_MAX follows them.
        var next = 10
        let count = try await context.batchInsertRows(entityName: "Event") { () -> RowBatch? in
            guard next < 13 else { return nil }
            defer { next += 1 }
            var batch = RowBatch(columns: ["id"])
            for offset in 0..<1_000 { batch.append(.integer(Int64(next * 1_000 + offset))) }
            return batch
        }
        #expect(count == 3_000)
        #expect(try await self.count(context) == 3_004)
        #expect(try await store.newPrimaryKeys(forEntity: "Event", count: 1) == [3_005])
    }

    @Test func rowBatchesCheckTypesColumnsAndRulesAndWriteNothingOnFailure() async throws {
        let tmp = try TemporaryDirectory()
        let (context, store) = try await context(at: tmp.path("Events.sqlite"))
        func refused(_ rows: RowBatch, options: BatchOptions = .unchecked) async -> TernError? {
            await #expect(throws: TernError.self) {
                _ = try await context.batchInsert(entityName: "Event", rows: rows, options: options)
            }
        }
        var wrongType = RowBatch(columns: ["id"])
        wrongType.append(.string("one"))
        #expect(await refused(wrongType)?.propertyName == "id")
        var unknown = RowBatch(columns: ["id", "colour"])
        unknown.append(row: [.integer(1), .string("red")])
        #expect(await refused(unknown)?.propertyName == "colour")
        // With validation every broken rule of every row is reported.
        var broken = RowBatch(columns: ["id", "amount"])
        broken.append(row: [.integer(1), .integer(5_000)])
        broken.append(row: [nil, .integer(1)])
        let failures = await refused(broken, options: BatchOptions(validatesValues: true))?.failures
        #expect(failures?.map(\.propertyName) == ["amount", "id"])
        // A failure in a later batch rolls back the earlier ones.
        await #expect(throws: (any Error).self) {
            var next = 0
            _ = try await context.batchInsertRows(entityName: "Event") { () -> RowBatch? in
                guard next < 3 else { return nil }
                defer { next += 1 }
                var batch = RowBatch(columns: ["id", "amount"])
                batch.append(row: [.integer(Int64(next)), next == 2 ? .string("many") : .integer(1)])
                return batch
            }
        }
        #expect(try await count(context) == 0)
        #expect(try await store.newPrimaryKeys(forEntity: "Event", count: 1) == [1])
    }

    @Test func rowBatchesOfTheDefaultImplementationMatchTheSQLitePath() async throws {
        // The in-memory store turns each batch into dictionaries.
        let model = try Self.model()
        let coordinator = PersistentStoreCoordinator(model: model)
        try await coordinator.addStore(InMemoryStore(model: model))
        let context = ObjectContext(coordinator: coordinator)
        var rows = RowBatch(columns: ["id", "name"])
        rows.append(row: [.integer(1), nil])
        rows.append(row: [.integer(2), .string("two")])
        #expect(rows.dictionaries == [["id": .integer(1)], ["id": .integer(2), "name": .string("two")]])
        let ids = try await context.batchInsert(entityName: "Event", rows: rows)
        let objects = try await context.perform { context in
            try await context.fetch(FetchRequest(entityName: "Event", sortDescriptors: [FetchSort(key: "id")]))
                .map { [$0[attribute: "id"], $0[attribute: "name"], $0[attribute: "kind"]] }
        }
        #expect(ids.count == 2)
        #expect(objects == [[.integer(1), nil, .string("plain")], [.integer(2), .string("two"), .string("plain")]])
    }
}
