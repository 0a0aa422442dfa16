/// Batch inserts of rows in column order (``RowBatch``): the fast path, with no dictionary per
/// row; a store on disk binds each value straight to its column.
extension ObjectContext {
    // MARK: - Batch inserts in column order

    /// Inserts rows of an entity without making objects, their values in column order.
    ///
    /// Attributes no column names take their default values; a nil value is stored as nil.
    ///
    /// ```swift
    /// var rows = RowBatch(columns: ["title", "servings"], reservingCapacity: 2)
    /// rows.append(row: [.string("Soup"), .integer(4)])
    /// rows.append(row: [.string("Salad"), nil])
    /// let ids = try await context.batchInsert(entityName: "Recipe", rows: rows)
    /// ```
    ///
    /// - Parameters:
    ///   - entityName: A non-abstract entity.
    ///   - rows: The new rows; every row complete.
    ///   - options: Which of the model's rules to enforce; types and uniqueness only by default.
    /// - Returns: The new objects' IDs, in order.
    /// - Throws: What ``batchInsert(entityName:objects:options:)`` throws. Nothing is written then.
    /// - Complexity: O(*n* · *c*) for *n* rows of *c* columns, in one transaction.
    public func batchInsert(entityName: String, rows: RowBatch, options: BatchOptions = .unchecked) async throws
        -> [ObjectID]
    {
        var pending: RowBatch? = rows
        let (store, ranges) = try await insertRowBatches(entityName: entityName, options: options, converted: false) {
            defer { pending = nil }
            return pending
        }
        return try await announceInsertedIDs(ranges, entityName: entityName, store: store)
    }

    /// Inserts rows of an entity without making objects, streaming batches of rows in column
    /// order into one transaction, as ``batchInsert(entityName:options:batches:)`` does with
    /// dictionaries.
    ///
    /// ```swift
    /// var next = 0
    /// let count = try await context.batchInsertRows(entityName: "Event") {
    ///     guard next < 1_000_000 else { return nil }
    ///     var rows = RowBatch(columns: ["id"], reservingCapacity: 10_000)
    ///     for id in next..<next + 10_000 { rows.append(.integer(Int64(id))) }
    ///     next += 10_000
    ///     return rows
    /// }
    /// ```
    ///
    /// - Parameters:
    ///   - entityName: A non-abstract entity.
    ///   - options: Which of the model's rules to enforce; types and uniqueness only by default.
    ///   - batches: The next batch of rows, or nil at the end; run on the store's executor.
    ///     What it throws stops the insert.
    /// - Returns: How many rows were inserted.
    /// - Throws: What ``batchInsert(entityName:options:batches:)`` throws. Nothing is written then.
    /// - Complexity: O(*n* · *c*) for *n* rows of *c* columns, in one transaction.
    public func batchInsertRows(
        entityName: String, options: BatchOptions = .unchecked, batches: sending @escaping () throws -> RowBatch?
    ) async throws -> Int {
        let (store, ranges) = try await insertRowBatches(
            entityName: entityName, options: options, converted: false, source: batches)
        return try await announceInserted(ranges, entityName: entityName, store: store)
    }

    /// ``batchInsertRows(entityName:options:batches:)`` for callers that fill default values
    /// themselves and make every value from its attribute's type (an import, where an empty field
    /// means nil even when the attribute has a default, and each field is converted to its type).
    package func batchInsertConverted(
        entityName: String, options: BatchOptions, batches: sending @escaping () throws -> RowBatch?
    ) async throws -> Int {
        let (store, ranges) = try await insertRowBatches(
            entityName: entityName, options: options, converted: true, source: batches)
        return try await announceInserted(ranges, entityName: entityName, store: store)
    }

    // MARK: - Non public

    /// Checks each batch of `source` (value types, unless `converted`), adds columns for the
    /// defaults of the attributes it leaves out (unless `converted`), validates when asked, and
    /// streams the batches into the entity's store in one transaction.
    private func insertRowBatches(
        entityName: String, options: BatchOptions, converted: Bool, source: sending @escaping () throws -> RowBatch?
    ) async throws -> (any PersistentStore, [ClosedRange<Int64>]) {
        let store = try batchStore(forEntity: entityName)
        let schema = graph.schema(for: entityName)
        let defaults =
            converted
            ? []
            : schema.attributes.values.filter { !$0.isTransient && !$0.isDerived }
                .compactMap { attribute in attribute.defaultValue.map { (name: attribute.name, value: $0) } }
                .sorted { $0.name < $1.name }
        let validates = options.validatesValues
        var firstIndex = 0
        let ranges = try await store.insertRows(entityName: entityName, author: transactionAuthor, contextName: name) {
            () throws -> RowBatch? in
            guard let batch = try source() else { return nil }
            precondition(batch.isComplete, "the last row of a batch is incomplete")
            let attributes = try batch.columns.map { try Self.storedAttribute($0, schema: schema) }
            if !converted {
                for row in 0..<batch.count {
                    for (column, attribute) in attributes.enumerated() {
                        if let value = batch[row, column] {
                            try Self.checkBatchType(value, of: attribute, schema: schema)
                        }
                    }
                }
            }
            let rows = batch.adding(defaults.filter { !batch.columns.contains($0.name) })
            if validates {
                let positions = Dictionary(
                    uniqueKeysWithValues: rows.columns.enumerated().map { ($0.element, $0.offset) })
                try Self.validateInserted(
                    count: rows.count, values: { row, name in positions[name].flatMap { rows[row, $0] } },
                    schema: schema,
                    firstIndex: firstIndex)
            }
            firstIndex += rows.count
            return rows
        }
        return (store, ranges)
    }
}
