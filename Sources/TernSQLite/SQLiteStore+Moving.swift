package import Foundation
import TernRelational

extension SQLiteStore {
    // MARK: - Putting a finished store in place

    /// Moves a store file that was written under a temporary name to its final place, so that a
    /// crash leaves either no store there or the complete one.
    ///
    /// What sits in the temporary file's write-ahead log is checkpointed into it first, the file
    /// is flushed to disk, its `_SUPPORT` folder (external data) moved beside the destination,
    /// and `rename(2)` puts it in place; then the folder is flushed. Write the temporary file in
    /// the destination's folder (one file system) and stop writing to it before calling this.
    ///
    /// - Parameters:
    ///   - temporary: The finished store file.
    ///   - destination: Its final place; a file there is replaced.
    /// - Throws: ``SQLiteError`` with code `ioFailure` when a step fails; the destination is then
    ///   untouched unless the rename was done.
    /// - Complexity: O(*n*) in the size of the write-ahead log.
    package static func moveFinishedStore(at temporary: URL, to destination: URL) throws {
        if FileManager.default.fileExists(atPath: temporary.path + "-wal") {
            let connection = try Connection(path: temporary.path, configuration: SQLiteConfiguration(journalMode: .wal))
            try connection.executeOnce("PRAGMA wal_checkpoint(TRUNCATE)")
        }
        try FileSystem.synchronizeFile(atPath: temporary.path)
        let from = ExternalDataStore(storeURL: temporary, threshold: 0, isDurable: false).folder
            .deletingLastPathComponent()
        let to = ExternalDataStore(storeURL: destination, threshold: 0, isDurable: false).folder
            .deletingLastPathComponent()
        if FileManager.default.fileExists(atPath: from.path) {
            try? FileManager.default.removeItem(at: to)
            try FileSystem.rename(
                from.path, to: to.path, message: "The new store's _SUPPORT folder cannot be moved in place")
        }
        try FileSystem.rename(
            temporary.path, to: destination.path,
            message: "The new store cannot be moved in place; check the folder's permissions and free space")
        try FileSystem.synchronizeDirectory(atPath: destination.deletingLastPathComponent().path)
        // Both are empty or absent after the checkpoint.
        for suffix in ["-wal", "-shm"] { try? FileManager.default.removeItem(atPath: temporary.path + suffix) }
    }
}
