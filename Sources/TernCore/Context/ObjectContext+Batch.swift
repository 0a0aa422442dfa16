/// Batch operations: rows written straight to the stores, without objects.
///
/// By default they check value types only and skip validation and delete rules, as Core Data's
/// batch requests do; ``BatchOptions`` turns the model's rules on. Afterwards the context merges
/// the change into its own objects, posts a ``ContextDidSave`` and hands it to contexts that
/// merge automatically.
extension ObjectContext {
    // MARK: - Batch operations

    /// Inserts rows of an entity without making objects.
    ///
    /// Attributes a dictionary leaves out take their default values, as with ``insert(_:)->ManagedObject``.
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
    ///   - options: Which of the model's rules to enforce; types and uniqueness only by default.
    /// - Returns: The new objects' IDs, in order.
    /// - Throws: ``TernError/Code/validationFailed`` when a value does not fit its attribute, or
    ///   (with ``BatchOptions/validatesValues``) listing every row and property that breaks a
    ///   rule; ``TernError/Code/unsupported`` in a child context; any store error. Nothing is
    ///   written then.
    /// - Complexity: O(*n*) in the number of rows, in one transaction.
    public func batchInsert(
        entityName: String, objects: [[String: AttributeValue]], options: BatchOptions = .unchecked
    ) async throws -> [ObjectID] {
        var pending: [[String: AttributeValue]]? = objects
        let (store, ranges) = try await insertBatches(entityName: entityName, options: options) {
            defer { pending = nil }
            return pending
        }
        return try await announceInsertedIDs(ranges, entityName: entityName, store: store)
    }

    /// Inserts rows of an entity without making objects, streaming them batch by batch into one
    /// transaction: Core Data's `NSBatchInsertRequest` with a handler.
    ///
    /// `batches` is called for the next batch of rows until it returns nil; each batch is checked
    /// and written before the next is asked for, so memory stays bounded by one batch on a store
    /// on disk (SQLite). Attributes a dictionary leaves out take their default values. Other
    /// contexts and ``changes()`` hear of the new rows once everything is committed, in events
    /// of at most 10,000 IDs.
    ///
    /// ```swift
    /// var next = 0
    /// let count = try await context.batchInsert(entityName: "Event") {
    ///     guard next < 1_000_000 else { return nil }
    ///     defer { next += 10_000 }
    ///     return (next..<next + 10_000).map { ["id": .integer(Int64($0))] }
    /// }
    /// ```
    ///
    /// - Parameters:
    ///   - entityName: A non-abstract entity.
    ///   - options: Which of the model's rules to enforce; types and uniqueness only by default.
    ///   - batches: The next batch of attribute values, or nil at the end; run on the store's
    ///     executor. What it throws stops the insert.
    /// - Returns: How many rows were inserted.
    /// - Throws: What `batches` throws; ``TernError/Code/validationFailed`` when a value does not
    ///   fit its attribute or (with ``BatchOptions/validatesValues``) breaks a rule;
    ///   ``TernError/Code/unsupported`` in a child context; any store error. Nothing is written then.
    /// - Complexity: O(*n*) in the number of rows, in one transaction.
    public func batchInsert(
        entityName: String, options: BatchOptions = .unchecked,
        batches: sending @escaping () throws -> [[String: AttributeValue]]?
    ) async throws -> Int {
        let (store, ranges) = try await insertBatches(
            entityName: entityName, options: options, source: batches)
        return try await announceInserted(ranges, entityName: entityName, store: store)
    }

    /// Sets attributes of every row a request matches, without making objects.
    ///
    /// - Parameters:
    ///   - request: Which rows; offset and limit apply.
    ///   - values: The new values; nil clears an attribute.
    ///   - options: Which of the model's rules to enforce; types and uniqueness only by default.
    /// - Returns: The IDs of the updated rows.
    /// - Throws: ``TernError/Code/validationFailed`` when a value does not fit its attribute, or
    ///   (with ``BatchOptions/validatesValues``) breaks a rule, such as nil for a required
    ///   attribute; ``TernError/Code/mergeConflict`` when a row changed during the update; any
    ///   store error.
    /// - Complexity: O(*n*) in the number of matching rows, one transaction per store.
    public func batchUpdate(
        _ request: FetchRequest, values: [String: AttributeValue?], options: BatchOptions = .unchecked
    ) async throws -> [ObjectID] {
        _ = try batchStore(forEntity: request.entityName)
        let schema = graph.schema(for: request.entityName)
        try Self.checkBatchTypes([values.compactMapValues { $0 }], schema: schema)
        if options.validatesValues {
            let attributes = values.keys.compactMap { schema.attributes[$0] }
            let failures = Self.attributeFailures(of: { values[$0] ?? nil }, attributes: attributes) { name, message in
                TernError(.validationFailed, "\(schema.name).\(name) \(message)", entity: schema.name, property: name)
            }
            try Self.throwIfAny(failures)
        }
        var ids: [ObjectID] = []
        for store in coordinator.affectedStores(forEntity: request.entityName) {
            let rows = try await store.fetch(request.storeRequest).map { row in
                var row = row
                for (name, value) in values { row.attributes[name] = value }
                return row
            }
            _ = try await store.save(StoreChangeSet(updated: rows, author: transactionAuthor, contextName: name))
            ids += rows.map { store.objectID($0.reference) }
        }
        let keys = Set(values.keys)
        try await announce(
            ContextDidSave(updated: Set(ids), changedKeys: Dictionary(uniqueKeysWithValues: ids.map { ($0, keys) })))
        return ids
    }

    /// Deletes every row a request matches, without making objects.
    ///
    /// - Parameters:
    ///   - request: Which rows; offset and limit apply.
    ///   - options: With ``BatchOptions/appliesDeleteRules``, the relationships' delete rules
    ///     apply; by default they do not, and rows that pointed at deleted ones keep pointing.
    /// - Returns: The IDs of the deleted rows, cascaded deletions included.
    /// - Throws: ``TernError/Code/validationFailed`` when a deny rule refuses the delete (with
    ///   ``BatchOptions/appliesDeleteRules``); ``TernError/Code/mergeConflict`` when a row changed
    ///   during the delete; any store error. Nothing is deleted in that store then.
    /// - Complexity: O(*n*) in the number of matching rows plus, with delete rules, the rows they
    ///   reach; one transaction per store.
    public func batchDelete(_ request: FetchRequest, options: BatchOptions = .unchecked) async throws -> [ObjectID] {
        _ = try batchStore(forEntity: request.entityName)
        var event = ContextDidSave()
        for store in coordinator.affectedStores(forEntity: request.entityName) {
            let rows = try await store.fetch(request.storeRequest)
            var changes = StoreChangeSet(
                deleted: Dictionary(uniqueKeysWithValues: rows.map { ($0.reference, $0.version) }))
            var nullified: [ObjectID: Set<String>] = [:]
            if options.appliesDeleteRules {
                (changes, nullified) = try await deleteRules(deleting: rows, in: store)
            }
            changes.author = transactionAuthor
            changes.contextName = name
            _ = try await store.save(changes)
            event.deleted.formUnion(changes.deleted.keys.map(store.objectID))
            event.updated.formUnion(nullified.keys)
            event.changedKeys.merge(nullified) { $0.union($1) }
        }
        try await announce(event)
        return event.deleted.sorted { ($0.primaryKey ?? 0, $0.entityName) < ($1.primaryKey ?? 0, $1.entityName) }
    }

    // MARK: - Non public

    func batchStore(forEntity entityName: String) throws -> any PersistentStore {
        guard parent == nil else {
            throw TernError(
                .unsupported, "batch operations write to stores; run them on a context without a parent",
                entity: entityName)
        }
        guard let store = coordinator.store(forEntity: entityName) else {
            throw TernError(.objectNotFound, "no store holds \(entityName); add one first", entity: entityName)
        }
        return store
    }

    /// Checks each batch of `source` (value types), fills defaults, validates when asked, and
    /// streams the batches into the entity's store in one transaction.
    private func insertBatches(
        entityName: String, options: BatchOptions,
        source: sending @escaping () throws -> [[String: AttributeValue]]?
    ) async throws -> (any PersistentStore, [ClosedRange<Int64>]) {
        let store = try batchStore(forEntity: entityName)
        let schema = graph.schema(for: entityName)
        let defaults = schema.attributes.values.filter { !$0.isTransient && !$0.isDerived }.compactMap { attribute in
            attribute.defaultValue.map { (attribute.name, $0) }
        }
        let validates = options.validatesValues
        var firstIndex = 0
        let ranges = try await store.insertRows(entityName: entityName, author: transactionAuthor, contextName: name) {
            guard let batch = try source() else { return nil }
            try Self.checkBatchTypes(batch, schema: schema)
            let objects =
                defaults.isEmpty
                ? batch
                : batch.map { values in
                    values.merging(defaults) { given, _ in given }
                }
            if validates {
                try Self.validateInserted(
                    count: objects.count, values: { objects[$0][$1] }, schema: schema, firstIndex: firstIndex)
            }
            firstIndex += objects.count
            return objects
        }
        return (store, ranges)
    }

    /// Tells this context, listeners and other contexts about new rows in one event, and returns
    /// their IDs in order.
    func announceInsertedIDs(_ ranges: [ClosedRange<Int64>], entityName: String, store: any PersistentStore)
        async throws -> [ObjectID]
    {
        let ids = ranges.flatMap { range in
            range.map { ObjectID(entityName: entityName, storeIdentifier: store.identifier, primaryKey: $0) }
        }
        try await announce(ContextDidSave(inserted: Set(ids)))
        return ids
    }

    /// Tells this context, listeners and other contexts about new rows, at most 10,000 IDs per
    /// event, and returns how many there are.
    func announceInserted(_ ranges: [ClosedRange<Int64>], entityName: String, store: any PersistentStore) async throws
        -> Int
    {
        var ids: Set<ObjectID> = []
        var count = 0
        for range in ranges {
            for key in range {
                ids.insert(ObjectID(entityName: entityName, storeIdentifier: store.identifier, primaryKey: key))
                if ids.count == 10_000 {
                    try await announce(ContextDidSave(inserted: ids))
                    ids = []
                }
            }
            count += range.count
        }
        if !ids.isEmpty { try await announce(ContextDidSave(inserted: ids)) }
        return count
    }

    /// Throws at the first value that is not a stored attribute or does not fit its type.
    private static func checkBatchTypes(_ objects: [[String: AttributeValue]], schema: EntitySchema) throws {
        for values in objects {
            for (name, value) in values {
                try checkBatchType(value, of: try storedAttribute(name, schema: schema), schema: schema)
            }
        }
    }

    /// The stored attribute of a name given in a batch.
    ///
    /// - Throws: ``TernError/Code/validationFailed`` when the entity has no such stored attribute.
    static func storedAttribute(_ name: String, schema: EntitySchema) throws -> AttributeDescription {
        guard let attribute = schema.attributes[name], !attribute.isTransient else {
            throw TernError(
                .validationFailed, "\(schema.name) has no stored attribute \(name)", entity: schema.name, property: name
            )
        }
        return attribute
    }

    /// Throws when a value given in a batch does not fit its attribute's type.
    static func checkBatchType(_ value: AttributeValue, of attribute: AttributeDescription, schema: EntitySchema) throws
    {
        if let problem = Self.typeProblem(with: value, for: attribute) {
            throw TernError(
                .validationFailed, "\(schema.name).\(attribute.name) \(problem)", entity: schema.name,
                property: attribute.name)
        }
    }

    /// Validates new rows as a save validates inserted objects; they have no relationships.
    /// Rows are numbered from `firstIndex` in messages.
    ///
    /// - Parameters:
    ///   - count: The number of rows.
    ///   - values: The value of a row (by offset) for an attribute name, nil when it is nil.
    ///   - schema: The rows' entity.
    ///   - firstIndex: The number of the first row in messages.
    static func validateInserted(
        count: Int, values: (Int, String) -> AttributeValue?, schema: EntitySchema, firstIndex: Int
    ) throws {
        let attributes = schema.attributes.values.filter { !$0.isDerived && !$0.isTransient }
        let required = schema.relationships.values.filter { !$0.isTransient && $0.isRequired }
            .map(\.name).sorted()
        var failures: [TernError] = []
        for offset in 0..<count {
            func failure(_ name: String, _ message: String) -> TernError {
                TernError(
                    .validationFailed, "\(schema.name).\(name) of row \(firstIndex + offset) \(message)",
                    entity: schema.name, property: name)
            }
            failures += Self.attributeFailures(of: { values(offset, $0) }, attributes: attributes, failure: failure)
            failures += required.map { failure($0, "is required") }
        }
        try throwIfAny(failures)
    }

    static func throwIfAny(_ failures: [TernError]) throws {
        guard let first = failures.first else { return }
        throw TernError(
            .validationFailed,
            "\(failures.count) validation failure(s), the first: \(first); fix them and run the batch again",
            objectID: nil, failures: failures)
    }

    /// Merges a batch change into this context, then tells listeners and other contexts.
    private func announce(_ changes: ContextDidSave) async throws {
        try await mergeChanges(from: changes)
        post(changes)
        await coordinator.broadcast(changes, from: self)
    }
}

extension PersistentStore {
    /// The object ID of one of the store's rows.
    func objectID(_ reference: RowReference) -> ObjectID {
        ObjectID(entityName: reference.entityName, storeIdentifier: identifier, primaryKey: reference.primaryKey)
    }
}
