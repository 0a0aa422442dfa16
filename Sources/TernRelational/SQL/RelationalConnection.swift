/// What the code both SQL stores share needs of a connection: run a statement, read rows, load
/// many rows into a table, and count the rows the last statement changed.
package protocol RelationalConnection: AnyObject {
    /// Runs a statement that returns no rows.
    ///
    /// - Throws: The database's error.
    func execute(_ sql: SQL) throws

    /// Every row of a query.
    ///
    /// - Throws: The database's error.
    /// - Complexity: O(*n*) in the number of rows, all kept in memory.
    func fetchAll(_ sql: SQL) throws -> [[DatabaseValue]]

    /// Inserts rows into a table, in their order: PostgreSQL's `COPY`, one prepared `INSERT`
    /// stepped per row on SQLite.
    ///
    /// - Parameters:
    ///   - table: The table.
    ///   - columns: The columns the values fill, in order.
    ///   - rows: The rows' values, one per column.
    /// - Throws: The database's error; a unique violation is reported as the database reports it.
    /// - Complexity: O(*n*) in the size of the rows.
    func insertRows(into table: String, columns: [String], rows: [[DatabaseValue]]) throws

    /// The number of rows the last statement inserted, updated or deleted.
    var changedRowCount: Int { get }
}

extension RelationalConnection {
    /// The first row of a query, or nil when it returns none.
    ///
    /// - Throws: The database's error.
    package func fetchOne(_ sql: SQL) throws -> [DatabaseValue]? {
        try fetchAll(sql).first
    }

    /// The first column of a query's first row, or nil when it returns none.
    ///
    /// - Throws: The database's error.
    package func fetchValue(_ sql: SQL) throws -> DatabaseValue? {
        try fetchAll(sql).first?.first
    }
}

/// A connection that code above the stores holds for itself (the sync server's tables): a
/// ``RelationalConnection`` that also runs scripts and transactions.
package protocol RelationalSession: RelationalConnection {
    /// Runs several statements given as one text: DDL the caller builds itself, with no values.
    ///
    /// - Throws: The database's error.
    func executeScript(_ text: String) throws

    /// Runs `body` in one transaction: committed when it returns, rolled back when it throws.
    /// Nested calls join the outer transaction.
    ///
    /// - Throws: What `body` throws, or the database's error.
    func inTransaction<Result>(_ body: () throws -> Result) throws -> Result
}
