import Foundation
import TernCore
import TernStores
import TernTestSupport
import Testing

@testable import TernContainer

/// `StoreFiles.destroy` removes the container's lock file with the store, but only while nobody
/// holds the lock, and a lock taken on a file that was removed meanwhile is taken again on the
/// file at the path, so two holders never coexist (issue #7: destroy left the lock file behind).
@Suite struct StoreLockFileTests {
    @Test func destroyRemovesAnUnusedLockFile() async throws {
        let folder = try TemporaryDirectory()
        let store = folder.path("Notes.sqlite")
        try Data("store".utf8).write(to: store)
        let lock = try await StoreLock.acquire(for: store, timeout: .seconds(5)) {}
        let lockFile = StoreLock.lockFile(for: store)
        #expect(FileManager.default.fileExists(atPath: lockFile.path))

        // Held (by this process, through another open file): destroying keeps it.
        try StoreFiles.destroy(at: store)
        #expect(FileManager.default.fileExists(atPath: lockFile.path))
        lock.release()

        try Data("store".utf8).write(to: store)
        try StoreFiles.destroy(at: store)
        #expect(!FileManager.default.fileExists(atPath: lockFile.path))
        #expect(try FileManager.default.contentsOfDirectory(atPath: folder.url.path).isEmpty)
    }

    @Test func aLockOnARemovedLockFileIsTakenAgainOnTheNewFile() async throws {
        let folder = try TemporaryDirectory()
        let store = folder.path("Notes.sqlite")
        let first = try await StoreLock.acquire(for: store, timeout: .seconds(5)) {}
        // A second waiter opened the same file and waits; meanwhile the holder destroys the store
        // (removing the lock file while holding it) and releases.
        let waiter = Task { try await StoreLock.acquire(for: store, timeout: .seconds(20)) {} }
        try await Task.sleep(for: .milliseconds(100))
        let lockFile = StoreLock.lockFile(for: store)
        try FileManager.default.removeItem(at: lockFile)
        first.release()
        let second = try await waiter.value
        // The waiter holds the lock of the file now at the path: a third process is kept out.
        #expect(FileManager.default.fileExists(atPath: lockFile.path))
        let third = Task { try await StoreLock.acquire(for: store, timeout: .milliseconds(200)) {} }
        let error = await #expect(throws: TernError.self) { try await third.value }
        #expect(error?.code == .storeBusy)
        second.release()
    }
}
