import Testing
@testable import TernTool

/// Runs the built `tern` binary as a user would and checks stdout, stderr and the exit status.
///
/// `swift test` builds every target of the package, the `tern` executable included, into the
/// folder that holds the test bundle; ``ToolRunner/executable`` finds it there.
@Suite struct TernExecutableTests {
    @Test func binaryIsBuiltNextToTheTests() {
        #expect(ToolRunner.executable != nil, "run 'swift build' first or set TERN_EXECUTABLE")
    }

    @Test func versionExitsWithZero() throws {
        let result = try ToolRunner.runExecutable(["--version"])
        #expect(result.status == 0)
        #expect(result.standardOutput == "tern \(Tern.version)\n")
        #expect(result.standardError.isEmpty)
    }

    @Test func helpListsTheCommands() throws {
        let result = try ToolRunner.runExecutable(["help"])
        #expect(result.status == 0)
        #expect(result.standardOutput.contains("COMMANDS:"))
        #expect(result.standardOutput.contains("EXIT STATUS:"))
        #expect(result.standardError.isEmpty)
    }

    @Test func commandHelpShowsUsageAndExamples() throws {
        let result = try ToolRunner.runExecutable(["help", "--help"])
        #expect(result.status == 0)
        #expect(result.standardOutput.contains("USAGE: tern help [COMMAND]"))
        #expect(result.standardOutput.contains("EXAMPLES:"))
    }

    @Test func unknownCommandIsAUsageError() throws {
        let result = try ToolRunner.runExecutable(["frobnicate"])
        #expect(result.status == 2)
        #expect(result.standardOutput.isEmpty)
        #expect(result.errorLines.first == "error: unknown command 'frobnicate'; run 'tern help' for the list of commands")
    }

    @Test func unknownFlagIsAUsageErrorWithTheUsageLine() throws {
        let result = try ToolRunner.runExecutable(["help", "--frobnicate"])
        #expect(result.status == 2)
        #expect(result.standardOutput.isEmpty)
        #expect(result.errorLines.first == "error: unknown option '--frobnicate'")
        #expect(result.errorLines.contains("usage: tern help [COMMAND]"))
    }
}
