import Foundation
import TernCore

/// One measured scenario of the benchmark: the registry of everything a run can measure.
///
/// To add a scenario: add a case, give it an ``input``, a ``target`` and a
/// ``ScenarioImplementation`` in ``implementation`` (a file `Scenario+Name.swift` with both sides).
enum Scenario: String, CaseIterable, Codable {
    /// `ObjectContext.batchInsert(entityName:rows:)` of N rows in column order (`RowBatch`), 10,000 per
    /// call (one transaction each).
    case batchInsert = "batch-insert"
    /// N objects inserted through a context, saved every 10,000.
    case contextInsert = "context-insert"
    /// Every object fetched with a batch size of 1,000, every attribute read.
    case fetch
    /// Three attributes of every object fetched as dictionaries.
    case fetchDictionaries = "fetch-dictionaries"
    /// A count with a predicate on an indexed attribute (`amount < 100`, a tenth of the rows).
    case count
    /// An inferred migration: an attribute added with a default, one renamed, one removed.
    case inferredMigration = "inferred-migration"
    /// The seeds' Event split (one entity into two) as a JSON mapping.
    case mappedMigrationJSON = "mapped-migration-json"
    /// The same split with Swift migration policies.
    case mappedMigrationSwift = "mapped-migration-swift"
    /// Five model versions, four inferred steps in one migration.
    case progressiveMigration = "progressive-migration"
    /// A TSV file of N records imported with `tern import`'s code path.
    case importTSV = "import-tsv"
    /// Every record exported to JSON with `tern export`'s code path.
    case exportJSON = "export-json"
    /// Every record exported to TSV with `tern export --format tsv`'s code path.
    case exportTSV = "export-tsv"
    /// SQLite → binary store → SQLite with `tern convert`'s code path.
    case convertBinary = "convert-binary"
    /// A store in write-ahead-log mode copied over another (`StoreFiles.replace`, the backup API).
    case replaceWAL = "replace-wal"
    /// `batch-insert` into a PostgreSQL store (`COPY`), against `psql`'s `\copy` (needs `TERN_PG_URL`).
    case postgreSQLBatchInsert = "pg-batch-insert"
    /// `fetch` from a PostgreSQL store, against a plain `SELECT` through `psql`.
    case postgreSQLFetch = "pg-fetch"
    /// `inferred-migration` of a PostgreSQL store (DDL in one transaction), against the same DDL by hand.
    case postgreSQLInferredMigration = "pg-inferred-migration"
    /// `mapped-migration-json` of a PostgreSQL store (table to table on the server), against
    /// `CREATE TABLE` and `INSERT … SELECT` by hand in one transaction.
    case postgreSQLMappedMigration = "pg-mapped-migration"

    /// What the parent prepares for each side of a scenario.
    enum Input: Equatable {
        /// A fresh copy of the empty store.
        case emptyStore
        /// The store filled with N rows, shared by the read scenarios (not to be written).
        case filledStore
        /// A fresh copy of the filled store, to be changed.
        case filledCopy
        /// A fresh copy of the empty store and a TSV file of N records (`--input`).
        case emptyStoreAndTSV
        /// A fresh PostgreSQL store in a schema of its own, empty or filled with N rows.
        case postgreSQL(filled: Bool)
    }

    /// What the scenario starts from.
    var input: Input {
        switch self {
        case .batchInsert, .contextInsert: .emptyStore
        case .fetch, .fetchDictionaries, .count: .filledStore
        case .importTSV: .emptyStoreAndTSV
        case .inferredMigration, .mappedMigrationJSON, .mappedMigrationSwift, .progressiveMigration,
            .exportJSON, .exportTSV, .convertBinary, .replaceWAL:
            .filledCopy
        case .postgreSQLBatchInsert: .postgreSQL(filled: false)
        case .postgreSQLFetch, .postgreSQLInferredMigration, .postgreSQLMappedMigration: .postgreSQL(filled: true)
        }
    }

    /// The most Tern time ÷ baseline time the issue allows, if it sets one.
    var targetRatio: Double? {
        switch self {
        case .batchInsert: 1.3
        case .contextInsert: 3
        case .fetch: 2.5
        case .fetchDictionaries: 1.5
        case .inferredMigration: 1.2
        case .mappedMigrationJSON: 2
        case .mappedMigrationSwift: 1.5
        case .importTSV: 1.5
        case .convertBinary: 2
        case .postgreSQLBatchInsert, .postgreSQLMappedMigration: 1.5
        case .count, .progressiveMigration, .exportJSON, .exportTSV, .replaceWAL, .postgreSQLFetch,
            .postgreSQLInferredMigration:
            nil
        }
    }

    /// Whether the scenario has a second baseline through the `sqlite3` shell (``SQLiteShell``):
    /// the work a user would script instead of writing C.
    var hasShellBaseline: Bool {
        [.inferredMigration, .mappedMigrationJSON, .mappedMigrationSwift, .importTSV, .exportJSON, .exportTSV]
            .contains(self)
    }

    /// The most Tern time ÷ shell time the issue allows (#24), if it sets one.
    var shellTargetRatio: Double? {
        switch self {
        case .importTSV: 1.3
        case .exportJSON, .exportTSV: 1.5
        case .mappedMigrationJSON: 1.2
        default: nil
        }
    }

    /// Whether the scenario writes into a new empty store (else it reads a filled one).
    var writes: Bool {
        if case .filledStore = input { return false }
        return true
    }

    /// Whether the scenario needs a PostgreSQL server (`TERN_PG_URL`).
    var needsPostgreSQL: Bool {
        if case .postgreSQL = input { return true }
        return false
    }

    /// Whether `--memory` measures the scenario at two sizes (the scenarios 2 to 7).
    var tracksMemory: Bool { self != .batchInsert && self != .contextInsert && !needsPostgreSQL }

    /// Whether the scenario streams, so that its peak memory must not grow with N (by more than
    /// 16 MiB from 100,000 to 1,000,000 rows). Fetching as dictionaries returns every row. (An
    /// import that only inserts streams its records into one transaction; a conversion between
    /// SQLite and binary stores streams from file to file.)
    var streams: Bool {
        tracksMemory && self != .fetchDictionaries
    }

    /// The code of both sides.
    var implementation: any ScenarioImplementation {
        switch self {
        case .batchInsert, .contextInsert, .fetch, .fetchDictionaries, .count: ContextScenario(scenario: self)
        case .inferredMigration, .progressiveMigration: InferredMigrationScenario(scenario: self)
        case .mappedMigrationJSON, .mappedMigrationSwift: MappedMigrationScenario(scenario: self)
        case .importTSV, .exportJSON, .exportTSV: RecordScenario(scenario: self)
        case .convertBinary, .replaceWAL: StoreCopyScenario(scenario: self)
        case .postgreSQLBatchInsert, .postgreSQLFetch, .postgreSQLInferredMigration, .postgreSQLMappedMigration:
            PostgreSQLScenario(scenario: self)
        }
    }

    /// The scenarios of the issue that cannot be measured yet, with the reason.
    static let notYetMeasured: [(name: String, reason: String)] = []
}

/// What a child process gets to work on.
struct ScenarioInput {
    /// The store file (a copy of an empty or a filled store, or the shared filled store).
    var store: URL
    /// The store argument as given: the file's path, or a PostgreSQL store's connection string.
    var location: String
    /// The number of rows of the run.
    var rows: Int
    /// The scenario's extra input file (the TSV file of `import-tsv`), if any.
    var file: URL?

    /// A private folder beside the store for files the scenario writes.
    var folder: URL { store.deletingLastPathComponent() }
}

/// Both sides of a scenario, each run in a child process of its own.
protocol ScenarioImplementation {
    /// Measures the scenario through Tern.
    func runTern(_ input: ScenarioInput) async throws -> Timing
    /// Measures the same work written directly against the SQLite C API.
    func runBaseline(_ input: ScenarioInput) async throws -> Timing
    /// Measures the same work scripted for the `sqlite3` shell, where
    /// ``Scenario/hasShellBaseline`` says there is such a script.
    func runShell(_ input: ScenarioInput) async throws -> Timing
    /// A checksum of the result, computed after the timed work on both sides (nil: the timing's own).
    func checksum(_ input: ScenarioInput) throws -> Int64?
}

extension ScenarioImplementation {
    func runShell(_ input: ScenarioInput) async throws -> Timing {
        throw BenchFailure("this scenario has no sqlite3 shell baseline")
    }
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
            entity()
        }
    }

    /// The `Event` entity of ``model()``, the first version of the migration scenarios.
    static func entity() -> Entity {
        Entity("Event") {
            Attribute("id", .integer64)
            Attribute("name", .string)
            Attribute("timeStamp", .date)
            Attribute("amount", .integer64).indexed()
            Attribute("flag", .boolean)
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
