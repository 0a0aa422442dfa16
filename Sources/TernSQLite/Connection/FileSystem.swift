#if canImport(Glibc)
internal import Glibc
#elseif canImport(Musl)
internal import Musl
#elseif canImport(Darwin)
internal import Darwin
#endif

/// File-system calls Foundation does not offer.
enum FileSystem {
    /// Flushes a folder's entries to disk, so that files created or renamed in it survive a
    /// power loss (on Linux a file's `fsync` does not cover its name in the folder).
    ///
    /// - Parameter path: The folder.
    /// - Throws: ``SQLiteError`` with code `ioFailure` when the folder cannot be opened or synced.
    static func synchronizeDirectory(atPath path: String) throws(SQLiteError) {
        let descriptor = open(path, O_RDONLY | O_DIRECTORY)
        guard descriptor >= 0 else {
            throw SQLiteError(.ioFailure, "Cannot open the folder to sync it (errno \(errno)).", path: path)
        }
        defer { close(descriptor) }
        guard fsync(descriptor) == 0 else {
            throw SQLiteError(.ioFailure, "Cannot sync the folder (errno \(errno)); check the disk.", path: path)
        }
    }

    /// Flushes a file's contents to disk.
    ///
    /// - Parameter path: The file.
    /// - Throws: ``SQLiteError`` with code `ioFailure` when the file cannot be opened or synced.
    static func synchronizeFile(atPath path: String) throws(SQLiteError) {
        let descriptor = open(path, O_RDONLY)
        guard descriptor >= 0 else {
            throw SQLiteError(.ioFailure, "Cannot open the file to sync it (errno \(errno)).", path: path)
        }
        defer { close(descriptor) }
        guard fsync(descriptor) == 0 else {
            throw SQLiteError(.ioFailure, "Cannot sync the file (errno \(errno)); check the disk.", path: path)
        }
    }
}
