import Foundation
import TernCore
import TernPostgreSQL
import TernSQLite

extension SyncEngine {
    // MARK: - Pull

    /// Applies the state of the objects changed on the server after the last pulled sequence
    /// number, in one local transaction authored ``author`` that also advances the token.
    ///
    /// Objects merged on the server (an insert that matched another object's key) are merged
    /// here too: the local object takes the owner's identifier, or is deleted when the owner is
    /// already present. Deleted objects are deleted; other objects take the server's values.
    ///
    /// - Returns: A summary with the pull counts.
    /// - Throws: ``SyncError`` with code `unknownModelVersion` before anything is applied when
    ///   the server holds changes written with a model this device does not know; `SQLiteError`
    ///   or `TernError` (`mergeConflict` when the app saved meanwhile: sync again).
    /// - Complexity: O(*o*) for *o* changed server objects.
    public func pull() async throws -> SyncSummary {
        try await requireSyncStore()
        let pulled = Int64(try await store.syncState(forKey: StateKey.pulled) ?? "0") ?? 0
        let batch = try await server.pull(after: pulled)
        var summary = SyncSummary()
        guard batch.lastSequence > pulled else { return summary }
        if let (_, seq) = batch.modelDigests.filter({ !knownModelDigests.contains($0.key) }).min(by: { $0.value < $1.value }) {
            throw SyncError(
                .unknownModelVersion,
                "The server holds changes (from server transaction \(seq) on) written with a model version this "
                    + "store's model does not know; migrate the store to the newer model version, then sync again.")
        }
        let model = store.model
        var local = LocalIdentities(store: store)
        var changes = StoreChangeSet(author: Self.author, contextName: "tern.sync")
        var renamed: [UUID: UUID] = [:]
        // Merged objects: take the owner's identifier, or go when the owner is here already.
        for (alias, owner) in batch.aliases.sorted(by: { $0.key.uuidString < $1.key.uuidString }) {
            guard let reference = try await local.reference(of: alias) else { continue }
            if try await local.reference(of: owner) != nil {
                if let row = try await store.rows(for: [reference]).first { changes.deleted[reference] = row.version }
                local.forget(alias)
            } else {
                renamed[alias] = owner
                local.rename(alias, to: owner, reference: reference)
            }
            summary.mergedLocally += 1
        }
        // New objects get keys first, so that relationships can point at them.
        var identifiers: [RowReference: UUID] = [:]
        var missing: [SyncObjectState] = []
        for state in batch.objects where !state.isDeleted {
            if try await local.reference(of: state.object) == nil, !local.isDeleted(state.object) { missing.append(state) }
        }
        for (entity, states) in Dictionary(grouping: missing, by: \.entity) where model.entity(named: entity) != nil {
            let keys = try await store.newPrimaryKeys(forEntity: entity, count: states.count)
            for (state, key) in zip(states, keys) {
                let reference = RowReference(entityName: entity, primaryKey: key)
                identifiers[reference] = state.object
                local.insert(state.object, reference: reference)
            }
        }
        let deletedObjects = Set(batch.objects.filter(\.isDeleted).map(\.object))
        for state in batch.objects {
            guard let entity = model.entity(named: state.entity) else { continue }
            guard let reference = try await local.reference(of: state.object) else { continue }
            if state.isDeleted {
                if changes.deleted[reference] == nil, let row = try await store.rows(for: [reference]).first {
                    changes.deleted[reference] = row.version
                    summary.deleted += 1
                }
                continue
            }
            let isNew = identifiers[reference] != nil
            var row = isNew
                ? StoreRow(reference: reference)
                : try await store.rows(for: [reference]).first ?? StoreRow(reference: reference)
            for attribute in model.allAttributes(of: entity.name) where !attribute.isTransient {
                guard let text = state.attributes[attribute.name] else { continue }
                row.attributes[attribute.name] = text.flatMap(SyncValueCoding.decode)
            }
            for relationship in model.allRelationships(of: entity.name) where !relationship.isTransient {
                if relationship.isToMany {
                    guard let destinations = state.toMany[relationship.name] else { continue }
                    var references: [RowReference] = []
                    for destination in destinations where !deletedObjects.contains(destination) {
                        if let target = try await local.reference(of: destination), changes.deleted[target] == nil {
                            references.append(target)
                        }
                    }
                    row.toMany[relationship.name] = references
                } else if let destination = state.toOne[relationship.name] {
                    var target: RowReference?
                    if let destination, !deletedObjects.contains(destination) {
                        target = try await local.reference(of: destination)
                    }
                    row.toOne[relationship.name] = target
                }
            }
            if isNew {
                changes.inserted.append(row)
                summary.inserted += 1
            } else {
                changes.updated.append(row)
                summary.updated += 1
            }
        }
        summary.pulledObjects = batch.objects.count
        try await store.saveSynced(
            changes, identifiers: identifiers, renamed: renamed, state: [StateKey.pulled: String(batch.lastSequence)])
        return summary
    }
}

/// The device's identifier-to-row map as a pull changes it, read through on demand.
struct LocalIdentities {
    /// The store.
    let store: SQLiteStore
    /// Identifiers whose row is known (nil: none here) after this pull's changes.
    private var known: [UUID: RowReference?] = [:]
    /// Identifiers whose objects were deleted here.
    private var deleted: Set<UUID> = []

    /// Creates an empty map.
    init(store: SQLiteStore) { self.store = store }

    /// The live row an identifier names here, if any.
    mutating func reference(of identifier: UUID) async throws -> RowReference? {
        if let entry = known[identifier] { return entry }
        let identity = try await store.globalIdentity(withIdentifier: identifier)
        if identity?.isDeleted == true { deleted.insert(identifier) }
        let reference = identity?.isDeleted == false ? identity?.reference : nil
        known[identifier] = .some(reference)
        return reference
    }

    /// Whether the identifier names an object deleted here (a delete is final).
    func isDeleted(_ identifier: UUID) -> Bool { deleted.contains(identifier) }

    /// Records a rename.
    mutating func rename(_ old: UUID, to new: UUID, reference: RowReference) {
        known[old] = .some(nil)
        known[new] = .some(reference)
    }

    /// Records that an identifier no longer names a row.
    mutating func forget(_ identifier: UUID) { known[identifier] = .some(nil) }

    /// Records a new row.
    mutating func insert(_ identifier: UUID, reference: RowReference) { known[identifier] = .some(reference) }
}
