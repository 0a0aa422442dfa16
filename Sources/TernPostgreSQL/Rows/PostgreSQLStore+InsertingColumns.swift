import Foundation
public import TernCore
import TernRelational

extension PostgreSQLStore {
    // MARK: - Inserting rows in column order

    /// Inserts new rows of one entity as ``insertRows(entityName:author:contextName:from:)``
    /// does, each batch loaded with one `COPY` straight from its values in column order: no
    /// dictionary and no ``/TernCore/StoreRow`` per row.
    ///
    /// Each batch's keys are reserved as it comes; every batch is then loaded in one transaction,
    /// all or nothing. A uniqueness constraint that the load would break makes the insert run
    /// again through the dictionary form, which names the row.
    ///
    /// - Parameters:
    ///   - entityName: A concrete entity.
    ///   - author: Who saved, for the history.
    ///   - contextName: The saving context's name, for the history.
    ///   - source: The next batch of rows, nil at the end.
    /// - Returns: The keys of the new rows as ranges of consecutive keys.
    /// - Throws: What ``insertRows(entityName:author:contextName:from:)`` throws.
    /// - Complexity: O(*n* · *c*) for *n* rows of *c* columns, all held until the load, as the
    ///   dictionary form holds them.
    public func insertRows(
        entityName: String, author: String?, contextName: String?,
        batches source: sending @escaping () throws -> RowBatch?
    ) async throws -> [ClosedRange<Int64>] {
        try requireWritable()
        let layout = try schema.entity(named: entityName)
        try requireConcrete(layout)
        var batches: [(batch: RowBatch, keys: [Int64])] = []
        var ranges: [ClosedRange<Int64>] = []
        while let batch = try source() {
            guard !batch.isEmpty else { continue }
            precondition(batch.isComplete, "the last row of a batch is incomplete")
            let keys = try newPrimaryKeys(forEntity: entityName, count: batch.count)
            for key in keys { ranges.appendKey(key) }
            batches.append((batch, keys))
        }
        guard !batches.isEmpty else { return [] }
        /// The rows as a save writes them, through the dictionary form.
        func saveAsDictionaries() throws -> [ClosedRange<Int64>] {
            var changes = StoreChangeSet(author: author, contextName: contextName)
            for (batch, keys) in batches {
                for (key, values) in zip(keys, batch.dictionaries) {
                    changes.inserted.append(
                        StoreRow(reference: RowReference(entityName: entityName, primaryKey: key), attributes: values))
                }
            }
            _ = try save(changes)
            return ranges
        }
        // A column that names no stored attribute: the dictionary form says which, as any save does.
        guard batches.allSatisfy({ $0.batch.columns.allSatisfy { layout.attribute(named: $0) != nil } }) else {
            return try saveAsDictionaries()
        }
        do {
            try connection.inTransaction {
                for (batch, keys) in batches { try copy(batch, keys: keys, layout: layout) }
                if let last = batches.last?.keys.last {
                    try raisePrimaryKeyCounters(to: [
                        StoreRow(reference: RowReference(entityName: entityName, primaryKey: last))
                    ])
                }
            }
            return ranges
        } catch let error as TernError where error.code == .constraintConflict && error.failures.isEmpty {
            // COPY cannot say which row broke the constraint: the save inserts row by row to name it.
            return try saveAsDictionaries()
        }
    }

    // MARK: - Non public

    /// Loads one batch with `COPY`: `Z_PK`, `Z_ENT`, `Z_OPT` and the batch's columns (each an
    /// attribute of the entity), each value converted as a save converts it, as the data is
    /// sent (``Connection/copy(into:columns:count:row:)``).
    private func copy(_ batch: RowBatch, keys: [Int64], layout: EntityLayout) throws {
        let attributes = batch.columns.compactMap(layout.attribute(named:))
        let width = batch.columns.count
        let number = DatabaseValue.integer(Int64(layout.number))
        let columns = ["Z_PK", "Z_ENT", "Z_OPT"] + attributes.map(\.column)
        var conversionError: (any Error)?
        let loaded = try loadingRows { () throws(PostgreSQLError) in
            try connection.copy(into: layout.table, columns: columns, count: keys.count) { row, text in
                text.append(.integer(keys[row]))
                text.append(number)
                text.append(.integer(1))
                do {
                    for (index, attribute) in attributes.enumerated() {
                        text.append(try storedValue(batch.values[row * width + index], of: attribute, in: layout))
                    }
                } catch {
                    conversionError = error
                    return false
                }
                return true
            }
        }
        if !loaded, let conversionError { throw conversionError }
    }
}
