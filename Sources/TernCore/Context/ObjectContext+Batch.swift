/// Batch operations: rows written straight to the stores, without objects.
///
/// They skip validation and delete rules, as Core Data's batch requests do. Afterwards the
/// context merges the change into its own objects, posts a ``ContextDidSave`` and hands it to
/// contexts that merge automatically.
extension ObjectContext {
    // MARK: - Batch operations

    /// Inserts rows of an entity without making objects.
    ///
    /// ```swift
    /// let ids = try await context.batchInsert(entityName: "Recipe", objects: [
    ///     ["title": .string("Soup")], ["title": .string("Salad")],
    /// ])
    /// ```
    ///
    /// - Parameters:
    ///   - entityName: A non-abstract entity.
    ///   - objects: The attribute values of each new row.
    /// - Returns: The new objects' IDs, in order.
    /// - Throws: ``TernError/Code/validationFailed`` when a value does not fit its attribute;
    ///   ``TernError/Code/unsupported`` in a child context; any store error.
    /// - Complexity: O(*n*) in the number of rows, in one transaction.
    public func batchInsert(entityName: String, objects: [[String: AttributeValue]]) async throws -> [ObjectID] {
        let store = try batchStore(forEntity: entityName)
        let schema = graph.schema(for: entityName)
        try checkBatchValues(objects, schema: schema)
        let keys = try await store.newPrimaryKeys(forEntity: entityName, count: objects.count)
        let rows = zip(keys, objects).map { key, values in
            StoreRow(reference: RowReference(entityName: entityName, primaryKey: key), attributes: values)
        }
        _ = try await store.save(StoreChangeSet(inserted: rows, author: transactionAuthor, contextName: name))
        let ids = keys.map { ObjectID(entityName: entityName, storeIdentifier: store.identifier, primaryKey: $0) }
        try await announce(ContextDidSave(inserted: Set(ids)))
        return ids
    }

    /// Sets attributes of every row a request matches, without making objects.
    ///
    /// - Parameters:
    ///   - request: Which rows; offset and limit apply.
    ///   - values: The new values; nil clears an attribute.
    /// - Returns: The IDs of the updated rows.
    /// - Throws: ``TernError/Code/validationFailed`` when a value does not fit its attribute;
    ///   ``TernError/Code/mergeConflict`` when a row changed during the update; any store error.
    /// - Complexity: O(*n*) in the number of matching rows, one transaction per store.
    public func batchUpdate(_ request: FetchRequest, values: [String: AttributeValue?]) async throws -> [ObjectID] {
        _ = try batchStore(forEntity: request.entityName)
        try checkBatchValues([values.compactMapValues { $0 }], schema: graph.schema(for: request.entityName))
        var ids: [ObjectID] = []
        for store in coordinator.affectedStores(forEntity: request.entityName) {
            let rows = try await store.fetch(request.storeRequest).map { row in
                var row = row
                for (name, value) in values { row.attributes[name] = value }
                return row
            }
            _ = try await store.save(StoreChangeSet(updated: rows, author: transactionAuthor, contextName: name))
            ids += rows.map { ObjectID(entityName: $0.reference.entityName, storeIdentifier: store.identifier, primaryKey: $0.reference.primaryKey) }
        }
        let keys = Set(values.keys)
        try await announce(ContextDidSave(updated: Set(ids), changedKeys: Dictionary(uniqueKeysWithValues: ids.map { ($0, keys) })))
        return ids
    }

    /// Deletes every row a request matches, without making objects or running delete rules.
    ///
    /// - Parameter request: Which rows; offset and limit apply.
    /// - Returns: The IDs of the deleted rows.
    /// - Throws: ``TernError/Code/mergeConflict`` when a row changed during the delete; any store error.
    /// - Complexity: O(*n*) in the number of matching rows, one transaction per store.
    public func batchDelete(_ request: FetchRequest) async throws -> [ObjectID] {
        _ = try batchStore(forEntity: request.entityName)
        var ids: [ObjectID] = []
        for store in coordinator.affectedStores(forEntity: request.entityName) {
            let rows = try await store.fetch(request.storeRequest)
            let deleted = Dictionary(uniqueKeysWithValues: rows.map { ($0.reference, $0.version) })
            _ = try await store.save(StoreChangeSet(deleted: deleted, author: transactionAuthor, contextName: name))
            ids += rows.map { ObjectID(entityName: $0.reference.entityName, storeIdentifier: store.identifier, primaryKey: $0.reference.primaryKey) }
        }
        try await announce(ContextDidSave(deleted: Set(ids)))
        return ids
    }

    // MARK: - Non public

    private func batchStore(forEntity entityName: String) throws -> any PersistentStore {
        guard parent == nil else {
            throw TernError(.unsupported, "batch operations write to stores; run them on a context without a parent",
                            entity: entityName)
        }
        guard let store = coordinator.store(forEntity: entityName) else {
            throw TernError(.objectNotFound, "no store holds \(entityName); add one first", entity: entityName)
        }
        return store
    }

    private func checkBatchValues(_ objects: [[String: AttributeValue]], schema: EntitySchema) throws {
        for values in objects {
            for (name, value) in values {
                guard let attribute = schema.attributes[name], !attribute.isTransient else {
                    throw TernError(.validationFailed, "\(schema.name) has no stored attribute \(name)",
                                    entity: schema.name, property: name)
                }
                if let problem = Self.problem(with: value, for: attribute) {
                    throw TernError(.validationFailed, "\(schema.name).\(name) \(problem)", entity: schema.name, property: name)
                }
            }
        }
    }

    /// Merges a batch change into this context, then tells listeners and other contexts.
    private func announce(_ changes: ContextDidSave) async throws {
        try await mergeChanges(from: changes)
        post(changes)
        await coordinator.broadcast(changes, from: self)
    }
}
