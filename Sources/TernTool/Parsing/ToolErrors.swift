/// The status a `tern` run ends with.
///
/// The values are a contract (see `tern help`): scripts tell a failed operation from a mistyped
/// command line by them.
public struct ExitCode: Error, Sendable, Hashable {
    /// The numeric status handed to the operating system.
    public var rawValue: Int32

    /// Creates an exit code from its numeric value.
    public init(_ rawValue: Int32) { self.rawValue = rawValue }

    /// The command did what it was asked.
    public static let success = ExitCode(0)
    /// The operation failed: the store or model is bad, a file is missing, a migration is impossible…
    public static let failure = ExitCode(1)
    /// The command line was wrong: an unknown command or option, a missing argument.
    public static let usageError = ExitCode(2)
}

/// A mistake on the command line: the user typed something `tern` cannot understand.
///
/// It ends the run with ``ExitCode/usageError`` (2) and prints its message as the `error:` line,
/// followed by the command's usage line.
///
/// ```swift
/// guard order.allSatisfy({ !$0.isEmpty }) else {
///     throw ValidationError("--order has an empty version name; list names separated by commas")
/// }
/// ```
struct ValidationError: Error, Sendable, Hashable, CustomStringConvertible {
    /// What is wrong and what to do, on one line.
    var message: String

    /// Creates a usage error.
    ///
    /// - Parameter message: What is wrong and what to do, on one line.
    init(_ message: String) { self.message = message }

    /// The message.
    var description: String { message }
}

/// An operation that failed although the command line was right: a missing file, a bad model.
///
/// It ends the run with ``ExitCode/failure`` (1). The message becomes the `error:` line and each
/// detail is printed on a line of its own under it.
///
/// Nothing reaches stdout after a failure, with one deliberate exception: a report that was asked
/// for with `--json` (``report``) is the result a script reads, also when it describes the
/// failure, so it is printed on stdout while stderr gets the `error:` line and the status is 1
/// (`verify --json` on a damaged store, `plan --json` of a migration that cannot run).
///
/// ```swift
/// throw CommandFailure("no version is named 'v9'; use one of: v1, v2", details: ["model: Recipes.xcdatamodeld"])
/// ```
struct CommandFailure: Error, Sendable, Hashable, CustomStringConvertible {
    /// What went wrong and what to do, on one line.
    var message: String
    /// Lines of detail printed under the message.
    var details: [String]
    /// The JSON report the user asked for, printed on stdout despite the failure; nil for none.
    var report: JSONValue?

    /// Creates a failure.
    ///
    /// - Parameters:
    ///   - message: What went wrong and what to do, on one line.
    ///   - details: Lines of detail printed under the message.
    ///   - report: The `--json` report that describes the failure, printed on stdout.
    init(_ message: String, details: [String] = [], report: JSONValue? = nil) {
        self.message = message
        self.details = details
        self.report = report
    }

    /// The message.
    var description: String { message }
}
