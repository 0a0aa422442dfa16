import Foundation
import Testing

/// Runs an operation once for every file operation it makes, failing that one (``FaultInjector``),
/// and checks each time that the failure surfaced as a typed error and the files are intact.
///
/// A first run counts the operation's writes, syncs, truncations, deletions and renames. Then,
/// for every N from 1 to that count, the files are reset, the operation runs with call N failing,
/// and the check looks at the files with the injector gone. Odd calls fail with an I/O error
/// once; even calls with a full disk that stays full (every later call fails too); the long mode
/// (`TERN_FAULT_LONG=1`) runs both kinds for every N.
///
/// ```swift
/// let report = try await FaultSweep(name: "save").run(
///     reset: { try restoreStore() },
///     operation: { try await save() },
///     check: { error in try await checkStore(error) })   // "old" or "new"
/// ```
package struct FaultSweep: Sendable {
    /// What a sweep did.
    package struct Report: Sendable, CustomStringConvertible {
        /// The operation's name.
        package var name: String
        /// How many counted calls one clean run makes.
        package var calls = 0
        /// How many runs had a fault injected.
        package var faults = 0
        /// How many of them threw an error.
        package var errors = 0
        /// How many finished without error although a call failed (SQLite absorbs some, such as
        /// a failed checkpoint when a connection closes).
        package var absorbed = 0
        /// How many times each state was found.
        package var states: [String: Int] = [:]

        /// One line: the operation, the faults and the states.
        package var description: String {
            let found = states.keys.sorted().map { "\($0) \(states[$0] ?? 0)" }.joined(separator: ", ")
            return "faults[\(name)]: \(calls) calls, \(faults) faults injected, \(errors) errors, "
                + "\(absorbed) absorbed; states: \(found)"
        }
    }

    /// The operation's name, in reports and failures.
    package var name: String

    /// Creates a sweep.
    ///
    /// - Parameter name: The operation's name.
    package init(name: String) { self.name = name }

    /// Whether the long mode is on (`TERN_FAULT_LONG=1`).
    package static var isLong: Bool { ProcessInfo.processInfo.environment["TERN_FAULT_LONG"] == "1" }

    /// Runs the sweep.
    ///
    /// - Parameters:
    ///   - reset: Puts the starting files back.
    ///   - operation: The operation; it runs inside the injector's task scope.
    ///   - isTyped: Whether an error the operation threw is one of the library's typed errors.
    ///   - check: Checks the files after a run; gets the error thrown (nil when the run
    ///     finished) and returns the state's name, or throws when the files are damaged.
    /// - Returns: What the sweep did.
    /// - Throws: When the clean run fails.
    /// - Complexity: One run of the operation per counted call (two in the long mode).
    @discardableResult
    package func run(
        reset: () async throws -> Void, operation: () async throws -> Void, isTyped: (any Error) -> Bool,
        check: (_ error: (any Error)?) async throws -> String
    ) async throws -> Report {
        var report = Report(name: name)
        try await reset()
        let counter = FaultInjector(failingCall: nil)
        try await counter.run { try await operation() }
        report.calls = counter.callCount
        _ = try await check(nil)
        var plans: [(Int, FaultInjector.Failure, Bool)] = []
        for call in 1...max(1, report.calls) {
            if Self.isLong {
                plans += [(call, .ioError, false), (call, .diskFull, true)]
            } else {
                plans.append(call % 2 == 1 ? (call, .ioError, false) : (call, .diskFull, true))
            }
        }
        for (call, failure, persistent) in plans {
            try await reset()
            let injector = FaultInjector(failingCall: call, failure: failure, isPersistent: persistent)
            var thrown: (any Error)?
            do {
                try await injector.run { try await operation() }
            } catch {
                thrown = error
            }
            let label =
                "faults[\(name)] call \(call) of \(report.calls) failing with \(failure)"
                + (persistent ? " and every call after it" : "")
            guard injector.failureCount > 0 else { continue }  // the run took another path and made fewer calls
            report.faults += 1
            if let thrown {
                report.errors += 1
                if !isTyped(thrown) { Issue.record("\(label): an untyped error: \(thrown)") }
            } else {
                report.absorbed += 1
            }
            do {
                let state = try await check(thrown)
                report.states[state, default: 0] += 1
            } catch {
                Issue.record("\(label) (\(injector.failedKinds)): \(error)")
            }
        }
        print(report)
        return report
    }
}
