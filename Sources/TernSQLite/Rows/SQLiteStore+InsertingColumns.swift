import Foundation
public import TernCore
import TernRelational

/// Where each placeholder of an entity's INSERT takes its value from in the rows of a
/// ``RowBatch``: worked out once per batch, so that binding a row looks nothing up by name.
struct ColumnBinding {
    /// The type of each bound attribute, in the INSERT's order after `Z_PK, Z_ENT, Z_OPT`.
    let types: [AttributeType]
    /// The batch column of each bound attribute, or -1 for none (NULL).
    let sources: [Int]
    /// Whether each bound attribute may keep its bytes in an external file.
    let external: [Bool]

    /// Matches a batch's columns with an entity's stored attributes.
    ///
    /// - Throws: ``/TernCore/TernError`` with code `invalidValue` when a column names no attribute.
    init(columns: [String], plan: InsertPlan) throws(TernError) {
        let stored = plan.attributes.filter { $0.derivation == nil }
        for name in columns where plan.layout.attribute(named: name) == nil {
            throw TernError(
                .invalidValue, "Entity \(SQL.quoted(plan.layout.name)) has no stored attribute \(SQL.quoted(name)).")
        }
        types = stored.map(\.type)
        // Derived attributes named by a column are skipped: the store's triggers keep them.
        sources = stored.map { columns.firstIndex(of: $0.name) ?? -1 }
        external = stored.map { $0.allowsExternalStorage && ($0.type == .binary || $0.type == .transformable) }
    }
}

extension SQLiteStore {
    // MARK: - Inserting rows in column order

    /// Inserts new rows of one entity batch by batch in one IMMEDIATE transaction, as
    /// ``insertRows(entityName:author:contextName:from:)`` does, each row bound straight from
    /// its values in column order into the entity's prepared INSERT: no dictionary, no lookup by
    /// name, no allocation per row. With ``recordsHistory`` or global identifiers each batch
    /// takes the dictionary path, which records them.
    ///
    /// - Parameters:
    ///   - entityName: A concrete entity.
    ///   - author: Who saved, for the history.
    ///   - contextName: The saving context's name, for the history.
    ///   - source: The next batch of rows, nil at the end.
    /// - Returns: The keys of the new rows as ranges of consecutive keys.
    /// - Throws: What ``insertRows(entityName:author:contextName:from:)`` throws.
    /// - Complexity: O(*n* · *c*) for *n* rows of *c* columns.
    public func insertRows(
        entityName: String, author: String?, contextName: String?,
        batches source: sending @escaping () throws -> RowBatch?
    ) async throws -> [ClosedRange<Int64>] {
        // `async` although it never suspends, as the dictionary form (ProtocolDefaultShadowingTests).
        guard !recordsHistory && !tracksGlobalIdentifiers else {
            return try await insertRows(entityName: entityName, author: author, contextName: contextName) {
                try source()?.dictionaries
            }
        }
        try requireWritable()
        let plan = try insertPlan(forEntity: entityName)
        var binding: (columns: [String], binding: ColumnBinding)?
        return try insertingInOneTransaction { ranges in
            guard let batch = try source() else { return false }
            guard !batch.isEmpty else { return true }
            precondition(batch.isComplete, "the last row of a batch is incomplete")
            if binding?.columns != batch.columns {
                binding = (batch.columns, try ColumnBinding(columns: batch.columns, plan: plan))
            }
            guard let columns = binding?.binding else { return true }
            let keys = try reservePrimaryKeys(for: plan.layout, count: batch.count)
            try insert(batch, keys: keys, binding: columns, plan: plan)
            ranges.append(keys: keys)
            return true
        }
    }

    /// Inserts rows of one entity that keep keys of their own (a conversion's, from another
    /// store), batch by batch in one IMMEDIATE transaction, each row bound straight from its
    /// values in column order as ``insertRows(entityName:author:contextName:batches:)`` binds
    /// them. The rows point nowhere: relationships are set afterwards, by saving the rows as
    /// updates. The root's `Z_MAX` is raised to the largest key. With ``recordsHistory`` or
    /// global identifiers each batch is saved as rows, which records them.
    ///
    /// - Parameters:
    ///   - entityName: A concrete entity.
    ///   - source: The next batch with one key per row, nil at the end.
    /// - Returns: How many rows were inserted.
    /// - Throws: What ``insertRows(entityName:author:contextName:batches:)`` throws;
    ///   ``/TernCore/TernError/Code/constraintConflict`` when a key is already taken.
    /// - Complexity: O(*n* · *c*) for *n* rows of *c* columns.
    package func insertRows(
        entityName: String, keyedBatches source: sending @escaping () throws -> (keys: [Int64], rows: RowBatch)?
    ) async throws -> Int {
        try requireWritable()
        var inserted = 0
        guard !recordsHistory && !tracksGlobalIdentifiers else {
            while let (keys, batch) = try source() {
                let rows = zip(keys, batch.dictionaries).map { key, values in
                    StoreRow(reference: RowReference(entityName: entityName, primaryKey: key), attributes: values)
                }
                _ = try save(StoreChangeSet(inserted: rows), identifiers: [:], inside: nil)
                inserted += rows.count
            }
            return inserted
        }
        let plan = try insertPlan(forEntity: entityName)
        var binding: (columns: [String], binding: ColumnBinding)?
        var largest: Int64 = 0
        _ = try insertingInOneTransaction { _ in
            guard let (keys, batch) = try source() else {
                if largest > 0 { try raisePrimaryKeyCounter(of: plan.layout, to: largest) }
                return false
            }
            precondition(batch.isComplete && keys.count == batch.count, "a batch needs one key per complete row")
            guard !batch.isEmpty else { return true }
            if binding?.columns != batch.columns {
                binding = (batch.columns, try ColumnBinding(columns: batch.columns, plan: plan))
            }
            guard let columns = binding?.binding else { return true }
            try insert(batch, keys: keys, binding: columns, plan: plan)
            largest = max(largest, keys.max() ?? 0)
            inserted += batch.count
            return true
        }
        return inserted
    }

    // MARK: - Non public

    /// Binds each row of a batch into the entity's INSERT and runs it. `Z_ENT`, `Z_OPT` and the
    /// relationships (NULL: new rows point nowhere) are bound once; each row rebinds its key
    /// and every attribute.
    private func insert(
        _ batch: RowBatch, keys: some Collection<Int64>, binding: ColumnBinding, plan: InsertPlan
    ) throws {
        let statement = try connection.preparedStatement(plan.text)
        defer { statement.reset() }
        try statement.bind(Int64(plan.layout.number), at: 2)
        try statement.bind(Int64(1), at: 3)
        let width = batch.columns.count
        try batch.values.withUnsafeBufferPointer { values in
            for (row, key) in zip(0..<batch.count, keys) {
                try statement.bind(key, at: 1)
                let start = row * width
                for slot in binding.sources.indices {
                    let index = Int32(slot + 4)
                    let source = binding.sources[slot]
                    guard source >= 0, let value = values[start + source] else {
                        try statement.bindNull(at: index)
                        continue
                    }
                    try bind(
                        value, type: binding.types[slot], external: binding.external[slot], at: index,
                        statement: statement, plan: plan)
                }
                do throws(SQLiteError) {
                    while try statement.step() {}
                } catch {
                    throw constraintConflict(error, of: RowReference(entityName: plan.layout.name, primaryKey: key))
                }
                statement.resetKeepingBindings()
            }
        }
    }

    /// Binds one attribute value, writing bytes kept outside the store to their file.
    private func bind(
        _ value: AttributeValue, type: AttributeType, external: Bool, at index: Int32, statement: Statement,
        plan: InsertPlan
    ) throws {
        if external, case .data(let bytes) = value {
            let column = try externalData.store(bytes)
            if let name = ExternalDataStore.fileName(in: column) { filesOfPendingSave.append(name) }
            try statement.bind(blob: column, at: index)
        } else if !(try statement.bind(value, for: type, at: index)) {
            let name = plan.attributes.filter { $0.derivation == nil }[Int(index) - 4].name
            throw TernError(
                .invalidValue,
                "\(plan.layout.name).\(name) is a \(type.xcodeName) attribute; the value has another type.")
        }
    }
}
