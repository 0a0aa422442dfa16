import Foundation
import TernTestSupport
import Testing

/// The README's command-line tour ("On a real Core Data store"), run through the built binary
/// as written, on copies of the fixtures laid out under the same relative paths.
@Suite struct ReadmeCommandLineTests {
    /// One `$ swift run tern …` command of the README and the output it shows.
    struct Example {
        var arguments: [String]
        var output: [String]
    }

    /// The README at the root of the repository.
    static let readme = Fixtures.root.deletingLastPathComponent().deletingLastPathComponent()
        .appendingPathComponent("README.md")

    /// The commands of the tour's shell block and their shown output.
    static func examples() throws -> [Example] {
        let text = try String(contentsOf: readme, encoding: .utf8)
        let section = try #require(text.range(of: "### On a real Core Data store"))
        let start = try #require(text.range(of: "```sh\n", range: section.upperBound..<text.endIndex))
        let end = try #require(text.range(of: "\n```", range: start.upperBound..<text.endIndex))
        var examples: [Example] = []
        var continued = false
        for line in text[start.upperBound..<end.lowerBound].split(separator: "\n", omittingEmptySubsequences: false) {
            var words = String(line)
            if words.hasPrefix("$ swift run tern ") || continued {
                let isContinued = words.hasSuffix("\\")
                if isContinued { words.removeLast() }
                let parsed = words.split(separator: " ").map(String.init).filter { !$0.isEmpty }
                if continued {
                    examples[examples.count - 1].arguments += parsed
                } else {
                    examples.append(Example(arguments: Array(parsed.dropFirst(4)), output: []))
                }
                continued = isContinued
            } else {
                examples[examples.count - 1].output.append(words)
            }
        }
        return examples
    }

    @Test func tourCommandsPrintWhatTheReadmeShows() throws {
        let examples = try Self.examples()
        #expect(examples.count == 2)
        let tmp = try TemporaryDirectory()
        // The fixtures the tour names, copied to the same relative paths (never opened in place).
        for example in examples {
            for argument in example.arguments where argument.hasPrefix("Tests/Fixtures/") {
                let source = Fixtures.url(String(argument.dropFirst("Tests/Fixtures/".count)))
                let copy = tmp.path(argument)
                guard !FileManager.default.fileExists(atPath: copy.path) else { continue }
                try FileManager.default.createDirectory(
                    at: copy.deletingLastPathComponent(), withIntermediateDirectories: true)
                try FileManager.default.copyItem(at: source, to: copy)
            }
        }
        let executable = try #require(ToolRunner.executable)
        for example in examples {
            let result = try ToolRunner.runProgram(executable.path, example.arguments, currentDirectory: tmp.url)
            #expect(result.status == 0 && result.standardError.isEmpty, "\(example.arguments): \(result.standardError)")
            let lines = result.standardOutput.split(separator: "\n", omittingEmptySubsequences: false).map(String.init)
            #expect(lines.count >= example.output.count)
            for (index, shown) in example.output.enumerated() where index < lines.count {
                if shown.hasSuffix("…") {
                    #expect(
                        lines[index].hasPrefix(shown.dropLast()), "line \(index + 1) of tern \(example.arguments[0])")
                } else {
                    #expect(lines[index] == shown, "line \(index + 1) of tern \(example.arguments[0])")
                }
            }
        }
    }
}
