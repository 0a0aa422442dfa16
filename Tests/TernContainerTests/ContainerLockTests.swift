import ChefsBook
import Foundation
import TernContainer
import TernCore
import TernTestSupport
import Testing

/// Two processes loading the same container at once (an app and its extension) take turns on
/// the store's lock: one moves and migrates the legacy store, the other waits and then finds it
/// done; a process that waits longer than its timeout fails with a clear message.
@Suite(.serialized) struct ContainerLockTests {
    /// Starts the crash helper with its output and error output captured in files of `outputs`.
    ///
    /// Files, not pipes, and `waitpid` (``ChildProcess``): no other process can hold them open,
    /// and a child killed at any moment never hangs the test.
    static func launch(_ arguments: [String], outputs: TemporaryDirectory) throws -> ChildProcess {
        let helper = try #require(CrashHarness.builtExecutable(named: "tern-crash-helper"), "build the package first")
        let name = UUID().uuidString
        return try ChildProcess(
            helper, arguments, standardOutput: outputs.path("\(name).out").path,
            standardError: outputs.path("\(name).err").path)
    }

    /// Waits for a process to end and returns its status, output and error output.
    static func finish(_ process: ChildProcess) throws -> (Int32, String, String) {
        try process.waitUntilExit(timeout: ChildProcess.defaultTimeout)
        return (process.terminationStatus, process.output, process.errorOutput)
    }

    @Test func twoProcessesLoadingOneContainerTakeTurns() async throws {
        let home = try ChefsBookHome()
        let copies = 40
        try await home.plantLegacyStore(at: home.locations.documents, version: 1, copies: copies)
        let outputs = try TemporaryDirectory()
        let first = try Self.launch(["container", home.root.path], outputs: outputs)
        let second = try Self.launch(["container", home.root.path], outputs: outputs)
        let results = [try Self.finish(first), try Self.finish(second)]
        for (status, _, errors) in results { #expect(status == 0, "\(errors)") }
        // Exactly one process moved and migrated the store; the other found it in place.
        let movers = results.filter { $0.1.contains("movedStore") }
        #expect(movers.count == 1)
        #expect(results.filter { $0.1.contains("migrating(") }.count == 1)
        #expect(results.allSatisfy { $0.1.contains("storeLoaded") })
        #expect(!FileManager.default.fileExists(atPath: home.locations.documents.path))
        #expect(try home.currentVersion() == "ChefsBook 4")
        let summaries = try await ChefsBook.summaries(ofStoreAt: home.locations.current, model: home.model)
        #expect(summaries.count == copies * ChefsBook.legacyRecipes.count)
        #expect(try home.leftovers(besides: home.locations.current).isEmpty)
    }

    @Test func aProcessWaitingLongerThanItsTimeoutFailsClearly() async throws {
        let home = try ChefsBookHome()
        try await home.plantLegacyStore(at: home.locations.documents, version: 1)
        try FileManager.default.createDirectory(
            at: home.locations.current.deletingLastPathComponent(), withIntermediateDirectories: true)
        let outputs = try TemporaryDirectory()
        let holder = try Self.launch(["lock", home.locations.current.path], outputs: outputs)
        defer { if holder.isRunning { kill(holder.processIdentifier, SIGKILL) } }
        // Wait until the holder says it holds the lock.
        let line = try holder.firstLine(timeout: ChildProcess.defaultTimeout)
        #expect(line == "locked")

        let (status, output, errors) = try Self.finish(
            try Self.launch(["container", home.root.path, "0.3"], outputs: outputs))
        #expect(status == 4)
        #expect(output.contains("waitingForStoreLock"))
        #expect(errors.contains("another process is loading this store"))
        // Nothing was moved while the other process held the lock.
        #expect(FileManager.default.fileExists(atPath: home.locations.documents.path))
        #expect(!FileManager.default.fileExists(atPath: home.locations.current.path))

        // Once the holder is gone (a kill releases its lock too), loading succeeds.
        kill(holder.processIdentifier, SIGKILL)
        holder.waitUntilExit()
        let (again, _, againErrors) = try Self.finish(
            try Self.launch(["container", home.root.path, "0.3"], outputs: outputs))
        #expect(again == 0, "\(againErrors)")
        #expect(try home.currentVersion() == "ChefsBook 4")
    }
}
