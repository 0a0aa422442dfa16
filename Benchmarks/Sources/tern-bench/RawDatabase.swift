import CSQLite
import Foundation

/// The thinnest owner of a SQLite connection, for the baseline: no caching, no value types.
final class RawDatabase {
    private let handle: OpaquePointer

    /// Opens a database file for reading and writing, creating it if it does not exist.
    init(path: String) throws {
        var handle: OpaquePointer?
        let code = sqlite3_open_v2(path, &handle, SQLITE_OPEN_READWRITE | SQLITE_OPEN_CREATE | SQLITE_OPEN_NOMUTEX, nil)
        guard code == SQLITE_OK, let handle else {
            let message = handle.map { String(cString: sqlite3_errmsg($0)) } ?? "out of memory"
            sqlite3_close_v2(handle)
            throw BenchFailure("cannot open \(path): \(message)")
        }
        self.handle = handle
        sqlite3_busy_timeout(handle, 10_000)
    }

    deinit {
        sqlite3_close_v2(handle)
    }

    /// Opens a store with Tern's connection settings: write-ahead logging, `synchronous = FULL`.
    static func openStore(_ url: URL) throws -> RawDatabase {
        let database = try RawDatabase(path: url.path)
        try database.execute("PRAGMA journal_mode = WAL")
        try database.execute("PRAGMA synchronous = FULL")
        return database
    }

    /// The sum of the columns of the first row of a query, each read as a Double: a checksum
    /// of aggregates (`COUNT`, `TOTAL`).
    func checksum(_ sql: String) throws -> Int64 {
        let select = try prepare(sql)
        guard try select.step() else { return 0 }
        return (0..<select.columnCount).reduce(0) { $0 &+ Int64(select.double($1)) }
    }

    /// The connection handle, for the C APIs that take one (`sqlite3_backup_init`).
    var connection: OpaquePointer { handle }

    /// Runs SQL without results.
    func execute(_ sql: String) throws {
        guard sqlite3_exec(handle, sql, nil, nil, nil) == SQLITE_OK else { throw failure(sql) }
    }

    /// Compiles one statement.
    func prepare(_ sql: String) throws -> RawStatement {
        var statement: OpaquePointer?
        guard sqlite3_prepare_v2(handle, sql, -1, &statement, nil) == SQLITE_OK, let statement else {
            throw failure(sql)
        }
        return RawStatement(statement: statement, database: self)
    }

    fileprivate func failure(_ sql: String) -> BenchFailure {
        BenchFailure("SQLite: \(String(cString: sqlite3_errmsg(handle))) in \(sql)")
    }
}

/// A compiled statement of a ``RawDatabase``, finalized with it.
final class RawStatement {
    private let statement: OpaquePointer
    private let database: RawDatabase

    fileprivate init(statement: OpaquePointer, database: RawDatabase) {
        self.statement = statement
        self.database = database
    }

    deinit {
        sqlite3_finalize(statement)
    }

    /// Steps once; true when a row is ready.
    func step() throws -> Bool {
        switch sqlite3_step(statement) {
        case SQLITE_ROW: return true
        case SQLITE_DONE: return false
        default: throw database.failure(String(cString: sqlite3_sql(statement)))
        }
    }

    /// Makes the statement ready to run again (bindings are kept and overwritten).
    func reset() {
        sqlite3_reset(statement)
    }

    func bind(_ value: Int64, at index: Int32) {
        sqlite3_bind_int64(statement, index, value)
    }

    func bind(_ value: Double, at index: Int32) {
        sqlite3_bind_double(statement, index, value)
    }

    func bind(_ value: String, at index: Int32) {
        sqlite3_bind_text(statement, index, value, -1, Self.transient)
    }

    /// Binds UTF-8 bytes as text (copied by SQLite).
    func bind(text: UnsafeBufferPointer<UInt8>, at index: Int32) {
        sqlite3_bind_text(
            statement, index, UnsafeRawPointer(text.baseAddress)?.assumingMemoryBound(to: CChar.self),
            Int32(text.count), Self.transient)
    }

    func bindNull(at index: Int32) {
        sqlite3_bind_null(statement, index)
    }

    /// The number of columns of the result.
    var columnCount: Int32 { sqlite3_column_count(statement) }

    /// The type of a column of the current row (`SQLITE_NULL` and so on).
    func type(_ column: Int32) -> Int32 { sqlite3_column_type(statement, column) }

    /// Calls `body` with a text column's bytes (valid only during the call).
    func withText<Result>(_ column: Int32, _ body: (UnsafeBufferPointer<UInt8>) throws -> Result) rethrows -> Result {
        let count = Int(sqlite3_column_bytes(statement, column))
        return try body(UnsafeBufferPointer(start: sqlite3_column_text(statement, column), count: count))
    }

    func int64(_ column: Int32) -> Int64 { sqlite3_column_int64(statement, column) }

    func double(_ column: Int32) -> Double { sqlite3_column_double(statement, column) }

    func string(_ column: Int32) -> String {
        guard let text = sqlite3_column_text(statement, column) else { return "" }
        return String(cString: text)
    }

    /// `SQLITE_TRANSIENT`: SQLite copies bound text before the call returns.
    private static let transient = unsafeBitCast(-1, to: sqlite3_destructor_type.self)
}
