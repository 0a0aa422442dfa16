internal import CSQLite
import Foundation
import TernCore
import TernRelational

/// A prepared statement, the one owner of its `sqlite3_stmt` handle (finalized in `deinit`).
///
/// Statements are used from their connection's executor only. Arguments are bound with
/// `SQLITE_TRANSIENT` and cleared after each execution so that no value outlives its use.
final class Statement {
    /// The statement's SQL, with `?` placeholders.
    let sql: String
    /// The statement handle.
    private let handle: OpaquePointer
    /// The connection handle, for error messages.
    private let database: OpaquePointer

    /// Prepares a statement.
    ///
    /// - Parameters:
    ///   - sql: One SQL statement.
    ///   - database: The connection handle.
    ///   - persistent: Whether the statement is kept for long (`SQLITE_PREPARE_PERSISTENT`).
    /// - Throws: ``SQLiteError`` with the SQL when SQLite rejects it.
    init(sql: String, database: OpaquePointer, persistent: Bool) throws(SQLiteError) {
        guard !sql.utf8.contains(0) else {
            throw SQLiteError(.sqliteFailure, "SQL text cannot hold a NUL character; bind the value instead.")
        }
        let flags = persistent ? UInt32(SQLITE_PREPARE_PERSISTENT) : 0
        var statement: OpaquePointer?
        // The tail pointer is only valid while the C string lives: inspect it inside.
        let (code, hasMore) = sql.withCString { text in
            var tail: UnsafePointer<CChar>?
            let code = sqlite3_prepare_v3(database, text, -1, flags, &statement, &tail)
            let rest = tail.map { String(cString: $0) } ?? ""
            return (code, !rest.allSatisfy { $0.isWhitespace || $0 == ";" })
        }
        guard code == SQLITE_OK, let statement else {
            throw SQLiteError(sqliteCode: code, database: database, sql: sql)
        }
        if hasMore {
            sqlite3_finalize(statement)
            throw SQLiteError(
                .sqliteFailure, "A statement may hold only one SQL command; split the text.", sql: sql)
        }
        self.sql = sql
        self.handle = statement
        self.database = database
    }

    deinit {
        sqlite3_finalize(handle)
    }

    // MARK: - Executing

    /// Binds the arguments, replacing earlier ones.
    ///
    /// - Parameter arguments: One value per `?` placeholder.
    /// - Throws: ``SQLiteError`` when the count is wrong or SQLite refuses a value.
    func bind(_ arguments: [DatabaseValue]) throws(SQLiteError) {
        sqlite3_reset(handle)
        sqlite3_clear_bindings(handle)
        let expected = Int(sqlite3_bind_parameter_count(handle))
        guard expected == arguments.count else {
            throw SQLiteError(
                .sqliteFailure, "The statement expects \(expected) arguments, not \(arguments.count).",
                sql: sql)
        }
        for (offset, value) in arguments.enumerated() {
            try bind(value, at: Int32(offset + 1))
        }
    }

    /// Binds one value to a placeholder, leaving the others as they are.
    ///
    /// - Parameters:
    ///   - value: The value.
    ///   - index: The 1-based placeholder.
    /// - Throws: ``SQLiteError`` when SQLite refuses the value (too big, index out of range).
    func bind(_ value: DatabaseValue, at index: Int32) throws(SQLiteError) {
        switch value {
        case .null: try check(sqlite3_bind_null(handle, index))
        case .integer(let integer): try bind(integer, at: index)
        case .real(let real): try bind(real, at: index)
        case .text(let text): try bind(text: text, at: index)
        case .blob(let data): try bind(blob: data, at: index)
        }
    }

    /// Binds an integer to a placeholder.
    func bind(_ integer: Int64, at index: Int32) throws(SQLiteError) {
        try check(sqlite3_bind_int64(handle, index, integer))
    }

    /// Binds a real to a placeholder.
    func bind(_ real: Double, at index: Int32) throws(SQLiteError) {
        try check(sqlite3_bind_double(handle, index, real))
    }

    /// Binds text to a placeholder (SQLite copies it).
    func bind(text: String, at index: Int32) throws(SQLiteError) {
        try check(
            sqlite3_bind_text64(handle, index, text, UInt64(text.utf8.count), sqliteTransient, UInt8(SQLITE_UTF8)))
    }

    /// Binds bytes to a placeholder (SQLite copies them); empty bytes are a blob, not NULL.
    func bind(blob data: Data, at index: Int32) throws(SQLiteError) {
        let code = data.withUnsafeBytes { bytes in
            // A zero-length blob still needs a non-null pointer to be a blob, not NULL.
            sqlite3_bind_blob64(
                handle, index, bytes.baseAddress ?? UnsafeRawPointer(bitPattern: 1), UInt64(bytes.count),
                sqliteTransient)
        }
        try check(code)
    }

    /// Binds NULL to a placeholder.
    func bindNull(at index: Int32) throws(SQLiteError) {
        try check(sqlite3_bind_null(handle, index))
    }

    /// Throws unless a binding call succeeded.
    private func check(_ code: Int32) throws(SQLiteError) {
        guard code == SQLITE_OK else { throw SQLiteError(sqliteCode: code, database: database, sql: sql) }
    }

    /// Advances to the next row.
    ///
    /// - Returns: `true` when a row is available, `false` when the statement is done.
    /// - Throws: ``SQLiteError`` with the SQL when the step fails.
    func step() throws(SQLiteError) -> Bool {
        let code = sqlite3_step(handle)
        switch code {
        case SQLITE_ROW: return true
        case SQLITE_DONE: return false
        default:
            let error = SQLiteError(sqliteCode: code, database: database, sql: sql)
            reset()
            throw error
        }
    }

    /// Ends the current execution and forgets the bound arguments.
    func reset() {
        sqlite3_reset(handle)
        sqlite3_clear_bindings(handle)
    }

    /// Ends the current execution but keeps the bound arguments, for a caller that binds the
    /// next row over them (every placeholder, or those that change) and calls ``reset()`` after
    /// the last.
    func resetKeepingBindings() {
        sqlite3_reset(handle)
    }

    // MARK: - Reading columns

    /// The number of columns of the result.
    var columnCount: Int { Int(sqlite3_column_count(handle)) }

    /// The name of a result column.
    func columnName(_ index: Int) -> String {
        sqlite3_column_name(handle, Int32(index)).map { String(cString: $0) } ?? ""
    }

    /// The value of a column of the current row.
    func value(at index: Int) -> DatabaseValue {
        let column = Int32(index)
        switch sqlite3_column_type(handle, column) {
        case SQLITE_INTEGER:
            return .integer(sqlite3_column_int64(handle, column))
        case SQLITE_FLOAT:
            return .real(sqlite3_column_double(handle, column))
        case SQLITE_TEXT:
            let count = Int(sqlite3_column_bytes(handle, column))
            guard let bytes = sqlite3_column_text(handle, column) else { return .text("") }
            let buffer = UnsafeBufferPointer(start: bytes, count: count)
            return .text(String(decoding: buffer, as: UTF8.self))
        case SQLITE_BLOB:
            let count = Int(sqlite3_column_bytes(handle, column))
            guard count > 0, let bytes = sqlite3_column_blob(handle, column) else { return .blob(Data()) }
            return .blob(Data(bytes: bytes, count: count))
        default:
            return .null
        }
    }

    /// Every column of the current row.
    func row() -> [DatabaseValue] {
        (0..<columnCount).map { value(at: $0) }
    }
}

/// `SQLITE_TRANSIENT`: SQLite copies the bound bytes before the call returns.
let sqliteTransient = unsafeBitCast(-1, to: sqlite3_destructor_type.self)

extension SQLiteError {
    /// An error for a SQLite result code, with SQLite's message for the connection.
    init(sqliteCode code: Int32, database: OpaquePointer?, sql: String?, path: String? = nil) {
        let extended = database.map { Int(sqlite3_extended_errcode($0)) } ?? Int(code)
        let primary = Int(code) & 0xFF
        let detail =
            database.flatMap { sqlite3_errmsg($0) }.map { String(cString: $0) }
            ?? String(cString: sqlite3_errstr(code))
        let kind: Code =
            primary == Int(SQLITE_NOTADB)
            ? .notADatabase
            : primary == Int(SQLITE_READONLY) ? .readOnly : .sqliteFailure
        var advice = ""
        switch primary {
        case Int(SQLITE_BUSY), Int(SQLITE_LOCKED):
            advice = " Another connection holds a lock; retry later or raise the busy timeout."
        case Int(SQLITE_NOTADB):
            advice = " The file is not a SQLite database (or is encrypted)."
        case Int(SQLITE_CORRUPT):
            advice = " The database is damaged; restore it from a backup."
        case Int(SQLITE_READONLY):
            advice = " The store is read-only; open it read-write to change it."
        case Int(SQLITE_CONSTRAINT):
            advice = " A constraint (unique, primary key, not null) refused the change."
        default: break
        }
        self.init(
            kind, "SQLite failed: \(detail).\(advice)", resultCode: primary, extendedResultCode: extended,
            sql: sql, path: path)
    }
}

extension Statement: ColumnValues {
    /// The integer value of a column of the current row, or nil when it holds no integer.
    func integer(at position: Int) -> Int64? {
        // The column's value is looked up once and then read: half the lookups of a
        // `sqlite3_column_type` followed by a `sqlite3_column_int64`.
        guard let value = sqlite3_column_value(handle, Int32(position)) else { return nil }
        switch sqlite3_value_type(value) {
        case SQLITE_INTEGER: return sqlite3_value_int64(value)
        case SQLITE_FLOAT: return Int64(exactly: sqlite3_value_double(value))
        default: return nil
        }
    }

    /// Reads the common pairs without making a ``DatabaseValue`` first: the same values as
    /// `AttributeValue(databaseValue:type:)` gives for them.
    func commonAttributeValue(at position: Int, type: AttributeType) -> CommonColumnValue? {
        guard let value = sqlite3_column_value(handle, Int32(position)) else { return nil }
        switch (sqlite3_value_type(value), type) {
        case (SQLITE_NULL, _): return .null
        case (SQLITE_INTEGER, .integer16), (SQLITE_INTEGER, .integer32), (SQLITE_INTEGER, .integer64):
            return .value(.integer(sqlite3_value_int64(value)))
        case (SQLITE_INTEGER, .boolean): return .value(.bool(sqlite3_value_int64(value) != 0))
        case (SQLITE_FLOAT, .double), (SQLITE_FLOAT, .float): return .value(.double(sqlite3_value_double(value)))
        case (SQLITE_FLOAT, .date):
            return .value(.date(Date(timeIntervalSinceReferenceDate: sqlite3_value_double(value))))
        // A whole number in a column of numeric affinity (Core Data's TIMESTAMP and FLOAT columns)
        // is stored as an integer: a date on a whole second, a double such as 3.0.
        case (SQLITE_INTEGER, .double), (SQLITE_INTEGER, .float):
            return .value(.double(Double(sqlite3_value_int64(value))))
        case (SQLITE_INTEGER, .date):
            return .value(.date(Date(timeIntervalSinceReferenceDate: Double(sqlite3_value_int64(value)))))
        case (SQLITE_TEXT, .string):
            // Text first, then its length, as SQLite advises; no text (out of memory) takes the
            // general path.
            guard let bytes = sqlite3_value_text(value) else { return nil }
            let count = Int(sqlite3_value_bytes(value))
            return .value(.string(String(decoding: UnsafeBufferPointer(start: bytes, count: count), as: UTF8.self)))
        default: return nil
        }
    }
}
