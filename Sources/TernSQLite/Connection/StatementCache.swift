import TernRelational

/// The prepared statements of one connection, keyed by SQL text.
///
/// Statements are prepared with `SQLITE_PREPARE_PERSISTENT` and finalized when the cache (and so
/// the connection) goes away, before the connection closes.
struct StatementCache {
    /// The cached statements.
    private var statements: [String: Statement] = [:]

    /// The number of cached statements.
    var count: Int { statements.count }

    /// The statement for that SQL, prepared on first use.
    ///
    /// - Parameters:
    ///   - sql: One SQL statement.
    ///   - database: The connection handle that prepares it.
    /// - Throws: ``SQLiteError`` with the SQL when SQLite rejects it.
    mutating func statement(for sql: String, database: OpaquePointer) throws(SQLiteError) -> Statement {
        if let statement = statements[sql] { return statement }
        let statement = try Statement(sql: sql, database: database, persistent: true)
        statements[sql] = statement
        return statement
    }

    /// Finalizes every statement (after a schema change, or before closing).
    mutating func removeAll() {
        statements.removeAll()
    }
}
