import Testing

@testable import TernTool

/// The tool's conventions, checked in-process through a captured output sink.
@Suite struct TernRunTests {
    @Test func versionPrintsOnStdout() async {
        let result = await ToolRunner.run(["--version"])
        #expect(result.status == 0)
        #expect(result.standardOutput == "tern \(Tern.version)\n")
        #expect(result.standardError.isEmpty)
    }

    @Test func helpListsEveryCommand() async {
        let result = await ToolRunner.run(["help"])
        #expect(result.status == 0)
        for command in Tern.commands {
            #expect(result.standardOutput.contains("  \(command.configuration.name) "))
        }
        #expect(await ToolRunner.run(["--help"]).standardOutput == result.standardOutput)
    }

    @Test func everyCommandHasAHelpPageWithUsageOptionsAndAnExample() async {
        for command in Tern.commands {
            let configuration = command.configuration
            let page = await ToolRunner.run([configuration.name, "--help"])
            #expect(page.status == 0)
            #expect(page.standardOutput.contains("USAGE: \(configuration.usage)"))
            #expect(page.standardOutput.contains("EXAMPLES:\n  tern "))
            for argument in configuration.arguments {
                #expect(page.standardOutput.contains(argument.label))
            }
            #expect(await ToolRunner.run(["help", configuration.name]).standardOutput == page.standardOutput)
        }
    }

    @Test(arguments: [["frob"], [], ["help", "frob"], ["help", "--frob"], ["--version", "x"]])
    func usageErrorsExitWithTwoAndOneErrorLine(arguments: [String]) async {
        let result = await ToolRunner.run(arguments)
        #expect(result.status == 2)
        #expect(result.standardOutput.isEmpty)
        #expect(result.errorLines.first?.hasPrefix("error: ") == true)
        #expect(result.errorLines.filter { $0.hasPrefix("error:") }.count == 1)
        #expect(result.errorLines.contains { $0.hasPrefix("usage: tern ") })
    }
}
