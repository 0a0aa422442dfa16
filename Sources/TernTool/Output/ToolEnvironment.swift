public import Foundation

/// What a `tern` run sees of the world: where it writes, its environment variables and its
/// working directory. Tests pass their own to run commands in-process.
///
/// ```swift
/// let environment = ToolEnvironment(output: CapturedOutput(), variables: ["NO_COLOR": "1"])
/// ```
public struct ToolEnvironment: Sendable {
    /// Where text goes.
    public var output: any OutputSink
    /// The environment variables (`NO_COLOR`, `COLUMNS`).
    public var variables: [String: String]
    /// The folder relative paths are resolved against.
    public var currentDirectory: URL

    /// Creates an environment.
    ///
    /// - Parameters:
    ///   - output: Where text goes.
    ///   - variables: The environment variables.
    ///   - currentDirectory: The folder relative paths are resolved against; the process's when nil.
    public init(
        output: any OutputSink, variables: [String: String] = [:], currentDirectory: URL? = nil
    ) {
        self.output = output
        self.variables = variables
        self.currentDirectory =
            currentDirectory
            ?? URL(fileURLWithPath: FileManager.default.currentDirectoryPath, isDirectory: true)
    }

    /// The process's stdout, stderr, environment and working directory.
    public static var process: ToolEnvironment {
        ToolEnvironment(output: StandardOutputSink(), variables: ProcessInfo.processInfo.environment)
    }

    /// Whether colour is allowed on a channel: it is a terminal and `NO_COLOR` is unset or empty.
    func allowsColor(on channel: OutputChannel) -> Bool {
        output.isTerminal(channel) && (variables["NO_COLOR"] ?? "").isEmpty
    }

    /// Resolves a path typed by the user against the working directory.
    func url(forPath path: String) -> URL {
        URL(fileURLWithPath: path, relativeTo: currentDirectory).standardizedFileURL
    }
}
