import Foundation
import Synchronization
import TernBinaryStore
import TernCore
import TernSQLite

/// Conversions between SQLite and binary stores that stream rows between the two files, entity
/// by entity in batches, instead of holding every row in an atomic store: memory stays bounded
/// by the batch, and no row becomes a dictionary on the way.
extension StoreMigration {
    /// Writes a binary store from a SQLite store's rows, read packed, page by page in key order.
    ///
    /// - Returns: How many rows were written.
    static func writeBinary(
        from source: SQLiteStore, to url: URL, metadata: StoreMetadata, lastKeys: [String: Int64], batchSize: Int,
        progress: Progress?
    ) async throws -> Int64 {
        let model = source.model
        var names: [String] = []
        for entity in model.entities {
            names.append(entity.name)
            names += entity.attributes.map(\.name)
            names += entity.relationships.map(\.name)
        }
        let writer = try BinaryStoreWriter(at: url, metadata: metadata, names: names, lastPrimaryKeys: lastKeys)
        var count: Int64 = 0
        for entity in model.entities where !entity.isAbstract {
            var last: Int64 = 0
            var started = false
            while true {
                let page = try await source.packedRows(
                    of: entity.name, includingSubentities: false, after: last, limit: batchSize)
                if !page.isEmpty, !started {
                    try writer.beginEntity(entity.name)
                    started = true
                }
                for row in page { try writer.append(row) }
                count += Int64(page.count)
                progress?.completedUnitCount += Int64(page.count)
                guard page.count == batchSize, let key = page.last?.reference.primaryKey else { break }
                last = key
            }
        }
        try writer.finish()
        return count
    }

    /// Writes a new SQLite store at `url` from a binary store file, read front to back: each
    /// entity's rows are inserted with their keys, batch by batch in column order; when the
    /// model has relationships, a second reading of the file sets them.
    ///
    /// The file's checksum is checked once the first reading ends, before the SQLite store is
    /// moved into place, so a damaged file leaves nothing at `url`.
    ///
    /// - Parameters:
    ///   - source: The binary store file.
    ///   - model: The model of its rows.
    ///   - url: Where the SQLite store goes; nothing may be there.
    ///   - batchSize: How many rows are inserted at a time.
    ///   - progress: Counts rows read, its total growing as each entity's count is read.
    /// - Returns: How many rows were written.
    static func writeSQLite(
        fromBinaryAt source: URL, model: ManagedObjectModel, to url: URL, batchSize: Int, progress: Progress?
    ) async throws -> Int64 {
        try requireNoFile(at: url)
        let hasRelationships = model.entities.contains { !$0.relationships.isEmpty }
        let passes: Int64 = hasRelationships ? 2 : 1
        return try await buildSQLite(at: url) { temporary in
            let store = try temporarySQLiteStore(at: temporary, model: model)
            let first = try BinaryStoreReader(at: source)
            var metadata = first.metadata
            metadata.storeType = StoreKind.sqlite.rawValue
            metadata.applicationKeys[StoreFiles.modelCacheKey] = nil
            let lastKeys = first.lastPrimaryKeys.filter { $0.value > 0 }
            let reader = SharedReader(first)
            var count: Int64 = 0
            while let (entity, rows) = try reader.lock.withLock({ reader throws(TernError) in try reader.nextEntity() })
            {
                guard model.entity(named: entity) != nil else {
                    throw TernError(
                        .invalidValue,
                        "the binary store has rows of entity '\(entity)', which the model lacks; "
                            + "convert it with the model it was written with",
                        path: source.path)
                }
                progress?.totalUnitCount += Int64(rows) * passes
                let columns = model.allAttributes(of: entity).map(\.name)
                let slots = reader.lock.withLock { $0.slots(for: columns) }
                let size = batchSize
                count += Int64(
                    try await store.insertRows(entityName: entity) {
                        try reader.lock.withLock { reader throws(TernError) in
                            try readBatch(of: reader, size: size, columns: columns, slots: slots)
                        }
                    })
                progress?.completedUnitCount += Int64(rows)
            }
            try await store.raiseLastPrimaryKeys(to: lastKeys)
            if hasRelationships {
                try await setRelationships(
                    from: BinaryStoreReader(at: source), model: model, in: store, size: batchSize)
                progress?.completedUnitCount = progress?.totalUnitCount ?? 0
            }
            try await store.setMetadata(metadata)
            return count
        }
    }

    // MARK: - Non public

    /// The next rows of the reader's current entity, at most `size`, in column order with
    /// their keys; nil when the entity has no row left.
    private static func readBatch(
        of reader: BinaryStoreReader, size: Int, columns: [String], slots: [Int]
    ) throws(TernError) -> (keys: [Int64], rows: RowBatch)? {
        let count = min(size, reader.rowsLeft)
        guard count > 0 else { return nil }
        var keys: [Int64] = []
        keys.reserveCapacity(count)
        var batch = RowBatch(columns: columns, reservingCapacity: count)
        var values = [AttributeValue?](repeating: nil, count: columns.count)
        for _ in 0..<count {
            keys.append(try reader.readRow(slots: slots, into: &values).primaryKey)
            batch.append(row: values)
        }
        return (keys, batch)
    }

    /// Reads a binary store file again and saves, as updates, the rows that have
    /// relationships, every row being in the store by then.
    private static func setRelationships(
        from reader: BinaryStoreReader, model: ManagedObjectModel, in store: SQLiteStore, size: Int
    ) async throws {
        var related: [StoreRow] = []
        while let (entity, rows) = try reader.nextEntity() {
            let columns = model.allAttributes(of: entity).map(\.name)
            let slots = reader.slots(for: columns)
            var values = [AttributeValue?](repeating: nil, count: columns.count)
            for _ in 0..<rows {
                let head = try reader.readRow(slots: slots, into: &values)
                guard head.hasRelationships else { continue }
                var attributes: [String: AttributeValue] = [:]
                for (column, value) in zip(columns, values) where value != nil { attributes[column] = value }
                related.append(
                    StoreRow(
                        reference: RowReference(entityName: entity, primaryKey: head.primaryKey), version: 1,
                        attributes: attributes, toOne: head.toOne, toMany: head.toMany))
                if related.count >= size {
                    try await store.save(StoreChangeSet(updated: related))
                    related.removeAll(keepingCapacity: true)
                }
            }
        }
        if !related.isEmpty { try await store.save(StoreChangeSet(updated: related)) }
    }
}

/// A binary store reader that a batch source of ``/TernSQLite/SQLiteStore/insertRows(entityName:keyedBatches:)``
/// reads on the store's executor while the converting task waits for the insert, then reads
/// again itself.
private final class SharedReader: Sendable {
    /// The reader.
    let lock: Mutex<BinaryStoreReader>

    init(_ reader: sending BinaryStoreReader) { lock = Mutex(reader) }
}
