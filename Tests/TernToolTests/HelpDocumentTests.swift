import Foundation
import TernTestSupport
import Testing

@testable import TernTool

/// `docs/CommandLine.md` is the help output itself; this keeps the two the same.
@Suite struct HelpDocumentTests {
    /// The document the help output makes.
    static func document() -> String {
        var text = """
            # The `tern` command

            This page is the output of `tern help` and of `tern <command> --help` for each command,
            which are the tool's reference. `HelpDocumentTests` checks that it matches the tool; after
            changing a command's help, paste the new output here.

            ## tern help

            ```text
            \(HelpFormatter.overview(of: Tern.commands))```

            """
        for command in Tern.commands where command.configuration.name != "help" {
            text += """

                ## tern \(command.configuration.name)

                ```text
                \(HelpFormatter.page(for: command.configuration))```

                """
        }
        return text
    }

    @Test func documentMatchesTheHelpOutput() throws {
        let url = Fixtures.root.deletingLastPathComponent().deletingLastPathComponent()
            .appendingPathComponent("docs/CommandLine.md")
        if ProcessInfo.processInfo.environment["TERN_UPDATE_DOCS"] == "1" {
            try Self.document().write(to: url, atomically: true, encoding: .utf8)
        }
        let written = try String(contentsOf: url, encoding: .utf8)
        #expect(
            written == Self.document(),
            "docs/CommandLine.md is out of date with the help output; run the tests with TERN_UPDATE_DOCS=1")
    }
}
