public import Foundation
import Synchronization

/// A store that keeps its rows in memory: Core Data's `NSInMemoryStoreType`, and the reference
/// implementation of ``PersistentStore``.
///
/// Predicates and sorts are evaluated in Swift. All state sits behind one lock, held only for
/// copying in and out, never across an `await`.
///
/// ```swift
/// let store = InMemoryStore(model: model)
/// let coordinator = PersistentStoreCoordinator(model: model)
/// try await coordinator.addStore(store)
/// let context = ObjectContext(coordinator: coordinator)
/// ```
public final class InMemoryStore: PersistentStore {
    /// The store's UUID.
    public let identifier: String
    /// Always nil: the store has no file.
    public var location: URL? { nil }
    /// ``StoreKind/inMemory``.
    public var kind: StoreKind { .inMemory }
    /// Whether saves are refused.
    public let isReadOnly: Bool
    /// The model the store was created with.
    public let model: ManagedObjectModel
    /// Whether every save records a ``HistoryTransaction``.
    public let recordsHistory: Bool

    private let state: Mutex<RowTable>
    private let history = Mutex(HistoryLog())

    /// Creates an empty store.
    ///
    /// - Parameters:
    ///   - model: The model of the rows it will hold; its version hashes go into the metadata.
    ///   - identifier: The store's UUID; a fresh one when omitted.
    ///   - isReadOnly: Whether saves are refused.
    ///   - recordsHistory: Whether every save records a ``HistoryTransaction`` (Core Data's
    ///     `NSPersistentHistoryTrackingKey`); off by default.
    public init(
        model: ManagedObjectModel, identifier: String = UUID().uuidString, isReadOnly: Bool = false,
        recordsHistory: Bool = false
    ) {
        self.identifier = identifier
        self.model = model
        self.isReadOnly = isReadOnly
        self.recordsHistory = recordsHistory
        self.state = Mutex(RowTable(metadata: StoreMetadata(newStoreOf: .inMemory, uuid: identifier, model: model)))
    }

    // MARK: - Metadata

    /// The store's metadata.
    public func metadata() async throws -> StoreMetadata {
        state.withLock { $0.metadata }
    }

    /// Replaces the store's metadata; its UUID stays the store's identifier.
    ///
    /// - Throws: ``TernError/Code/unwritableStore`` when the store is read-only.
    public func setMetadata(_ metadata: StoreMetadata) async throws {
        try checkWritable()
        state.withLock { $0.metadata = metadata }
    }

    // MARK: - Reading

    /// The rows matching the request, sorted, with offset and limit applied.
    ///
    /// - Complexity: O(*n* log *n*) in the number of rows of the entities involved.
    public func fetch(_ request: StoreFetchRequest) async throws -> [StoreRow] {
        try state.withLock { $0 }.select(request, model: model, storeIdentifier: identifier)
    }

    /// One page of the rows matching the request, after a position: keyset pagination over the
    /// rows in memory, so rows saved or deleted between pages are seen as the protocol describes.
    ///
    /// - Complexity: O(*n* log *n*) in the number of rows of the entities involved, per page.
    public func fetchPage(
        _ request: StoreFetchRequest, after position: StoreFetchPosition?, size: Int
    ) async throws -> StoreFetchPage {
        try state.withLock { $0 }.page(request, after: position, size: size, model: model, storeIdentifier: identifier)
    }

    /// The references of the rows matching the request, in order.
    ///
    /// - Complexity: O(*n* log *n*) in the number of rows of the entities involved.
    public func fetchReferences(_ request: StoreFetchRequest) async throws -> [RowReference] {
        try await fetch(request).map(\.reference)
    }

    /// The number of rows matching the request, after offset and limit.
    ///
    /// - Complexity: O(*n*) in the number of rows of the entities involved.
    public func count(_ request: StoreFetchRequest) async throws -> Int {
        try state.withLock { $0 }.count(request, model: model, storeIdentifier: identifier)
    }

    /// The rows with these references, in the same order; missing ones are left out.
    ///
    /// - Complexity: O(*k*) in the number of references.
    public func rows(for references: [RowReference]) async throws -> [StoreRow] {
        rowsSynchronously(for: references)
    }

    /// The rows with these references, looked up in memory at once: how faults of this store fire.
    ///
    /// - Complexity: O(*k*) in the number of references.
    public func rowsSynchronously(for references: [RowReference]) -> [StoreRow] {
        state.withLock { table in references.compactMap(table.row(for:)) }
    }

    // MARK: - Writing

    /// Applies a change set as one transaction.
    ///
    /// - Throws: ``TernError/Code/mergeConflict`` on a version mismatch,
    ///   ``TernError/Code/constraintConflict`` on a broken uniqueness constraint or a reused
    ///   primary key, ``TernError/Code/unwritableStore`` when read-only. Nothing is written then.
    /// - Complexity: O(*c* + *u*) where *c* is the size of the change set and *u* the number of
    ///   rows of the constrained entities it touches.
    public func save(_ changes: StoreChangeSet) async throws -> StoreSaveResult {
        try checkWritable()
        return try state.withLock { state in
            var next = state
            let result = try next.apply(changes, model: model, storeIdentifier: identifier)
            if recordsHistory {
                // Under the rows' lock, so that transactions are recorded in the order saves apply.
                var previous: [RowReference: StoreRow] = [:]
                for reference in changes.updated.map(\.reference) + changes.deleted.keys {
                    previous[reference] = state.row(for: reference)
                }
                history.withLock { $0.record(changes, previous: previous, model: model, storeIdentifier: identifier) }
            }
            state = next
            return result
        }
    }

    /// Reserves primary keys, shared by the entity's inheritance root.
    ///
    /// - Throws: ``TernError/Code/objectNotFound`` when the model has no such entity.
    public func newPrimaryKeys(forEntity entity: String, count: Int) async throws -> [Int64] {
        try state.withLock { try $0.newPrimaryKeys(forEntity: entity, count: count, model: model) }
    }

    /// Raises the last primary keys handed out to at least these, by inheritance root, so that
    /// a copy never hands out a key its source gave a deleted object.
    ///
    /// - Parameter keys: The last primary key handed out, by inheritance root.
    package func raiseLastPrimaryKeys(to keys: [String: Int64]) {
        state.withLock { $0.raiseLastKeys(to: keys) }
    }

    // MARK: - History

    /// The recorded transactions a request asks for, oldest first.
    ///
    /// - Throws: ``TernError/Code/historyUnavailable`` when the store was created without history;
    ///   ``TernError/Code/invalidHistoryToken`` for another store's token.
    /// - Complexity: O(*t* + *c*) in the number of recorded transactions and changes.
    public func fetchHistory(_ request: HistoryFetchRequest) async throws -> [HistoryTransaction] {
        try checkHistory()
        return try history.withLock { try $0.fetch(request, storeIdentifier: identifier) }
    }

    /// Removes the recorded transactions up to and including the token's.
    ///
    /// - Throws: ``TernError/Code/historyUnavailable`` when the store was created without history;
    ///   ``TernError/Code/invalidHistoryToken`` for another store's token.
    public func deleteHistory(before token: HistoryToken) async throws -> Int {
        try checkHistory()
        return try history.withLock { try $0.delete(before: token, storeIdentifier: identifier) }
    }

    /// The token of the last recorded transaction, or nil before the first save.
    ///
    /// - Throws: ``TernError/Code/historyUnavailable`` when the store was created without history.
    public func currentHistoryToken() async throws -> HistoryToken? {
        try checkHistory()
        return history.withLock { $0.currentToken(storeIdentifier: identifier) }
    }

    // MARK: - Non public

    private func checkHistory() throws {
        if !recordsHistory {
            throw TernError(
                .historyUnavailable,
                "the in-memory store \(identifier) does not record history; create it with recordsHistory: true")
        }
    }

    private func checkWritable() throws {
        if isReadOnly {
            throw TernError(
                .unwritableStore, "the in-memory store \(identifier) is read-only; open it writable to save")
        }
    }
}

extension InMemoryStore: PrimaryKeyCounting {
    /// The last primary key handed out, by inheritance root.
    package func lastPrimaryKeys() async throws -> [String: Int64] {
        state.withLock { $0.lastKeys }
    }
}
