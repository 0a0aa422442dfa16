import Foundation
import TernTestSupport
import Testing

/// Two processes increment the same PostgreSQL row at once under each merge policy: no update is
/// lost other than by the policy's own rule.
@Suite(.enabled(if: PostgreSQLTestServer.isAvailable, PostgreSQLTestServer.skipComment))
struct PostgreSQLTwoProcessTests {
    /// How many increments each process makes.
    static let times = 40

    /// `tern-postgres-helper`, built beside the test binary.
    static func helper() throws -> URL {
        let candidates = [
            URL(fileURLWithPath: CommandLine.arguments[0]).deletingLastPathComponent(),
            Bundle.main.bundleURL, Bundle.main.bundleURL.deletingLastPathComponent(),
        ]
        let found = candidates.map { $0.appendingPathComponent("tern-postgres-helper") }
            .first { FileManager.default.isExecutableFile(atPath: $0.path) }
        return try #require(found, "tern-postgres-helper is not next to the test binary; build the package first")
    }

    /// Starts the helper, its output going to a file of `outputs` (not a pipe, so that no other
    /// process can keep it open), waited for with `waitpid` (``ChildProcess``).
    static func start(_ arguments: [String], outputs: TemporaryDirectory) throws -> ChildProcess {
        let name = UUID().uuidString
        return try ChildProcess(
            try helper(), arguments, standardOutput: outputs.path("\(name).out").path,
            standardError: outputs.path("\(name).err").path)
    }

    /// Waits for the helper and returns the numbers it printed.
    static func finish(_ started: ChildProcess) throws -> [Int64] {
        try started.waitUntilExit(timeout: ChildProcess.defaultTimeout)
        let text = started.output
        try #require(started.terminationStatus == 0, "helper failed: \(text)\(started.errorOutput)")
        return text.split(whereSeparator: \.isWhitespace).compactMap { Int64($0) }
    }

    @Test(arguments: ["error", "storeTrumps", "objectTrumps", "overwrite", "rollback"])
    func concurrentIncrements(policy: String) throws {
        let url = try PostgreSQLTestServer.freshStoreURL(prefix: "two")
        let outputs = try TemporaryDirectory()
        _ = try Self.finish(try Self.start(["create", url], outputs: outputs))
        let a = try Self.start(["increment", url, policy, "countA", String(Self.times)], outputs: outputs)
        let b = try Self.start(["increment", url, policy, "countB", String(Self.times)], outputs: outputs)
        let (resultA, resultB) = (try Self.finish(a), try Self.finish(b))
        let values = try Self.finish(try Self.start(["read", url], outputs: outputs))
        try #require(values.count == 4 && resultA.count == 2 && resultB.count == 2)
        let (countA, countB, total, version) = (values[0], values[1], values[2], values[3])
        let n = Int64(Self.times)
        #expect(resultA[0] == n && resultB[0] == n, "every increment reports a successful save")
        switch policy {
        case "error":
            // Conflicts are refused and retried: nothing is lost, each save wrote one version.
            #expect(countA == n && countB == n && total == 2 * n)
            #expect(version == 1 + 2 * n)
        case "storeTrumps":
            // Property-level merges: each process's own counter survives every conflict; a
            // conflicting save keeps the store's newer total, so the total never goes back.
            #expect(countA == n && countB == n)
            #expect(total <= 2 * n && total >= n)
            #expect(version == 1 + 2 * n)
        case "objectTrumps":
            // Each process's own counter survives every conflict, but a conflicting save writes
            // its own total (read + 1) over the store's: one read before the other process saved
            // several times puts the total back, so only its upper bound is certain. (A run on a
            // loaded machine ended with total < n.)
            #expect(countA == n && countB == n)
            #expect(total <= 2 * n && total >= 1)
            #expect(version == 1 + 2 * n)
        case "overwrite":
            // The saving object's whole state wins: counters can go back, but every save is written.
            #expect((0...n).contains(countA) && (0...n).contains(countB) && total <= 2 * n)
            #expect(version == 1 + 2 * n)
        default:
            // The saving object's changes are dropped on conflict.
            #expect((0...n).contains(countA) && (0...n).contains(countB) && total <= 2 * n)
            #expect(version <= 1 + 2 * n)
        }
    }
}
