import Foundation
public import TernCore
import TernRelational

extension PostgreSQLStore {
    // MARK: - Reading without the actor

    /// The rows with these references, read at once on the calling thread: how faults of objects
    /// of this store fire when a property is read.
    ///
    /// The read goes through a second connection that the store opens on first use, kept behind a
    /// lock, whose transactions are read-only. Each call reads in one `REPEATABLE READ`
    /// transaction, so the rows and their relationships come from one snapshot of the database.
    ///
    /// - Parameter references: The rows wanted.
    /// - Returns: The rows found, in the order of `references`; missing ones are left out.
    /// - Throws: ``PostgreSQLError`` when the connection cannot be opened or a read fails.
    /// - Complexity: O(*k* log *n*) for *k* references.
    public nonisolated func rowsSynchronously(for references: [RowReference]) throws -> [StoreRow] {
        try synchronousReader.withConnection(opening: openSynchronousReader) { connection in
            try connection.inTransaction { try rows(for: references, using: connection) }
        }
    }

    // MARK: - Non public

    /// Opens the connection of synchronous reads: its transactions are read-only and see one
    /// snapshot each.
    private nonisolated func openSynchronousReader() throws(PostgreSQLError) -> Connection {
        let connection = try Connection(postgreSQLLocation)
        try connection.execute("SET default_transaction_read_only TO on")
        try connection.execute("SET default_transaction_isolation TO 'repeatable read'")
        return connection
    }
}
