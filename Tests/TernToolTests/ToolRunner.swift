import Foundation
import TernTestSupport
import TernTool

/// What one run of `tern` printed and returned.
struct ToolResult: Sendable {
    /// The exit status.
    var status: Int32
    /// Everything written to stdout.
    var standardOutput: String
    /// Everything written to stderr.
    var standardError: String

    /// The stderr lines.
    var errorLines: [String] { standardError.split(separator: "\n").map(String.init) }
}

/// Runs `tern` in-process with captured output, or as the built binary a user would run.
enum ToolRunner {
    /// Runs the tool in-process.
    ///
    /// - Parameters:
    ///   - arguments: The command line after `tern`.
    ///   - terminal: Whether stdout and stderr claim to be terminals.
    ///   - variables: The environment variables.
    static func run(
        _ arguments: [String], terminal: Bool = false, variables: [String: String] = [:]
    ) async -> ToolResult {
        let captured = CapturedOutput(terminal: terminal)
        let status = await Tern.run(arguments, environment: ToolEnvironment(output: captured, variables: variables))
        return ToolResult(
            status: status, standardOutput: captured.standardOutput, standardError: captured.standardError)
    }

    /// The built `tern` binary.
    ///
    /// `swift build` and `swift test` put it in the build folder, next to the test bundle
    /// (`.build/<triple>/<configuration>/tern`); set `TERN_EXECUTABLE` to test another one.
    static let executable: URL? = {
        let environment = ProcessInfo.processInfo.environment
        if let path = environment["TERN_EXECUTABLE"] { return URL(fileURLWithPath: path) }
        var folders = [Bundle.main.bundleURL, Bundle.main.bundleURL.deletingLastPathComponent()]
        if let first = CommandLine.arguments.first {
            folders.append(URL(fileURLWithPath: first).deletingLastPathComponent())
        }
        return folders.map { $0.appendingPathComponent("tern") }
            .first { FileManager.default.isExecutableFile(atPath: $0.path) }
    }()

    /// Runs the built binary as a process, with stdout and stderr in files.
    ///
    /// - Parameters:
    ///   - arguments: The command line after `tern`.
    ///   - variables: Extra environment variables.
    /// - Throws: When the binary cannot be found or started.
    static func runExecutable(_ arguments: [String], variables: [String: String] = [:]) throws -> ToolResult {
        guard let executable else { throw MissingExecutable() }
        return try runProgram(executable.path, arguments, variables: variables)
    }

    /// Runs a program as a process, with stdout and stderr in files and no stdin.
    ///
    /// The child is started with `posix_spawn` and waited for with `waitpid` (``ChildProcess``),
    /// not Foundation's `Process`, whose run loop once missed a child's end and hung the tests.
    ///
    /// - Parameters:
    ///   - path: The program.
    ///   - arguments: Its arguments.
    ///   - variables: Extra environment variables.
    ///   - currentDirectory: Where it runs; the test process's folder when nil.
    ///   - timeout: How long it may run; a child still running then is killed and this throws.
    /// - Throws: When the program cannot be started, or when it outlived `timeout`.
    static func runProgram(
        _ path: String, _ arguments: [String], variables: [String: String] = [:], currentDirectory: URL? = nil,
        timeout: Duration = ChildProcess.defaultTimeout
    ) throws -> ToolResult {
        let folder = FileManager.default.temporaryDirectory
            .appendingPathComponent("tern-run-\(UUID().uuidString)", isDirectory: true)
        try FileManager.default.createDirectory(at: folder, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(at: folder) }
        let outURL = folder.appendingPathComponent("stdout")
        let errURL = folder.appendingPathComponent("stderr")
        let child = try ChildProcess(
            URL(fileURLWithPath: path), arguments,
            environment: ProcessInfo.processInfo.environment.merging(variables) { _, new in new },
            currentDirectory: currentDirectory, standardOutput: outURL.path, standardError: errURL.path)
        try child.waitUntilExit(timeout: timeout)
        let status = child.terminationReason == .exit ? child.terminationStatus : 128 + child.terminationStatus
        return ToolResult(
            status: status,
            standardOutput: String(decoding: try Data(contentsOf: outURL), as: UTF8.self),
            standardError: String(decoding: try Data(contentsOf: errURL), as: UTF8.self))
    }

    /// The binary was not built.
    struct MissingExecutable: Error, CustomStringConvertible {
        var description: String {
            "the tern binary is not next to the test bundle; run 'swift build' first or set TERN_EXECUTABLE"
        }
    }
}
