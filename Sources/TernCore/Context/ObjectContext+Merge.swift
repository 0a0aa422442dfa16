/// Merging changes saved elsewhere, and resolving save conflicts with the merge policy.
extension ObjectContext {
    // MARK: - Merging

    /// Brings another context's save into this one.
    ///
    /// Deleted objects leave the context. Updated objects that are loaded take the new saved
    /// state; their own unsaved changes are kept on top of it.
    ///
    /// ```swift
    /// for await changes in writer.changes() {
    ///     try await reader.mergeChanges(from: changes)
    /// }
    /// ```
    ///
    /// - Parameter changes: What the other context saved.
    /// - Throws: When the store cannot be read.
    public func mergeChanges(from changes: ContextDidSave) async throws {
        for id in changes.deleted {
            graph.rowCache[id] = nil
            if let object = graph.registeredObject(for: id) {
                object.isDeleted = true
                object.pendingOperations = []
                graph.forget(id)
            }
        }
        let wanted = changes.updated.filter { graph.registeredObject(for: $0) != nil || graph.rowCache[$0] != nil }
        for id in wanted { graph.rowCache[id] = nil }
        let states = try await loadStates(Array(wanted))
        for state in states {
            graph.rowCache[state.id] = state
            if let object = graph.registeredObject(for: state.id) { mergeState(state, into: object) }
        }
    }

    // MARK: - Non public

    /// Called by the coordinator after another context saved.
    func mergeAutomatically(_ changes: ContextDidSave) async {
        guard automaticallyMergesChanges else { return }
        // A failed read leaves the objects as they were; the next save reports any conflict.
        try? await mergeChanges(from: changes)
    }

    /// Applies the merge policy to objects whose rows changed in the store since they were read.
    func resolveConflicts(_ ids: [ObjectID]) async throws {
        let states = Dictionary(try await loadStates(ids).map { ($0.id, $0) }) { first, _ in first }
        for id in ids {
            guard let object = graph.registeredObject(for: id) else { continue }
            guard let state = states[id] else {
                // Deleted in the store: the object's changes have nothing left to apply to.
                object.isDeleted = true
                graph.forget(id)
                continue
            }
            graph.rowCache[id] = state
            switch mergePolicy {
            case .rollback:
                object.isDeleted = false
                object.pendingOperations = []
                object.snapshot = state
                object.apply(state)
                graph.changed[id] = nil
            case .overwrite:
                object.snapshot = state
            case .objectTrumps:
                mergeState(state, into: object)
            default:
                let old = object.snapshot
                let names = object.schema.storedPropertyNames.filter { old?.value(of: $0) != state.value(of: $0) }
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
            }
        }
    }
}
