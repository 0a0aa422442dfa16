import TernRelational

/// How a transaction takes its locks.
package enum TransactionKind: String, Sendable {
    /// Locks are taken when first needed: a read, then a write.
    case deferred = "DEFERRED"
    /// The write lock is taken at once, so no other writer can slip in between a read and a write.
    case immediate = "IMMEDIATE"
}

extension Connection {
    // MARK: - Transactions

    /// Runs `body` in a transaction: committed when it returns, rolled back when it throws.
    ///
    /// Nested calls join the outer transaction through a savepoint.
    ///
    /// - Parameters:
    ///   - kind: How the transaction takes its locks.
    ///   - body: The work.
    /// - Returns: What `body` returns.
    /// - Throws: ``SQLiteError`` from SQLite or from `body`.
    package func inTransaction<Result>(
        _ kind: TransactionKind = .deferred, _ body: () throws(SQLiteError) -> Result
    ) throws(SQLiteError) -> Result {
        if isInTransaction {
            try executeOnce("SAVEPOINT tern_nested")
            do {
                let result = try body()
                try executeOnce("RELEASE SAVEPOINT tern_nested")
                return result
            } catch {
                try? executeOnce("ROLLBACK TO SAVEPOINT tern_nested")
                try? executeOnce("RELEASE SAVEPOINT tern_nested")
                throw error
            }
        }
        try execute(SQL(unsafeSQL: "BEGIN \(kind.rawValue) TRANSACTION"))
        do {
            let result = try body()
            try execute("COMMIT TRANSACTION")
            return result
        } catch {
            if isInTransaction { try? execute("ROLLBACK TRANSACTION") }
            throw error
        }
    }

    /// Runs `body` in a transaction like ``inTransaction(_:_:)``, for work that throws errors
    /// other than ``SQLiteError``: they roll the transaction back and are rethrown as they are.
    ///
    /// - Parameters:
    ///   - kind: How the transaction takes its locks.
    ///   - body: The work.
    /// - Returns: What `body` returns.
    /// - Throws: What `body` throws, or ``SQLiteError`` when SQLite fails.
    package func inTransaction<Result>(_ kind: TransactionKind = .deferred, throwing body: () throws -> Result) throws
        -> Result
    {
        var failure: (any Error)?
        do {
            return try inTransaction(kind) { () throws(SQLiteError) -> Result in
                do {
                    return try body()
                } catch let error as SQLiteError {
                    throw error
                } catch {
                    failure = error
                    throw SQLiteError(.sqliteFailure, "The transaction was rolled back.", underlyingError: error)
                }
            }
        } catch {
            throw failure ?? error
        }
    }
}
