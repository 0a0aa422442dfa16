internal import CSQLite
import Foundation
import TernCore
package import TernRelational

/// A SQLite connection: the one owner of a `sqlite3` handle, closed with `sqlite3_close_v2`
/// in `deinit`.
///
/// A connection belongs to one serial executor (the ``SQLiteStore`` actor, or a single function
/// for one-off reads); it is not `Sendable` so the compiler keeps it there. It is opened in
/// SQLite's multi-thread mode (`SQLITE_OPEN_NOMUTEX`) for that reason.
package final class Connection {
    /// The database file.
    package let path: String
    /// The configuration the connection was opened with.
    package let configuration: SQLiteConfiguration
    /// The connection handle.
    let handle: OpaquePointer
    /// The connection's prepared statements.
    private var cache = StatementCache()

    /// Opens a database file, creating it unless the configuration is read-only.
    ///
    /// A read-only open never writes in the store's folder: a write-ahead-log store without its
    /// `-wal` file is opened as immutable, so that SQLite creates no `-wal` or `-shm` file; and a
    /// store that a crashed writer left needing recovery is refused with `needsRecovery` rather
    /// than recovered (see ``recoverInterruptedWrite(atPath:)``).
    ///
    /// - Parameters:
    ///   - path: The database file.
    ///   - configuration: How to open it.
    /// - Throws: ``SQLiteError`` when the file cannot be opened or configured.
    package init(path: String, configuration: SQLiteConfiguration) throws(SQLiteError) {
        self.path = path
        self.configuration = configuration
        var flags = SQLITE_OPEN_NOMUTEX | SQLITE_OPEN_URI
        var filename = Self.uri(forPath: path)
        if configuration.isReadOnly {
            flags |= SQLITE_OPEN_READONLY
            guard FileManager.default.fileExists(atPath: path) else {
                throw SQLiteError(
                    .sqliteFailure, "No store exists at this path; check the path.", resultCode: Int(SQLITE_CANTOPEN),
                    path: path)
            }
            if Self.isWriteAheadLogFile(atPath: path), !FileManager.default.fileExists(atPath: path + "-wal") {
                filename += "?immutable=1"
            }
        } else {
            flags |= SQLITE_OPEN_READWRITE | SQLITE_OPEN_CREATE
        }
        var database: OpaquePointer?
        let code = sqlite3_open_v2(filename, &database, flags, nil)
        guard code == SQLITE_OK, let database else {
            let error = SQLiteError(sqliteCode: code, database: database, sql: nil, path: path)
            sqlite3_close_v2(database)
            throw error
        }
        self.handle = database
        StoreAccessLog.record(.connectionOpened, path: path)
        sqlite3_extended_result_codes(database, 1)
        let milliseconds =
            configuration.busyTimeout.components.seconds * 1000
            + configuration.busyTimeout.components.attoseconds / 1_000_000_000_000_000
        sqlite3_busy_timeout(database, Int32(clamping: milliseconds))
        try registerDerivedAttributeFunctions()
        try registerPredicateFunctions()
        try configure()
        if configuration.isReadOnly { try checkForInterruptedWrite() }
    }

    deinit {
        cache.removeAll()
        sqlite3_close_v2(handle)
    }

    // MARK: - Executing statements

    /// Runs a statement to completion.
    ///
    /// - Parameter sql: The statement and its arguments.
    /// - Throws: ``SQLiteError`` with the SQL when it fails.
    package func execute(_ sql: SQL) throws(SQLiteError) {
        let statement = try cachedStatement(sql)
        defer { statement.reset() }
        while try statement.step() {}
    }

    /// Runs a statement once without caching it: for schema changes and one-off commands.
    ///
    /// - Parameter sql: The statement and its arguments.
    /// - Throws: ``SQLiteError`` with the SQL when it fails.
    package func executeOnce(_ sql: SQL) throws(SQLiteError) {
        let statement = try Statement(sql: sql.text, database: handle, persistent: false)
        try statement.bind(sql.arguments)
        while try statement.step() {}
    }

    /// Calls `body` with each row of a query, without collecting them.
    ///
    /// - Parameters:
    ///   - sql: The query and its arguments.
    ///   - body: Called with the values of each row; throw to stop.
    /// - Throws: ``SQLiteError`` from SQLite, or what `body` throws.
    /// - Complexity: O(*n*) in the number of rows; memory stays that of one row.
    package func forEachRow(
        _ sql: SQL, _ body: ([DatabaseValue]) throws(SQLiteError) -> Void
    ) throws(SQLiteError) {
        let statement = try cachedStatement(sql)
        defer { statement.reset() }
        while try statement.step() {
            try body(statement.row())
        }
    }

    /// ``forEachRow(_:_:)`` for a body that throws more than SQLite's errors (a layout lookup's
    /// `TernError`, a migration's `MigrationError`).
    ///
    /// - Parameters:
    ///   - sql: The query and its arguments.
    ///   - body: Called with the values of each row; throw to stop.
    /// - Throws: ``SQLiteError`` from SQLite, or what `body` throws.
    /// - Complexity: O(*n*) in the number of rows; memory stays that of one row.
    package func forEachRow(
        _ sql: SQL, _ body: ([DatabaseValue]) throws -> Void
    ) throws {
        let statement = try cachedStatement(sql)
        defer { statement.reset() }
        while try statement.step() {
            try body(statement.row())
        }
    }

    /// Calls `body` with the statement positioned on each row of a query, so that columns are
    /// read where they are needed, without an array of values per row.
    ///
    /// - Parameters:
    ///   - sql: The query and its arguments.
    ///   - body: Called for each row; it must not keep the statement.
    /// - Throws: ``SQLiteError`` from SQLite, or what `body` throws.
    func forEachStatementRow(_ sql: SQL, _ body: (Statement) throws(SQLiteError) -> Void) throws(SQLiteError) {
        let statement = try cachedStatement(sql)
        defer { statement.reset() }
        while try statement.step() {
            try body(statement)
        }
    }

    /// ``forEachStatementRow(_:_:)`` for a body that throws more than SQLite's errors.
    ///
    /// - Parameters:
    ///   - sql: The query and its arguments.
    ///   - body: Called for each row; it must not keep the statement.
    /// - Throws: ``SQLiteError`` from SQLite, or what `body` throws.
    func forEachStatementRow(_ sql: SQL, _ body: (Statement) throws -> Void) throws {
        let statement = try cachedStatement(sql)
        defer { statement.reset() }
        while try statement.step() {
            try body(statement)
        }
    }

    /// Every row of a query.
    ///
    /// - Complexity: O(*n*) in the number of rows, all kept in memory.
    package func fetchAll(_ sql: SQL) throws(SQLiteError) -> [[DatabaseValue]] {
        var rows: [[DatabaseValue]] = []
        try forEachRow(sql) { rows.append($0) }
        return rows
    }

    /// The first row of a query, if any.
    package func fetchOne(_ sql: SQL) throws(SQLiteError) -> [DatabaseValue]? {
        let statement = try cachedStatement(sql)
        defer { statement.reset() }
        return try statement.step() ? statement.row() : nil
    }

    /// The first column of the first row of a query, or nil when there is no row.
    package func fetchValue(_ sql: SQL) throws(SQLiteError) -> DatabaseValue? {
        try fetchOne(sql)?.first
    }

    /// The number of rows the last INSERT, UPDATE or DELETE changed.
    package var changedRowCount: Int { Int(sqlite3_changes64(handle)) }

    /// The row ID of the last inserted row.
    package var lastInsertedRowID: Int64 { sqlite3_last_insert_rowid(handle) }

    /// Whether a transaction is open.
    package var isInTransaction: Bool { sqlite3_get_autocommit(handle) == 0 }

    /// Forgets the prepared statements, after a schema change.
    package func clearStatementCache() { cache.removeAll() }

    /// The cached prepared statement for a text, with no arguments bound: for a statement run
    /// many times with values bound one by one (``Statement/bind(_:at:)``), then reset.
    ///
    /// - Parameter text: One SQL statement with `?` placeholders.
    /// - Throws: ``SQLiteError`` with the SQL when SQLite rejects it.
    func preparedStatement(_ text: String) throws(SQLiteError) -> Statement {
        let statement = try cache.statement(for: text, database: handle)
        statement.reset()
        return statement
    }

    // MARK: - Non public

    /// The cached statement for `sql`, with its arguments bound.
    private func cachedStatement(_ sql: SQL) throws(SQLiteError) -> Statement {
        let statement = try cache.statement(for: sql.text, database: handle)
        try statement.bind(sql.arguments)
        return statement
    }

    /// Applies the configuration's pragmas.
    private func configure() throws(SQLiteError) {
        guard !configuration.isReadOnly else { return }
        let pageCount = try fetchValue("PRAGMA page_count")?.int64 ?? 0
        if pageCount == 0 {
            try executeOnce(SQL(unsafeSQL: "PRAGMA auto_vacuum = \(configuration.autoVacuum.rawValue)"))
        }
        try executeOnce(SQL(unsafeSQL: "PRAGMA journal_mode = \(configuration.journalMode.rawValue.uppercased())"))
        try executeOnce(
            SQL(unsafeSQL: "PRAGMA synchronous = \(configuration.effectiveSynchronous.rawValue.uppercased())"))
    }

    /// Registers the SQL functions that Core Data's derived-attribute triggers call
    /// (`Z_DA_…` triggers select `NSCoreDataDATriggerUpdatedAffectedObjectValue(…)`), so that
    /// writes to such tables do not fail with "no such function". Core Data uses them to refresh
    /// objects in memory; here they return NULL and the triggers' own UPDATEs do the work.
    private func registerDerivedAttributeFunctions() throws(SQLiteError) {
        let names = [
            "NSCoreDataDATriggerUpdatedAffectedObjectValue", "NSCoreDataDATriggerInsertUpdatedAffectedObjectValue",
        ]
        for name in names {
            let code = sqlite3_create_function_v2(
                handle, name, -1, SQLITE_UTF8, nil, { context, _, _ in sqlite3_result_null(context) }, nil, nil, nil)
            guard code == SQLITE_OK else { throw SQLiteError(sqliteCode: code, database: handle, sql: nil, path: path) }
        }
    }

    /// A `file:` URI for a path, with the characters URIs reserve percent-encoded.
    static func uri(forPath path: String) -> String {
        var allowed = CharacterSet.urlPathAllowed
        allowed.remove(charactersIn: "?#%")
        let absolute = path.hasPrefix("/") ? path : FileManager.default.currentDirectoryPath + "/" + path
        return "file:" + (absolute.addingPercentEncoding(withAllowedCharacters: allowed) ?? absolute)
    }

    /// Refuses a store that a crashed writer left needing recovery (a hot rollback journal, or a
    /// write-ahead log whose index must be rebuilt or cannot be created), which a read-only
    /// connection cannot do: recovering writes the store, and a read-only open never changes
    /// its input. Other failures (not a database, damaged) surface at the first real query.
    private func checkForInterruptedWrite() throws(SQLiteError) {
        defer { clearStatementCache() }
        do {
            _ = try fetchValue("SELECT COUNT(*) FROM sqlite_master")
        } catch let error where Self.needsRecovery(error, path: path) {
            throw Self.interruptedWriteError(path: path, cause: error)
        } catch {
            return
        }
    }

    /// Rolls back what a crashed writer left in a store (a hot rollback journal, or a
    /// write-ahead log whose index must be rebuilt) by opening it read-write once and reading:
    /// what SQLite does on the next read-write open anyway.
    ///
    /// - Parameter path: The store file.
    /// - Returns: Whether the store needed it.
    /// - Throws: ``SQLiteError`` with code `needsRecovery` when it still needs recovery afterwards
    ///   (its folder or files are read-only), or what opening it throws.
    package static func recoverInterruptedWrite(atPath path: String) throws(SQLiteError) -> Bool {
        do {
            _ = try Connection(path: path, configuration: .readOnly)
            return false
        } catch let error where error.code == .needsRecovery {
            var recovering: OpaquePointer?
            let code = sqlite3_open_v2(uri(forPath: path), &recovering, SQLITE_OPEN_READWRITE | SQLITE_OPEN_URI, nil)
            if code == SQLITE_OK, let recovering {
                sqlite3_exec(recovering, "SELECT COUNT(*) FROM sqlite_master", nil, nil, nil)
            }
            sqlite3_close_v2(recovering)
            _ = try Connection(path: path, configuration: .readOnly)
            return true
        }
    }

    /// Whether a read-only connection failed because the store needs recovery from a crash, or
    /// because its write-ahead log's index cannot be created beside it.
    private static func needsRecovery(_ error: SQLiteError, path: String) -> Bool {
        // SQLITE_READONLY_RECOVERY, SQLITE_READONLY_CANTINIT, SQLITE_READONLY_ROLLBACK.
        let recovery = [
            Int(SQLITE_READONLY) | (1 << 8), Int(SQLITE_READONLY) | (3 << 8), Int(SQLITE_READONLY) | (5 << 8),
        ]
        if recovery.contains(error.extendedResultCode ?? 0) { return true }
        // SQLITE_CANTOPEN with a -wal file: the -shm index cannot be created (a read-only folder).
        return error.resultCode == Int(SQLITE_CANTOPEN) && FileManager.default.fileExists(atPath: path + "-wal")
    }

    /// The error saying what a crashed writer left and what to do about it.
    private static func interruptedWriteError(path: String, cause: SQLiteError) -> SQLiteError {
        let name = URL(fileURLWithPath: path).lastPathComponent
        let message: String
        if FileManager.default.fileExists(atPath: path + "-journal") {
            message =
                "A writer that crashed or was killed left the rollback journal \(name)-journal: its unfinished "
                + "transaction must be rolled back before the store can be read, and a read-only open does not change "
                + "the store. Open the store read-write once (an app using it does so; or run `tern recover \(path)`), "
                + "or, if its folder is read-only, copy \(name) together with \(name)-journal to a writable folder and "
                + "recover the copy."
        } else {
            message =
                "The store uses a write-ahead log (\(name)-wal) whose index (\(name)-shm) must be rebuilt or "
                + "created, which a read-only open cannot do (a writer crashed, or the folder is read-only). Open the "
                + "store read-write once in a writable folder (an app using it does so; or run `tern recover \(path)`), "
                + "or copy \(name) together with its -wal and -shm files to a writable folder and open the copy."
        }
        return SQLiteError(
            .needsRecovery, message, resultCode: cause.resultCode, extendedResultCode: cause.extendedResultCode,
            path: path)
    }

    /// Whether a database file's header says it uses a write-ahead log (file format 2).
    static func isWriteAheadLogFile(atPath path: String) -> Bool {
        guard let file = FileHandle(forReadingAtPath: path) else { return false }
        defer { try? file.close() }
        guard let header = try? file.read(upToCount: 20), header.count == 20 else { return false }
        return header[header.startIndex + 18] == 2 && header[header.startIndex + 19] == 2
    }
}

extension Connection: RelationalConnection {
    /// Inserts rows with one prepared `INSERT`, stepped once per row with its values bound.
    ///
    /// - Parameters:
    ///   - table: The table.
    ///   - columns: The columns the values fill, in order.
    ///   - rows: The rows' values, one per column.
    /// - Throws: ``SQLiteError`` with the SQL; a broken unique index has extended code 2067.
    /// - Complexity: O(*n*) in the number of rows.
    package func insertRows(into table: String, columns: [String], rows: [[DatabaseValue]]) throws(SQLiteError) {
        let names = columns.map(SQL.quoted).joined(separator: ", ")
        let placeholders = Array(repeating: "?", count: columns.count).joined(separator: ", ")
        let text = "INSERT INTO \(SQL.quoted(table)) (\(names)) VALUES (\(placeholders))"
        for row in rows { try execute(SQL(unsafeSQL: text, arguments: row)) }
    }
}
