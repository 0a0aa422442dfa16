package import TernCore
import TernRelational

#if canImport(Glibc)
internal import Glibc
#elseif canImport(Musl)
internal import Musl
#elseif canImport(Darwin)
internal import Darwin
#endif

/// File-system calls Foundation does not offer, made through ``TernCore/FileOperationsScope``
/// so that tests can make them fail.
package enum FileSystem {
    /// Flushes a folder's entries to disk, so that files created or renamed in it survive a
    /// power loss (on Linux a file's `fsync` does not cover its name in the folder).
    ///
    /// - Parameter path: The folder.
    /// - Throws: ``/TernCore/TernError`` with code `ioFailure` when the folder cannot be opened or synced.
    package static func synchronizeDirectory(atPath path: String) throws(TernError) {
        let descriptor = open(path, O_RDONLY | O_DIRECTORY)
        guard descriptor >= 0 else {
            throw TernError(.ioFailure, "Cannot open the folder to sync it (errno \(errno)).", path: path)
        }
        defer { close(descriptor) }
        guard FileOperationsScope.current.synchronize(descriptor) == 0 else {
            throw TernError(.ioFailure, "Cannot sync the folder (errno \(errno)); check the disk.", path: path)
        }
    }

    /// Flushes a file's contents to disk.
    ///
    /// - Parameter path: The file.
    /// - Throws: ``/TernCore/TernError`` with code `ioFailure` when the file cannot be opened or synced.
    package static func synchronizeFile(atPath path: String) throws(TernError) {
        let descriptor = open(path, O_RDONLY)
        guard descriptor >= 0 else {
            throw TernError(.ioFailure, "Cannot open the file to sync it (errno \(errno)).", path: path)
        }
        defer { close(descriptor) }
        guard FileOperationsScope.current.synchronize(descriptor) == 0 else {
            throw TernError(.ioFailure, "Cannot sync the file (errno \(errno)); check the disk.", path: path)
        }
    }

    /// Whether two folders are on one file system, so that a rename between them is atomic.
    static func isSameVolume(_ first: String, _ second: String) -> Bool {
        var a = stat()
        var b = stat()
        return stat(first, &a) == 0 && stat(second, &b) == 0 && a.st_dev == b.st_dev
    }

    /// Renames a file or folder with `rename(2)`, replacing what is at the destination atomically.
    ///
    /// - Parameters:
    ///   - source: The file to move.
    ///   - destination: Its new path, in the same file system.
    ///   - message: What failed, for the error; the system's reason is added.
    /// - Throws: ``/TernCore/TernError`` with code `ioFailure` and the destination's path.
    static func rename(_ source: String, to destination: String, message: String) throws(TernError) {
        guard FileOperationsScope.current.rename(source, destination) == 0 else {
            throw TernError(.ioFailure, "\(message) (\(String(cString: strerror(errno))))", path: destination)
        }
    }
}
