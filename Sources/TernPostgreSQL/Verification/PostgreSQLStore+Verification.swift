public import Foundation
public import TernCore
import TernRelational

extension PostgreSQLStore {
    // MARK: - Verifying the store's contents

    /// Checks the store for damage, as `tern verify` does for a SQLite store: each entity
    /// hierarchy's primary-key counter (`Z_MAX`) against its largest `Z_PK`, entity numbers,
    /// references and join-table rows that point nowhere, one-to-one inverses that disagree,
    /// required values that are missing, to-many counts and uniqueness constraints.
    ///
    /// SQLite's `integrity_check` and external data files do not apply to a PostgreSQL store
    /// (the server keeps its own files sound, and binary data lives in its rows): the report
    /// lists them in ``/TernCore/StoreVerificationReport/skippedChecks``. Every query runs in one
    /// read-only `REPEATABLE READ` transaction, so the checks see one snapshot while other
    /// processes write.
    ///
    /// ```swift
    /// let store = try PostgreSQLStore(url: "postgres://app@db/recipes?schema=kitchen", readOnly: true)
    /// let report = try await store.verify()
    /// report.problems.forEach { print($0.location, $0.message) }
    /// ```
    ///
    /// - Parameters:
    ///   - problemLimit: The most problems to keep; the report says when more were found.
    ///   - progress: Receives one unit per check step (its total is set here), if given.
    /// - Returns: The problems found and the number of objects checked.
    /// - Throws: ``PostgreSQLError`` when a query fails.
    /// - Complexity: O(*n* log *n*) in the number of rows; memory bounded by `problemLimit`.
    public func verify(
        problemLimit: Int = 1000, progress: Progress? = nil
    ) throws -> StoreVerificationReport {
        precondition(problemLimit > 0, "keep at least one problem")
        let connection = connection
        let checker = StoreChecker(schema: schema, limit: problemLimit) { sql, body in
            try connection.forEachRow(sql) { row in body(row) }
        }
        var report = try connection.inTransaction {
            try connection.execute("SET TRANSACTION ISOLATION LEVEL REPEATABLE READ, READ ONLY")
            return try checker.verify(progress: progress)
        }
        report.skippedChecks = [.integrity, .missingExternalData]
        return report
    }
}
