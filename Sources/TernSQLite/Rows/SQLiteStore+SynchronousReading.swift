import Foundation
public import TernCore
import TernRelational

extension SQLiteStore {
    // MARK: - Reading without the actor

    /// The rows with these references, read at once on the calling thread: how faults of objects
    /// of this store fire when a property is read.
    ///
    /// The read goes through a second connection that the store opens on first use, kept behind a
    /// lock, that never writes (`PRAGMA query_only`). Each call reads in one transaction, so the
    /// rows and their relationships come from one committed state of the store: with write-ahead
    /// logging, the state when the read began, unaffected by a save in progress on the store's
    /// own connection or in another process.
    ///
    /// - Parameter references: The rows wanted.
    /// - Returns: The rows found, in the order of `references`; missing ones are left out.
    /// - Throws: ``SQLiteError`` when the connection cannot be opened or a read fails.
    /// - Complexity: O(*k* log *n*) for *k* references.
    public nonisolated func rowsSynchronously(for references: [RowReference]) throws -> [StoreRow] {
        try synchronousReader.withConnection(opening: openSynchronousReader) { connection in
            try connection.inTransaction(.deferred, throwing: { try rows(for: references, using: connection) })
        }
    }

    // MARK: - Non public

    /// Opens the connection of synchronous reads: read-only when the store is, else read-write
    /// on the file (so that it shares the write-ahead log's index) with every write refused.
    private nonisolated func openSynchronousReader() throws(SQLiteError) -> Connection {
        let connection = try Connection(path: url.path, configuration: configuration)
        if !configuration.isReadOnly { try connection.executeOnce("PRAGMA query_only = 1") }
        return connection
    }
}
