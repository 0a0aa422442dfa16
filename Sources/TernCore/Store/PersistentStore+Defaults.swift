extension PersistentStore {
    /// The attribute values of the rows ``fetch(_:)`` returns, keeping only the attributes the
    /// request's ``StoreFetchRequest/propertiesToFetch`` names: the default for every store.
    ///
    /// - Parameter request: What to fetch.
    /// - Returns: One dictionary per row, in the requested order.
    /// - Throws: What ``fetch(_:)`` throws.
    /// - Complexity: That of ``fetch(_:)``.
    public func fetchValues(_ request: StoreFetchRequest) async throws -> [[String: AttributeValue]] {
        let rows = try await fetch(request)
        guard let wanted = request.propertiesToFetch.map(Set.init) else { return rows.map(\.attributes) }
        return rows.map { AttributeValue.projecting($0.attributes, onto: wanted) }
    }

    /// Gathers every batch of `source`, reserves their keys, then saves them all at once: the
    /// default for stores that hold their rows in memory.
    ///
    /// - Parameters:
    ///   - entityName: A concrete entity.
    ///   - author: Who saved, for the history.
    ///   - contextName: The saving context's name, for the history.
    ///   - source: The batches of attribute values; nil ends them.
    /// - Returns: The keys of the new rows as ranges of consecutive keys.
    /// - Throws: What `source`, ``newPrimaryKeys(forEntity:count:)`` or ``save(_:)`` throws.
    /// - Complexity: O(*n*) in the number of rows, all held until the save.
    public func insertRows(
        entityName: String, author: String?, contextName: String?,
        from source: sending @escaping () throws -> [[String: AttributeValue]]?
    ) async throws -> [ClosedRange<Int64>] {
        var changes = StoreChangeSet(author: author, contextName: contextName)
        var ranges: [ClosedRange<Int64>] = []
        while let batch = try source() {
            guard !batch.isEmpty else { continue }
            let keys = try await newPrimaryKeys(forEntity: entityName, count: batch.count)
            for (key, values) in zip(keys, batch) {
                changes.inserted.append(
                    StoreRow(reference: RowReference(entityName: entityName, primaryKey: key), attributes: values))
                ranges.appendKey(key)
            }
        }
        guard !changes.isEmpty else { return [] }
        _ = try await save(changes)
        return ranges
    }
}

extension PersistentStore {
    /// Turns each batch of `source` into dictionaries for
    /// ``insertRows(entityName:author:contextName:from:)``: the default for stores without a
    /// column-ordered path.
    ///
    /// - Parameters:
    ///   - entityName: A concrete entity.
    ///   - author: Who saved, for the history.
    ///   - contextName: The saving context's name, for the history.
    ///   - source: The batches of rows in column order; nil ends them.
    /// - Returns: The keys of the new rows as ranges of consecutive keys.
    /// - Throws: What the dictionary form throws.
    /// - Complexity: O(*n* · *c*) for *n* rows of *c* columns.
    public func insertRows(
        entityName: String, author: String?, contextName: String?,
        batches source: sending @escaping () throws -> RowBatch?
    ) async throws -> [ClosedRange<Int64>] {
        try await insertRows(entityName: entityName, author: author, contextName: contextName) {
            try source()?.dictionaries
        }
    }
}

extension [ClosedRange<Int64>] {
    /// Adds a key, extending the last range when the key follows it.
    package mutating func appendKey(_ key: Int64) {
        if let last, last.upperBound &+ 1 == key {
            self[count - 1] = last.lowerBound...key
        } else {
            append(key...key)
        }
    }

    /// Adds consecutive keys, extending the last range when they follow it.
    package mutating func append(keys: ClosedRange<Int64>) {
        if let last, last.upperBound &+ 1 == keys.lowerBound {
            self[count - 1] = last.lowerBound...keys.upperBound
        } else {
            append(keys)
        }
    }
}

extension AttributeValue {
    /// The values of the wanted attributes only.
    ///
    /// - Complexity: O(*n*) in the number of values; no copy when all are wanted.
    package static func projecting(_ values: [String: AttributeValue], onto wanted: Set<String>) -> [String:
        AttributeValue]
    {
        values.keys.allSatisfy(wanted.contains) ? values : values.filter { wanted.contains($0.key) }
    }
}
