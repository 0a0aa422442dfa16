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

    // MARK: - Non public

    /// Binds each row of a batch into the entity's INSERT and runs it. `Z_ENT`, `Z_OPT` and the
    /// relationships (NULL: new rows point nowhere) are bound once; each row rebinds its key
    /// and every attribute.
    private func insert(_ batch: RowBatch, keys: ClosedRange<Int64>, binding: ColumnBinding, plan: InsertPlan) throws {
        let statement = try connection.preparedStatement(plan.text)
        defer { statement.reset() }
        try statement.bind(Int64(plan.layout.number), at: 2)
        try statement.bind(Int64(1), at: 3)
        let width = batch.columns.count
        try batch.values.withUnsafeBufferPointer { values in
            var key = keys.lowerBound
            for row in 0..<batch.count {
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
                key += 1
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
