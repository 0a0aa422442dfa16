public import Foundation
import Synchronization
import Testing

#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

/// A program the tests run as a child process: started with `posix_spawn`, waited for with
/// `waitpid`, and killed when it outlives a timeout.
///
/// Foundation's `Process` learns that a child ended from its run loop, which once never noticed a
/// child that had already become a zombie, and a test hung forever. Here nothing depends on a run
/// loop: waiting polls `waitpid(pid, WNOHANG)`, and a child still running after the timeout is
/// killed with `SIGKILL`, so a stuck child fails its test with a message instead of hanging the
/// run. The child gets no stdin, an empty signal mask, default signal handlers, and none of the
/// test process's other file descriptors.
///
/// ```swift
/// let child = try ChildProcess(tern, ["verify", store.path], standardOutput: out.path)
/// try child.waitUntilExit(timeout: .seconds(60))   // kills it and throws when it takes longer
/// #expect(child.terminationReason == .exit && child.terminationStatus == 0)
/// ```
public final class ChildProcess: Sendable {
    /// How a child ended.
    public enum TerminationReason: Sendable, Hashable {
        /// It exited; ``ChildProcess/terminationStatus`` is its exit status.
        case exit
        /// A signal killed it; ``ChildProcess/terminationStatus`` is the signal's number.
        case uncaughtSignal
    }

    /// A child that could not start, or that was still running when its time was up and was killed.
    public struct Failure: Error, CustomStringConvertible {
        /// What ran, and what went wrong.
        public var description: String
    }

    /// The child's process identifier.
    public let processIdentifier: Int32
    /// The file the child's standard output goes to.
    public let standardOutputPath: String
    /// The file the child's standard error goes to.
    public let standardErrorPath: String
    /// The command line, for messages.
    private let commandLine: String
    /// The raw `waitpid` status once the child was reaped; nil while it runs.
    private let status = Mutex<Int32?>(nil)

    /// Starts a program.
    ///
    /// - Parameters:
    ///   - executable: The program.
    ///   - arguments: Its arguments, without the program's name.
    ///   - environment: Its whole environment; the test process's when nil.
    ///   - currentDirectory: Where it runs; the test process's folder when nil.
    ///   - standardOutput: The file its stdout goes to (created or truncated); `/dev/null` by default.
    ///   - standardError: The file its stderr goes to; `/dev/null` by default.
    /// - Throws: ``Failure`` when it cannot be started, with `posix_spawn`'s reason.
    public init(
        _ executable: URL, _ arguments: [String], environment: [String: String]? = nil, currentDirectory: URL? = nil,
        standardOutput: String = "/dev/null", standardError: String = "/dev/null"
    ) throws {
        commandLine = ([executable.path] + arguments).joined(separator: " ")
        standardOutputPath = standardOutput
        standardErrorPath = standardError
        var actions = posix_spawn_file_actions_t()
        posix_spawn_file_actions_init(&actions)
        defer { posix_spawn_file_actions_destroy(&actions) }
        posix_spawn_file_actions_addopen(&actions, 0, "/dev/null", O_RDONLY, 0)
        posix_spawn_file_actions_addopen(&actions, 1, standardOutput, O_WRONLY | O_CREAT | O_TRUNC, 0o644)
        posix_spawn_file_actions_addopen(&actions, 2, standardError, O_WRONLY | O_CREAT | O_TRUNC, 0o644)
        if let currentDirectory {
            guard let addChdir = Self.addChdir, addChdir(&actions, currentDirectory.path) == 0 else {
                throw Failure(description: "cannot run \(commandLine) in \(currentDirectory.path) on this system")
            }
        }
        Self.closeInheritedDescriptors(&actions)
        var attributes = posix_spawnattr_t()
        posix_spawnattr_init(&attributes)
        defer { posix_spawnattr_destroy(&attributes) }
        var signals = sigset_t()
        sigemptyset(&signals)
        posix_spawnattr_setsigmask(&attributes, &signals)
        sigfillset(&signals)
        posix_spawnattr_setsigdefault(&attributes, &signals)
        posix_spawnattr_setflags(&attributes, Int16(POSIX_SPAWN_SETSIGMASK | POSIX_SPAWN_SETSIGDEF))

        let cArguments = ([executable.path] + arguments).map { strdup($0) } + [nil]
        defer { for argument in cArguments { free(argument) } }
        let variables = environment ?? ProcessInfo.processInfo.environment
        let cEnvironment = variables.map { strdup("\($0.key)=\($0.value)") } + [nil]
        defer { for variable in cEnvironment { free(variable) } }
        var pid: pid_t = 0
        let result = posix_spawn(&pid, executable.path, &actions, &attributes, cArguments, cEnvironment)
        guard result == 0 else {
            throw Failure(description: "cannot start \(commandLine): \(String(cString: strerror(result)))")
        }
        processIdentifier = pid
    }

    /// Reaps the child if it is still unreaped, so that no zombie outlives the test.
    deinit {
        if isRunning { kill(processIdentifier, SIGKILL) }
        _ = try? waitUntilExit(timeout: .seconds(10))
    }

    // MARK: - Waiting

    /// How long a child may run before the tests give up on it: `TERN_CHILD_TIMEOUT` seconds when
    /// set, else 15 minutes (generous: a loaded CI machine runs children many times slower).
    public static var defaultTimeout: Duration {
        let seconds = ProcessInfo.processInfo.environment["TERN_CHILD_TIMEOUT"].flatMap(Int.init) ?? 900
        return .seconds(max(1, seconds))
    }

    /// Whether the child is still running (it is reaped when it has ended).
    public var isRunning: Bool { reap() == nil }

    /// Waits for the child to end; kills it and throws when it runs longer than `timeout`.
    ///
    /// - Parameter timeout: How long to wait, such as ``defaultTimeout``.
    /// - Throws: ``Failure`` naming the command once the child was killed and reaped.
    /// - Complexity: Polls every few milliseconds until the child ends.
    public func waitUntilExit(timeout: Duration) throws(Failure) {
        _ = try poll(timeout: timeout, failure: "was still running after \(timeout)") { reap() == nil ? nil : () }
    }

    /// Waits until the child has written a whole first line to ``standardOutputPath``, such as a
    /// helper's `ready`; kills it and throws when that takes longer than `timeout`.
    ///
    /// - Parameter timeout: How long to wait, such as ``defaultTimeout``.
    /// - Returns: The line, without its newline; nil when the child ended without writing one.
    /// - Throws: ``Failure`` naming the command once the child was killed and reaped.
    /// - Complexity: Polls every few milliseconds, rereading the output each time.
    public func firstLine(timeout: Duration) throws(Failure) -> String? {
        try poll(timeout: timeout, failure: "wrote no line in \(timeout)") { () -> String?? in
            let ended = !isRunning
            let output = FileManager.default.contents(atPath: standardOutputPath) ?? Data()
            if let end = output.firstIndex(of: UInt8(ascii: "\n")) {
                return .some(String(decoding: output[..<end], as: UTF8.self))
            }
            return ended ? .some(nil) : nil
        }
    }

    /// Calls `check` every few milliseconds (500 µs, doubled up to 10 ms) until it gives a value;
    /// kills and reaps the child and throws, naming `failure`, once `timeout` has passed.
    private func poll<Value>(timeout: Duration, failure: String, _ check: () -> Value?) throws(Failure) -> Value {
        let clock = ContinuousClock()
        let deadline = clock.now + timeout
        var pause = 500_000  // nanoseconds
        while true {
            if let value = check() { return value }
            guard clock.now < deadline else {
                kill(processIdentifier, SIGKILL)
                while reap() == nil { usleep(1_000) }
                throw Failure(description: "\(commandLine) \(failure); it was killed")
            }
            var interval = timespec(tv_sec: 0, tv_nsec: pause)
            nanosleep(&interval, nil)
            pause = min(pause * 2, 10_000_000)
        }
    }

    /// Waits for the child to end, as Foundation's `Process.waitUntilExit()`; a child that
    /// outlives ``defaultTimeout`` is killed and the test records an issue naming it.
    public func waitUntilExit() {
        do {
            try waitUntilExit(timeout: Self.defaultTimeout)
        } catch {
            Issue.record("\(error)")
        }
    }

    // MARK: - How it ended

    /// What the child wrote to its standard output so far, decoded as UTF-8.
    public var output: String { Self.text(atPath: standardOutputPath) }

    /// What the child wrote to its standard error so far, decoded as UTF-8.
    public var errorOutput: String { Self.text(atPath: standardErrorPath) }

    /// The exit status, or the number of the signal that killed it; 0 while it runs.
    public var terminationStatus: Int32 {
        guard let raw = status.withLock({ $0 }) else { return 0 }
        return Self.signal(raw) == 0 ? (raw >> 8) & 0xff : Self.signal(raw)
    }

    /// Whether it exited or a signal killed it; `.exit` while it runs.
    public var terminationReason: TerminationReason {
        guard let raw = status.withLock({ $0 }), Self.signal(raw) != 0 else { return .exit }
        return .uncaughtSignal
    }

    // MARK: - Non public

    /// `posix_spawn_file_actions_addchdir_np` (glibc 2.29), looked up at run time: Swift's Glibc
    /// module does not declare the `_np` functions.
    private static let addChdir:
        (@convention(c) (UnsafeMutablePointer<posix_spawn_file_actions_t>, UnsafePointer<CChar>) -> Int32)? = symbol(
            "posix_spawn_file_actions_addchdir_np")
    /// Makes a child keep only its standard input, output and error: no descriptor the test
    /// process has open, such as a pipe another test reads to its end, lives on in the child.
    ///
    /// A long-lived child, such as the PostgreSQL server, that inherits a pipe's write end keeps the
    /// pipe open for as long as it runs, and the test reading that pipe waits forever.
    static func closeInheritedDescriptors(_ actions: inout posix_spawn_file_actions_t) {
        _ = addClosefrom?(&actions, 3)
    }

    /// `posix_spawn_file_actions_addclosefrom_np` (glibc 2.34): the child keeps no other descriptor.
    private static let addClosefrom:
        (@convention(c) (UnsafeMutablePointer<posix_spawn_file_actions_t>, Int32) -> Int32)? = symbol(
            "posix_spawn_file_actions_addclosefrom_np")

    /// A file's text, empty when it cannot be read.
    private static func text(atPath path: String) -> String {
        String(decoding: FileManager.default.contents(atPath: path) ?? Data(), as: UTF8.self)
    }

    /// A C function of the running program or its libraries, by name.
    private static func symbol<Function>(_ name: String) -> Function? {
        guard let program = dlopen(nil, RTLD_NOW), let address = dlsym(program, name) else { return nil }
        return unsafeBitCast(address, to: Function.self)
    }

    /// The signal number in a raw wait status, 0 when the child exited (`WTERMSIG`).
    private static func signal(_ raw: Int32) -> Int32 { raw & 0x7f }

    /// Reaps the child if it has ended; returns the raw status, nil while it runs.
    private func reap() -> Int32? {
        status.withLock { status in
            if let status { return status }
            var raw: Int32 = 0
            while true {
                let result = waitpid(processIdentifier, &raw, WNOHANG)
                if result == processIdentifier {
                    status = raw
                    return raw
                }
                if result == 0 { return nil }
                guard errno == EINTR else {
                    // Someone else reaped it (ECHILD): it has ended, with an unknown status.
                    status = 0xff << 8
                    return status
                }
            }
        }
    }
}
