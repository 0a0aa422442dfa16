public import Foundation

/// Two processes edit the same objects of one store, in lockstep, under a merge policy: the
/// shared part of the two-process conflict tests of every store that several processes can open
/// at once (SQLite, and any server store).
///
/// Each process is `tern-crash-helper conflict <store arguments> <policy> a|b`. Process A
/// creates `objects` tallies (`a` = `b` = 0); then, each round, both processes add one to their
/// own field as they last saw it, A saves, B saves. From the second round on, A's view is stale
/// when it saves, and B's always is, so every save but A's first meets a version (`Z_OPT`)
/// conflict written by the other process, and the merge policy decides. Every tally then ends
/// as ``expectedTally(policy:rounds:)`` says: no increment is lost except by the policy's own
/// rule (`overwrite` writes B's whole stale object; `rollback` drops B's conflicting edits).
///
/// ```swift
/// let outcome = try TwoProcessConflict.run(storeArguments: ["sqlite", url.path], policy: "objectTrumps")
/// #expect(outcome.second.store.allSatisfy { $0 == TwoProcessConflict.expectedTally(policy: "objectTrumps", rounds: 4) })
/// ```
public enum TwoProcessConflict {
    /// The merge policies the helper knows, by name.
    public static let policies = ["error", "storeTrumps", "objectTrumps", "overwrite", "rollback"]

    /// What one process reports at the end.
    public struct Report: Decodable, Sendable, Equatable {
        /// How many of its increments the process saw saved.
        public var applied: Int
        /// How many save conflicts it met and retried (under `error` only).
        public var conflicts: Int
        /// `[a, b]` of each tally as the process's context sees it.
        public var view: [[Int]]
        /// `[a, b]` of each tally as the store holds it, read afresh.
        public var store: [[Int]]
    }

    /// What both processes reported.
    public struct Outcome: Sendable {
        /// Process A, which saves first in each round.
        public var first: Report
        /// Process B, which saves last in each round.
        public var second: Report
    }

    /// `[a, b]` of every tally after `rounds` rounds under a policy.
    ///
    /// - Parameters:
    ///   - policy: A name of ``policies``.
    ///   - rounds: The number of rounds.
    /// - Returns: `[rounds, rounds]` when every increment lands; `[0, rounds]` under `overwrite`
    ///   (B writes its stale `a` last); `[rounds, 0]` under `rollback` (B's edits always conflict
    ///   and are dropped).
    public static func expectedTally(policy: String, rounds: Int) -> [Int] {
        switch policy {
        case "overwrite": [0, rounds]
        case "rollback": [rounds, 0]
        default: [rounds, rounds]
        }
    }

    /// Runs the two processes to the end.
    ///
    /// - Parameters:
    ///   - storeArguments: How the helper opens the store, such as `["sqlite", path]`.
    ///   - policy: A name of ``policies``.
    ///   - objects: How many tallies.
    ///   - rounds: How many rounds.
    /// - Returns: Both processes' reports.
    /// - Throws: When the helper is missing, fails or answers something unexpected.
    public static func run(storeArguments: [String], policy: String, objects: Int = 3, rounds: Int = 4) throws
        -> Outcome
    {
        let first = try HelperProcess(arguments: ["conflict"] + storeArguments + [policy, "a"])
        try first.expect("seed \(objects)", "ok")
        try first.expect("load", "ok")
        let second = try HelperProcess(arguments: ["conflict"] + storeArguments + [policy, "b"])
        try second.expect("load", "ok")
        for _ in 0..<rounds {
            try first.expect("edit", "ok")
            try second.expect("edit", "ok")
            try first.expect("save", "ok")
            try second.expect("save", "ok")
        }
        let decoder = JSONDecoder()
        let outcome = Outcome(
            first: try decoder.decode(Report.self, from: Data(try first.send("report").utf8)),
            second: try decoder.decode(Report.self, from: Data(try second.send("report").utf8)))
        try first.expect("quit", "bye")
        try second.expect("quit", "bye")
        return outcome
    }
}

/// A `tern-crash-helper` process answering one line per command.
public final class HelperProcess {
    private let process = Process()
    private let input = Pipe()
    private let output = Pipe()
    private var buffer = Data()

    /// Starts the helper and waits for its `ready` line.
    ///
    /// - Parameter arguments: The helper's arguments.
    /// - Throws: When the helper is not built or does not start.
    public init(arguments: [String]) throws {
        process.executableURL = try Self.url()
        process.arguments = arguments
        process.standardInput = input
        process.standardOutput = output
        try process.run()
        let greeting = try readLine()
        guard greeting == "ready" else { throw Failure(message: "the helper did not start: \(greeting)") }
    }

    deinit {
        if process.isRunning { process.terminate() }
    }

    /// `tern-crash-helper`, built beside the test binary.
    ///
    /// - Throws: When it is not there; build the package first.
    public static func url() throws -> URL {
        guard let found = CrashHarness.builtExecutable(named: "tern-crash-helper") else {
            throw Failure(message: "tern-crash-helper is not next to the test binary; build the package first")
        }
        return found
    }

    /// Sends a command and returns the answer line.
    ///
    /// - Parameter command: One line, without its newline.
    /// - Returns: The answer, without its newline.
    /// - Throws: When the helper has exited.
    public func send(_ command: String) throws -> String {
        try input.fileHandleForWriting.write(contentsOf: Data((command + "\n").utf8))
        return try readLine()
    }

    /// Sends a command and throws unless the answer is `expected`.
    ///
    /// - Parameters:
    ///   - command: One line, without its newline.
    ///   - expected: The answer wanted.
    /// - Throws: When the answer differs or the helper has exited.
    public func expect(_ command: String, _ expected: String) throws {
        let answer = try send(command)
        guard answer == expected else { throw Failure(message: "`\(command)` answered `\(answer)`") }
    }

    private func readLine() throws -> String {
        while true {
            if let end = buffer.firstIndex(of: UInt8(ascii: "\n")) {
                let line = String(decoding: buffer[buffer.startIndex..<end], as: UTF8.self)
                buffer = Data(buffer[(end + 1)...])
                return line
            }
            let chunk = output.fileHandleForReading.availableData
            guard !chunk.isEmpty else { throw Failure(message: "the helper exited (status \(exitStatus))") }
            buffer.append(chunk)
        }
    }

    private var exitStatus: String {
        process.waitUntilExit()
        return String(process.terminationStatus)
    }

    /// A helper that misbehaved.
    public struct Failure: Error, CustomStringConvertible {
        /// What happened.
        public var message: String
        /// What happened.
        public var description: String { message }
    }
}
