public import Foundation

/// A store a device syncs through (module TernSync): it keeps each object's global identity, the
/// sync engine's state and the pages a pull staged, and applies a pull in one transaction.
///
/// The SQLite store implements it when opened with history and global identifiers
/// (`SQLiteConfiguration.recordsHistory` and `tracksGlobalIdentifiers`); the sync engine reaches
/// the store only through this protocol and ``PersistentStore``, so any store that keeps these
/// tables can sync (docs/Sync.md).
///
/// Every method runs on the store's executor. The ones that read rows or give keys are the
/// synchronous forms of ``PersistentStore``'s, for use inside ``inSyncTransaction(_:)``, where the
/// store is isolated and its transaction must see its own writes.
///
/// ```swift
/// func pushedToken(of store: some SyncableStore) async throws -> String? {
///     try await store.syncState(forKey: "pushed")
/// }
/// ```
public protocol SyncableStore: PersistentStore, Actor {
    /// Whether the store gives its objects global identities (the sync engine needs them).
    nonisolated var tracksGlobalIdentifiers: Bool { get }

    // MARK: Global identities

    /// The global identity of a row.
    ///
    /// - Parameter reference: A row of this store, present or deleted.
    /// - Returns: Its identity, or nil when the row has none.
    /// - Throws: When the store does not track global identities or cannot be read.
    func globalIdentity(of reference: RowReference) throws -> GlobalIdentity?

    /// The row that has a global identifier in this store, if any.
    ///
    /// - Parameter identifier: An object's UUID.
    /// - Returns: Its identity here, or nil when no object of this store has it.
    /// - Throws: When the store does not track global identities or cannot be read.
    func globalIdentity(withIdentifier identifier: UUID) throws -> GlobalIdentity?

    /// The objects of exactly one entity, in the order of their global identifiers, a page at a
    /// time: the order every device shares.
    ///
    /// - Parameters:
    ///   - entity: The entity's name (not its subentities).
    ///   - identifier: The last identifier of the previous page, or nil for the first page.
    ///   - limit: The page size.
    ///   - deleted: Lists the identities of deleted objects instead of live ones.
    /// - Returns: Up to `limit` identities, ordered by identifier.
    /// - Throws: When the store does not track global identities, the entity is unknown, or the
    ///   store cannot be read.
    /// - Complexity: O(*limit* log *n*).
    func globalIdentities(ofEntity entity: String, after identifier: UUID?, limit: Int, deleted: Bool) throws
        -> [GlobalIdentity]

    /// Forgets the identities of deleted objects, once their deletes reached the server.
    ///
    /// - Returns: How many identities went.
    /// - Throws: When the store does not track global identities or cannot be written.
    /// - Complexity: O(*d*) for *d* deleted objects.
    func removeDeletedGlobalIdentities() throws -> Int

    // MARK: Sync state

    /// A value the sync engine keeps in the store: its device identifier and its tokens.
    ///
    /// - Parameter key: The value's name.
    /// - Returns: The value, or nil when it was never set.
    /// - Throws: When the store does not track global identities or cannot be read.
    func syncState(forKey key: String) throws -> String?

    /// The values of the sync state whose names start with a prefix.
    ///
    /// - Parameter prefix: The names' start.
    /// - Returns: The values by name.
    /// - Throws: When the store does not track global identities or cannot be read.
    /// - Complexity: O(*k*) for *k* matching values.
    func syncStates(withPrefix prefix: String) throws -> [String: String]

    /// Sets and removes values of the sync state, in one transaction.
    ///
    /// - Parameters:
    ///   - values: The values to set, by name.
    ///   - removing: The names of values to remove.
    /// - Throws: When the store does not track global identities or cannot be written.
    func setSyncState(_ values: [String: String], removing: [String]) throws

    // MARK: Applying a pull

    /// Saves rows received from other devices: inserted rows take the given global identifiers,
    /// identifiers are renamed (merged objects), and the sync state is written, all in the save's
    /// one transaction.
    ///
    /// - Parameters:
    ///   - changes: The rows to write.
    ///   - identifiers: The identifiers of inserted rows.
    ///   - renamed: Identifiers to replace (old to new), applied before the rows are written.
    ///   - state: Sync state values to set.
    ///   - removing: Names of sync state values to remove.
    /// - Returns: The new version of every inserted and updated row.
    /// - Throws: As ``PersistentStore/save(_:)`` does.
    @discardableResult
    func saveSynced(
        _ changes: StoreChangeSet, identifiers: [RowReference: UUID], renamed: [UUID: UUID], state: [String: String],
        removing: [String]
    ) throws -> StoreSaveResult

    /// Runs `body` on the store's executor inside one write transaction: the saves it makes
    /// commit together or not at all, and no other writer can change the store in between.
    ///
    /// - Parameter body: The work; it gets the store isolated, so it calls the store synchronously.
    /// - Returns: What `body` returns.
    /// - Throws: When the store does not track global identities or cannot be written, or what
    ///   `body` throws; then nothing `body` wrote is kept.
    func inSyncTransaction<Result: Sendable>(_ body: @Sendable (isolated any SyncableStore) throws -> Result) throws
        -> Result

    /// The rows with these references, read on the store's executor (inside a sync transaction,
    /// they include its writes).
    ///
    /// - Throws: When the store cannot be read.
    /// - Complexity: O(*k* log *n*) for *k* references.
    func rows(for references: [RowReference]) throws -> [StoreRow]

    /// Reserves primary keys, on the store's executor.
    ///
    /// - Throws: When the store is read-only or cannot be written.
    func newPrimaryKeys(forEntity entity: String, count: Int) throws -> [Int64]

    // MARK: Staged pull pages

    /// Keeps a page a sync pull downloaded, with the cursor after it, in one transaction; the
    /// app's data is untouched until the pull applies the staged pages.
    ///
    /// - Parameters:
    ///   - page: The page, encoded by the sync engine.
    ///   - cursor: Where the next page starts.
    /// - Throws: When the store does not track global identities or cannot be written.
    func stageSyncPage(_ page: Data, cursor: String) throws

    /// The cursor after the last staged page, or nil when none is staged.
    ///
    /// - Throws: When the store cannot be read.
    func stagedSyncCursor() throws -> String?

    /// The staged page after a number (0 for the first), with its number.
    ///
    /// - Throws: When the store cannot be read.
    func stagedSyncPage(after number: Int64) throws -> (number: Int64, page: Data)?

    /// Removes every staged page and its cursor.
    ///
    /// - Throws: When the store cannot be written.
    func removeStagedSyncPages() throws
}

extension SyncableStore {
    /// Sets values of the sync state, in one transaction.
    ///
    /// - Parameter values: The values by name.
    /// - Throws: When the store does not track global identities or cannot be written.
    public func setSyncState(_ values: [String: String]) throws {
        try setSyncState(values, removing: [])
    }

    /// The live objects of exactly one entity, in the order of their global identifiers, a page
    /// at a time (``globalIdentities(ofEntity:after:limit:deleted:)`` for live objects).
    ///
    /// - Throws: As ``globalIdentities(ofEntity:after:limit:deleted:)``.
    /// - Complexity: O(*limit* log *n*).
    public func globalIdentities(ofEntity entity: String, after identifier: UUID?, limit: Int) throws
        -> [GlobalIdentity]
    {
        try globalIdentities(ofEntity: entity, after: identifier, limit: limit, deleted: false)
    }

    /// The sync state value a migration sets (to a new snapshot number) so that the device
    /// pushes its whole state again: objects a migration made or changed are in no history.
    public static var resnapshotStateKey: String { "resnapshot" }
}

/// An object's identity across devices: a UUID that stays the same whatever primary key the
/// object gets in each store (see docs/Sync.md).
///
/// ```swift
/// if let identity = try await store.globalIdentity(of: reference) {
///     print(identity.identifier, identity.isDeleted)
/// }
/// ```
public struct GlobalIdentity: Hashable, Sendable {
    /// The object's UUID, the same on every device.
    public var identifier: UUID
    /// The object's row in this store (its row for as long as it existed, for a deleted one).
    public var reference: RowReference
    /// Whether the object was deleted from this store; its identity is kept so that the delete
    /// can be sent to other devices.
    public var isDeleted: Bool

    /// Creates an identity.
    ///
    /// - Parameters:
    ///   - identifier: The object's UUID.
    ///   - reference: Its row in this store.
    ///   - isDeleted: Whether it was deleted here.
    public init(identifier: UUID, reference: RowReference, isDeleted: Bool) {
        self.identifier = identifier
        self.reference = reference
        self.isDeleted = isDeleted
    }
}
