import Synchronization

/// Resolving save conflicts with the merge policy, inside the store's write transaction when
/// the store supports it (``PersistentStore/save(_:resolvingConflictsWith:)``), otherwise by
/// reading the rows again and saving once more.
///
/// Both ways decide with ``MergePolicy/outcome(for:stored:)``, from values alone, so that what a
/// store writes inside its transaction and what the context's objects become afterwards agree.
extension ObjectContext {
    // MARK: - Non public

    /// What the context knows of each updated or deleted object of a change set, by row, for a
    /// resolver that runs on the store's executor.
    func conflictCandidates(_ objects: [ManagedObject]) -> [RowReference: ConflictCandidate] {
        var candidates: [RowReference: ConflictCandidate] = [:]
        for object in objects {
            if let reference = object.objectID.rowReference { candidates[reference] = ConflictCandidate(object) }
        }
        return candidates
    }

    /// A resolver applying the merge policy inside a store's transaction; it records the stored
    /// rows it saw in `record`, for ``applyConflictOutcomes(_:stored:candidates:)`` after the save.
    func conflictResolver(
        storeIdentifier: String, candidates: [RowReference: ConflictCandidate], record: ResolvedConflicts
    ) -> StoreConflictResolver {
        let policy = mergePolicy
        return StoreConflictResolver { changes, conflicts, stored in
            record.set(conflicts, stored)
            func outcome(_ reference: RowReference) -> ConflictOutcome? {
                guard conflicts.contains(reference), let candidate = candidates[reference] else { return nil }
                return policy.outcome(
                    for: candidate,
                    stored: stored[reference].map {
                        ObjectState(row: $0, storeIdentifier: storeIdentifier, keys: candidate.keys)
                    })
            }
            var resolved = changes
            resolved.updated = changes.updated.compactMap { row in
                switch outcome(row.reference) {
                case nil: return row
                case .gone?, .rolledBack?: return nil
                case .merged(let names)?:
                    guard let storedRow = stored[row.reference], let candidate = candidates[row.reference] else {
                        return row
                    }
                    var merged = row
                    merged.version = storedRow.version
                    for name in names {
                        merged.attributes[name] = storedRow.attributes[name]
                        merged.toOne[name] = storedRow.toOne[name]
                        merged.toMany[name] = storedRow.toMany[name]
                    }
                    // Nothing left to change: the object takes the stored state as it is.
                    return candidate.storedNames.contains { merged.value(of: $0) != storedRow.value(of: $0) }
                        ? merged : nil
                }
            }
            for reference in changes.deleted.keys {
                switch outcome(reference) {
                case nil: break
                case .gone?, .rolledBack?: resolved.deleted[reference] = nil
                case .merged?: resolved.deleted[reference] = stored[reference]?.version
                }
            }
            return resolved
        }
    }

    /// Applies the merge policy to objects whose rows changed in the store since they were read,
    /// reading their rows again (outside any save's transaction: for stores that cannot resolve
    /// inside it).
    func resolveConflicts(_ ids: [ObjectID]) async throws {
        let states = Dictionary(try await loadStates(ids).map { ($0.id, $0) }) { first, _ in first }
        var candidates: [ObjectID: ConflictCandidate] = [:]
        for id in ids {
            if let object = graph.registeredObject(for: id) { candidates[id] = ConflictCandidate(object) }
        }
        applyConflictOutcomes(ids, stored: states, candidates: candidates)
    }

    /// Makes the objects what the merge policy decided from their stored states (nil: deleted in
    /// the store) and what the context knew of them (`candidates`).
    func applyConflictOutcomes(
        _ ids: [ObjectID], stored states: [ObjectID: ObjectState], candidates: [ObjectID: ConflictCandidate]
    ) {
        for id in ids {
            guard let object = graph.registeredObject(for: id), let candidate = candidates[id] else { continue }
            let state = states[id]
            switch mergePolicy.outcome(for: candidate, stored: state) {
            case .gone:
                // Deleted in the store: the object's changes have nothing left to apply to.
                object.isDeleted = true
                graph.forget(id)
            case .rolledBack:
                guard let state else { continue }
                graph.rowCache[id] = state
                object.isDeleted = false
                object.pendingOperations = []
                object.snapshot = state
                object.apply(state)
                graph.changed[id] = nil
            case .merged(let names):
                guard let state else { continue }
                graph.rowCache[id] = state
                object.snapshot = state
                for name in names {
                    if object.schema.attributes[name] != nil {
                        object.values[name] = state.attributes[name]
                    } else if object.schema.relationships[name]?.isToMany == true {
                        object.toMany[name] = state.toMany[name]
                    } else {
                        object.toOne[name] = state.toOne[name]
                    }
                }
                if !object.hasChanges { graph.changed[id] = nil }
            }
        }
    }
}

/// What a context knew of an object it was saving: enough to resolve a conflict on another
/// executor.
struct ConflictCandidate: Sendable {
    /// The state the object was read at.
    var snapshot: ObjectState?
    /// The properties the context changed.
    var changedKeys: Set<String>
    /// The entity's stored (non-transient) properties.
    var storedNames: [String]
    /// The entity's attribute keys, for reading a stored row into a state.
    var keys: AttributeKeys

    init(_ object: ManagedObject) {
        self.snapshot = object.snapshot
        self.changedKeys = object.changedKeys
        self.storedNames = object.schema.storedPropertyNames
        self.keys = object.schema.attributeKeys
    }
}

/// What a merge policy makes of one conflicting object.
enum ConflictOutcome: Sendable, Equatable {
    /// The row was deleted in the store: the object goes too.
    case gone
    /// The object's changes are dropped; it takes the stored state.
    case rolledBack
    /// The object takes the stored version, and the stored values of these properties; its
    /// other values are written over the stored ones (a deleted object is deleted).
    case merged([String])
}

extension MergePolicy {
    /// What this policy makes of a conflicting object, given its row's stored state (nil when
    /// the row was deleted).
    func outcome(for candidate: ConflictCandidate, stored: ObjectState?) -> ConflictOutcome {
        guard let stored else { return .gone }
        switch kind {
        case .rollback: return .rolledBack
        case .overwrite: return .merged([])
        case .objectTrumps:
            return .merged(candidate.storedNames.filter { !candidate.changedKeys.contains($0) }.sorted())
        case .storeTrumps, .error:
            // Property by property, what the store changed since the object was read wins.
            return .merged(
                candidate.storedNames.filter { candidate.snapshot?.value(of: $0) != stored.value(of: $0) }.sorted())
        }
    }
}

/// The conflicts a resolver saw and the stored rows it read, kept for the context to apply
/// once the save has committed.
final class ResolvedConflicts: Sendable {
    // The resolver runs on the store's executor and the context reads the result after the
    // save returns; the lock hands the values over.
    private let value = Mutex<(Set<RowReference>, [RowReference: StoreRow])>(([], [:]))

    func set(_ conflicts: Set<RowReference>, _ stored: [RowReference: StoreRow]) {
        value.withLock { $0 = (conflicts, stored) }
    }

    var conflicts: Set<RowReference> { value.withLock { $0.0 } }
    var stored: [RowReference: StoreRow] { value.withLock { $0.1 } }
}

extension StoreRow {
    /// The value of a property as a comparable thing (an empty to-many is absent), as
    /// ``ObjectState`` compares them.
    func value(of property: String) -> AnyHashable? {
        if let value = attributes[property] { return value }
        if let value = toOne[property] { return value }
        if let value = toMany[property], !value.isEmpty { return value }
        return nil
    }
}
