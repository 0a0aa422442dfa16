package import TernCore

/// The version check of a save, shared by the SQL stores (SQLite and PostgreSQL): the change set
/// to write, resolved by a ``TernCore/StoreConflictResolver`` inside the caller's write
/// transaction when rows conflict.
package enum VersionCheck {
    /// A row whose version moved on, with the failure that names it.
    package typealias Conflict = (reference: RowReference, failure: TernError)

    /// The change set to write: `changes` when no row conflicts; otherwise what `resolver` makes
    /// of the conflicting rows' stored state. Throws a merge conflict naming each conflicting row
    /// when there is no resolver or the resolved change set still conflicts.
    ///
    /// - Parameters:
    ///   - changes: The change set to save.
    ///   - resolver: Resolves conflicts, or nil to refuse them.
    ///   - conflicts: Lists the updated or deleted rows of a change set whose version moved on
    ///     (locking them, where the store locks rows).
    ///   - rows: Reads the stored rows of some references, in the current transaction.
    /// - Returns: The change set to write.
    /// - Throws: ``TernCore/TernError/Code/mergeConflict``, or what the closures throw.
    package static func changesToWrite(
        _ changes: StoreChangeSet, resolver: StoreConflictResolver?,
        conflicts: (StoreChangeSet) throws -> [Conflict], rows: ([RowReference]) throws -> [StoreRow]
    ) throws -> StoreChangeSet {
        let found = try conflicts(changes)
        guard !found.isEmpty else { return changes }
        guard let resolver else { throw mergeConflict(found) }
        let references = Set(found.map(\.reference))
        let stored = Dictionary(try rows(references.sorted()).map { ($0.reference, $0) }) { first, _ in first }
        let resolved = try resolver.resolve(changes, references, stored)
        let remaining = try conflicts(resolved)
        guard remaining.isEmpty else { throw mergeConflict(remaining) }
        return resolved
    }

    /// The merge conflict naming each conflicting row.
    private static func mergeConflict(_ conflicts: [Conflict]) -> TernError {
        TernError(
            .mergeConflict,
            "\(conflicts.count) row(s) changed in the store since they were read; refresh them or pick a merge policy",
            objectID: nil, failures: conflicts.map(\.failure))
    }
}
