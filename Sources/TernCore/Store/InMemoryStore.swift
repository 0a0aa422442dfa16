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

    private let state: Mutex<State>

    /// Creates an empty store.
    ///
    /// - Parameters:
    ///   - model: The model of the rows it will hold; its version hashes go into the metadata.
    ///   - identifier: The store's UUID; a fresh one when omitted.
    ///   - isReadOnly: Whether saves are refused.
    public init(model: ManagedObjectModel, identifier: String = UUID().uuidString, isReadOnly: Bool = false) {
        self.identifier = identifier
        self.model = model
        self.isReadOnly = isReadOnly
        var metadata = StoreMetadata(
            storeType: StoreKind.inMemory.rawValue, uuid: identifier, versionHashes: model.entityVersionHashes)
        metadata.versionIdentifiers = model.versionIdentifiers
        self.state = Mutex(State(metadata: metadata))
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
        try select(request)
    }

    /// The references of the rows matching the request, in order.
    ///
    /// - Complexity: O(*n* log *n*) in the number of rows of the entities involved.
    public func fetchReferences(_ request: StoreFetchRequest) async throws -> [RowReference] {
        try select(request).map(\.reference)
    }

    /// The number of rows matching the request, after offset and limit.
    ///
    /// - Complexity: O(*n*) in the number of rows of the entities involved.
    public func count(_ request: StoreFetchRequest) async throws -> Int {
        var unsorted = request
        unsorted.sortDescriptors = []
        return try select(unsorted).count
    }

    /// The rows with these references, in the same order; missing ones are left out.
    ///
    /// - Complexity: O(*k*) in the number of references.
    public func rows(for references: [RowReference]) async throws -> [StoreRow] {
        state.withLock { state in references.compactMap { state.rows[$0.entityName]?[$0.primaryKey] } }
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
            let result = try apply(changes, to: &next)
            state = next
            return result
        }
    }

    /// Reserves primary keys, shared by the entity's inheritance root.
    ///
    /// - Throws: ``TernError/Code/objectNotFound`` when the model has no such entity.
    public func newPrimaryKeys(forEntity entity: String, count: Int) async throws -> [Int64] {
        guard let root = model.rootEntity(of: entity)?.name else {
            throw TernError(.objectNotFound, "the model has no entity \(entity)", entity: entity)
        }
        return state.withLock { state in
            let first = state.lastKeys[root, default: 0] + 1
            state.lastKeys[root] = first + Int64(count) - 1
            return (0..<Int64(count)).map { first + $0 }
        }
    }

    // MARK: - Non public

    struct State {
        var metadata: StoreMetadata
        /// Rows by concrete entity, then primary key.
        var rows: [String: [Int64: StoreRow]] = [:]
        /// The last primary key handed out, by inheritance root.
        var lastKeys: [String: Int64] = [:]
    }

    private func checkWritable() throws {
        if isReadOnly {
            throw TernError(.unwritableStore, "the in-memory store \(identifier) is read-only; open it writable to save")
        }
    }

    private func select(_ request: StoreFetchRequest) throws -> [StoreRow] {
        guard model.entity(named: request.entityName) != nil else {
            throw TernError(
                .objectNotFound, "the model has no entity \(request.entityName); check the fetch request",
                entity: request.entityName)
        }
        var names = [request.entityName]
        if request.includesSubentities { names += model.allSubentities(of: request.entityName).map(\.name) }
        let rows = state.withLock { state in names.map { state.rows[$0] ?? [:] } }
        var matches = rows.flatMap(\.values).sorted { $0.reference < $1.reference }
        if let predicate = request.predicate {
            matches = try matches.filter { try predicate.evaluate(with: RowValues(row: $0, store: self)) }
        }
        return try request.ordered(matches.map { RowValues(row: $0, store: self) }).map(\.row)
    }

    /// The row with that reference, for predicates that follow relationships.
    func row(for reference: RowReference) -> StoreRow? {
        state.withLock { $0.rows[reference.entityName]?[reference.primaryKey] }
    }

    private func apply(_ changes: StoreChangeSet, to state: inout State) throws -> StoreSaveResult {
        var conflicts: [TernError] = []
        func check(_ reference: RowReference, readAt version: Int64) {
            let current = state.rows[reference.entityName]?[reference.primaryKey]
            guard current?.version != version else { return }
            let what = current == nil ? "was deleted" : "changed (version \(version) was read)"
            conflicts.append(
                TernError(.mergeConflict, "\(reference) \(what) since it was read", objectID: objectID(reference)))
        }
        for row in changes.updated { check(row.reference, readAt: row.version) }
        for (reference, version) in changes.deleted { check(reference, readAt: version) }
        if !conflicts.isEmpty {
            throw TernError(
                .mergeConflict,
                "\(conflicts.count) row(s) changed in the store since they were read; refresh them or pick a merge policy",
                objectID: nil, failures: conflicts)
        }
        var result = StoreSaveResult()
        for (reference, _) in changes.deleted {
            state.rows[reference.entityName]?[reference.primaryKey] = nil
        }
        for var row in changes.updated {
            row.version += 1
            state.rows[row.reference.entityName, default: [:]][row.reference.primaryKey] = row
            result.newVersions[row.reference] = row.version
        }
        var reused: [TernError] = []
        for var row in changes.inserted {
            if state.rows[row.reference.entityName]?[row.reference.primaryKey] != nil {
                reused.append(
                    TernError(.constraintConflict, "primary key \(row.reference) is already used",
                              objectID: objectID(row.reference)))
            }
            row.version = 1
            state.rows[row.reference.entityName, default: [:]][row.reference.primaryKey] = row
            result.newVersions[row.reference] = row.version
        }
        let touched = Set(changes.inserted.map(\.reference) + changes.updated.map(\.reference))
        let failures = reused + uniquenessFailures(in: state, touching: touched)
        if !failures.isEmpty {
            throw TernError(
                .constraintConflict,
                "the save would break \(failures.count) uniqueness constraint(s); change the values or merge the objects",
                objectID: nil, failures: failures)
        }
        return result
    }

    private func uniquenessFailures(in state: State, touching touched: Set<RowReference>) -> [TernError] {
        var declaring: Set<String> = []
        for entityName in Set(touched.map(\.entityName)) {
            for entity in [model.entity(named: entityName)].compactMap({ $0 }) + model.ancestors(of: entityName)
            where !entity.uniquenessConstraints.isEmpty {
                declaring.insert(entity.name)
            }
        }
        var failures: [TernError] = []
        for name in declaring.sorted() {
            guard let entity = model.entity(named: name) else { continue }
            let names = [name] + model.allSubentities(of: name).map(\.name)
            let rows = names.flatMap { state.rows[$0]?.values.map { $0 } ?? [] }
            for constraint in entity.uniquenessConstraints {
                var seen: [[AnyHashable]: RowReference] = [:]
                for row in rows.sorted(by: { $0.reference < $1.reference }) {
                    guard let key = uniquenessKey(of: row, for: constraint) else { continue }
                    if seen[key] != nil, touched.contains(row.reference) {
                        failures.append(TernError(
                            .constraintConflict,
                            "another \(name) has the same \(constraint.joined(separator: ", "))",
                            objectID: objectID(row.reference), property: constraint.joined(separator: ",")))
                    } else if let other = seen[key], touched.contains(other), !touched.contains(row.reference) {
                        failures.append(TernError(
                            .constraintConflict,
                            "another \(name) has the same \(constraint.joined(separator: ", "))",
                            objectID: objectID(other), property: constraint.joined(separator: ",")))
                    } else if seen[key] == nil {
                        seen[key] = row.reference
                    }
                }
            }
        }
        return failures
    }

    /// The values of a constraint's properties, or nil when one is nil (nils never collide).
    private func uniquenessKey(of row: StoreRow, for constraint: [String]) -> [AnyHashable]? {
        var key: [AnyHashable] = []
        for property in constraint {
            if let value = row.attributes[property] {
                key.append(value)
            } else if let reference = row.toOne[property] {
                key.append(reference)
            } else {
                return nil
            }
        }
        return key
    }

    private func objectID(_ reference: RowReference) -> ObjectID {
        ObjectID(entityName: reference.entityName, storeIdentifier: identifier, primaryKey: reference.primaryKey)
    }
}
