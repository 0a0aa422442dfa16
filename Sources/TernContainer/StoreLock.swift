package import Foundation
import TernCore
import TernStores

#if canImport(Glibc)
import Glibc
#elseif canImport(Musl)
import Musl
#elseif canImport(Darwin)
import Darwin
#endif

/// An advisory lock on a store, held while a container finds, moves, migrates and seeds it, so
/// that two processes loading the same container (an app and its extension) take turns.
///
/// The lock is `flock(2)` on a lock file beside the store, `.<store name>.tern-lock`; it holds no
/// data. Only `StoreFiles.destroy` removes it, while holding its lock; so a process that gets the
/// lock checks that the file it locked is still the one at the path, and starts over otherwise
/// (else a third process could lock a new file while the second holds the old one). The kernel releases the lock when its holder exits, even by a
/// crash, so a killed process never leaves the store locked. `flock` locks belong to an open file
/// description, so two containers in one process exclude each other too.
///
/// ```swift
/// let lock = try await StoreLock.acquire(for: storeURL, timeout: .seconds(30)) { waiting() }
/// defer { lock.release() }
/// ```
package final class StoreLock: Sendable {
    /// The lock file's descriptor; the lock is held as long as it is open.
    private let descriptor: Int32

    private init(descriptor: Int32) { self.descriptor = descriptor }

    deinit { close(descriptor) }

    /// The lock file of a store.
    package static func lockFile(for store: URL) -> URL {
        StoreFiles.lockFile(of: store)
    }

    /// Takes the lock of a store, waiting while another process holds it.
    ///
    /// - Parameters:
    ///   - store: The store file; its folder must exist.
    ///   - timeout: How long to wait; nil waits as long as it takes.
    ///   - waiting: Called once if the lock is held by another process when asked.
    /// - Returns: The held lock; it is released by ``release()`` or when it goes away.
    /// - Throws: ``TernCore/TernError/Code/storeBusy`` when the wait times out,
    ///   ``TernCore/TernError/Code/ioFailure`` when the lock file cannot be opened, and
    ///   `CancellationError` when the task is cancelled while waiting.
    package static func acquire(for store: URL, timeout: Duration?, waiting: () -> Void) async throws -> StoreLock {
        let clock = ContinuousClock()
        let deadline = timeout.map { clock.now + $0 }
        var toldWaiting = false
        while true {
            let lock = try await acquire(store, deadline: deadline, timeout: timeout) {
                if !toldWaiting { waiting() }
                toldWaiting = true
            }
            // Destroying the store removes the lock file while holding its lock: a lock on a file
            // that is no longer at the path locks nothing anyone else sees; start over.
            if lock.isStillAtPath(lockFile(for: store)) { return lock }
        }
    }

    /// Opens the lock file and takes its lock, waiting until `deadline`.
    private static func acquire(
        _ store: URL, deadline: ContinuousClock.Instant?, timeout: Duration?, waiting: () -> Void
    ) async throws -> StoreLock {
        let file = lockFile(for: store)
        let descriptor = open(file.path, O_RDWR | O_CREAT | O_CLOEXEC, 0o644)
        guard descriptor >= 0 else {
            let reason = String(cString: strerror(errno))
            throw TernError(
                .ioFailure, "the store's lock file cannot be opened (\(reason)); check the folder's permissions",
                path: file.path)
        }
        let lock = StoreLock(descriptor: descriptor)
        let clock = ContinuousClock()
        while flock(descriptor, LOCK_EX | LOCK_NB) != 0 {
            guard errno == EWOULDBLOCK || errno == EINTR else {
                let reason = String(cString: strerror(errno))
                throw TernError(.ioFailure, "the store's lock cannot be taken (\(reason))", path: file.path)
            }
            if let deadline, clock.now >= deadline {
                throw TernError(
                    .storeBusy,
                    "another process is loading this store (it holds the store's lock) and did not finish within "
                        + "\(timeout.map { "\($0)" } ?? "the timeout"); try again later or raise StoreOptions.lockTimeout",
                    path: store.path)
            }
            waiting()
            try await Task.sleep(for: .milliseconds(20))
        }
        return lock
    }

    /// Whether the locked file is the one at `path` (same device and inode).
    private func isStillAtPath(_ path: URL) -> Bool {
        var locked = stat()
        var current = stat()
        guard fstat(descriptor, &locked) == 0, stat(path.path, &current) == 0 else { return false }
        return locked.st_dev == current.st_dev && locked.st_ino == current.st_ino
    }

    /// Releases the lock.
    package func release() {
        _ = flock(descriptor, LOCK_UN)
    }
}
