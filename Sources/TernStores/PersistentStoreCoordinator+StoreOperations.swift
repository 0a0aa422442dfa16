public import Foundation
public import TernCore

extension PersistentStoreCoordinator {
    // MARK: - Copying

    /// Copies a store to a new location and/or type and uses the copy in its place: Core Data's
    /// `migratePersistentStore`, which changes a store's place and type, never its model version
    /// (that is ``StoreMigrator``'s job).
    ///
    /// Rows are copied in batches (a SQLite source is read `batchSize` rows at a time, and a
    /// SQLite destination written one batch per transaction, so memory stays bounded for SQLite
    /// to SQLite). Primary keys, and so object identity, are kept, as are the primary-key
    /// counters (no deleted object's key is handed out again), relationships and the whole
    /// metadata, UUID and application keys included; only the store type changes. The
    /// coordinator then uses the new store in place of the old one, under the same configuration.
    /// The old store's files are left as they are: destroy them when the copy is no longer needed.
    ///
    /// Stores loaded whole in memory (binary, XML, in-memory) are of course read whole, and an
    /// atomic destination is written once, at the end.
    ///
    /// ```swift
    /// let moved = try await coordinator.copyStore(store, to: libraryURL, kind: .binary)
    /// ```
    ///
    /// - Parameters:
    ///   - store: A store added to this coordinator.
    ///   - url: Where the new store goes (no file may exist there); nil for ``/TernCore/StoreKind/inMemory``.
    ///   - kind: The new store's type.
    ///   - isReadOnly: Whether the new store refuses saves.
    ///   - batchSize: How many rows are read and written at a time.
    /// - Returns: The new store, added to the coordinator.
    /// - Throws: ``/TernCore/TernError/Code/objectNotFound`` when the store was not added here,
    ///   ``/TernCore/TernError/Code/unsupported`` when a file exists at `url`; any error of reading the
    ///   source or writing the new store, which is then removed.
    /// - Complexity: O(*n*) in the number of rows.
    @discardableResult
    public func copyStore(
        _ store: any PersistentStore, to url: URL?, kind: StoreKind, isReadOnly: Bool = false, batchSize: Int = 500
    ) async throws -> any PersistentStore {
        precondition(batchSize > 0, "a batch holds at least one row")
        guard stores.contains(where: { $0 === store }) else {
            throw TernError(
                .objectNotFound, "the store was not added to this coordinator; add it first", path: store.location?.path
            )
        }
        let storeConfiguration = self.configuration(of: store)
        let migrated = try await StoreMigration.copy(
            store, to: url, kind: kind, isReadOnly: isReadOnly, batchSize: batchSize)
        removeStore(store)
        try await addStore(migrated, configuration: storeConfiguration)
        return migrated
    }

    // MARK: - Replacing and destroying

    /// Replaces the store at a location with a copy of another store: Core Data's
    /// `replacePersistentStore`. See ``StoreFiles/replace(at:withStoreAt:)`` for how each type
    /// is copied (SQLite through the online backup API, so that data in the `-wal` file is never lost).
    ///
    /// When a store at `destination` was added to this coordinator, it is removed, replaced and
    /// opened again (with the source's type, the same configuration and read-only setting), so
    /// that contexts see the new contents. Otherwise the file is only replaced.
    ///
    /// - Parameters:
    ///   - destination: The store file to replace; it need not exist.
    ///   - source: The store to copy; it may be open and being written.
    /// - Returns: The reopened store when one was added at `destination`, else nil.
    /// - Throws: Any error of copying, or of reopening the store (then it stays removed).
    /// - Complexity: O(*n*) in the size of the source.
    @discardableResult
    public func replaceStore(at destination: URL, withStoreAt source: URL) async throws -> (any PersistentStore)? {
        let existing = store(at: destination)
        let storeConfiguration = existing.flatMap { self.configuration(of: $0) }
        if let existing { removeStore(existing) }
        try StoreFiles.replace(at: destination, withStoreAt: source)
        guard let existing else { return nil }
        let reopened = try StoreFiles.open(at: destination, model: model, isReadOnly: existing.isReadOnly)
        try await addStore(reopened, configuration: storeConfiguration)
        return reopened
    }

    /// Removes the store at a location from the coordinator, if it was added, and deletes its
    /// files: Core Data's `destroyPersistentStore`. See ``StoreFiles/destroy(at:)``.
    ///
    /// - Parameter url: The store file.
    /// - Throws: ``/TernCore/TernError/Code/ioFailure`` when a file cannot be removed.
    public func destroyStore(at url: URL) throws {
        if let existing = store(at: url) { removeStore(existing) }
        try StoreFiles.destroy(at: url)
    }
}
