import Foundation
import TernCore

/// One measured scenario of the benchmark.
enum Scenario: String, CaseIterable, Codable {
    /// `ObjectContext.batchInsert` of N rows, 10,000 per call (one transaction each).
    case batchInsert = "batch-insert"
    /// N objects inserted through a context, saved every 10,000.
    case contextInsert = "context-insert"
    /// Every object fetched with a batch size of 1,000, every attribute read.
    case fetch
    /// Three attributes of every object fetched as dictionaries.
    case fetchDictionaries = "fetch-dictionaries"
    /// A count with a predicate on an indexed attribute (`amount < 100`, a tenth of the rows).
    case count

    /// The most Tern time ÷ baseline time the issue allows, if it sets one.
    var targetRatio: Double? {
        switch self {
        case .batchInsert: 1.3
        case .contextInsert: 3
        case .fetch: 2.5
        case .fetchDictionaries: 1.5
        case .count: nil
        }
    }

    /// Whether the scenario writes into a new empty store (else it reads a filled one).
    var writes: Bool { self == .batchInsert || self == .contextInsert }

    /// Whether the scenario streams, so that its peak memory must not grow with N.
    var streams: Bool { self == .fetch || self == .count }

    /// The scenarios of the issue that cannot be measured yet, with the reason.
    static let notYetMeasured: [(name: String, reason: String)] = [
        ("inferred-migration", "TernMigration landed on main at the deadline; scenario and C baseline not written yet"),
        ("mapped-migration-json", "TernMigration landed on main at the deadline; scenario and C baseline not written yet"),
        ("mapped-migration-swift", "TernMigration landed on main at the deadline; scenario and C baseline not written yet"),
        ("progressive-migration", "TernMigration landed on main at the deadline; scenario and C baseline not written yet"),
        ("import-tsv", "needs `tern import` on main"),
        ("export-json", "needs a library entry point for `tern export`"),
        ("convert-binary", "TernBinaryStore is on main; scenario and C baseline not written yet"),
        ("replace-wal", "needs store replacement (backup) on main"),
    ]
}

/// The benchmark's entity and its rows, the same for Tern and the baseline.
enum EventData {
    /// How many rows a context save or a batch insert call writes at a time.
    static let transactionSize = 10_000
    /// The batch size of the fetch scenario.
    static let fetchBatchSize = 1_000
    /// The threshold of the count scenario's predicate: `amount < 100` matches a tenth of rows.
    static let countThreshold: Int64 = 100

    /// `Event(id, name, timeStamp, amount, flag)`, with `amount` indexed.
    static func model() throws -> ManagedObjectModel {
        try ManagedObjectModel {
            Entity("Event") {
                Attribute("id", .integer64)
                Attribute("name", .string)
                Attribute("timeStamp", .date)
                Attribute("amount", .integer64).indexed()
                Attribute("flag", .boolean)
            }
        }
    }

    /// One event's values, made without Tern so that both sides start from the same data.
    struct Row {
        var id: Int64
        var name: String
        var timeStamp: Double
        var amount: Int64
        var flag: Bool

        /// The row numbered `index`: a name of 20 characters, a minute apart, amounts 0..<1000.
        init(_ index: Int) {
            id = Int64(index)
            let digits = String(index, radix: 16)
            name = "event-" + String(repeating: "0", count: max(0, 14 - digits.count)) + digits
            timeStamp = 700_000_000 + Double(index) * 60
            amount = Int64((index &* 7919) % 1000)
            flag = index % 3 == 0
        }
    }

    /// The rows `start..<start+count`.
    static func rows(from start: Int, count: Int) -> [Row] {
        (start..<(start + count)).map(Row.init)
    }
}
