import CSQLite
import Foundation

/// The scenarios written directly against the SQLite C API: the same tables, columns,
/// primary keys and transaction sizes as Tern, with the least work that gives the same result.
struct BaselineSide {
    /// The store file (a copy of an empty or a filled store).
    let url: URL
    /// The number of rows to write (read scenarios read what the store holds).
    let rows: Int

    /// Opens the store and measures one scenario.
    func run(_ scenario: Scenario) throws -> Timing {
        let database = try RawDatabase(path: url.path)
        // Tern's defaults: write-ahead logging, synchronous FULL.
        try database.execute("PRAGMA journal_mode = WAL")
        try database.execute("PRAGMA synchronous = FULL")
        switch scenario {
        case .batchInsert, .contextInsert: return try insert(database)
        case .fetch: return try fetch(database)
        case .fetchDictionaries: return try fetchDictionaries(database)
        case .count: return try count(database)
        default: throw BenchFailure("\(scenario.rawValue) has its own baseline")
        }
    }

    // MARK: - Writing

    /// One IMMEDIATE transaction per 10,000 rows: reserve keys from `Z_MAX`, insert the rows.
    private func insert(_ database: RawDatabase) throws -> Timing {
        let entity = try database.prepare("SELECT Z_ENT FROM Z_PRIMARYKEY WHERE Z_NAME = 'Event'")
        guard try entity.step() else { throw BenchFailure("the store has no Event entity") }
        let entityNumber = entity.int64(0)
        // A statement left on a row keeps its read transaction open, which would hold back the
        // write-ahead log's automatic checkpoints for the whole run (Tern's side has them).
        entity.reset()
        let readMax = try database.prepare("SELECT Z_MAX FROM Z_PRIMARYKEY WHERE Z_ENT = ?")
        let writeMax = try database.prepare("UPDATE Z_PRIMARYKEY SET Z_MAX = ? WHERE Z_ENT = ?")
        let insert = try database.prepare(
            """
            INSERT INTO ZEVENT (Z_PK, Z_ENT, Z_OPT, ZID, ZNAME, ZTIMESTAMP, ZAMOUNT, ZFLAG) \
            VALUES (?, ?, 1, ?, ?, ?, ?, ?)
            """)
        var watch = Stopwatch()
        for start in stride(from: 0, to: rows, by: EventData.transactionSize) {
            let chunk = EventData.rows(from: start, count: min(EventData.transactionSize, rows - start))
            watch.start()
            try database.execute("BEGIN IMMEDIATE")
            readMax.bind(entityNumber, at: 1)
            _ = try readMax.step()
            var key = readMax.int64(0)
            readMax.reset()
            writeMax.bind(key + Int64(chunk.count), at: 1)
            writeMax.bind(entityNumber, at: 2)
            _ = try writeMax.step()
            writeMax.reset()
            for row in chunk {
                key += 1
                insert.bind(key, at: 1)
                insert.bind(entityNumber, at: 2)
                insert.bind(row.id, at: 3)
                insert.bind(row.name, at: 4)
                insert.bind(row.timeStamp, at: 5)
                insert.bind(row.amount, at: 6)
                insert.bind(Int64(row.flag ? 1 : 0), at: 7)
                _ = try insert.step()
                insert.reset()
            }
            try database.execute("COMMIT")
            watch.stop()
        }
        return watch.timing(checksum: 0)
    }

    // MARK: - Reading

    /// Every row in key order, every column read into a Swift value.
    private func fetch(_ database: RawDatabase) throws -> Timing {
        var watch = Stopwatch()
        watch.start()
        let select = try database.prepare(
            "SELECT Z_PK, Z_ENT, Z_OPT, ZID, ZNAME, ZTIMESTAMP, ZAMOUNT, ZFLAG FROM ZEVENT ORDER BY Z_PK")
        var checksum: Int64 = 0
        while try select.step() {
            let name = select.string(4)
            let date = Date(timeIntervalSinceReferenceDate: select.double(5))
            checksum &+= select.int64(3) &+ select.int64(6) &+ Int64(name.utf8.count)
            checksum &+= Int64(date.timeIntervalSinceReferenceDate) &+ (select.int64(7) != 0 ? 1 : 0)
        }
        watch.stop()
        return watch.timing(checksum: checksum)
    }

    /// A value of a dictionary row, as hand-written code would keep it.
    private enum Value {
        case integer(Int64)
        case string(String)
        case date(Date)
    }

    /// Three columns of every row, collected as one dictionary per row, then read.
    private func fetchDictionaries(_ database: RawDatabase) throws -> Timing {
        var watch = Stopwatch()
        watch.start()
        let select = try database.prepare("SELECT ZNAME, ZTIMESTAMP, ZAMOUNT FROM ZEVENT ORDER BY Z_PK")
        var dictionaries: [[String: Value]] = []
        while try select.step() {
            dictionaries.append([
                "name": .string(select.string(0)),
                "timeStamp": .date(Date(timeIntervalSinceReferenceDate: select.double(1))),
                "amount": .integer(select.int64(2)),
            ])
        }
        var checksum: Int64 = 0
        for dictionary in dictionaries {
            if case .integer(let amount)? = dictionary["amount"] { checksum &+= amount }
            if case .string(let name)? = dictionary["name"] { checksum &+= Int64(name.utf8.count) }
            if case .date(let date)? = dictionary["timeStamp"] {
                checksum &+= Int64(date.timeIntervalSinceReferenceDate)
            }
        }
        watch.stop()
        return watch.timing(checksum: checksum)
    }

    /// `COUNT(*)` with the predicate in SQL, answered from the index on `ZAMOUNT`.
    private func count(_ database: RawDatabase) throws -> Timing {
        var watch = Stopwatch()
        watch.start()
        let select = try database.prepare("SELECT COUNT(*) FROM ZEVENT WHERE ZAMOUNT < ?")
        select.bind(EventData.countThreshold, at: 1)
        _ = try select.step()
        watch.stop()
        return watch.timing(checksum: select.int64(0))
    }

    // MARK: - Checking what was written

    /// A checksum of every row of a store, the same whichever side wrote it.
    static func checksumOfRows(at url: URL) throws -> Int64 {
        let database = try RawDatabase(path: url.path)
        let select = try database.prepare(
            """
            SELECT COUNT(*), TOTAL(ZID), TOTAL(ZAMOUNT), TOTAL(LENGTH(ZNAME)), TOTAL(CAST(ZTIMESTAMP AS INTEGER)), \
            TOTAL(ZFLAG), MAX(Z_PK), (SELECT Z_MAX FROM Z_PRIMARYKEY WHERE Z_NAME = 'Event') FROM ZEVENT
            """)
        _ = try select.step()
        return (0..<8).reduce(0) { $0 &+ Int64(select.double($1)) }
    }

    /// Fills an empty store with N rows, for the read scenarios.
    static func fill(_ url: URL, rows: Int) throws {
        _ = try BaselineSide(url: url, rows: rows).run(.batchInsert)
        try RawDatabase(path: url.path).execute("PRAGMA wal_checkpoint(TRUNCATE)")
    }
}
