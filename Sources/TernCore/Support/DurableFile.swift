package import Foundation

#if canImport(Glibc)
import Glibc
#elseif canImport(Musl)
import Musl
#elseif canImport(Darwin)
import Darwin
#endif

/// Replaces files so that a crash leaves either the old or the new file, never a mix.
///
/// ``write(_:to:)`` writes a temporary file beside the target (same directory, so the rename
/// stays within one file system), flushes it to disk, renames it over the target, then
/// flushes the directory so the rename itself survives a power cut. A crash before the rename
/// leaves a stray temporary file, which ``removeTemporaryFiles(for:)`` deletes.
package enum DurableFile {
    /// The start of the names of the temporary files written for `url`: `.<name>.tern-tmp-`.
    ///
    /// - Parameter url: The target file.
    package static func temporaryPrefix(for url: URL) -> String {
        "." + url.lastPathComponent + ".tern-tmp-"
    }

    /// Durably replaces (or creates) a file with new contents.
    ///
    /// The new file keeps the permissions of the one it replaces.
    ///
    /// - Parameters:
    ///   - data: The new contents.
    ///   - url: The target file.
    ///   - replaced: Called once the new file has replaced the old one, before the folder is
    ///     flushed: from then on the new contents are what a reader sees, even if flushing the
    ///     folder fails.
    /// - Throws: ``TernError/Code/ioFailure`` when a step fails; before the rename, the target is
    ///   then untouched and the temporary file removed.
    /// - Complexity: O(*n*) in the size of `data`.
    package static func write(_ data: Data, to url: URL, replaced: () -> Void = {}) throws(TernError) {
        let (descriptor, temporary) = try createTemporaryFile(for: url)
        var renamed = false
        defer {
            if !renamed { unlink(temporary.path) }
        }
        do {
            defer { close(descriptor) }
            var existing = stat()
            if stat(url.path, &existing) == 0 {
                _ = fchmod(descriptor, existing.st_mode & 0o7777)
            }
            var writeError: TernError?
            data.withUnsafeBytes { buffer in
                do throws(TernError) {
                    try writeAll(buffer, to: descriptor, temporary)
                } catch {
                    writeError = error
                }
            }
            if let writeError { throw writeError }
            try synchronize(descriptor, temporary)
        }
        try rename(temporary, to: url)
        renamed = true
        replaced()
        try synchronizeDirectory(of: url)
    }

    /// Creates an empty temporary file beside `url`, named with ``temporaryPrefix(for:)``, for
    /// a writer that streams a file's contents before moving it into place.
    ///
    /// - Parameter url: The file the temporary one will become.
    /// - Returns: The file's descriptor, open for writing (the caller closes it), and its location.
    /// - Throws: ``TernError/Code/ioFailure`` when the file cannot be created.
    package static func createTemporaryFile(for url: URL) throws(TernError) -> (descriptor: Int32, url: URL) {
        let temporary = url.deletingLastPathComponent()
            .appendingPathComponent(temporaryPrefix(for: url) + UUID().uuidString)
        let descriptor = open(temporary.path, O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, 0o644)
        guard descriptor >= 0 else { throw failure("create the temporary file", temporary) }
        return (descriptor, temporary)
    }

    /// Writes every byte of `buffer` to a file, retrying short and interrupted writes, through
    /// the task's ``FileOperationsScope``.
    ///
    /// - Parameters:
    ///   - buffer: The bytes.
    ///   - descriptor: The file, open for writing.
    ///   - url: The file's location, for the error.
    /// - Throws: ``TernError/Code/ioFailure`` when a write fails.
    /// - Complexity: O(*n*) in the number of bytes.
    package static func writeAll(_ buffer: UnsafeRawBufferPointer, to descriptor: Int32, _ url: URL) throws(TernError) {
        let files = FileOperationsScope.current
        var offset = 0
        while offset < buffer.count {
            guard let base = buffer.baseAddress else { break }
            let written = files.write(descriptor, base + offset, buffer.count - offset)
            if written < 0 {
                if errno == EINTR { continue }
                throw failure("write the temporary file", url)
            }
            offset += written
        }
    }

    /// Flushes a file to disk through the task's ``FileOperationsScope``.
    ///
    /// - Throws: ``TernError/Code/ioFailure`` when the flush fails.
    package static func synchronize(_ descriptor: Int32, _ url: URL) throws(TernError) {
        guard FileOperationsScope.current.synchronize(descriptor) == 0 else {
            throw failure("flush the temporary file to disk", url)
        }
    }

    /// Renames a complete, flushed temporary file over `url`, through the task's
    /// ``FileOperationsScope``; ``synchronizeDirectory(of:)`` then makes the rename durable.
    ///
    /// - Throws: ``TernError/Code/ioFailure`` when the rename fails.
    package static func rename(_ temporary: URL, to url: URL) throws(TernError) {
        guard FileOperationsScope.current.rename(temporary.path, url.path) == 0 else {
            throw failure("rename the temporary file over", url)
        }
    }

    /// Flushes the folder that holds `url` to disk, so that a rename into it survives a power cut.
    ///
    /// - Throws: ``TernError/Code/ioFailure`` when the folder cannot be opened or flushed.
    package static func synchronizeDirectory(of url: URL) throws(TernError) {
        let directory = url.deletingLastPathComponent()
        let descriptor = open(directory.path, O_RDONLY | O_CLOEXEC)
        guard descriptor >= 0 else { throw failure("open the directory to flush it", directory) }
        defer { close(descriptor) }
        guard FileOperationsScope.current.synchronize(descriptor) == 0 else {
            throw failure("flush the directory to disk", directory)
        }
    }

    /// Deletes the temporary files a crash during ``write(_:to:)`` left beside a file.
    ///
    /// Only files named with ``temporaryPrefix(for:)`` are touched. Do not call it while another
    /// process may be writing the same file.
    ///
    /// - Parameter url: The target file.
    /// - Returns: How many files were removed.
    /// - Complexity: O(*n*) in the number of files in the directory.
    @discardableResult
    package static func removeTemporaryFiles(for url: URL) -> Int {
        let directory = url.deletingLastPathComponent()
        let prefix = temporaryPrefix(for: url)
        let names = (try? FileManager.default.contentsOfDirectory(atPath: directory.path)) ?? []
        var removed = 0
        for name in names where name.hasPrefix(prefix) {
            if unlink(directory.appendingPathComponent(name).path) == 0 { removed += 1 }
        }
        return removed
    }

    // MARK: - Non public

    /// An error for the failed step, with the system's reason.
    private static func failure(_ step: String, _ url: URL) -> TernError {
        let reason = String(cString: strerror(errno))
        return TernError(
            .ioFailure, "could not \(step) (\(reason)); check the folder's permissions and free space", path: url.path)
    }
}
