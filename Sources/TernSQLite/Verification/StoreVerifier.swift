public import Foundation
public import TernCore
import TernRelational

/// Checks a Core Data SQLite store for damage: SQLite's own `integrity_check`, the primary-key
/// counters, entity numbers, references that point nowhere, inverses that disagree, required
/// values that are missing, to-many counts, uniqueness constraints and missing external data files.
///
/// The store is opened read-only and never changed. Every check runs in SQL over the store's
/// tables, so memory stays bounded by the problems kept, not by the store's size.
///
/// ```swift
/// let report = try await StoreVerifier.verify(storeAt: url)
/// for problem in report.problems {
///     print("\(problem.location): \(problem.message)")
/// }
/// ```
public enum StoreVerifier {
    /// The most problems a report keeps unless told otherwise.
    public static let defaultProblemLimit = 1000

    /// Verifies a store.
    ///
    /// When SQLite's `integrity_check` finds damage, the report lists what it found and the
    /// other checks are skipped: they need a sound file.
    ///
    /// - Parameters:
    ///   - url: The store file.
    ///   - model: The model to check against; it must match the store's version hashes. Without
    ///     one, the store's own model cache (`Z_MODELCACHE`) is used.
    ///   - problemLimit: The most problems to keep; the report says when more were found.
    ///   - progress: Receives one unit per check step (its total is set here), if given.
    /// - Returns: The problems found and the number of objects checked.
    /// - Throws: ``SQLiteError`` when the file is missing, not a SQLite database, not a Core Data
    ///   store, or the model does not match it.
    /// - Complexity: O(*n* log *n*) in the number of rows; memory bounded by `problemLimit`.
    public static func verify(
        storeAt url: URL, model: ManagedObjectModel? = nil, problemLimit: Int = defaultProblemLimit,
        progress: Progress? = nil
    ) async throws -> StoreVerificationReport {
        precondition(problemLimit > 0, "keep at least one problem")
        let integrity = try integrityProblems(ofStoreAt: url, limit: problemLimit)
        if !integrity.isEmpty {
            progress?.totalUnitCount = 1
            progress?.completedUnitCount = 1
            return StoreVerificationReport(
                problems: integrity, objectCount: 0, isTruncated: integrity.count >= problemLimit)
        }
        let store = try SQLiteStore(at: url, model: model, configuration: .readOnly)
        return try await store.verificationReport(problemLimit: problemLimit, progress: progress)
    }

    /// The damage SQLite's `integrity_check` reports, or SQLite's corruption error as one problem.
    ///
    /// - Throws: ``SQLiteError`` when the file is missing or not a SQLite database at all.
    static func integrityProblems(ofStoreAt url: URL, limit: Int) throws(SQLiteError) -> [StoreProblem] {
        let connection = try Connection(path: url.path, configuration: .readOnly)
        var problems: [StoreProblem] = []
        do {
            try connection.forEachRow("PRAGMA integrity_check(\(SQL(unsafeSQL: String(limit))))") { row in
                guard let text = row.first?.string, text != "ok" else { return }
                problems.append(StoreProblem(.integrity, message: "SQLite integrity check: \(text)"))
            }
        } catch let error where error.resultCode == 11 {  // SQLITE_CORRUPT: damage found while checking
            problems.append(StoreProblem(.integrity, message: "SQLite cannot read the file: \(error.message)"))
        }
        return problems
    }
}
