import Foundation
import TernRelational
import TernTestSupport
import Testing

@testable import TernCore
@testable import TernSQLite

/// A context's batched walk over a SQLite store with more rows than one packed page holds:
/// small batches share a page, and the next page is read while the body runs.
@Suite struct BatchedWalkTests {
    /// More rows than two pages of small batches hold (``ObjectContext/packedPageRows``).
    static let rowCount = 2 * ObjectContext.packedPageRows + 809

    /// The date of event `index`: on a whole second for even indexes (SQLite stores it as an
    /// integer in the `TIMESTAMP` column), with a fraction for odd ones (stored as a real).
    static func when(_ index: Int) -> Date {
        Date(timeIntervalSinceReferenceDate: 700_000_000 + Double(index) * 60 + (index % 2 == 0 ? 0 : 0.25))
    }

    /// Every event in id order, in batches of `batchSize`.
    static func walk(batchSize: Int) -> FetchRequest {
        var request = FetchRequest(entityName: "Event", sortDescriptors: [FetchSort(key: "id")])
        request.fetchBatchSize = batchSize
        return request
    }

    /// A store of ``rowCount`` events with ids 0, 1, 2…, and a context over it.
    func filled(in tmp: TemporaryDirectory) async throws -> ObjectContext {
        let (context, _) = try await StreamedInsertTests().context(at: tmp.path("Events.sqlite"))
        var rows = RowBatch(columns: ["id", "name", "when"], reservingCapacity: Self.rowCount)
        for index in 0..<Self.rowCount {
            rows.append(row: [.integer(Int64(index)), .string("Event \(index)"), .date(Self.when(index))])
        }
        _ = try await context.batchInsert(entityName: "Event", rows: rows)
        let connection = try Connection(path: tmp.path("Events.sqlite").path, configuration: .readOnly)
        let integral = try connection.fetchValue("SELECT COUNT(*) FROM ZEVENT WHERE typeof(ZWHEN) = 'integer'")
        #expect(integral?.int64 == Int64((Self.rowCount + 1) / 2))
        return context
    }

    @Test(arguments: [1, 1_000, 3_000, ObjectContext.packedPageRows + 1])
    func batchesOfEveryPageComeInOrderAndOfTheRequestedSize(size: Int) async throws {
        let tmp = try TemporaryDirectory()
        let context = try await filled(in: tmp)
        let walked = Self.walk(batchSize: size)
        let (ids, names, sizes) = try await context.perform { context in
            var ids: [Int64] = []
            var names: [String] = []
            var sizes: [Int] = []
            var wrongDates = 0
            try await context.forEachBatch(of: walked) { batch in
                sizes.append(batch.count)
                for event in batch {
                    let id: Int64 = event["id"] ?? -1
                    ids.append(id)
                    names.append(event["name"] ?? "")
                    if event[attribute: "when"] != .date(Self.when(Int(id))) { wrongDates += 1 }
                }
            }
            #expect(wrongDates == 0)
            return (ids, names, sizes)
        }
        // Compared as a whole, not printed whole when they differ.
        #expect(ids.elementsEqual(0..<Int64(Self.rowCount)))
        #expect(names.elementsEqual((0..<Self.rowCount).lazy.map { "Event \($0)" }))
        #expect(sizes.dropLast().allSatisfy { $0 == size })
        #expect(sizes.reduce(0, +) == Self.rowCount && (sizes.last ?? 0) > 0)
    }

    @Test func anErrorOfTheBodyOnALaterPageIsTheOneThrownAndEndsTheWalk() async throws {
        struct Stop: Error {}
        let tmp = try TemporaryDirectory()
        let context = try await filled(in: tmp)
        let walked = Self.walk(batchSize: 1_000)
        // Batch 6 is on the second page (pages hold 4 batches of 1,000), while the third is read.
        let stopAt = ObjectContext.packedPageRows / 1_000 + 2
        let (calls, firstIDs, keptIsTheContexts, count) = try await context.perform { context in
            var calls = 0
            var firstIDs: [Int64] = []
            var kept: ManagedObject?
            do {
                try await context.forEachBatch(of: walked) { batch in
                    calls += 1
                    firstIDs.append(batch.first?["id"] ?? -1)
                    if calls == stopAt {
                        kept = batch.last
                        throw Stop()
                    }
                }
                Issue.record("the walk went on after the body threw")
            } catch is Stop {}
            // The context is left usable, and the object the body kept is its instance of the row.
            let keptIsTheContexts = kept.map { context.registeredObject(for: $0.objectID) === $0 } ?? false
            return (calls, firstIDs, keptIsTheContexts, try await context.count(for: FetchRequest(entityName: "Event")))
        }
        #expect(calls == stopAt)
        #expect(firstIDs == (0..<Int64(stopAt)).map { $0 * 1_000 })
        #expect(keptIsTheContexts)
        #expect(count == Self.rowCount)
    }

    @Test(arguments: [1_000, ObjectContext.packedPageRows + 1])
    func cancellingTheWalkingTaskStopsItBeforeTheNextBatch(size: Int) async throws {
        let tmp = try TemporaryDirectory()
        let context = try await filled(in: tmp)
        let walked = Self.walk(batchSize: size)
        // The next batch is on the same page (1,000) or on the page read ahead (4,097).
        let walk = Task {
            try await context.perform { context in
                var calls = 0
                do {
                    try await context.forEachBatch(of: walked) { _ in
                        calls += 1
                        withUnsafeCurrentTask { $0?.cancel() }
                    }
                    return (calls, false)
                } catch is CancellationError {
                    return (calls, true)
                }
            }
        }
        let (calls, cancelled) = try await walk.value
        #expect(cancelled)
        #expect(calls == 1)
        // The context is left usable.
        #expect(try await context.count(for: FetchRequest(entityName: "Event")) == Self.rowCount)
    }
}
