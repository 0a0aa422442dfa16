/// What the writes both SQL stores share need of a connection: run a statement, read rows, and
/// count the rows the last statement changed.
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

    /// The number of rows the last statement inserted, updated or deleted.
    var changedRowCount: Int { get }
}
