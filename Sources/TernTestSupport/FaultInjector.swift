import Synchronization
import TernCore

#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

/// Makes the N-th file operation of a task fail, as a full or failing disk would: Tern's own
/// file calls (through ``TernCore/FileOperations``) fail with `EIO` or `ENOSPC`, and SQLite's
/// I/O (through a VFS that wraps the default one, see `SQLiteFaultVFS`) with `SQLITE_IOERR_…` or
/// `SQLITE_FULL`.
///
/// One counter covers both, in call order, so "every N in an operation" means every write, sync,
/// truncate, delete and rename the operation makes, whoever makes it. Only the task that runs
/// the operation through ``run(_:)`` is affected; other tests in the process are not.
///
/// ```swift
/// let counter = FaultInjector(failingCall: nil)           // count only
/// try await counter.run { try await save() }
/// for n in 1...counter.callCount {
///     let injector = FaultInjector(failingCall: n, failure: n % 2 == 0 ? .diskFull : .ioError)
///     await #expect(throws: SQLiteError.self) { try await injector.run { try await save() } }
/// }
/// ```
package final class FaultInjector: FileOperations {
    /// The kinds of operations an injector counts.
    package struct Kinds: OptionSet, Sendable, CustomStringConvertible {
        package let rawValue: Int
        package init(rawValue: Int) { self.rawValue = rawValue }

        /// Writes of file contents.
        package static let write = Kinds(rawValue: 1)
        /// `fsync` of files and folders.
        package static let sync = Kinds(rawValue: 2)
        /// Renames.
        package static let rename = Kinds(rawValue: 4)
        /// Truncations (SQLite).
        package static let truncate = Kinds(rawValue: 8)
        /// File deletions (SQLite's journals).
        package static let delete = Kinds(rawValue: 16)
        /// Every kind.
        package static let all: Kinds = [.write, .sync, .rename, .truncate, .delete]

        package var description: String {
            let names = [
                (Kinds.write, "write"), (.sync, "sync"), (.rename, "rename"), (.truncate, "truncate"),
                (.delete, "delete"),
            ]
            return names.filter { contains($0.0) }.map(\.1).joined(separator: "|")
        }
    }

    /// How an operation fails.
    package enum Failure: Sendable, CustomStringConvertible {
        /// An I/O error: `EIO`, `SQLITE_IOERR_…`.
        case ioError
        /// A full disk: `ENOSPC`, `SQLITE_FULL`.
        case diskFull

        /// The `errno` value.
        package var errorNumber: Int32 { self == .ioError ? EIO : ENOSPC }

        package var description: String { self == .ioError ? "EIO" : "ENOSPC" }
    }

    /// The call that fails (1 for the first), or nil to only count.
    package let failingCall: Int?
    /// The kinds counted.
    package let kinds: Kinds
    /// How the failing call fails.
    package let failure: Failure
    /// Whether every counted call after the failing one fails too (a disk that stays full).
    package let isPersistent: Bool

    private struct State {
        var calls = 0
        var failures = 0
        var failedKinds: Kinds = []
    }

    private let state = Mutex(State())

    /// Creates an injector.
    ///
    /// - Parameters:
    ///   - failingCall: The call that fails (1 for the first), or nil to only count.
    ///   - kinds: The kinds of operations counted.
    ///   - failure: How the call fails.
    ///   - isPersistent: Whether the calls after it fail too.
    package init(failingCall: Int?, kinds: Kinds = .all, failure: Failure = .ioError, isPersistent: Bool = false) {
        self.failingCall = failingCall
        self.kinds = kinds
        self.failure = failure
        self.isPersistent = isPersistent
    }

    /// How many counted operations were called so far.
    package var callCount: Int { state.withLock { $0.calls } }

    /// How many calls were made to fail.
    package var failureCount: Int { state.withLock { $0.failures } }

    /// The kinds of the calls made to fail.
    package var failedKinds: Kinds { state.withLock { $0.failedKinds } }

    /// Runs an operation with this injector deciding its task's file operations.
    ///
    /// - Parameter body: The operation.
    /// - Returns: What it returns.
    /// - Throws: What it throws.
    package func run<T>(_ body: () async throws -> T) async rethrows -> T {
        SQLiteFaultVFS.install()
        return try await FileOperationsScope.$current.withValue(self) { try await body() }
    }

    /// Counts a call of a kind and says whether it must fail.
    ///
    /// - Parameter kind: The call's kind.
    /// - Returns: The failure, or nil to run the call.
    package func decide(_ kind: Kinds) -> Failure? {
        guard kinds.contains(kind) else { return nil }
        return state.withLock { state in
            state.calls += 1
            guard let failingCall, state.calls == failingCall || (isPersistent && state.calls > failingCall) else {
                return nil
            }
            state.failures += 1
            state.failedKinds.insert(kind)
            return failure
        }
    }

    // MARK: - FileOperations

    package func write(_ descriptor: Int32, _ bytes: UnsafeRawPointer, _ count: Int) -> Int {
        if let failure = decide(.write) {
            errno = failure.errorNumber
            return -1
        }
        return SystemFileOperations().write(descriptor, bytes, count)
    }

    package func synchronize(_ descriptor: Int32) -> Int32 {
        if let failure = decide(.sync) {
            errno = failure.errorNumber
            return -1
        }
        return SystemFileOperations().synchronize(descriptor)
    }

    package func rename(_ source: String, _ destination: String) -> Int32 {
        if let failure = decide(.rename) {
            errno = failure.errorNumber
            return -1
        }
        return SystemFileOperations().rename(source, destination)
    }
}
