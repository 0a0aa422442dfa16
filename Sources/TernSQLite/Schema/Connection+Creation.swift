import Foundation
import TernCore
import TernFormats
import TernRelational

extension Connection {
    // MARK: - Creating a store

    /// Creates the tables, indexes and fixed rows of a new store in one transaction.
    ///
    /// - Parameters:
    ///   - schema: The layout to create.
    ///   - metadata: The metadata to record.
    ///   - modelCache: The compressed model archive for `Z_MODELCACHE`, if one could be made.
    /// - Throws: ``SQLiteError`` when a statement fails; nothing is left half-created.
    func createStore(schema: StoreSchema, metadata: StoreMetadata, modelCache: Data?) throws(SQLiteError) {
        try inTransaction(.immediate) { () throws(SQLiteError) in
            for statement in schema.creationStatements { try executeOnce(statement) }
            for row in schema.primaryKeyRows { try execute(row) }
            try writeMetadata(metadata)
            if let modelCache { try execute("INSERT INTO Z_MODELCACHE (Z_CONTENT) VALUES (\(modelCache))") }
        }
        clearStatementCache()
    }

    /// The model recorded in the store's `Z_MODELCACHE`.
    ///
    /// - Throws: `TernError` with code `schemaMismatch` when the store has no usable model cache.
    func readModelCache() throws(TernError) -> ManagedObjectModel {
        let content = try? fetchValue("SELECT Z_CONTENT FROM Z_MODELCACHE LIMIT 1")?.data
        guard let content, !content.isEmpty else {
            throw TernError(
                .schemaMismatch, "The store has no model cache (Z_MODELCACHE); open it with its model.", path: path)
        }
        return try SQLiteStore.decodeModelCache(content, path: path)
    }
}

extension SQLiteStore {
    /// Decodes a `Z_MODELCACHE` blob into a model.
    static func decodeModelCache(_ content: Data, path: String) throws(TernError) -> ManagedObjectModel {
        do {
            return try ModelCache.decode(content)
        } catch {
            throw TernError(
                .schemaMismatch,
                "The store's model cache (Z_MODELCACHE) cannot be decoded (\(error)); "
                    + "open the store with its model.", path: path, underlyingError: error)
        }
    }

    /// The compressed model archive to record in a new store's `Z_MODELCACHE`, when one can be made.
    static func encodedModelCache(_ model: ManagedObjectModel) -> Data? {
        // A store without a cache is still a valid store (Core Data wrote none before 2011).
        try? ModelCache.encode(model)
    }
}
