import Foundation
import TernBinaryStore
import TernCore
import TernFormats
import TernPostgreSQL
import TernSQLite
import TernXMLStore

/// Copies every row of one store into a new store of any type, in batches, keeping primary
/// keys, relationships and metadata.
enum StoreMigration {
    /// Copies a store into a new one at `url` (nil for an in-memory store) and opens it.
    ///
    /// Metadata is copied whole (UUID, version hashes, application keys), with the store type
    /// set to the new one: keeping the UUID keeps object IDs' URIs valid. The primary-key
    /// counters (`Z_MAX`) are copied too, so that a key the source gave an object since deleted
    /// is not handed out again. Row versions (optimistic-locking counters) start again.
    /// `progress`, when given, counts rows read: its total is set here (twice the rows for
    /// SQLite, which is written in two passes).
    static func copy(
        _ source: any PersistentStore, to url: URL?, kind: StoreKind, isReadOnly: Bool, batchSize: Int,
        progress: Progress? = nil
    ) async throws -> any PersistentStore {
        guard let url else {
            guard kind == .inMemory, !isReadOnly else {
                throw TernError(
                    .unsupported, "only a writable in-memory store has no file; give a location for a \(kind) store")
            }
            let (metadata, lastKeys) = try await copiedState(of: source, kind: kind)
            let store = InMemoryStore(model: source.model, identifier: metadata.uuid)
            var rows: [StoreRow] = []
            try await forEachBatch(of: source, size: batchSize) { rows += $0 }
            _ = try await store.save(StoreChangeSet(inserted: rows))
            store.raiseLastPrimaryKeys(to: lastKeys)
            try await store.setMetadata(metadata)
            return store
        }
        _ = try await write(source, to: url, kind: kind, batchSize: batchSize, progress: progress)
        return try StoreFiles.open(at: url, kind: kind, model: source.model, isReadOnly: isReadOnly)
    }

    /// Writes a copy of a store at `url`, as ``copy(_:to:kind:isReadOnly:batchSize:progress:)``
    /// does, without opening it: a binary copy of a SQLite store streams through a
    /// ``/TernBinaryStore/BinaryStoreWriter``, in memory bounded by the batch.
    ///
    /// - Returns: How many rows were copied.
    static func write(
        _ source: any PersistentStore, to url: URL, kind: StoreKind, batchSize: Int, progress: Progress?
    ) async throws -> Int64 {
        try requireNoFile(at: url)
        let (metadata, lastKeys) = try await copiedState(of: source, kind: kind)
        if let progress { progress.totalUnitCount = try await rowCount(of: source) * (kind == .sqlite ? 2 : 1) }
        switch kind {
        case .sqlite:
            return try await writeSQLite(
                from: source, to: url, metadata: metadata, lastKeys: lastKeys, batchSize: batchSize, progress: progress)
        case .binary:
            if let sqlite = source as? SQLiteStore {
                return try await writeBinary(
                    from: sqlite, to: url, metadata: metadata, lastKeys: lastKeys, batchSize: batchSize,
                    progress: progress)
            }
            fallthrough
        case .xml:
            var rows: [StoreRow] = []
            try await forEachBatch(of: source, size: batchSize) { batch in
                rows += batch
                progress?.completedUnitCount += Int64(batch.count)
            }
            let contents = AtomicStoreContents(
                metadata: metadata, rows: rows.sorted { $0.reference < $1.reference }, lastPrimaryKeys: lastKeys)
            let data =
                try kind == .binary
                ? BinaryStoreFormat.encode(contents) : XMLStoreFormat.encode(contents, model: source.model)
            try DurableFile.write(data, to: url)
            return Int64(rows.count)
        default:
            throw TernError(.unsupported, "Tern cannot write \(kind) stores; use SQLite, Binary or XML", path: url.path)
        }
    }

    /// Refuses to write a copy where a file already is.
    static func requireNoFile(at url: URL) throws {
        guard !FileManager.default.fileExists(atPath: url.path) else {
            throw TernError(
                .unsupported, "a file already exists where the store would go; destroy it or pick another path",
                path: url.path)
        }
    }

    /// The metadata and primary-key counters a copy of `source` of type `kind` starts with.
    private static func copiedState(of source: any PersistentStore, kind: StoreKind) async throws -> (
        metadata: StoreMetadata, lastKeys: [String: Int64]
    ) {
        var metadata = try await source.metadata()
        metadata.storeType = kind.rawValue
        // SQLite stores keep their model in Z_MODELCACHE; the others in their metadata.
        metadata.applicationKeys[StoreFiles.modelCacheKey] =
            kind == .binary || kind == .xml ? .data(try ModelCache.encode(source.model)) : nil
        return (metadata, try await source.recordedLastPrimaryKeys().filter { $0.value > 0 })
    }

    /// Writes a new SQLite store in two streaming passes: rows without relationships first, so
    /// that every reference exists when the second pass sets the relationships.
    ///
    /// The store is built under a temporary name beside `url` and renamed into place once
    /// complete and on disk, so a crash leaves no store at `url` or the whole one; the temporary
    /// files a crash leaves go with ``StoreFiles/destroy(at:)`` of `url`.
    private static func writeSQLite(
        from source: any PersistentStore, to url: URL, metadata: StoreMetadata, lastKeys: [String: Int64],
        batchSize: Int, progress: Progress?
    ) async throws -> Int64 {
        try await buildSQLite(at: url) { temporary in
            try await fillSQLite(
                from: source, at: temporary, metadata: metadata, lastKeys: lastKeys, batchSize: batchSize,
                progress: progress)
        }
    }

    /// Builds a SQLite store with `fill` under a temporary name beside `url`, then moves it
    /// into place, checkpointed and flushed; the temporary store is destroyed when `fill` or
    /// the move throws.
    ///
    /// - Returns: What `fill` returns: how many rows it wrote.
    static func buildSQLite(at url: URL, _ fill: (URL) async throws -> Int64) async throws -> Int64 {
        let temporary = url.deletingLastPathComponent()
            .appendingPathComponent(DurableFile.temporaryPrefix(for: url) + UUID().uuidString + ".sqlite")
        do {
            let count = try await fill(temporary)
            try SQLiteStore.moveFinishedStore(at: temporary, to: url)
            return count
        } catch {
            try? StoreFiles.destroy(at: temporary)
            throw error
        }
    }

    /// Writes the rows, primary-key counters and metadata of a new SQLite store; the store is
    /// closed on return.
    ///
    /// - Returns: How many rows were written.
    private static func fillSQLite(
        from source: any PersistentStore, at url: URL, metadata: StoreMetadata, lastKeys: [String: Int64],
        batchSize: Int, progress: Progress?
    ) async throws -> Int64 {
        let store = try temporarySQLiteStore(at: url, model: source.model)
        var count: Int64 = 0
        try await forEachBatch(of: source, size: batchSize) { batch in
            let bare = batch.map { StoreRow(reference: $0.reference, attributes: $0.attributes) }
            try await store.save(StoreChangeSet(inserted: bare))
            progress?.completedUnitCount += Int64(batch.count)
            count += Int64(batch.count)
        }
        // Without relationships in the model, there is nothing for a second pass to set.
        try await store.raiseLastPrimaryKeys(to: lastKeys)
        guard source.model.entities.contains(where: { !$0.relationships.isEmpty }) else {
            try await store.setMetadata(metadata)
            return count
        }
        try await forEachBatch(of: source, size: batchSize) { batch in
            progress?.completedUnitCount += Int64(batch.count)
            let related = batch.filter { !$0.toOne.isEmpty || !$0.toMany.isEmpty }.map { row in
                var row = row
                row.version = 1
                return row
            }
            if !related.isEmpty { try await store.save(StoreChangeSet(updated: related)) }
        }
        try await store.setMetadata(metadata)
        return count
    }

    /// A new SQLite store for a copy, at a temporary location.
    ///
    /// The store is a temporary file until `moveFinishedStore` checkpoints and syncs it, so its
    /// commits need no `fsync` of their own: a crash before the move leaves only a file that is
    /// thrown away.
    static func temporarySQLiteStore(at url: URL, model: ManagedObjectModel) throws -> SQLiteStore {
        var configuration = SQLiteConfiguration()
        configuration.synchronous = .off
        return try SQLiteStore(at: url, model: model, configuration: configuration)
    }

    /// The number of rows of a store: its objects, each counted under its own entity.
    static func rowCount(of store: any PersistentStore) async throws -> Int64 {
        var total: Int64 = 0
        for entity in store.model.entities where !entity.isAbstract {
            var request = StoreFetchRequest(entityName: entity.name)
            request.includesSubentities = false
            total += Int64(try await store.count(request))
        }
        return total
    }

    /// Calls `body` with the rows of every entity, at most `size` at a time, in primary-key
    /// order. SQLite and PostgreSQL stores are read batch by batch; other stores already hold their rows.
    static func forEachBatch(
        of store: any PersistentStore, entities: [String]? = nil, size: Int, _ body: ([StoreRow]) async throws -> Void
    ) async throws {
        for entity in entities ?? store.model.entities.map(\.name) {
            if let postgreSQL = store as? PostgreSQLStore {
                var last: Int64 = 0
                while true {
                    let batch = try await postgreSQL.rows(
                        of: entity, includingSubentities: false, after: last, limit: size)
                    if !batch.isEmpty { try await body(batch) }
                    guard batch.count == size, let key = batch.last?.reference.primaryKey else { break }
                    last = key
                }
            } else if let sqlite = store as? SQLiteStore {
                var last: Int64 = 0
                while true {
                    let batch = try await sqlite.rows(of: entity, includingSubentities: false, after: last, limit: size)
                    if !batch.isEmpty { try await body(batch) }
                    guard batch.count == size, let key = batch.last?.reference.primaryKey else { break }
                    last = key
                }
            } else {
                var request = StoreFetchRequest(entityName: entity)
                request.includesSubentities = false
                let rows = try await store.fetch(request).sorted { $0.reference < $1.reference }
                for start in stride(from: 0, to: rows.count, by: size) {
                    try await body(Array(rows[start..<min(start + size, rows.count)]))
                }
            }
        }
    }
}
