/// Saving: delete rules, validation, permanent IDs, writing to the stores or the parent.
extension ObjectContext {
    // MARK: - Saving

    /// Saves every change, to the stores (one transaction per store) or, for a child context,
    /// into the parent.
    ///
    /// In order: pending relationship changes are applied and delete rules run (cascade,
    /// nullify, deny, no action); every changed object is validated, and all failures are
    /// reported together; new objects get permanent IDs; rows are written, and version conflicts
    /// are resolved with ``mergePolicy``. Then a ``ContextDidSave`` goes to ``changes()`` and to
    /// contexts that merge automatically.
    ///
    /// ```swift
    /// do {
    ///     try await context.save()
    /// } catch let error as TernError where error.code == .validationFailed {
    ///     for failure in error.failures { print(failure) }
    /// }
    /// ```
    ///
    /// - Throws: ``TernError/Code/validationFailed`` listing each failure (entity, object,
    ///   property); ``TernError/Code/mergeConflict`` under the `.error` policy;
    ///   ``TernError/Code/constraintConflict`` when the store finds a uniqueness conflict; any
    ///   store error. Nothing is saved then, and the changes stay in the context.
    public func save() async throws {
        guard graph.hasChanges else { return }
        try await processPendingChanges()
        let failures = validationFailures()
        if !failures.isEmpty {
            throw TernError(
                .validationFailed,
                "\(failures.count) validation failure(s), the first: \(failures[0]); fix them and save again",
                objectID: nil, failures: failures)
        }
        let event: ContextDidSave
        if let parent {
            event = try await saveIntoParent(parent)
        } else {
            event = try await saveToStores()
        }
        guard !event.isEmpty else { return }
        post(event)
        if parent == nil { await coordinator.broadcast(event, from: self) }
    }

    // MARK: - Non public

    /// Loads faults that have pending work and runs delete rules until nothing more changes.
    func processPendingChanges() async throws {
        var propagated: Set<ObjectID> = []
        while true {
            let faults = graph.changed.values.filter { !$0.isLoaded }
            if !faults.isEmpty {
                try await fulfillFaults(for: faults.map(\.objectID))
                for object in faults where !object.isLoaded {
                    // Its row is gone from the store: there is nothing left to change or delete,
                    // and validation reports objects that still point at it.
                    graph.makeInaccessible(object)
                }
                continue
            }
            let deleted = graph.changed.values.filter { $0.isDeleted && !propagated.contains($0.objectID) }
            if deleted.isEmpty { return }
            for object in deleted {
                propagated.insert(object.objectID)
                applyDeleteRules(of: object)
            }
        }
    }

    private func applyDeleteRules(of object: ManagedObject) {
        for relationship in object.schema.relationships.values {
            let targets =
                relationship.isToMany
                ? object.toMany[relationship.name] ?? [] : object.toOne[relationship.name].map { [$0] } ?? []
            switch relationship.deleteRule {
            case .nullify:
                for target in targets { graph.unrelate(object, relationship.name, target) }
            case .cascade:
                for target in targets {
                    let destination = graph.object(for: target)
                    if !destination.isDeleted {
                        destination.isDeleted = true
                        graph.willChange(destination)
                    }
                }
            case .deny, .noAction:
                break
            }
        }
    }

    /// How many times a save resolves conflicts under a merge policy before it gives up with
    /// the conflict; found by the concurrency stress test, where three attempts were not enough
    /// for five writers saving one set of objects at once.
    static let conflictResolutionAttempts = 40

    private func saveToStores() async throws -> ContextDidSave {
        let inserted = graph.changed.values.filter { $0.isInserted && !$0.isDeleted }
        let dropped = graph.changed.values.filter { $0.isDeleted && $0.isInserted }
        let mapping = try await permanentIDs(for: inserted.filter(\.objectID.isTemporary))
        // Each inserted object's state is read once: for its row, then as its snapshot.
        let insertedStates = inserted.map(\.state)
        var results: [String: StoreSaveResult] = [:]
        var updated: [ManagedObject] = []
        var deleted: [ManagedObject] = []
        for attempt in 0... {
            // Resolving a conflict may undelete or drop objects: gather them on each attempt.
            updated = graph.changed.values.filter {
                !$0.isInserted && !$0.isDeleted && $0.isLoaded && $0.hasStoredChanges
            }
            deleted = graph.changed.values.filter { $0.isDeleted && !$0.isInserted }
            do {
                for (identifier, changes) in try changeSets(
                    inserted: zip(inserted, insertedStates), updated: updated, deleted: deleted, mapping: mapping)
                where results[identifier] == nil {
                    results[identifier] = try await save(changes, toStore: identifier, objects: updated + deleted)
                }
                break
            } catch let error as TernError
                where error.code == .mergeConflict && attempt < Self.conflictResolutionAttempts && mergePolicy != .error
            {
                // A store that cannot resolve inside its transaction: resolution reads the store
                // again, so a busy store (other contexts, other processes) can move on again before
                // the retry: back off a little.
                if attempt >= 2 { try await Task.sleep(for: .milliseconds(Int.random(in: 1...(2 * attempt)))) }
                try await resolveConflicts(error.failures.compactMap(\.objectID))
            }
        }
        // Conflicts resolved inside a store's transaction may have dropped or undeleted objects.
        updated = updated.filter { graph.changed[$0.objectID] != nil && !$0.isDeleted && $0.hasStoredChanges }
        deleted = deleted.filter { graph.changed[$0.objectID] != nil && $0.isDeleted }
        var event = ContextDidSave()
        event.inserted = Set(inserted.map { mapping[$0.objectID] ?? $0.objectID })
        event.deleted = Set(deleted.map(\.objectID))
        event.updated = Set(updated.map(\.objectID))
        for object in updated { event.changedKeys[object.objectID] = object.changedKeys }
        // Every change is saved: nothing needs to be filed again under its new ID.
        graph.changed = [:]
        graph.replaceIDs(mapping, objectsAreKnown: true)
        for (object, state) in zip(inserted, insertedStates) {
            // Inserted rows start at version 1.
            var state = state.replacingIDs(mapping)
            state.version = 1
            object.snapshot = state
            object.isInserted = false
            graph.rowCache[object.objectID] = state
        }
        let versions =
            updated.isEmpty
            ? [:] : results.values.reduce(into: [RowReference: Int64]()) { $0.merge($1.newVersions) { $1 } }
        for object in updated {
            var state = object.state
            state.version = object.objectID.rowReference.flatMap { versions[$0] } ?? state.version
            object.snapshot = state
            graph.rowCache[object.objectID] = state
        }
        for object in deleted + dropped { graph.forget(object.objectID) }
        // Child contexts that pushed these objects up still know them by their temporary IDs.
        await handPermanentIDsToChildren(mapping)
        return event
    }

    /// Saves one store's change set; under a merge policy other than `.error`, conflicts are
    /// resolved inside the store's transaction and the objects then take what was decided.
    private func save(_ changes: StoreChangeSet, toStore identifier: String, objects: [ManagedObject]) async throws
        -> StoreSaveResult
    {
        guard let store = coordinator.store(withIdentifier: identifier) else {
            throw TernError(
                .objectNotFound, "store \(identifier) was removed from the coordinator; add it back to save")
        }
        guard mergePolicy != .error else { return try await store.save(changes) }
        let candidates = conflictCandidates(objects.filter { $0.objectID.storeIdentifier == identifier })
        let record = ResolvedConflicts()
        let resolver = conflictResolver(storeIdentifier: identifier, candidates: candidates, record: record)
        let result = try await store.save(changes, resolvingConflictsWith: resolver)
        let conflicts = record.conflicts
        if !conflicts.isEmpty {
            func id(_ reference: RowReference) -> ObjectID {
                ObjectID(
                    entityName: reference.entityName, storeIdentifier: identifier, primaryKey: reference.primaryKey)
            }
            let known = Dictionary(candidates.map { (id($0.key), $0.value) }) { $1 }
            var states: [ObjectID: ObjectState] = [:]
            for (reference, row) in record.stored {
                guard let keys = candidates[reference]?.keys else { continue }
                states[id(reference)] = ObjectState(row: row, storeIdentifier: identifier, keys: keys)
            }
            applyConflictOutcomes(conflicts.map(id), stored: states, candidates: known)
        }
        return result
    }

    /// Reserves primary keys for new objects in the stores that will hold them.
    func permanentIDs(for inserted: [ManagedObject]) async throws -> [ObjectID: ObjectID] {
        var groups: [String: [ManagedObject]] = [:]
        for object in inserted { groups[object.schema.name, default: []].append(object) }
        var mapping: [ObjectID: ObjectID] = [:]
        for (entityName, objects) in groups.sorted(by: { $0.key < $1.key }) {
            guard let store = coordinator.store(forEntity: entityName) else {
                throw TernError(
                    .objectNotFound, "no store holds \(entityName); add a store for its configuration before saving",
                    entity: entityName)
            }
            let keys = try await store.newPrimaryKeys(forEntity: entityName, count: objects.count)
            let space = ObjectIDSpace.shared(entityName: entityName, storeIdentifier: store.identifier)
            mapping.reserveCapacity(mapping.count + objects.count)
            for (object, key) in zip(objects, keys) {
                mapping[object.objectID] = ObjectID(space: space, primaryKey: key)
            }
        }
        return mapping
    }

    private func changeSets(
        inserted: some Sequence<(ManagedObject, ObjectState)>, updated: [ManagedObject], deleted: [ManagedObject],
        mapping: [ObjectID: ObjectID]
    ) throws -> [(String, StoreChangeSet)] {
        var sets: [String: StoreChangeSet] = [:]
        func store(of object: ManagedObject) -> String? {
            (mapping[object.objectID] ?? object.objectID).storeIdentifier
        }
        func row(of object: ManagedObject, _ state: ObjectState, in store: String) throws -> StoreRow? {
            if !state.toOne.isEmpty || !state.toMany.isEmpty {
                for (name, ids) in state.toMany.merging(state.toOne.mapValues { [$0] }, uniquingKeysWith: +) {
                    if let other = ids.first(where: { (mapping[$0] ?? $0).storeIdentifier != store }) {
                        throw TernError(
                            .unsupported,
                            "\(object.objectID) and \(other) are in different stores; relationships cannot cross stores",
                            objectID: object.objectID, property: name)
                    }
                }
            }
            return state.row(mapping: mapping)
        }
        for (object, state) in inserted {
            if let store = store(of: object), let row = try row(of: object, state, in: store) {
                sets[store, default: .init()].inserted.append(row)
            }
        }
        for object in updated {
            if let store = store(of: object), let row = try row(of: object, object.state, in: store) {
                sets[store, default: .init()].updated.append(row)
            }
        }
        for object in deleted {
            if let store = store(of: object), let reference = object.objectID.rowReference {
                sets[store, default: .init()].deleted[reference] = object.snapshot?.version ?? 0
            }
        }
        for key in sets.keys {
            sets[key]?.author = transactionAuthor
            sets[key]?.contextName = name
        }
        return sets.sorted { $0.key < $1.key }
    }

    private func saveIntoParent(_ parent: ObjectContext) async throws -> ContextDidSave {
        let inserted = graph.changed.values.filter { $0.isInserted && !$0.isDeleted }
        let updated = graph.changed.values.filter {
            !$0.isInserted && !$0.isDeleted && $0.isLoaded && $0.hasStoredChanges
        }
        let deleted = graph.changed.values.filter(\.isDeleted)
        try await parent.acceptChildChanges(
            inserted: inserted.map(\.state), updated: updated.map(\.state),
            deleted: deleted.filter { !$0.isInserted }.map(\.objectID))
        var event = ContextDidSave(
            inserted: Set(inserted.map(\.objectID)), updated: Set(updated.map(\.objectID)),
            deleted: Set(deleted.filter { !$0.isInserted }.map(\.objectID)))
        for object in updated { event.changedKeys[object.objectID] = object.changedKeys }
        for object in inserted + updated {
            object.snapshot = object.state
            object.isInserted = false
            graph.rowCache[object.objectID] = object.state
        }
        for object in deleted { graph.forget(object.objectID) }
        graph.changed = [:]
        return event
    }

    /// Takes a child context's saved changes as this context's own unsaved changes.
    func acceptChildChanges(inserted: [ObjectState], updated: [ObjectState], deleted: [ObjectID]) async throws {
        // The child may still use temporary IDs of objects this context saved since.
        let inserted = inserted.map { $0.replacingIDs(graph.formerIDs) }
        let updated = updated.map { $0.replacingIDs(graph.formerIDs) }
        let deleted = deleted.map(graph.canonical)
        try await fulfillFaults(for: updated.map(\.id) + deleted)
        for state in inserted {
            let object = graph.registeredObject(for: state.id) ?? graph.make(state.id)
            object.isLoaded = true
            object.isInserted = true
            object.apply(state)
            graph.willChange(object)
        }
        for state in updated {
            let object = graph.object(for: state.id)
            guard object.isLoaded else { continue }
            object.apply(state)
            graph.willChange(object)
        }
        for id in deleted {
            let object = graph.object(for: id)
            object.isDeleted = true
            graph.willChange(object)
        }
    }
}

extension ManagedObject {
    /// Whether a stored (non-transient) property differs from the snapshot.
    var hasStoredChanges: Bool {
        let current = state
        return schema.storedPropertyNames.contains { current.value(of: $0) != snapshot?.value(of: $0) }
    }
}
