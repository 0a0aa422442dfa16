import Testing

@testable import TernTool

@Suite struct CommandLineParserTests {
    static let store = ArgumentDefinition.positional("STORE", help: "The store.")
    static let destination = ArgumentDefinition.positional("DEST", isRequired: false, help: "Where.")
    static let model = ArgumentDefinition.option("model", value: "PATH", isRequired: true, help: "The model.")
    static let mapping = ArgumentDefinition.option("mapping", value: "FILE", isRepeatable: true, help: "Maps.")
    static let output = ArgumentDefinition.option("output", short: "o", value: "FILE", help: "Out.")
    static let configuration = CommandConfiguration(
        name: "test", abstract: "Tests.", arguments: [store, destination, model, mapping, output, .json])

    func parse(_ words: [String]) throws(ValidationError) -> ParsedArguments {
        try CommandLineParser.parse(words, for: Self.configuration)
    }

    @Test func readsOptionsInBothSpellingsAndPositionalsInOrder() throws {
        let parsed = try parse(["a.sqlite", "--model", "M.xcdatamodeld", "b.sqlite", "--json"])
        #expect(parsed.value(of: Self.store) == "a.sqlite")
        #expect(parsed.value(of: Self.destination) == "b.sqlite")
        #expect(parsed.value(of: Self.model) == "M.xcdatamodeld")
        #expect(parsed.isSet(.json))
        let equals = try parse(["--model=x=y", "a"])
        #expect(equals.value(of: Self.model) == "x=y")
        #expect(!equals.isSet(.json))
        #expect(equals.value(of: Self.destination) == nil)
    }

    @Test func collectsRepeatedOptionsAndShortNames() throws {
        let parsed = try parse(["a", "--model", "m", "--mapping", "1.json", "--mapping=2.json", "-o", "out"])
        #expect(parsed.values(of: Self.mapping) == ["1.json", "2.json"])
        #expect(parsed.value(of: Self.output) == "out")
    }

    @Test func doubleDashEndsOptions() throws {
        let parsed = try parse(["--model", "m", "--", "--odd-name"])
        #expect(parsed.value(of: Self.store) == "--odd-name")
    }

    @Test(arguments: [
        (["a", "--model", "m", "--frob"], "unknown option '--frob'"),
        (["a", "--model"], "missing value for --model PATH"),
        (["a", "--model", "--json"], "missing value for --model PATH"),
        (["--model", "m"], "missing argument STORE"),
        (["a"], "missing option --model PATH"),
        (["a", "b", "c", "--model", "m"], "unexpected argument 'c'"),
        (["a", "--model", "m", "--json=yes"], "--json takes no value"),
        (["a", "--model", "m", "--model", "n"], "--model was given more than once; give it once"),
        (["a", "--model", "m", "-x"], "unknown option '-x'"),
    ])
    func reportsUsageErrors(words: [String], message: String) {
        #expect(throws: ValidationError(message)) { try parse(words) }
    }

    @Test func helpWinsOverEveryOtherCheck() throws {
        #expect(try parse(["--frob", "-h"]).wantsHelp)
        #expect(try parse(["--help"]).wantsHelp)
        #expect(throws: ValidationError("missing option --model PATH")) { try parse(["--", "--help"]) }
    }

    @Test func usageLineShowsWhatIsOptionalAndRepeatable() {
        #expect(
            Self.configuration.usage
                == "tern test STORE [DEST] --model PATH [--mapping FILE]… [-o FILE] [--json]")
        #expect(Self.output.label == "-o, --output FILE")
    }
}
