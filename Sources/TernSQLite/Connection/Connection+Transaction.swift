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
}
