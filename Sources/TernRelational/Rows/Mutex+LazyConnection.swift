package import Synchronization

extension Mutex {
    /// Runs `body` with the connection this lock keeps, opening it first when there is none:
    /// the second connection through which a SQL store reads on the calling thread (faults that
    /// fire while a property is read). The lock keeps the connection to one thread at a time.
    ///
    /// - Parameters:
    ///   - open: Opens the connection, on first use or after an open failed.
    ///   - body: The read.
    /// - Returns: What `body` returns.
    /// - Throws: What `open` or `body` throws; a connection that fails to open is not kept.
    package borrowing func withConnection<Connection, Result: Sendable>(
        opening open: () throws -> Connection, _ body: (Connection) throws -> Result
    ) throws -> Result where Value == Connection? {
        try withLock { kept in
            let connection: Connection
            if let open = kept {
                connection = open
            } else {
                connection = try open()
                kept = connection
            }
            return try body(connection)
        }
    }
}
