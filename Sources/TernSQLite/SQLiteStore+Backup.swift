internal import CSQLite
public import Foundation
import TernRelational

extension SQLiteStore {
    // MARK: - Copying a store file

    /// Copies a SQLite store file with SQLite's online backup API, so the copy is consistent
    /// even while other connections have the source open and keep writing into it.
    ///
    /// The copy holds every transaction committed before the backup's last step, including
    /// those still in the source's `-wal` file, which a plain file copy would miss. The
    /// destination's old contents are replaced, through its own journal, so connections that
    /// have it open see the new contents; a new destination takes the source's journal mode, an
    /// existing one keeps its own. The `_SUPPORT` folder is not copied here (see TernStores).
    ///
    /// - Parameters:
    ///   - source: The store to copy; it may be open elsewhere.
    ///   - destination: Where the copy goes; created or overwritten.
    ///   - pagesPerStep: How many pages each backup step copies; other connections may write
    ///     between steps, and SQLite restarts the copy when they do; after three restarts the
    ///     rest is copied in one step, so that steady writes cannot keep the copy from finishing.
    /// - Throws: ``SQLiteError`` when the source is not a Core Data store or a step fails.
    /// - Complexity: O(*n*) in the size of the source; memory stays bounded by `pagesPerStep`.
    public static func backupStore(at source: URL, to destination: URL, pagesPerStep: Int = 1024) throws {
        let from = try openExisting(source, configuration: .readOnly)
        let mode = try from.fetchValue("PRAGMA journal_mode")?.string?.lowercased() ?? "delete"
        let isNew =
            ((try? FileManager.default.attributesOfItem(atPath: destination.path))?[.size] as? NSNumber)?
            .intValue ?? 0 == 0
        if isNew {
            // A journal left beside a missing file would be replayed into the new copy.
            for suffix in ["-wal", "-shm", "-journal"] {
                try? FileManager.default.removeItem(atPath: destination.path + suffix)
            }
        }
        // A new copy is made in rollback mode, where SQLite accepts any page size, then switched
        // to the source's mode. An existing destination keeps its mode: other connections may
        // have it open, and they read the new pages through its journal.
        let existingMode = isNew ? .delete : try journalMode(ofStoreAt: destination)
        let to = try Connection(path: destination.path, configuration: SQLiteConfiguration(journalMode: existingMode))
        try to.copy(from: from, pagesPerStep: pagesPerStep)
        let target = SQLiteConfiguration.JournalMode(rawValue: mode) ?? .delete
        if isNew, target != .delete {
            try to.executeOnce(SQL(unsafeSQL: "PRAGMA journal_mode = \(target.rawValue.uppercased())"))
        }
        try FileSystem.synchronizeDirectory(atPath: destination.deletingLastPathComponent().path)
    }
}

extension Connection {
    /// How many times a step-by-step copy may start again, because another connection wrote the
    /// source, before the rest is copied in one step.
    fileprivate static let restartsBeforeOneStep = 3

    /// Copies another connection's main database into this one's, step by step (in one step
    /// once writes by other connections have restarted it ``restartsBeforeOneStep`` times).
    fileprivate func copy(from source: Connection, pagesPerStep: Int) throws(SQLiteError) {
        guard let backup = sqlite3_backup_init(handle, "main", source.handle, "main") else {
            throw SQLiteError(sqliteCode: sqlite3_errcode(handle), database: handle, sql: nil, path: path)
        }
        var code = SQLITE_OK
        var waits = 0
        // A write by another connection between steps restarts the copy. Under steady writes it
        // would restart forever, so after a few restarts the rest is copied in one step, inside
        // one read transaction that writers (in WAL mode) do not disturb.
        var restarts = 0
        var remaining = Int32.max
        repeat {
            let step = restarts < Self.restartsBeforeOneStep ? Int32(clamping: max(1, pagesPerStep)) : -1
            code = sqlite3_backup_step(backup, step)
            // A step that leaves as many pages as the last one, or more, started again.
            let left = sqlite3_backup_remaining(backup)
            if code == SQLITE_OK, left >= remaining { restarts += 1 }
            remaining = left
            if code == SQLITE_BUSY || code == SQLITE_LOCKED {
                // Another connection holds a lock; wait for it, as long as the busy timeout.
                waits += 1
                sqlite3_sleep(5)
            }
        } while code == SQLITE_OK || ((code == SQLITE_BUSY || code == SQLITE_LOCKED) && waits < 2000)
        let finished = sqlite3_backup_finish(backup)
        guard code == SQLITE_DONE, finished == SQLITE_OK else {
            let failure = code == SQLITE_DONE ? finished : code
            throw SQLiteError(sqliteCode: failure, database: handle, sql: nil, path: path)
        }
    }
}
