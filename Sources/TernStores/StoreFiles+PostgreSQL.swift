public import Foundation
public import TernCore
public import TernPostgreSQL

extension StoreFiles {
    // MARK: - PostgreSQL stores

    /// Opens the PostgreSQL store at a connection string (`postgres://…?schema=…`).
    ///
    /// - Parameters:
    ///   - url: The connection string.
    ///   - model: The model; nil to use the one the store records in `Z_MODELCACHE`.
    ///   - isReadOnly: Whether saves are refused.
    /// - Returns: The open store.
    /// - Throws: ``/TernPostgreSQL/PostgreSQLError`` when the server cannot be reached or holds no store.
    public static func openPostgreSQL(
        _ url: String, model: ManagedObjectModel?, isReadOnly: Bool = false
    ) throws -> PostgreSQLStore {
        try PostgreSQLStore(url: url, model: model, readOnly: isReadOnly)
    }

    /// Copies every row of a store into a new PostgreSQL store, streaming in batches: rows
    /// without relationships first (loaded with `COPY`), then the relationships, then the
    /// primary-key counters (`Z_MAX`, so that keys of deleted objects are not handed out again)
    /// and the metadata (UUID, version hashes, application keys) with the store type set to
    /// PostgreSQL.
    ///
    /// - Parameters:
    ///   - store: The store to copy; it may be read-only.
    ///   - url: The new store's connection string; its schema must hold no store yet.
    ///   - batchSize: How many rows are read and written at a time.
    ///   - progress: Counts the rows copied, if given; its total is set here (twice the rows:
    ///     the source is read twice).
    /// - Returns: The new store, open and writable.
    /// - Throws: ``/TernCore/TernError/Code/unsupported`` when a store exists there already; any error of
    ///   reading or writing, after which the new store's tables are dropped.
    /// - Complexity: O(*n*) in the number of rows; memory bounded by `batchSize` for SQLite and
    ///   PostgreSQL sources.
    public static func copy(
        _ store: any PersistentStore, toPostgreSQL url: String, batchSize: Int = 1000, progress: Progress? = nil
    ) async throws -> any PersistentStore {
        let location = try PostgreSQLLocation(url)
        if (try? PostgreSQLStore.metadata(at: url)) != nil {
            throw TernError(
                .unsupported, "a store already exists at \(location); destroy it or pick another schema")
        }
        var metadata = try await store.metadata()
        metadata.storeType = StoreKind.postgreSQL.rawValue
        metadata.applicationKeys[modelCacheKey] = nil
        let model = store.model
        let lastKeys = try await store.recordedLastPrimaryKeys()
        do {
            let target = try PostgreSQLStore(location: location, model: model)
            if let progress { progress.totalUnitCount = try await StoreMigration.rowCount(of: store) * 2 }
            try await StoreMigration.forEachBatch(of: store, size: batchSize) { batch in
                let bare = batch.map { StoreRow(reference: $0.reference, attributes: $0.attributes) }
                try await target.save(StoreChangeSet(inserted: bare))
                progress?.completedUnitCount += Int64(batch.count)
            }
            try await StoreMigration.forEachBatch(of: store, size: batchSize) { batch in
                progress?.completedUnitCount += Int64(batch.count)
                let related = batch.filter { !$0.toOne.isEmpty || !$0.toMany.isEmpty }.map { row in
                    var row = row
                    row.version = 1
                    return row
                }
                if !related.isEmpty { try await target.save(StoreChangeSet(updated: related)) }
            }
            try await target.raiseLastPrimaryKeys(to: lastKeys)
            try await target.setMetadata(metadata)
        } catch {
            try? PostgreSQLStore.destroy(at: url)
            throw error
        }
        return try PostgreSQLStore(location: location, model: model)
    }
}
