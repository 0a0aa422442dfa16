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
    /// Starts the crash helper with its output captured.
    static func launch(_ arguments: [String]) throws -> (Process, Pipe, Pipe) {
        let helper = try #require(CrashHarness.builtExecutable(named: "tern-crash-helper"), "build the package first")
        let process = Process()
        process.executableURL = helper
        process.arguments = arguments
        let (output, errors) = (Pipe(), Pipe())
        process.standardOutput = output
        process.standardError = errors
        process.standardInput = FileHandle.nullDevice
        try process.run()
        return (process, output, errors)
    }

    /// Waits for a process to end and returns its status, output and error output.
    static func finish(_ launched: (Process, Pipe, Pipe)) -> (Int32, String, String) {
        let (process, output, errors) = launched
        let out = String(decoding: output.fileHandleForReading.readDataToEndOfFile(), as: UTF8.self)
        let err = String(decoding: errors.fileHandleForReading.readDataToEndOfFile(), as: UTF8.self)
        process.waitUntilExit()
        return (process.terminationStatus, out, err)
    }

    @Test func twoProcessesLoadingOneContainerTakeTurns() async throws {
        let home = try ChefsBookHome()
        let copies = 40
        try await home.plantLegacyStore(at: home.locations.documents, version: 1, copies: copies)
        let first = try Self.launch(["container", home.root.path])
        let second = try Self.launch(["container", home.root.path])
        let results = [Self.finish(first), Self.finish(second)]
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
        let holder = try Self.launch(["lock", home.locations.current.path])
        defer { if holder.0.isRunning { kill(holder.0.processIdentifier, SIGKILL) } }
        // Wait until the holder says it holds the lock.
        let line = holder.1.fileHandleForReading.availableDataLine()
        #expect(line == "locked")

        let (status, output, errors) = Self.finish(try Self.launch(["container", home.root.path, "0.3"]))
        #expect(status == 4)
        #expect(output.contains("waitingForStoreLock"))
        #expect(errors.contains("another process is loading this store"))
        // Nothing was moved while the other process held the lock.
        #expect(FileManager.default.fileExists(atPath: home.locations.documents.path))
        #expect(!FileManager.default.fileExists(atPath: home.locations.current.path))

        // Once the holder is gone (a kill releases its lock too), loading succeeds.
        kill(holder.0.processIdentifier, SIGKILL)
        holder.0.waitUntilExit()
        let (again, _, againErrors) = Self.finish(try Self.launch(["container", home.root.path, "0.3"]))
        #expect(again == 0, "\(againErrors)")
        #expect(try home.currentVersion() == "ChefsBook 4")
    }
}

extension FileHandle {
    /// Reads until the first newline (or the end) and returns the line without it.
    fileprivate func availableDataLine() -> String {
        var bytes: [UInt8] = []
        while true {
            let data = readData(ofLength: 1)
            guard let byte = data.first, byte != UInt8(ascii: "\n") else { break }
            bytes.append(byte)
        }
        return String(decoding: bytes, as: UTF8.self)
    }
}
