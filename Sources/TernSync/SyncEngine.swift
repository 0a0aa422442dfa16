import Foundation
public import TernCore
import TernPostgreSQL
public import TernSQLite

/// Syncs a device's store with a PostgreSQL ``SyncServer``: push, then pull (docs/Sync.md).
///
/// The store is any ``/TernCore/SyncableStore``; a ``/TernSQLite/SQLiteStore`` is one when it
/// records history and tracks global identifiers (``storeConfiguration``). Push sends the local
/// history transactions after the last pushed one, except those sync itself wrote (author
/// ``author``), in one server transaction; the first push sends every object as the device's
/// initial state. Pull applies the state of the objects changed on the server after the last
/// pulled sequence number in one local transaction authored ``author``, which also advances the
/// token. Both tokens live in the store (`TERNSYNC_STATE`), so a run killed at any point
/// converges when run again.
///
/// ```swift
/// let store = try SQLiteStore(at: url, model: model, configuration: SyncEngine.storeConfiguration)
/// let engine = SyncEngine(store: store, server: try SyncServer(location: "postgresql:///kitchen"))
/// let summary = try await engine.sync()
/// print(summary)   // pushed 1 transaction (3 changes); pulled 12 objects (12 inserted, 0 updated, 0 deleted)
/// ```
public struct SyncEngine: Sendable {
    /// The author of the transactions sync writes into device stores; push skips them.
    public static let author = "tern.sync"

    /// A store configuration fit for sync: history and global identifiers on.
    public static var storeConfiguration: SQLiteConfiguration {
        var configuration = SQLiteConfiguration()
        configuration.recordsHistory = true
        configuration.tracksGlobalIdentifiers = true
        return configuration
    }

    /// The device store.
    public let store: any SyncableStore
    /// The server.
    public let server: SyncServer
    /// The model digests (`versionHashesDigest`) whose changes this device can apply: its
    /// store's model and the older versions it was given.
    public let knownModelDigests: Set<String>
    /// Decides properties two devices wrote concurrently (by default the later write in server
    /// order wins).
    public let conflictResolver: SyncConflictResolver
    /// How many objects (snapshot pushes, pulls), local transactions or changes (pushes; a larger
    /// transaction travels in parts) travel in one server round trip: memory stays bounded by it.
    public let pageSize: Int

    /// Creates an engine.
    ///
    /// - Parameters:
    ///   - store: The device store (history and global identifiers on), such as a SQLite store
    ///     opened with ``storeConfiguration``.
    ///   - server: The server.
    ///   - olderModels: Older versions of the store's model whose changes the device can apply
    ///     too (properties it lacks are skipped).
    ///   - conflictResolver: Decides concurrent writes of a property; later write wins by default.
    ///   - pageSize: Objects or transactions per page (at least 1); 500 by default.
    public init(
        store: some SyncableStore, server: SyncServer, olderModels: [ManagedObjectModel] = [],
        conflictResolver: SyncConflictResolver = .laterWriteWins, pageSize: Int = 500
    ) {
        self.store = store
        self.server = server
        self.knownModelDigests = Set([store.model.versionHashesDigest] + olderModels.map(\.versionHashesDigest))
        self.conflictResolver = conflictResolver
        self.pageSize = max(1, pageSize)
    }

    /// Pushes, then pulls.
    ///
    /// - Returns: What changed on both sides.
    /// - Throws: ``SyncError`` when the store is not set up for sync or the server holds changes
    ///   from a model version this device does not know (nothing is pulled then);
    ///   `PostgreSQLError` or `SQLiteError` when either side fails. Running it again after any
    ///   failure converges.
    /// - Complexity: O(*c* + *o*) for *c* local changes and *o* changed server objects.
    public func sync() async throws -> SyncSummary {
        var summary = try await push()
        summary.add(try await pull())
        return summary
    }

    // MARK: - Non public

    /// State keys in the store.
    enum StateKey {
        /// This device's identifier.
        static let device = "device"
        /// The last local history transaction pushed.
        static let pushed = "pushed"
        /// The history token a snapshot push started at.
        static let snapshot = "snapshot"
        /// How far a snapshot push got: `<page>/<entity>/<phase>/<last identifier>`.
        static let snapshotCursor = "snapshotCursor"
        /// Set (to the snapshot's number) when the device must push a snapshot again: after a
        /// migration (`SQLiteStore` writes it).
        static let resnapshot = SQLiteStore.resnapshotStateKey
        /// The pull cursor (`SyncPullCursor`).
        static let pulled = "pulled"
        /// References to objects not pulled yet: `pending/<object>/<property>` → identifiers.
        static let pendingPrefix = "pending/"
        /// Set while a resync runs: the pull that finishes it deletes what the server lacks.
        static let resyncing = "resyncing"
    }

    /// The device's identifier, made on first use.
    func deviceIdentifier() async throws -> UUID {
        if let text = try await store.syncState(forKey: StateKey.device), let device = UUID(uuidString: text) {
            return device
        }
        let device = UUID()
        try await store.setSyncState([StateKey.device: device.uuidString])
        return device
    }

    /// Throws unless the store is set up for sync.
    func requireSyncStore() async throws {
        guard store.recordsHistory, store.tracksGlobalIdentifiers else {
            throw SyncError(
                .storeNotSynced,
                "The store does not record history and track global identifiers; open it with "
                    + "SyncEngine.storeConfiguration.")
        }
    }
}

/// What a sync did.
public struct SyncSummary: Sendable, Hashable, CustomStringConvertible {
    /// Local transactions the server recorded.
    public var pushedTransactions = 0
    /// Changes in them.
    public var pushedChanges = 0
    /// Pushed inserts the server merged into an object with the same key.
    public var mergedOnServer = 0
    /// Server objects pulled.
    public var pulledObjects = 0
    /// Objects inserted locally by the pull.
    public var inserted = 0
    /// Objects updated locally by the pull.
    public var updated = 0
    /// Objects deleted locally by the pull.
    public var deleted = 0
    /// Local objects merged into the server's object with the same key.
    public var mergedLocally = 0

    /// Creates an empty summary.
    public init() {}

    /// Adds another summary's pull counts (a sync is a push and a pull).
    ///
    /// - Parameter pulled: The pull's summary.
    public mutating func add(_ pulled: SyncSummary) {
        pulledObjects += pulled.pulledObjects
        inserted += pulled.inserted
        updated += pulled.updated
        deleted += pulled.deleted
        mergedLocally += pulled.mergedLocally
    }

    /// Counts what the server recorded of a push.
    mutating func addPushed(_ result: SyncPushResult) {
        pushedTransactions += result.transactions
        pushedChanges += result.changes
        mergedOnServer += result.merged
    }

    /// One line: what was pushed and pulled.
    public var description: String {
        "pushed \(pushedTransactions) transaction\(pushedTransactions == 1 ? "" : "s") (\(pushedChanges) changes, "
            + "\(mergedOnServer) merged by key); pulled \(pulledObjects) object\(pulledObjects == 1 ? "" : "s") "
            + "(\(inserted) inserted, \(updated) updated, \(deleted) deleted, \(mergedLocally) merged)"
    }
}

/// An error of sync.
public struct SyncError: CodedError, Sendable, Hashable {
    /// What kind of failure.
    public struct Code: Hashable, Sendable, CustomStringConvertible {
        /// The code's name.
        public let rawValue: String
        /// Creates a code.
        ///
        /// - Parameter rawValue: Its name.
        public init(_ rawValue: String) { self.rawValue = rawValue }
        /// The code's name.
        public var description: String { rawValue }
        /// The store does not record history or track global identifiers.
        public static let storeNotSynced = Code("storeNotSynced")
        /// The server holds changes from a model version this device does not know.
        public static let unknownModelVersion = Code("unknownModelVersion")
        /// The server purged changes this device has not pulled: call ``SyncEngine/resync()``.
        public static let resyncNeeded = Code("resyncNeeded")
    }

    /// The kind of failure.
    public var code: Code
    /// What went wrong and what to do.
    public var message: String
    /// The error that caused this one, kept as it was thrown; nil when this one is the first.
    public var underlyingError: (any Error)? {
        get { cause?.error }
        set { cause = newValue.map(ErrorCause.init) }
    }
    /// ``underlyingError``, in a form that leaves the error's equality to its code and context.
    private var cause: ErrorCause?

    /// Creates an error.
    ///
    /// - Parameters:
    ///   - code: The kind.
    ///   - message: What went wrong and what to do.
    ///   - underlyingError: The error that caused this one.
    public init(_ code: Code, _ message: String, underlyingError: (any Error)? = nil) {
        (self.code, self.message) = (code, message)
        self.underlyingError = underlyingError
    }

    /// The message.
    public var description: String { message }
}
