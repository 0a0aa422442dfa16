import Foundation

/// The `tern` command-line tool as a library, so that tests can run it in-process.
///
/// `main.swift` only calls ``main(_:)``; tests call ``run(_:environment:)`` with a
/// ``CapturedOutput`` to check stdout, stderr and the exit status without a process.
///
/// ```swift
/// let captured = CapturedOutput()
/// let status = await Tern.run(["help"], environment: ToolEnvironment(output: captured))
/// ```
public enum Tern {
    /// The tool's version.
    public static let version = "0.1.0"

    /// Every command, in the order `tern help` lists them.
    static var commands: [any Command.Type] {
        [
            HelpCommand.self,
            ModelCommand.self,
            InfoCommand.self,
            CreateCommand.self,
            ConvertCommand.self,
            ImportCommand.self,
            ExportCommand.self,
            PlanCommand.self,
            MigrateCommand.self,
            CheckMigrationsCommand.self,
            LintCommand.self,
            VerifyCommand.self,
            RecoverCommand.self,
            HistoryCommand.self,
            SyncCommand.self,
            GenerateCommand.self,
            DemoCommand.self,
        ]
    }

    // MARK: - Running

    /// Runs the tool with the process's stdout, stderr and environment.
    ///
    /// - Parameter arguments: The command-line arguments, without the program name.
    /// - Returns: The exit status: 0 success, 1 failure, 2 usage error.
    public static func main(_ arguments: [String]) async -> Int32 {
        await run(arguments, environment: .process)
    }

    /// Runs the tool in a given environment.
    ///
    /// - Parameters:
    ///   - arguments: The command-line arguments, without the program name.
    ///   - environment: Where output goes, the environment variables and the working directory.
    /// - Returns: The exit status: 0 success, 1 failure, 2 usage error.
    public static func run(_ arguments: [String], environment: ToolEnvironment) async -> Int32 {
        let output = environment.output
        guard let name = arguments.first else {
            let error = ValidationError("missing command; run 'tern help' for the list of commands")
            return report(error, of: nil, to: output).rawValue
        }
        switch name {
        case "--version":
            guard arguments.count == 1 else {
                return report(ValidationError("--version takes no arguments"), of: nil, to: output).rawValue
            }
            output.write("tern \(version)\n", to: .standardOutput)
            return ExitCode.success.rawValue
        case "--help", "-h":
            output.write(HelpFormatter.overview(of: commands), to: .standardOutput)
            return ExitCode.success.rawValue
        default:
            guard let command = command(named: name) else {
                let error = ValidationError("unknown command '\(name)'; run 'tern help' for the list of commands")
                return report(error, of: nil, to: output).rawValue
            }
            return await run(command, Array(arguments.dropFirst()), environment: environment).rawValue
        }
    }

    // MARK: - Non public

    /// The command with that name.
    static func command(named name: String) -> (any Command.Type)? {
        commands.first { $0.configuration.name == name }
    }

    /// Parses and runs one command; results reach stdout only when it succeeds (or, for a
    /// `--json` report that describes a failure, with the failure: ``CommandFailure/report``).
    private static func run(
        _ type: any Command.Type, _ arguments: [String], environment: ToolEnvironment
    ) async -> ExitCode {
        let configuration = type.configuration
        do {
            let parsed = try CommandLineParser.parse(arguments, for: configuration)
            if parsed.wantsHelp {
                environment.output.write(HelpFormatter.page(for: configuration), to: .standardOutput)
                return .success
            }
            let command = try type.init(parsed)
            let context = CommandContext(
                environment: environment, quiet: parsed.isSet(.quiet), progress: parsed.isSet(.progress))
            try await command.run(in: context)
            try context.flush()
            return .success
        } catch {
            return report(error, of: configuration, to: environment.output)
        }
    }

    /// Prints an error as one `error:` line (and detail lines) on stderr and picks the exit status.
    private static func report(
        _ error: any Error, of configuration: CommandConfiguration?, to output: any OutputSink
    ) -> ExitCode {
        let status: ExitCode
        var lines: [String]
        switch error {
        case let exit as ExitCode:
            return exit
        case let usage as ValidationError:
            status = .usageError
            lines = [usage.message]
            if let configuration {
                lines += [
                    "usage: \(configuration.usage)",
                    "See 'tern \(configuration.name) --help' for every option.",
                ]
            } else {
                lines.append("usage: tern <command> [arguments] [options]")
            }
        case let failure as CommandFailure:
            status = .failure
            lines = [failure.message] + failure.details
            // A report asked for with --json is the result, also of a failure (see CommandFailure).
            if let report = failure.report { output.write(report.encoded() + "\n", to: .standardOutput) }
        case let cocoa as CocoaError:
            status = .failure
            lines = [cocoa.localizedDescription + (cocoa.filePath.map { " (\($0))" } ?? "")]
        default:
            status = .failure
            lines = String(describing: error).split(separator: "\n", omittingEmptySubsequences: true)
                .map(String.init)
            if lines.isEmpty { lines = ["the operation failed"] }
        }
        output.write("error: " + lines.joined(separator: "\n") + "\n", to: .standardError)
        return status
    }
}
