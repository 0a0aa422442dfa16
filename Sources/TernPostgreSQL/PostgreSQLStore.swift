public import Foundation
import Synchronization
public import TernCore
import TernFormats
package import TernRelational

/// A store in a PostgreSQL database, in the layout of Core Data's SQLite store: `Z_PRIMARYKEY`,
/// `Z_METADATA`, `Z_MODELCACHE` and one `Z<ROOT>` table per inheritance root with `Z_PK`,
/// `Z_ENT` and `Z_OPT`, mapped to PostgreSQL types (see `docs/PostgreSQLStore.md`).
///
/// Several processes, on several machines, can use one store at once: primary keys come from
/// `Z_MAX` in blocks under row locks, and saves check each row's `Z_OPT` under a row lock, so
/// the merge policies of ``/TernCore/ObjectContext`` work between processes. A store owns one connection
/// and serializes every use of it: it is an actor.
///
/// ```swift
/// let store = try PostgreSQLStore(url: "postgres://app@db.example.com/recipes?schema=kitchen", model: model)
/// let coordinator = PersistentStoreCoordinator(model: model)
/// try await coordinator.addStore(store)
/// ```
///
/// ## Topics
/// - ``PostgreSQLLocation``
/// - ``PostgreSQLError``
public actor PostgreSQLStore {
    /// Where the store lives.
    public nonisolated let postgreSQLLocation: PostgreSQLLocation
    /// The model the store's tables are mapped with.
    public nonisolated let model: ManagedObjectModel
    /// Whether saves are refused.
    public nonisolated let isReadOnly: Bool
    /// How the model's entities map onto the store's tables.
    package nonisolated let schema: StoreSchema
    /// The store's UUID (its metadata's `uuid`).
    public nonisolated let identifier: String
    /// The connection; only this actor uses it.
    let connection: Connection
    /// The store's metadata, as last read or written.
    var currentMetadata: StoreMetadata
    /// The text of each entity's INSERT, made on first use.
    var insertTexts: [String: String] = [:]
    /// A second, read-only connection, opened on first use, for reads that cannot wait for the
    /// actor (``rowsSynchronously(for:)``); the lock keeps it to one thread at a time.
    let synchronousReader = Mutex<Connection?>(nil)
    /// The plan for reading each concrete entity's rows, by entity number, made on first use:
    /// behind a lock because synchronous reads use them outside the actor.
    let rowPlans = Mutex<[Int: RowPlan]>([:])

    /// Opens the store at a location, creating it for the model when the schema holds none yet.
    ///
    /// An existing store is mapped with its `Z_PRIMARYKEY` entity numbers and its actual
    /// columns; without a model, the store's own model cache (`Z_MODELCACHE`) is used. Creation
    /// takes a transaction-level advisory lock, so that processes opening a new store at once
    /// create it once.
    ///
    /// - Parameters:
    ///   - url: A connection string: `postgres://user@host:port/database?schema=name` or
    ///     `key=value` pairs (see ``PostgreSQLLocation``).
    ///   - model: The model; required to create a store. For an existing store its version
    ///     hashes must match the store's metadata.
    ///   - readOnly: Whether saves are refused (the connection's transactions are read-only too).
    /// - Throws: ``PostgreSQLError`` with code `connectionFailed` when the server cannot be
    ///   reached; ``/TernCore/TernError`` with code `notACoreDataStore` when no store exists and no
    ///   model is given, `schemaMismatch` when the model does not match the store.
    public init(url: String, model: ManagedObjectModel? = nil, readOnly: Bool = false) throws {
        try self.init(location: try PostgreSQLLocation(url), model: model, readOnly: readOnly)
    }

    /// Opens the store at a location, creating it for the model when the schema holds none yet.
    ///
    /// - Parameters:
    ///   - location: Where the store lives.
    ///   - model: The model; required to create a store.
    ///   - readOnly: Whether saves are refused.
    /// - Throws: As ``init(url:model:readOnly:)``.
    public init(location: PostgreSQLLocation, model: ManagedObjectModel? = nil, readOnly: Bool = false) throws {
        self.postgreSQLLocation = location
        self.isReadOnly = readOnly
        let connection = try Connection(location)
        if !(try connection.hasCoreDataLayout()) {
            guard let model, !readOnly else {
                throw TernError(
                    .notACoreDataStore,
                    "\(location.description) holds no Core Data store (no Z_METADATA table); pass a model to create one."
                )
            }
            try connection.createStoreOnce(model: model)
        }
        let metadata = try connection.readMetadata()
        let storeModel = try model ?? connection.readModelCache()
        if model != nil, !storeModel.isCompatible(with: metadata) {
            throw TernError(
                .schemaMismatch,
                "The model's entity version hashes differ from the store's at \(location.description); "
                    + "migrate the store to this model first.")
        }
        self.schema = try connection.readSchema(model: storeModel)
        if readOnly { try connection.execute("SET default_transaction_read_only TO on") }
        (self.model, self.connection, self.currentMetadata, self.identifier) = (
            storeModel, connection, metadata, metadata.uuid
        )
    }

    // MARK: - Metadata without opening the store

    /// Reads a store's metadata without reading its model or rows.
    ///
    /// - Parameter url: The store's connection string.
    /// - Returns: The metadata.
    /// - Throws: ``/TernCore/TernError`` with code `notACoreDataStore` when the schema holds no
    ///   store, `invalidMetadata` when its metadata is malformed; ``PostgreSQLError`` when the
    ///   server cannot be reached.
    public static func metadata(at url: String) throws -> StoreMetadata {
        let connection = try Connection(try PostgreSQLLocation(url))
        return try connection.readMetadata()
    }

    /// Replaces a store's metadata, keeping the keys Tern does not interpret.
    ///
    /// - Parameters:
    ///   - metadata: The metadata to write.
    ///   - url: The store's connection string.
    /// - Throws: As ``metadata(at:)``, or ``PostgreSQLError`` when the server refuses the write.
    public static func setMetadata(_ metadata: StoreMetadata, at url: String) throws {
        let connection = try Connection(try PostgreSQLLocation(url))
        _ = try connection.readMetadata()
        try connection.writeMetadata(metadata)
    }

    /// Drops the store's tables: `Z_PRIMARYKEY`, `Z_METADATA`, `Z_MODELCACHE` and the tables
    /// of the entities and many-to-many relationships `Z_PRIMARYKEY` lists, and the function of
    /// its derived-count triggers, nothing else; then
    /// the schema named by the location, if it is left empty.
    ///
    /// - Parameter url: The store's connection string.
    /// - Throws: ``PostgreSQLError`` when the server refuses.
    public static func destroy(at url: String) throws {
        let location = try PostgreSQLLocation(url)
        let connection = try Connection(location)
        let owned = try connection.ownedStoreTables()
        guard !owned.isEmpty else { return }
        try connection.inTransaction {
            for table in owned { try connection.execute("DROP TABLE \(.identifier(table))") }
            try connection.execute(#"DROP FUNCTION IF EXISTS "Z_DA_COUNT"()"#)
        }
        if let schema = location.schema, try connection.storeTables().isEmpty {
            // Other objects (views, sequences…) keep the schema: it is then left in place.
            try? connection.execute("DROP SCHEMA IF EXISTS \(.identifier(schema))")
        }
    }

    // MARK: - Changing metadata

    /// Replaces this store's metadata, keeping the keys Tern does not interpret.
    ///
    /// - Parameter metadata: The new metadata.
    /// - Throws: ``/TernCore/TernError`` `unwritableStore` when the store is read-only,
    ///   ``PostgreSQLError`` when the write fails.
    public func setMetadata(_ metadata: StoreMetadata) throws {
        try requireWritable()
        try connection.writeMetadata(metadata)
        currentMetadata = metadata
    }

    /// The store's metadata, as last read or written.
    public func metadata() -> StoreMetadata {
        currentMetadata
    }

    // MARK: - Non public

    /// Throws when the store was opened read-only.
    func requireWritable() throws(TernError) {
        if isReadOnly {
            throw TernError(.unwritableStore, "The store was opened read-only; open it read-write to change it.")
        }
    }

    /// ``TernCore/StoreKind/postgreSQL``.
    public nonisolated var kind: StoreKind { .postgreSQL }
    /// The store has no file.
    public nonisolated var location: URL? { nil }

    /// A comma-separated list of bound integers.
    static func list(_ numbers: [Int]) -> SQL {
        SQL.joined(numbers.map { "\($0)" })
    }
}

extension StoreKind {
    /// A PostgreSQL store (`"PostgreSQL"`).
    public static let postgreSQL = StoreKind("PostgreSQL")
}
