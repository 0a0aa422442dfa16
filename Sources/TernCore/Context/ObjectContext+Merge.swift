/// Merging changes saved elsewhere (resolving save conflicts: `ObjectContext+Conflicts.swift`).
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
}
