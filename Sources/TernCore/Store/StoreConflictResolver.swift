/// Resolves a save's version conflicts inside the store's write transaction, so that no other
/// writer can change a row between the moment its stored state is read and the moment the
/// resolved state is written.
///
/// A store that supports it (SQLite, PostgreSQL) calls the resolver from
/// ``PersistentStore/save(_:resolvingConflictsWith:)`` after it has taken its write lock
/// (`BEGIN IMMEDIATE`; `SELECT … FOR UPDATE`) and found rows whose version moved on; it reads
/// those rows in the same transaction and writes the change set the resolver returns.
/// ``ObjectContext`` makes one from its ``MergePolicy``.
///
/// ```swift
/// let resolver = StoreConflictResolver { changes, conflicts, stored in
///     var resolved = changes
///     // Under "the store wins", drop every conflicting update.
///     resolved.updated.removeAll { conflicts.contains($0.reference) }
///     return resolved
/// }
/// let result = try await store.save(changes, resolvingConflictsWith: resolver)
/// ```
public struct StoreConflictResolver: Sendable {
    /// Makes the change set to write from the one that conflicted.
    ///
    /// - Parameters:
    ///   - changes: The change set that conflicted.
    ///   - conflicts: The updated or deleted rows whose version moved on, or that were deleted.
    ///   - stored: The stored rows of `conflicts`, read inside the transaction; a reference with
    ///     no row was deleted.
    /// - Returns: The change set to write; its updated and deleted rows must carry the stored
    ///   versions, or the save fails with ``TernError/Code/mergeConflict``.
    /// - Throws: To fail the save; nothing is written then.
    public typealias Resolve =
        @Sendable (
            _ changes: StoreChangeSet, _ conflicts: Set<RowReference>, _ stored: [RowReference: StoreRow]
        ) throws -> StoreChangeSet

    /// The resolving function.
    public let resolve: Resolve

    /// Creates a resolver.
    ///
    /// - Parameter resolve: Makes the change set to write; it runs on the store's executor,
    ///   inside its write transaction, so it must be quick and must not wait for other work.
    public init(_ resolve: @escaping Resolve) {
        self.resolve = resolve
    }
}

extension PersistentStore {
    /// Saves without resolving conflicts inside the transaction: stores that do not support it
    /// throw ``TernError/Code/mergeConflict`` as ``save(_:)`` does, and the caller resolves the
    /// conflicts itself (reading the rows again) and saves once more.
    ///
    /// - Parameters:
    ///   - changes: The rows to insert, update and delete.
    ///   - resolver: Not used.
    /// - Returns: The new version of every inserted and updated row.
    /// - Throws: What ``save(_:)`` throws.
    public func save(
        _ changes: StoreChangeSet, resolvingConflictsWith resolver: StoreConflictResolver
    ) async throws -> StoreSaveResult {
        try await save(changes)
    }
}
