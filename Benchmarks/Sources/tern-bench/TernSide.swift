import Foundation
import TernCore
import TernPostgreSQL
import TernSQLite

/// What one side did in one scenario: the time of the measured work and a checksum of its
/// result, which must be the same on both sides.
struct Timing: Codable {
    /// Seconds spent in the measured work (setup and data generation excluded).
    var seconds: Double
    /// CPU seconds of the process (all threads) in the measured work.
    var cpuSeconds: Double
    /// A sum over the rows written or read, so that both sides are seen to do the same work.
    var checksum: Int64
    /// The peak memory of a child process that did the work (the `sqlite3` shell), in KiB.
    var childPeakKiB: Int? = nil
}

/// The scenarios through Tern's public API: an ``ObjectContext`` over a ``SQLiteStore``.
struct TernSide {
    /// The store file (a copy of an empty or a filled store).
    let url: URL
    /// The number of rows to write (read scenarios read what the store holds).
    let rows: Int
    /// A PostgreSQL store's connection string, used instead of `url` when given.
    var postgreSQL: String?

    /// Opens the store and measures one scenario.
    func run(_ scenario: Scenario) async throws -> Timing {
        let model = try EventData.model()
        let store: any PersistentStore =
            try postgreSQL.map { try PostgreSQLStore(url: $0, model: model) }
            ?? SQLiteStore(at: url, model: model)
        let coordinator = PersistentStoreCoordinator(model: model)
        try await coordinator.addStore(store)
        let context = ObjectContext(coordinator: coordinator)
        switch scenario {
        case .batchInsert: return try await batchInsert(context)
        case .contextInsert: return try await contextInsert(context)
        case .fetch: return try await fetch(context)
        case .fetchDictionaries: return try await fetchDictionaries(context)
        case .count: return try await count(context)
        default: throw BenchFailure("\(scenario.rawValue) does not run on a context")
        }
    }

    // MARK: - Writing

    private func batchInsert(_ context: ObjectContext) async throws -> Timing {
        var watch = Stopwatch()
        for start in stride(from: 0, to: rows, by: EventData.transactionSize) {
            let chunk = EventData.rows(from: start, count: min(EventData.transactionSize, rows - start))
            watch.start()
            // The values in column order, as `NSBatchInsertRequest` users hand over dictionaries.
            var objects = RowBatch(
                columns: ["id", "name", "timeStamp", "amount", "flag"], reservingCapacity: chunk.count)
            for row in chunk {
                objects.append(.integer(row.id))
                objects.append(.string(row.name))
                objects.append(.date(Date(timeIntervalSinceReferenceDate: row.timeStamp)))
                objects.append(.integer(row.amount))
                objects.append(.bool(row.flag))
            }
            _ = try await context.batchInsert(entityName: "Event", rows: objects)
            watch.stop()
        }
        return watch.timing(checksum: 0)
    }

    private func contextInsert(_ context: ObjectContext) async throws -> Timing {
        let rows = self.rows
        return try await context.perform { context in
            var watch = Stopwatch()
            for start in stride(from: 0, to: rows, by: EventData.transactionSize) {
                let chunk = EventData.rows(from: start, count: min(EventData.transactionSize, rows - start))
                watch.start()
                for row in chunk {
                    let event = context.insert("Event")
                    event[attribute: "id"] = .integer(row.id)
                    event[attribute: "name"] = .string(row.name)
                    event[attribute: "timeStamp"] = .date(Date(timeIntervalSinceReferenceDate: row.timeStamp))
                    event[attribute: "amount"] = .integer(row.amount)
                    event[attribute: "flag"] = .bool(row.flag)
                }
                try await context.save()
                // What bulk imports do with Core Data: let the saved objects go.
                context.reset()
                watch.stop()
            }
            return watch.timing(checksum: 0)
        }
    }

    // MARK: - Reading

    private func fetch(_ context: ObjectContext) async throws -> Timing {
        var request = FetchRequest(entityName: "Event")
        request.fetchBatchSize = EventData.fetchBatchSize
        let batched = request
        return try await context.perform { context in
            var watch = Stopwatch()
            watch.start()
            var checksum: Int64 = 0
            try await context.forEachBatch(of: batched) { events in
                for event in events {
                    checksum &+= Self.integer(event[attribute: "id"]) &+ Self.integer(event[attribute: "amount"])
                    checksum &+= Self.checksum(name: event[attribute: "name"], timeStamp: event[attribute: "timeStamp"])
                    if case .bool(true)? = event[attribute: "flag"] { checksum &+= 1 }
                }
            }
            watch.stop()
            return watch.timing(checksum: checksum)
        }
    }

    private func fetchDictionaries(_ context: ObjectContext) async throws -> Timing {
        var request = FetchRequest(entityName: "Event")
        request.propertiesToFetch = ["name", "timeStamp", "amount"]
        let chosen = request
        return try await context.perform { context in
            var watch = Stopwatch()
            watch.start()
            let dictionaries = try await context.fetchDictionaries(chosen)
            var checksum: Int64 = 0
            for dictionary in dictionaries {
                checksum &+= Self.integer(dictionary["amount"])
                checksum &+= Self.checksum(name: dictionary["name"], timeStamp: dictionary["timeStamp"])
            }
            watch.stop()
            return watch.timing(checksum: checksum)
        }
    }

    private func count(_ context: ObjectContext) async throws -> Timing {
        let request = FetchRequest(
            entityName: "Event",
            predicate: try FetchPredicate("amount < %@", arguments: [.value(.integer(EventData.countThreshold))]))
        return try await context.perform { context in
            var watch = Stopwatch()
            watch.start()
            let count = try await context.count(for: request)
            watch.stop()
            return watch.timing(checksum: Int64(count))
        }
    }

    // MARK: - Checksums

    private static func integer(_ value: AttributeValue?) -> Int64 {
        if case .integer(let number)? = value { return number }
        return 0
    }

    private static func checksum(name: AttributeValue?, timeStamp: AttributeValue?) -> Int64 {
        var sum: Int64 = 0
        if case .string(let text)? = name { sum &+= Int64(text.utf8.count) }
        if case .date(let date)? = timeStamp { sum &+= Int64(date.timeIntervalSinceReferenceDate) }
        return sum
    }
}
