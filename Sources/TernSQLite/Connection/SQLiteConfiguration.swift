import TernRelational

/// How a SQLite store is opened: journal, durability, vacuuming and access.
///
/// The defaults are Core Data's: write-ahead logging, incremental auto-vacuum, full synchronous
/// writes.
///
/// ```swift
/// var configuration = SQLiteConfiguration()
/// configuration.journalMode = .delete
/// configuration.fullSync = true
/// let store = try SQLiteStore(at: url, configuration: configuration)
/// ```
public struct SQLiteConfiguration: Sendable, Hashable {
    /// How SQLite keeps a transaction's changes until they are committed (`PRAGMA journal_mode`).
    public enum JournalMode: String, Sendable, Hashable, CaseIterable {
        /// Write-ahead log beside the store (`-wal` and `-shm` files): Core Data's default since iOS 7.
        case wal
        /// A rollback journal deleted at each commit: Core Data's mode before iOS 7.
        case delete
        /// A rollback journal truncated at each commit.
        case truncate
        /// A rollback journal whose header is zeroed at each commit.
        case persist
    }

    /// How hard SQLite waits for data to reach the disk (`PRAGMA synchronous`).
    public enum Synchronous: String, Sendable, Hashable, CaseIterable {
        /// No syncing: fast, and a power loss may corrupt the store.
        case off
        /// Sync at critical moments: with WAL, a power loss may lose the last commits but not corrupt.
        case normal
        /// Sync at every commit.
        case full
    }

    /// How SQLite gives free pages back to the file system (`PRAGMA auto_vacuum`).
    public enum AutoVacuum: Int, Sendable, Hashable, CaseIterable {
        /// Never: the file keeps its size.
        case none = 0
        /// At every commit.
        case full = 1
        /// On request (`PRAGMA incremental_vacuum`): Core Data's `_NSAutoVacuumLevel` "2".
        case incremental = 2
    }

    /// What a read does with a stored value it cannot give: a column the attribute's type
    /// cannot read, or an external data file that is missing.
    public enum UnreadableValues: String, Sendable, Hashable, CaseIterable {
        /// The read fails with ``SQLiteError`` (`invalidValue` or `invalidExternalData`).
        case fail
        /// The value reads as nil and is counted in ``SQLiteStore/unreadableValueLog``: for
        /// reading everything that can be read out of a damaged store or one copied without its
        /// `_SUPPORT` folder. Saving rows read so would write nil over the values.
        case readAsNil
    }

    /// The journal mode. Core Data's default is ``JournalMode/wal``.
    public var journalMode: JournalMode
    /// The synchronous level. The default is ``Synchronous/full``.
    public var synchronous: Synchronous
    /// Whether every commit and every file creation must be durable on Linux: synchronous FULL,
    /// and the folder synced after files are created or renamed in it.
    public var fullSync: Bool
    /// The auto-vacuum level of new stores (it cannot change once tables exist without a vacuum).
    public var autoVacuum: AutoVacuum
    /// Whether the store is opened read-only: nothing is written in the store or beside it.
    public var isReadOnly: Bool
    /// How long a connection waits for another one's lock before failing with `SQLITE_BUSY`.
    public var busyTimeout: Duration
    /// The size from which binary values of attributes that allow external storage are written
    /// to a file beside the store instead of inline.
    public var externalStorageThreshold: Int
    /// Whether every save records a transaction in Core Data's persistent-history tables
    /// (`ATRANSACTION`, `ACHANGE`, `ATRANSACTIONSTRING`): Core Data's
    /// `NSPersistentHistoryTrackingKey`. Off by default.
    ///
    /// Turning it on creates the tables when the store lacks them. A store that already has them
    /// keeps recording even when opened with this off, as Core Data refuses to write to such a
    /// store without tracking: a gap in the history would go unnoticed by its readers.
    public var recordsHistory: Bool

    /// Whether every object gets a global identity, a UUID kept in a table of Tern's own
    /// (`TERNSYNC_OBJECT`, which Core Data ignores) and the same on every device that syncs
    /// (see docs/Sync.md). Objects that exist when it is turned on get one then. Off by default;
    /// a store that already tracks identities keeps tracking them.
    public var tracksGlobalIdentifiers: Bool

    /// What a read does with a stored value it cannot give. ``UnreadableValues/fail`` by default.
    public var unreadableValues: UnreadableValues

    /// Creates a configuration with Core Data's defaults.
    ///
    /// - Parameters:
    ///   - journalMode: The journal mode; write-ahead logging by default.
    ///   - isReadOnly: Whether nothing may be written.
    public init(journalMode: JournalMode = .wal, isReadOnly: Bool = false) {
        self.journalMode = journalMode
        self.synchronous = .full
        self.fullSync = false
        self.autoVacuum = .incremental
        self.isReadOnly = isReadOnly
        self.busyTimeout = .seconds(10)
        self.externalStorageThreshold = 100 * 1024
        self.recordsHistory = false
        self.tracksGlobalIdentifiers = false
        self.unreadableValues = .fail
    }

    /// A read-only configuration.
    public static var readOnly: SQLiteConfiguration { SQLiteConfiguration(isReadOnly: true) }

    /// The synchronous level that is applied: FULL whenever ``fullSync`` is on.
    var effectiveSynchronous: Synchronous { fullSync ? .full : synchronous }
}
