import Foundation
import TernCore
import TernSQLite

/// What one side did in one scenario: the time of the measured work and a checksum of its
/// result, which must be the same on both sides.
struct Timing: Codable {
    /// Seconds spent in the measured work (setup and data generation excluded).
    var seconds: Double
    /// A sum over the rows written or read, so that both sides are seen to do the same work.
    var checksum: Int64
}

/// The scenarios through Tern's public API: an ``ObjectContext`` over a ``SQLiteStore``.
struct TernSide {
    /// The store file (a copy of an empty or a filled store).
    let url: URL
    /// The number of rows to write (read scenarios read what the store holds).
    let rows: Int

    /// Opens the store and measures one scenario.
    func run(_ scenario: Scenario) async throws -> Timing {
        let model = try EventData.model()
        let store = try SQLiteStore(at: url, model: model)
        let coordinator = PersistentStoreCoordinator(model: model)
        try await coordinator.addStore(store)
        let context = ObjectContext(coordinator: coordinator)
        switch scenario {
        case .batchInsert: return try await batchInsert(context)
        case .contextInsert: return try await contextInsert(context)
        case .fetch: return try await fetch(context)
        case .fetchDictionaries: return try await fetchDictionaries(context)
        case .count: return try await count(context)
        }
    }

    // MARK: - Writing

    private func batchInsert(_ context: ObjectContext) async throws -> Timing {
        let clock = ContinuousClock()
        var elapsed = Duration.zero
        for start in stride(from: 0, to: rows, by: EventData.transactionSize) {
            let chunk = EventData.rows(from: start, count: min(EventData.transactionSize, rows - start))
            let began = clock.now
            let objects: [[String: AttributeValue]] = chunk.map { row in
                [
                    "id": .integer(row.id), "name": .string(row.name),
                    "timeStamp": .date(Date(timeIntervalSinceReferenceDate: row.timeStamp)),
                    "amount": .integer(row.amount), "flag": .bool(row.flag),
                ]
            }
            _ = try await context.batchInsert(entityName: "Event", objects: objects)
            elapsed += clock.now - began
        }
        return Timing(seconds: elapsed.seconds, checksum: 0)
    }

    private func contextInsert(_ context: ObjectContext) async throws -> Timing {
        let rows = self.rows
        let elapsed = try await context.perform { context in
            let clock = ContinuousClock()
            var elapsed = Duration.zero
            for start in stride(from: 0, to: rows, by: EventData.transactionSize) {
                let chunk = EventData.rows(from: start, count: min(EventData.transactionSize, rows - start))
                let began = clock.now
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
                elapsed += clock.now - began
            }
            return elapsed
        }
        return Timing(seconds: elapsed.seconds, checksum: 0)
    }

    // MARK: - Reading

    private func fetch(_ context: ObjectContext) async throws -> Timing {
        var request = FetchRequest(entityName: "Event")
        request.fetchBatchSize = EventData.fetchBatchSize
        let batched = request
        return try await context.perform { context in
            let clock = ContinuousClock()
            let began = clock.now
            var checksum: Int64 = 0
            try await context.forEachBatch(of: batched) { events in
                for event in events {
                    checksum &+= Self.integer(event[attribute: "id"]) &+ Self.integer(event[attribute: "amount"])
                    checksum &+= Self.checksum(name: event[attribute: "name"], timeStamp: event[attribute: "timeStamp"])
                    if case .bool(true)? = event[attribute: "flag"] { checksum &+= 1 }
                }
            }
            return Timing(seconds: (clock.now - began).seconds, checksum: checksum)
        }
    }

    private func fetchDictionaries(_ context: ObjectContext) async throws -> Timing {
        var request = FetchRequest(entityName: "Event")
        request.propertiesToFetch = ["name", "timeStamp", "amount"]
        let chosen = request
        return try await context.perform { context in
            let clock = ContinuousClock()
            let began = clock.now
            let dictionaries = try await context.fetchDictionaries(chosen)
            var checksum: Int64 = 0
            for dictionary in dictionaries {
                checksum &+= Self.integer(dictionary["amount"])
                checksum &+= Self.checksum(name: dictionary["name"], timeStamp: dictionary["timeStamp"])
            }
            return Timing(seconds: (clock.now - began).seconds, checksum: checksum)
        }
    }

    private func count(_ context: ObjectContext) async throws -> Timing {
        let request = FetchRequest(
            entityName: "Event",
            predicate: try FetchPredicate("amount < %@", arguments: [.value(.integer(EventData.countThreshold))]))
        return try await context.perform { context in
            let clock = ContinuousClock()
            let began = clock.now
            let count = try await context.count(for: request)
            return Timing(seconds: (clock.now - began).seconds, checksum: Int64(count))
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

extension Duration {
    /// The duration in seconds.
    var seconds: Double {
        let parts = components
        return Double(parts.seconds) + Double(parts.attoseconds) / 1e18
    }
}
