public import Foundation
import Synchronization
public import TernCore
package import TernRelational

/// A Core Data SQLite store: the file Core Data's `NSSQLiteStoreType` writes, read and written
/// in Core Data's own layout (`Z_PRIMARYKEY`, `Z_METADATA`, `Z_MODELCACHE`, one table per
/// inheritance root).
///
/// A store owns one SQLite connection and serializes every use of it: it is an actor.
///
/// ```swift
/// let metadata = try SQLiteStore.metadata(at: url)       // without opening the store
/// let store = try SQLiteStore(at: url, model: model)     // creates the store if it is missing
/// print(try await store.metadata().uuid)
/// ```
///
/// ## Topics
/// - ``metadata(at:)``
/// - ``setMetadata(_:at:)``
/// - ``SQLiteConfiguration``
/// - ``SQLiteError``
public actor SQLiteStore {
    /// The store file.
    public nonisolated let url: URL
    /// How the store was opened.
    public nonisolated let configuration: SQLiteConfiguration
    /// The model the store's tables are mapped with.
    public nonisolated let model: ManagedObjectModel
    /// How the model's entities map onto the store's tables.
    package nonisolated let schema: StoreSchema
    /// The connection; only this actor uses it.
    let connection: Connection
    /// The files of binary values stored outside the store.
    let externalData: ExternalDataStore
    /// The external data files written by the save in progress, removed if it fails.
    var filesOfPendingSave: [String] = []
    /// While ``inSyncTransaction(_:)`` runs: the external data files its saves replaced (removed
    /// once it commits) and wrote (removed if it rolls back); nil otherwise.
    var filesOfSyncTransaction: (replaced: [String], written: [String])?
    /// The store's UUID when it was opened (its metadata's `uuid`, `Z_UUID`).
    public nonisolated let identifier: String
    /// The store's metadata, as last read or written.
    var currentMetadata: StoreMetadata
    /// How each entity's rows are inserted, made on first use (see `insertPlan(forEntity:)`).
    var insertPlans: [String: InsertPlan] = [:]
    /// How to read each concrete entity's rows, by entity number, made on first use (see `rowPlan(number:)`).
    var rowPlans: [Int: RowPlan] = [:]
    /// Whether the store has Core Data's persistent-history tables, so that every save records a
    /// transaction: opened with ``SQLiteConfiguration/recordsHistory``, or written with history on
    /// before (by Tern or by Core Data).
    public nonisolated let recordsHistory: Bool
    /// Whether every object has a global identity (a UUID kept in `TERNSYNC_OBJECT`, for sync):
    /// opened with ``SQLiteConfiguration/tracksGlobalIdentifiers``, or tracked before.
    public nonisolated let tracksGlobalIdentifiers: Bool
    /// A second, read-only connection, opened on first use, for reads that cannot wait for the
    /// actor (``rowsSynchronously(for:)``); the lock keeps it to one thread at a time.
    let synchronousReader = Mutex<Connection?>(nil)
    /// The values read as nil under ``SQLiteConfiguration/UnreadableValues/readAsNil``; reads
    /// of any thread add to it.
    let unreadableValues = Mutex(UnreadableValueLog())

    /// Opens a store, creating it for the model when no file exists yet.
    ///
    /// An existing store is mapped with its `Z_PRIMARYKEY` entity numbers and its actual
    /// columns. Without a model, the store's own model cache (`Z_MODELCACHE`) is used.
    ///
    /// - Parameters:
    ///   - url: The store file.
    ///   - model: The model; required to create a store. For an existing store its version
    ///     hashes must match the store's metadata.
    ///   - configuration: How to open it; read-write with write-ahead logging by default.
    /// - Throws: ``SQLiteError`` `notADatabase` when the file is not a SQLite database;
    ///   ``/TernCore/TernError`` `notACoreDataStore` when it is not a Core Data store,
    ///   `objectNotFound` when there is no file and no model to create one, `schemaMismatch` when
    ///   the model does not match the store.
    public init(
        at url: URL, model: ManagedObjectModel? = nil, configuration: SQLiteConfiguration = SQLiteConfiguration()
    ) throws {
        self.url = url
        self.configuration = configuration
        self.externalData = ExternalDataStore(
            storeURL: url, threshold: configuration.externalStorageThreshold, isDurable: true)
        let isNew =
            !configuration.isReadOnly
            && ((try? FileManager.default.attributesOfItem(atPath: url.path))?[.size]
                as? NSNumber)?.intValue ?? 0 == 0
        if isNew {
            guard let model else {
                throw TernError(
                    .objectNotFound, "No store exists at this path; pass a model to create one.", path: url.path)
            }
            let schema = try StoreSchema(model: model, numbers: StoreSchema.assignedNumbers(for: model))
            let metadata = StoreSchema.newMetadata(for: model, autoVacuum: configuration.autoVacuum)
            let connection = try Connection(path: url.path, configuration: configuration)
            try connection.createStore(schema: schema, metadata: metadata, modelCache: Self.encodedModelCache(model))
            self.recordsHistory = try Self.prepareHistory(connection, model: model, configuration: configuration)
            self.tracksGlobalIdentifiers = try Self.prepareGlobalIdentifiers(
                connection, schema: schema, configuration: configuration)
            if configuration.fullSync {
                try FileSystem.synchronizeDirectory(atPath: url.deletingLastPathComponent().path)
            }
            (self.model, self.schema, self.connection, self.currentMetadata) = (model, schema, connection, metadata)
            self.identifier = metadata.uuid
        } else {
            let connection = try Self.openExisting(url, configuration: configuration)
            let metadata = try connection.readMetadata()
            let storeModel = try model ?? connection.readModelCache()
            if model != nil, !storeModel.isCompatible(with: metadata) {
                throw TernError(
                    .schemaMismatch,
                    "The model's entity version hashes differ from the store's; migrate the store to this model first.",
                    path: url.path)
            }
            self.recordsHistory = try Self.prepareHistory(connection, model: storeModel, configuration: configuration)
            let schema = try connection.readSchema(model: storeModel)
            self.tracksGlobalIdentifiers = try Self.prepareGlobalIdentifiers(
                connection, schema: schema, configuration: configuration)
            (self.model, self.schema, self.connection, self.currentMetadata) = (
                storeModel, schema, connection, metadata
            )
            self.identifier = metadata.uuid
        }
    }

    // MARK: - Metadata without opening the store

    /// Reads a store's metadata without loading any data, and without writing anything beside it.
    ///
    /// - Parameter url: The store file.
    /// - Returns: The metadata: UUID, version hashes, identifiers and the application's keys.
    /// - Throws: ``SQLiteError`` with code `notADatabase` for a file that is not SQLite;
    ///   ``/TernCore/TernError`` with code `objectNotFound` when there is no file,
    ///   `notACoreDataStore` for a database without `Z_METADATA`, `invalidMetadata` for a
    ///   malformed dictionary. The error carries the path.
    public static func metadata(at url: URL) throws -> StoreMetadata {
        let connection = try openExisting(url, configuration: .readOnly)
        return try connection.readMetadata()
    }

    /// Rolls back what a writer that crashed or was killed left in a store: a hot rollback
    /// journal (`-journal`), or a write-ahead log whose index (`-shm`) must be rebuilt. This is
    /// what SQLite does on the next read-write open anyway; read-only opens refuse such a store
    /// with `needsRecovery` instead, since they never change their input. Operations that write
    /// the store (migrations, metadata changes, the container) call it first.
    ///
    /// ```swift
    /// if try SQLiteStore.recoverInterruptedWrite(at: url) { print("rolled back an unfinished transaction") }
    /// ```
    ///
    /// - Parameter url: The store file.
    /// - Returns: Whether there was something to roll back.
    /// - Throws: ``SQLiteError`` with code `needsRecovery` when the store still needs it
    ///   afterwards (its folder is read-only: copy the store with its `-journal`/`-wal` files to a
    ///   writable folder), or when the file cannot be opened.
    @discardableResult
    public static func recoverInterruptedWrite(at url: URL) throws -> Bool {
        guard FileManager.default.fileExists(atPath: url.path) else {
            throw TernError(.objectNotFound, "No store exists at this path; check the path.", path: url.path)
        }
        return try Connection.recoverInterruptedWrite(atPath: url.path)
    }

    /// Replaces a store's metadata, keeping the keys Tern does not interpret.
    ///
    /// - Parameters:
    ///   - metadata: The metadata to write; its `applicationKeys` are written as they are.
    ///   - url: The store file.
    /// - Throws: ``/TernCore/TernError`` as ``metadata(at:)`` does, or ``SQLiteError`` when
    ///   SQLite cannot write the store.
    public static func setMetadata(_ metadata: StoreMetadata, at url: URL) throws {
        try recoverInterruptedWrite(at: url)
        var configuration = SQLiteConfiguration()
        configuration.journalMode = try journalMode(ofStoreAt: url)
        let connection = try openExisting(url, configuration: configuration)
        try connection.checkCoreDataLayout()
        try connection.writeMetadata(metadata)
    }

    // MARK: - Changing metadata

    /// Replaces this store's metadata, keeping the keys Tern does not interpret.
    ///
    /// - Parameter metadata: The new metadata.
    /// - Throws: ``/TernCore/TernError`` `unwritableStore` when the store is read-only,
    ///   ``SQLiteError`` when the write fails.
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
        if configuration.isReadOnly {
            throw TernError(
                .unwritableStore, "The store was opened read-only; open it read-write to change it.", path: url.path)
        }
    }

    /// Creates or completes the history tables when the store records history, and tells whether it does.
    static func prepareHistory(
        _ connection: Connection, model: ManagedObjectModel, configuration: SQLiteConfiguration
    ) throws(SQLiteError) -> Bool {
        let hasTables = try connection.hasHistoryTables()
        if !configuration.isReadOnly, configuration.recordsHistory || hasTables {
            try connection.prepareHistoryTables(for: model)
            return true
        }
        return hasTables
    }

    /// A store's metadata, read after rolling back what a crashed writer left (as
    /// ``recoverInterruptedWrite(at:)``), on one connection when there is nothing to roll back:
    /// what a writer of the store reads before it plans its work.
    ///
    /// - Parameter url: The store file.
    /// - Returns: The metadata.
    /// - Throws: ``SQLiteError`` as ``metadata(at:)`` and ``recoverInterruptedWrite(at:)`` do.
    package static func metadataRecoveringInterruptedWrite(at url: URL) throws -> StoreMetadata {
        do {
            return try metadata(at: url)
        } catch let error as SQLiteError where error.code == .needsRecovery {
            try recoverInterruptedWrite(at: url)
            return try metadata(at: url)
        }
    }

    /// Opens a connection to a file that must already exist.
    static func openExisting(_ url: URL, configuration: SQLiteConfiguration) throws -> Connection {
        guard FileManager.default.fileExists(atPath: url.path) else {
            throw TernError(.objectNotFound, "No store exists at this path; check the path.", path: url.path)
        }
        let connection = try Connection(path: url.path, configuration: configuration)
        try connection.checkCoreDataLayout()
        return connection
    }

    /// The journal mode a store file already uses, so that a short write does not convert it.
    static func journalMode(ofStoreAt url: URL) throws -> SQLiteConfiguration.JournalMode {
        let connection = try openExisting(url, configuration: .readOnly)
        // A closed write-ahead-log store is opened immutable (see Connection), and then SQLite
        // reports "delete"; the file header says what the store is.
        if Connection.isWriteAheadLogFile(atPath: url.path) { return .wal }
        let mode = try connection.fetchValue("PRAGMA journal_mode")?.string?.lowercased() ?? "delete"
        return SQLiteConfiguration.JournalMode(rawValue: mode) ?? .delete
    }
}
