import Foundation

/// Starts programs with `posix_spawn` and waits for them with `waitpid`.
///
/// Foundation's `Process.waitUntilExit()` polls its run loop about every 50 ms, which would add up
/// to 50 ms to a baseline that runs a program; `waitpid` returns when the child ends.
enum ChildProcess {
    /// Runs a program to its end, its standard input and output redirected to files.
    ///
    /// - Parameters:
    ///   - program: The program's path.
    ///   - arguments: Its arguments, without the program name.
    ///   - standardInput: The file read as its standard input.
    ///   - standardOutput: The file its standard output is written to (created or truncated).
    /// - Returns: The exit status, or 128 + the signal that ended it.
    /// - Throws: ``BenchFailure`` if the program cannot be started.
    static func run(_ program: String, _ arguments: [String], standardInput: String, standardOutput: String) throws
        -> Int32
    {
        var actions = posix_spawn_file_actions_t()
        posix_spawn_file_actions_init(&actions)
        defer { posix_spawn_file_actions_destroy(&actions) }
        posix_spawn_file_actions_addopen(&actions, 0, standardInput, O_RDONLY, 0)
        posix_spawn_file_actions_addopen(&actions, 1, standardOutput, O_WRONLY | O_CREAT | O_TRUNC, 0o644)
        let argv: [UnsafeMutablePointer<CChar>?] = ([program] + arguments).map { strdup($0) } + [nil]
        defer { for argument in argv { free(argument) } }
        var pid = pid_t()
        let started = posix_spawn(&pid, program, &actions, nil, argv, environ)
        guard started == 0 else {
            throw BenchFailure("cannot start \(program): \(String(cString: strerror(started)))")
        }
        var status: Int32 = 0
        while waitpid(pid, &status, 0) == -1 {
            guard errno == EINTR else { throw BenchFailure("waitpid for \(program) failed: errno \(errno)") }
        }
        let signal = status & 0x7f
        return signal == 0 ? (status >> 8) & 0xff : 128 + signal
    }
}
