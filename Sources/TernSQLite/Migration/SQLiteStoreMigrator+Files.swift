import Foundation
import TernCore
import TernRelational

extension SQLiteStoreMigrator {
    // MARK: - Temporary files

    /// Removes the temporary files an interrupted migration of a store left beside it.
    ///
    /// - Parameter store: The store file.
    /// - Returns: The names of the files removed.
    static func removeLeftovers(of store: URL) throws -> [String] {
        let folder = store.deletingLastPathComponent()
        let prefix = temporaryPrefix(for: store)
        let names = (try? FileManager.default.contentsOfDirectory(atPath: folder.path)) ?? []
        var removed: [String] = []
        for name in names.sorted() where name.hasPrefix(prefix) {
            try FileManager.default.removeItem(at: folder.appendingPathComponent(name))
            removed.append(name)
        }
        return removed
    }

    /// Removes a store file and its SQLite sidecars, ignoring the ones that do not exist.
    static func removeStoreFiles(_ store: URL) {
        for suffix in ["", "-journal", "-wal", "-shm"] {
            try? FileManager.default.removeItem(atPath: store.path + suffix)
        }
    }

    // MARK: - Swapping the migrated store in

    /// Puts a complete, durable migrated file in place of the store, or at a destination.
    ///
    /// In place, the source's write-ahead log is checkpointed first (TRUNCATE, then the connection
    /// closes, which removes `-wal` and `-shm`), so that no frame of the old store can ever be
    /// applied to the new file; then `rename(2)` replaces the store atomically and the folder is
    /// synced. A crash before the rename leaves the old store, after it the new one.
    ///
    /// - Parameters:
    ///   - store: The store file.
    ///   - migrated: The migrated file, in the store's folder.
    ///   - destination: Where the migrated store goes instead, if anywhere.
    static func replace(_ store: URL, with migrated: URL, destination: URL?) throws {
        if let destination {
            guard !FileManager.default.fileExists(atPath: destination.path) else {
                throw TernError(
                    .ioFailure, "A file already exists at the destination; choose a new path or remove it.",
                    path: destination.path)
            }
            // Same file system: an atomic rename; elsewhere a copy.
            if FileSystem.isSameVolume(
                migrated.deletingLastPathComponent().path, destination.deletingLastPathComponent().path)
            {
                try FileSystem.rename(
                    migrated.path, to: destination.path, message: "The migrated store cannot be moved")
            } else {
                try FileManager.default.moveItem(at: migrated, to: destination)
            }
            try FileSystem.synchronizeDirectory(atPath: destination.deletingLastPathComponent().path)
            return
        }
        if FileManager.default.fileExists(atPath: store.path + "-wal") {
            let connection = try Connection(path: store.path, configuration: SQLiteConfiguration(journalMode: .wal))
            try connection.executeOnce("PRAGMA wal_checkpoint(TRUNCATE)")
        }
        try FileSystem.rename(
            migrated.path, to: store.path,
            message: "The migrated store cannot replace the old one; the old store is unchanged")
        do {
            try FileSystem.synchronizeDirectory(atPath: store.deletingLastPathComponent().path)
        } catch {
            throw TernError(
                .ioFailure,
                "The migrated store replaced the old one, but the folder could not be flushed to disk (\(error.message)); "
                    + "a power cut before the disk catches up could bring the old store back", path: store.path,
                underlyingError: error)
        }
        // Both are empty or absent after the checkpoint; an empty log carries nothing into the new file.
        for suffix in ["-wal", "-shm"] { try? FileManager.default.removeItem(atPath: store.path + suffix) }
    }

    /// Copies a store that needs no migration to a destination, as one consistent file.
    static func copyStore(_ store: URL, to destination: URL) throws {
        guard !FileManager.default.fileExists(atPath: destination.path) else {
            throw TernError(
                .ioFailure, "A file already exists at the destination; choose a new path or remove it.",
                path: destination.path)
        }
        let connection = try Connection(path: store.path, configuration: .readOnly)
        try connection.executeOnce("VACUUM INTO \(destination.path)")
        try FileSystem.synchronizeFile(atPath: destination.path)
    }
}
