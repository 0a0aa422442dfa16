/// Firing faults at once, when a property of an object that is not loaded is read.
extension ObjectGraph {
    /// Loads a fault without suspending: from the row cache, else from the unsaved changes the
    /// parent contexts published, else from the object's store.
    ///
    /// An object whose row no longer exists becomes inaccessible. When nothing can be read (the
    /// store cannot read without suspending or fails), the object stays a fault and the error is
    /// thrown.
    func loadFault(_ object: ManagedObject) throws(TernError) {
        guard !object.isLoaded else { return }
        let id = object.objectID
        if let state = rowCache[id] {
            fulfill(object, with: state)
            return
        }
        guard var state = try readNow(id) else {
            makeInaccessible(object)
            return
        }
        state.id = id
        rowCache[id] = state
        fulfill(object, with: state)
    }

    /// Turns an object whose row is gone into an inaccessible one: deleted, empty, untracked.
    func makeInaccessible(_ object: ManagedObject) {
        object.isLoaded = true
        object.isDeleted = true
        object.isInaccessible = true
        object.pendingOperations = []
        object.values = PackedAttributes(keys: object.schema.attributeKeys)
        object.toOne = [:]
        object.toMany = [:]
        object.snapshot = nil
        changed[object.objectID] = nil
        rowCache[object.objectID] = nil
        inaccessibleIDs.insert(object.objectID)
    }

    // MARK: - Non public

    /// The state of an object read at once, or nil when its row no longer exists.
    private func readNow(_ requested: ObjectID) throws(TernError) -> ObjectState? {
        guard let context else {
            throw TernError(
                .unreadableStore, "the context of \(requested) is gone; fetch the object again", objectID: requested)
        }
        var id = requested
        var ancestor = context.parent
        while let current = ancestor {
            switch current.publishedState(for: id) {
            case .state(let state): return state
            case .deleted: return nil
            case .unknown(let canonical): id = canonical
            }
            ancestor = current.parent
        }
        guard let identifier = id.storeIdentifier, let reference = id.rowReference else {
            throw TernError(
                .objectNotFound,
                "\(requested) is new and not known to the parent contexts; await object(with:) instead",
                objectID: requested)
        }
        guard let store = context.coordinator.store(withIdentifier: identifier) else {
            throw TernError(
                .unreadableStore,
                "the store of \(requested) was removed from the coordinator; add it back to read the object",
                objectID: requested)
        }
        let rows: [StoreRow]
        do {
            rows = try store.rowsSynchronously(for: [reference])
        } catch let error as TernError {
            throw error
        } catch {
            var failure = TernError(
                .unreadableStore, "could not read \(requested) from its store (\(error)); check the store",
                objectID: requested)
            failure.underlyingError = error
            throw failure
        }
        return rows.first.map {
            ObjectState(row: $0, storeIdentifier: identifier, keys: schema(for: $0.reference.entityName).attributeKeys)
        }
    }
}
