import Foundation
import TernTestSupport
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
        #expect(
            result.errorLines.first == "error: unknown command 'frobnicate'; run 'tern help' for the list of commands")
    }

    @Test func unknownFlagIsAUsageErrorWithTheUsageLine() throws {
        let result = try ToolRunner.runExecutable(["help", "--frobnicate"])
        #expect(result.status == 2)
        #expect(result.standardOutput.isEmpty)
        #expect(result.errorLines.first == "error: unknown option '--frobnicate'")
        #expect(result.errorLines.contains("usage: tern help [COMMAND]"))
    }
}

/// `tern model` and its failures, through the binary.
@Suite struct ModelExecutableTests {
    @Test func modelPrintsJSONOnStdout() throws {
        let result = try ToolRunner.runExecutable(["model", Fixtures.sampleModel.path, "--json"])
        #expect(result.status == 0)
        #expect(result.standardError.isEmpty)
        #expect(result.standardOutput.contains("\"current\" : \"SampleModel\""))
        #expect(result.standardOutput.contains("nlVVKQchWCING6zS+Ao9rUkZ90oyqovp7iKmp7QSbI8="))
    }

    @Test func missingArgumentIsAUsageError() throws {
        let result = try ToolRunner.runExecutable(["model", "--json"])
        #expect(result.status == 2)
        #expect(result.standardOutput.isEmpty)
        #expect(
            result.errorLines == [
                "error: missing argument MODEL",
                "usage: tern model MODEL [--version NAME] [--order LIST] [--json]",
                "See 'tern model --help' for every option.",
            ])
    }

    @Test func missingFileFailsWithExitOne() throws {
        let tmp = try TemporaryDirectory()
        let missing = tmp.path("Missing.xcdatamodeld").path
        let result = try ToolRunner.runExecutable(["model", missing])
        #expect(result.status == 1)
        #expect(result.standardOutput.isEmpty)
        #expect(
            result.errorLines == [
                "error: no model exists at \(missing); give an .xcdatamodeld bundle or an .xcdatamodel folder"
            ])
    }

    @Test func modelHelpListsEveryOption() throws {
        let result = try ToolRunner.runExecutable(["model", "--help"])
        #expect(result.status == 0)
        for option in ["MODEL", "--version NAME", "--order LIST", "--json", "EXAMPLES:"] {
            #expect(result.standardOutput.contains(option))
        }
    }
}

/// `tern info` through the binary.
@Suite struct InfoExecutableTests {
    @Test func infoOnACopiedStore() throws {
        let tmp = try TemporaryDirectory()
        let copy = try tmp.copy(Fixtures.url("CoreDataPlus/SampleModel/Fixtures/SampleModel_V1.sqlite"))
        let result = try ToolRunner.runExecutable(["info", copy.path, "--model=\(Fixtures.sampleModel.path)"])
        #expect(result.status == 0)
        #expect(result.standardError.isEmpty)
        #expect(result.standardOutput.contains("written by model version: SampleModel\n"))
    }

    @Test func missingStoreFailsWithExitOne() throws {
        let result = try ToolRunner.runExecutable(["info", "/nonexistent/store.sqlite", "--json"])
        #expect(result.status == 1)
        #expect(result.standardOutput.isEmpty)
        #expect(result.errorLines == ["error: no store exists at /nonexistent/store.sqlite; check the path"])
    }
}

/// `tern create` and `tern export` through the binary.
@Suite struct StoreExecutableTests {
    @Test func createThenExportAnEmptyStore() throws {
        let tmp = try TemporaryDirectory()
        let store = tmp.path("New.sqlite").path
        let created = try ToolRunner.runExecutable(["create", store, "--model", Fixtures.sampleModel.path])
        #expect(created.status == 0)
        let exported = try ToolRunner.runExecutable(["export", store])
        #expect(exported.status == 0)
        #expect(exported.standardError.isEmpty)
        #expect(
            exported.standardOutput
                == "{\n\"Car\": [],\n\"ExpensiveSportCar\": [],\n\"Person\": [],\n\"SportCar\": []\n}\n")
    }

    @Test func exportOfAMissingStoreFails() throws {
        let result = try ToolRunner.runExecutable(["export", "/nonexistent/store.sqlite"])
        #expect(result.status == 1)
        #expect(result.standardOutput.isEmpty)
        #expect(result.errorLines == ["error: no store exists at /nonexistent/store.sqlite; check the path"])
    }
}
