public import Foundation

/// What every store type implements: SQLite, binary, XML, in-memory and any other.
///
/// A store keeps rows (``StoreRow``) and knows nothing of objects or contexts: a
/// ``PersistentStoreCoordinator`` routes the fetches and saves of ``ObjectContext``s to it.
/// Stores are `Sendable`: each one serialises its own work.
///
/// A store must:
/// - apply each ``save(_:)`` as one transaction, all or nothing;
/// - reject a save when an updated or deleted row's version is not the one it was read at,
///   throwing ``TernError/Code/mergeConflict`` with one failure per conflicting row;
/// - reject a save that breaks an entity's uniqueness constraints, throwing
///   ``TernError/Code/constraintConflict`` with one failure per offending row;
/// - hand out primary keys that are unique within an inheritance root.
///
/// `StoreConformance` in TernTestSupport checks all of this for any store.
///
/// ## Errors
///
/// What any store can meet is a ``TernError`` with the same code in every store type:
/// - ``TernError/Code/unwritableStore``: a save, key request or metadata change on a store
///   opened read-only, or a value the store's format cannot hold;
/// - ``TernError/Code/mergeConflict`` and ``TernError/Code/constraintConflict``, as above;
/// - ``TernError/Code/invalidValue``: a row its entity cannot hold (an abstract entity, an
///   attribute or relationship the entity does not have, a value that does not fit its column),
///   or a stored value its attribute cannot read;
/// - ``TernError/Code/invalidExternalData``: a large value whose file is missing or whose
///   reference is malformed;
/// - ``TernError/Code/objectNotFound``: no store where one is to be opened, an unknown entity,
///   or a to-many relationship that names a row that does not exist;
/// - ``TernError/Code/notACoreDataStore``, ``TernError/Code/invalidMetadata`` and
///   ``TernError/Code/schemaMismatch``: a file or schema that is not a Core Data store, whose
///   metadata is malformed, or whose tables do not match the model;
/// - ``TernError/Code/ioFailure``: a file that cannot be written, synced or renamed.
///
/// What the database itself reports is the store's own error: `SQLiteError` (a full disk, a
/// damaged file, `SQLITE_BUSY`…) and `PostgreSQLError` (a lost connection, a server failure),
/// with the database's result code or SQLSTATE and the SQL.
///
/// ```swift
/// let store = InMemoryStore(model: model)
/// let keys = try await store.newPrimaryKeys(forEntity: "Recipe", count: 1)
/// var row = StoreRow(reference: RowReference(entityName: "Recipe", primaryKey: keys[0]))
/// row.attributes["title"] = .string("Soup")
/// _ = try await store.save(StoreChangeSet(inserted: [row]))
/// ```
public protocol PersistentStore: AnyObject, Sendable {
    /// The store's UUID (its metadata's ``StoreMetadata/uuid``).
    var identifier: String { get }
    /// The store's file, or nil for a store without one.
    var location: URL? { get }
    /// The store's type.
    var kind: StoreKind { get }
    /// Whether saves are refused.
    var isReadOnly: Bool { get }
    /// The model the store was opened with.
    var model: ManagedObjectModel { get }

    /// Reads the store's metadata.
    ///
    /// - Throws: ``TernError`` or the store's own error when it cannot be read.
    func metadata() async throws -> StoreMetadata

    /// Replaces the store's metadata.
    ///
    /// - Parameter metadata: The new metadata.
    /// - Throws: When the store is read-only or cannot be written.
    func setMetadata(_ metadata: StoreMetadata) async throws

    /// The rows of an entity (and, when asked, its subentities) that match a predicate, sorted,
    /// with the request's offset and limit applied.
    ///
    /// - Parameter request: What to fetch.
    /// - Returns: The rows, in the requested order.
    /// - Throws: When the store cannot be read.
    /// - Complexity: Proportional to the number of rows of the entities involved.
    func fetch(_ request: StoreFetchRequest) async throws -> [StoreRow]

    /// The references of the rows ``fetch(_:)`` would return, in the same order: what batched
    /// iteration reads first.
    ///
    /// - Parameter request: What to fetch.
    /// - Returns: The references, in the requested order.
    /// - Throws: When the store cannot be read.
    func fetchReferences(_ request: StoreFetchRequest) async throws -> [RowReference]

    /// One page of the rows ``fetch(_:)`` would return: at most `size` rows coming after
    /// `position`, for batched iteration that keeps memory bounded by the page size.
    ///
    /// Paging is keyset pagination: a page holds the rows that come after the position in the
    /// request's order (sort keys, then primary key) as the store is when the page is read, so a
    /// store keeps no state between pages. Between two pages, a row inserted after the position
    /// shows up in a later page, one inserted before it does not, and a deleted row no longer
    /// shows up; a row whose sort keys change may be skipped or seen twice. The request's offset
    /// applies to the first page and its limit to all pages together.
    ///
    /// A default implementation reads every match for each page (fine for stores that hold their
    /// rows in memory); stores on disk implement it with SQL or an index instead.
    ///
    /// - Parameters:
    ///   - request: What to fetch.
    ///   - position: Where the previous page ended (its ``StoreFetchPage/next``), nil for the first.
    ///   - size: The most rows to return; at least 1.
    /// - Returns: The rows in the requested order and the position after them, nil after the last page.
    /// - Throws: When the store cannot be read.
    func fetchPage(_ request: StoreFetchRequest, after position: StoreFetchPosition?, size: Int) async throws
        -> StoreFetchPage

    /// The attribute values of the rows ``fetch(_:)`` would return, one dictionary per row, with
    /// only the attributes the request's ``StoreFetchRequest/propertiesToFetch`` names (all when
    /// nil); nil values are absent. What dictionary fetches read.
    ///
    /// A default implementation takes them from ``fetch(_:)``; a store can read only the chosen
    /// columns instead.
    ///
    /// - Parameter request: What to fetch.
    /// - Returns: One dictionary per row, in the requested order.
    /// - Throws: When the store cannot be read.
    func fetchValues(_ request: StoreFetchRequest) async throws -> [[String: AttributeValue]]

    /// How many rows ``fetch(_:)`` would return.
    ///
    /// - Parameter request: What to count.
    /// - Returns: The number of rows.
    /// - Throws: When the store cannot be read.
    func count(_ request: StoreFetchRequest) async throws -> Int

    /// The rows with these references; references with no row are left out.
    ///
    /// - Parameter references: The rows wanted.
    /// - Returns: The rows found, in the order of `references`.
    /// - Throws: When the store cannot be read.
    func rows(for references: [RowReference]) async throws -> [StoreRow]

    /// The rows with these references, read at once without suspending: how a fault fires when
    /// a property of an object that is not loaded is read.
    ///
    /// It is called from a context's executor, possibly while other reads and saves of the store
    /// are under way, and must not need them to finish: answer from memory, or from a separate
    /// read-only connection whose read transaction sees one committed state of the store
    /// (SQLite's WAL snapshot).
    /// The default implementation throws ``TernError/Code/unsupported``; objects of such a store
    /// must then be fetched, or loaded with ``ObjectContext/fulfillFaults(for:)``, before their
    /// properties are read.
    ///
    /// - Parameter references: The rows wanted.
    /// - Returns: The rows found, in the order of `references`; references with no row are left out.
    /// - Throws: When the store cannot be read, or ``TernError/Code/unsupported``.
    func rowsSynchronously(for references: [RowReference]) throws -> [StoreRow]

    /// Applies a change set as one transaction, checking versions and uniqueness constraints.
    ///
    /// - Parameter changes: The rows to insert, update and delete.
    /// - Returns: The new version of every inserted and updated row.
    /// - Throws: ``TernError/Code/mergeConflict`` when a row changed since it was read,
    ///   ``TernError/Code/constraintConflict`` when a uniqueness constraint would break; in both
    ///   cases nothing is written.
    func save(_ changes: StoreChangeSet) async throws -> StoreSaveResult

    /// Inserts new rows of one entity, read batch by batch from `source` until it returns nil,
    /// in one transaction: all or nothing. Keys are reserved by the store as the batches come.
    ///
    /// This is how batch inserts and imports stream into a store: a store on disk writes each
    /// batch as it comes, so memory stays bounded by one batch. A default implementation
    /// gathers every batch and makes one ``save(_:)`` (fine for stores that hold their rows in memory).
    ///
    /// - Parameters:
    ///   - entityName: A concrete entity.
    ///   - author: Who saved, for the history.
    ///   - contextName: The saving context's name, for the history.
    ///   - source: Called on the store's executor for the next batch of attribute values (the
    ///     non-nil values of each new row); nil ends the insert. What it throws rolls it back.
    /// - Returns: The keys of the new rows, in order, as ranges of consecutive keys.
    /// - Throws: What `source` throws; ``TernError/Code/constraintConflict`` when a uniqueness
    ///   constraint would break; any store error. Nothing is inserted then.
    /// - Complexity: O(*n*) in the number of rows.
    func insertRows(
        entityName: String, author: String?, contextName: String?,
        from source: sending @escaping () throws -> [[String: AttributeValue]]?
    ) async throws -> [ClosedRange<Int64>]

    /// Inserts new rows of one entity as ``insertRows(entityName:author:contextName:from:)``
    /// does, read as batches of values in column order: the fast path of batch inserts and
    /// imports. A store on disk binds each value straight to its column; the default
    /// implementation turns each batch into dictionaries.
    ///
    /// - Parameters:
    ///   - entityName: A concrete entity.
    ///   - author: Who saved, for the history.
    ///   - contextName: The saving context's name, for the history.
    ///   - source: Called on the store's executor for the next batch (complete rows; a nil value
    ///     is stored as nil); nil ends the insert. What it throws rolls it back.
    /// - Returns: The keys of the new rows, in order, as ranges of consecutive keys.
    /// - Throws: What ``insertRows(entityName:author:contextName:from:)`` throws.
    /// - Complexity: O(*n* · *c*) for *n* rows of *c* columns.
    func insertRows(
        entityName: String, author: String?, contextName: String?,
        batches source: sending @escaping () throws -> RowBatch?
    ) async throws -> [ClosedRange<Int64>]

    /// Applies a change set as ``save(_:)`` does, but resolves version conflicts inside the
    /// same transaction: rows whose version moved on are read under the store's write lock and
    /// handed to `resolver`, and the change set it returns is written, so that no other writer
    /// can slip in between the check and the write.
    ///
    /// The default implementation calls ``save(_:)`` and leaves the resolving to the caller.
    ///
    /// - Parameters:
    ///   - changes: The rows to insert, update and delete.
    ///   - resolver: Makes the change set to write from the conflicting rows' stored state.
    /// - Returns: The new version of every inserted and updated row.
    /// - Throws: What ``save(_:)`` throws, or what `resolver` throws; nothing is written then.
    func save(_ changes: StoreChangeSet, resolvingConflictsWith resolver: StoreConflictResolver) async throws
        -> StoreSaveResult

    /// Reserves primary keys for new rows of an entity.
    ///
    /// Keys are shared by an inheritance root: a key is never handed out twice among the root
    /// entity and all its subentities.
    ///
    /// - Parameters:
    ///   - entity: The concrete entity of the new rows.
    ///   - count: How many keys to reserve.
    /// - Returns: `count` new keys.
    /// - Throws: When the store cannot be written.
    func newPrimaryKeys(forEntity entity: String, count: Int) async throws -> [Int64]

    // MARK: - Persistent history (default: not recorded; see PersistentStore+History.swift)

    /// Whether every save records a ``HistoryTransaction``.
    var recordsHistory: Bool { get }

    /// The recorded transactions a request asks for, oldest first.
    ///
    /// - Parameter request: Which transactions and changes.
    /// - Returns: The transactions, each with the changes the request keeps.
    /// - Throws: ``TernError/Code/historyUnavailable`` when the store does not record history;
    ///   ``TernError/Code/invalidHistoryToken`` for another store's token.
    /// - Complexity: Proportional to the transactions and changes after the request's token.
    func fetchHistory(_ request: HistoryFetchRequest) async throws -> [HistoryTransaction]

    /// Removes the recorded transactions up to and including the token's.
    ///
    /// - Parameter token: The last transaction to remove.
    /// - Returns: How many transactions were removed.
    /// - Throws: ``TernError/Code/historyUnavailable`` when the store does not record history;
    ///   ``TernError/Code/invalidHistoryToken`` for another store's token.
    func deleteHistory(before token: HistoryToken) async throws -> Int

    /// The token of the last recorded transaction, or nil when nothing was recorded yet.
    ///
    /// - Throws: ``TernError/Code/historyUnavailable`` when the store does not record history.
    func currentHistoryToken() async throws -> HistoryToken?
}

extension PersistentStore {
    /// Refuses: this store cannot read rows without suspending, so its faults only fire when
    /// awaited (``ObjectContext/fulfillFaults(for:)``, fetches, ``ObjectContext/object(with:)``).
    ///
    /// - Parameter references: The rows wanted.
    /// - Throws: ``TernError/Code/unsupported`` always.
    public func rowsSynchronously(for references: [RowReference]) throws -> [StoreRow] {
        throw TernError(
            .unsupported,
            "the \(kind) store cannot read rows without suspending, so faults cannot fire when a property is read; "
                + "fetch the objects or await fulfillFaults(for:) first",
            path: location?.path)
    }
}
