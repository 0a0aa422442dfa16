public import Foundation
import Testing

#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

/// Runs an operation in a child process, kills it with `SIGKILL` at random moments, and checks
/// what it left after every kill.
///
/// Each case first runs the operation once to completion, which measures the window the kills
/// fall in (the whole run, from process start to exit, plus 10 %) and checks the finished state.
/// Then, `iterations` times, it resets the files, starts the operation, waits a random time in
/// that window, sends `SIGKILL`, and calls the check. The check returns the name of the state it
/// found (typically `"old"` or `"new"`) or throws when the files are anything else.
///
/// The delays come from a ``SplitMix64`` seeded with ``seed``, so a failing run can be replayed:
/// every failure names the case, the iteration and `TERN_CRASH_SEED=<seed>`.
///
/// ```swift
/// let report = try await CrashHarness(name: "save", iterations: CrashHarness.iterations()).run(
///     reset: { try restoreStore() },
///     launch: { try CrashHarness.launch(helper, ["save", store.path]) },
///     check: { try await checkStore() })   // returns "old" or "new", throws otherwise
/// #expect(report.states.keys.allSatisfy { ["old", "new"].contains($0) })
/// ```
///
/// Environment: `TERN_CRASH_LONG=1` for the long mode (at least 200 kills per case on stores of
/// at least 50,000 rows), `TERN_CRASH_ITERATIONS` and `TERN_CRASH_ROWS` to set the counts,
/// `TERN_CRASH_SEED` to replay a run.
///
/// A new operation needs a mode of `tern-crash-helper` (or a `tern` command), a reset that puts
/// the starting files back and a check that names the state; see `CrashHarnessTests`.
public struct CrashHarness: Sendable {
    /// What a case did: how many kills, and the states they left.
    public struct Report: Sendable, CustomStringConvertible {
        /// The case's name.
        public var name: String
        /// The seed of the delays.
        public var seed: UInt64
        /// How many times the operation was killed.
        public var kills = 0
        /// How many times it had already finished when the kill came.
        public var finishedBeforeKill = 0
        /// How many times each state was found after a kill.
        public var states: [String: Int] = [:]
        /// How long the full run took.
        public var window: Duration = .zero
        /// The state the full run left.
        public var finishedState = ""

        /// One line: the case, the kills and the states.
        public var description: String {
            let found = states.keys.sorted().map { "\($0) \(states[$0] ?? 0)" }.joined(separator: ", ")
            return "crash[\(name)]: \(kills) kills (\(finishedBeforeKill) after the end), states: \(found); "
                + "full run \(window), TERN_CRASH_SEED=\(seed)"
        }
    }

    /// A failure the check found, with what it saw.
    public struct Failure: Error, CustomStringConvertible {
        /// What was wrong.
        public var description: String

        /// Creates a failure.
        ///
        /// - Parameter description: What was wrong.
        public init(_ description: String) { self.description = description }
    }

    /// The case's name, in reports and failures.
    public var name: String
    /// How many kills.
    public var iterations: Int
    /// The seed of the random delays.
    public var seed: UInt64

    /// Creates a case.
    ///
    /// - Parameters:
    ///   - name: The case's name.
    ///   - iterations: How many kills.
    ///   - seed: The seed of the delays; ``seed`` from the environment by default.
    public init(name: String, iterations: Int, seed: UInt64 = CrashHarness.seed) {
        self.name = name
        self.iterations = iterations
        self.seed = seed
    }

    // MARK: - Settings from the environment

    /// Whether the long mode is on (`TERN_CRASH_LONG=1`).
    public static var isLong: Bool { ProcessInfo.processInfo.environment["TERN_CRASH_LONG"] == "1" }

    /// The number of kills per case: `TERN_CRASH_ITERATIONS` when set, else 200 in the long mode
    /// and `short` otherwise.
    ///
    /// - Parameter short: The count for ordinary test runs.
    public static func iterations(short: Int = 4) -> Int {
        if let value = ProcessInfo.processInfo.environment["TERN_CRASH_ITERATIONS"].flatMap(Int.init) { return value }
        return isLong ? 200 : short
    }

    /// The number of rows of a case's store: `TERN_CRASH_ROWS` when set, else 50,000 in the long
    /// mode and `short` otherwise.
    ///
    /// - Parameter short: The count for ordinary test runs.
    public static func rowCount(short: Int = 2_000) -> Int {
        if let value = ProcessInfo.processInfo.environment["TERN_CRASH_ROWS"].flatMap(Int.init) { return value }
        return isLong ? 50_000 : short
    }

    /// The seed of the delays: `TERN_CRASH_SEED` when set, else a new one for each test process
    /// (printed with every failure and report).
    public static let seed: UInt64 = {
        if let value = ProcessInfo.processInfo.environment["TERN_CRASH_SEED"].flatMap(UInt64.init) { return value }
        return UInt64.random(in: 1...UInt64(UInt32.max))
    }()

    // MARK: - Running

    /// Runs the case: one full run, then `iterations` killed ones.
    ///
    /// Failures are recorded as test issues naming the case, the iteration and the seed; the
    /// run goes on with the next iteration.
    ///
    /// - Parameters:
    ///   - reset: Puts the starting files back.
    ///   - launch: Starts the operation in a child process.
    ///   - check: Checks the files; returns the state's name or throws ``Failure`` (or any error).
    ///     It is called with `true` after the full run, `false` after a kill.
    /// - Returns: The kills and the states found.
    /// - Throws: When the full run fails, a process cannot be started, or a child outlives
    ///   ``ChildProcess/defaultTimeout`` (it is killed, and the error names it).
    /// - Complexity: `iterations` runs of the operation and the check.
    @discardableResult
    public func run(
        reset: () throws -> Void, launch: () throws -> ChildProcess, check: (_ finished: Bool) async throws -> String
    ) async throws -> Report {
        var report = Report(name: name, seed: seed)
        let clock = ContinuousClock()
        try reset()
        let start = clock.now
        let full = try launch()
        try full.waitUntilExit(timeout: ChildProcess.defaultTimeout)
        report.window = clock.now - start
        guard full.terminationReason == .exit, full.terminationStatus == 0 else {
            throw Failure("crash[\(name)]: the operation failed without a kill (status \(full.terminationStatus))")
        }
        do {
            report.finishedState = try await check(true)
        } catch {
            throw Failure("crash[\(name)]: the finished operation left a bad state: \(error)")
        }
        let windowNanoseconds =
            Double(report.window.components.seconds) * 1e9
            + Double(report.window.components.attoseconds) / 1e9
        var generator = SplitMix64(state: seed ^ Self.mix(name))
        for iteration in 0..<iterations {
            try reset()
            let process = try launch()
            let delay = Double.random(in: 0...1.1, using: &generator) * windowNanoseconds
            try await Task.sleep(for: .nanoseconds(Int64(delay)))
            if process.isRunning {
                kill(process.processIdentifier, SIGKILL)
            } else {
                report.finishedBeforeKill += 1
            }
            try process.waitUntilExit(timeout: ChildProcess.defaultTimeout)
            report.kills += 1
            if process.terminationReason == .exit, process.terminationStatus != 0 {
                Issue.record(
                    "\(failurePrefix(iteration)): the operation failed by itself (status \(process.terminationStatus))")
                continue
            }
            do {
                report.states[try await check(false), default: 0] += 1
            } catch {
                Issue.record("\(failurePrefix(iteration)): \(error)")
            }
            if (iteration + 1) % 25 == 0, iteration + 1 < iterations {
                print("crash[\(name)]: \(iteration + 1) of \(iterations) kills after \(clock.now - start)")
            }
        }
        print(report)
        return report
    }

    /// Starts an executable with arguments, its output discarded.
    ///
    /// - Parameters:
    ///   - executable: The program.
    ///   - arguments: Its arguments.
    /// - Returns: The running process.
    /// - Throws: ``ChildProcess/Failure`` when it cannot be started.
    public static func launch(_ executable: URL, _ arguments: [String]) throws -> ChildProcess {
        try ChildProcess(executable, arguments)
    }

    /// An executable built beside the test binary, such as `tern` or `tern-crash-helper`.
    ///
    /// - Parameter name: The executable's name.
    /// - Returns: Its location, or nil when it is not built.
    public static func builtExecutable(named name: String) -> URL? {
        var folders = [Bundle.main.bundleURL, Bundle.main.bundleURL.deletingLastPathComponent()]
        if let first = CommandLine.arguments.first {
            folders.append(URL(fileURLWithPath: first).deletingLastPathComponent())
        }
        return folders.map { $0.appendingPathComponent(name) }
            .first { FileManager.default.isExecutableFile(atPath: $0.path) }
    }

    // MARK: - Non public

    private func failurePrefix(_ iteration: Int) -> String {
        "crash[\(name)] iteration \(iteration) of \(iterations) (replay with TERN_CRASH_SEED=\(seed))"
    }

    /// A stable hash of the case's name (Swift's `hashValue` changes between runs).
    private static func mix(_ name: String) -> UInt64 {
        name.utf8.reduce(UInt64(1_469_598_103_934_665_603)) { ($0 ^ UInt64($1)) &* 1_099_511_628_211 }
    }
}
