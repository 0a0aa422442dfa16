/// Matches command-line words against a command's declared arguments.
///
/// Accepts `--name VALUE`, `--name=VALUE`, `-n VALUE`, Boolean `--flag`, positionals in order, and
/// `--` to end options. Unknown options, missing values and missing arguments are
/// ``ValidationError``s. `--help` or `-h` anywhere asks for help and skips every other check.
///
/// ```swift
/// let parsed = try CommandLineParser.parse(["--model=M.xcdatamodeld", "store.sqlite"], for: InfoCommand.configuration)
/// ```
enum CommandLineParser {
    /// Parses the words that follow the command's name.
    ///
    /// - Parameters:
    ///   - words: The command-line words after the command name.
    ///   - configuration: The command's declaration.
    /// - Returns: The values given.
    /// - Throws: ``ValidationError`` for an unknown option, a missing or unexpected value, or a
    ///   missing required argument.
    /// - Complexity: O(*n* × *m*) for *n* words and *m* declared arguments.
    static func parse(
        _ words: [String], for configuration: CommandConfiguration
    ) throws(ValidationError) -> ParsedArguments {
        var parsed = ParsedArguments()
        if words.prefix(while: { $0 != "--" }).contains(where: { $0 == "--help" || $0 == "-h" }) {
            parsed.wantsHelp = true
            return parsed
        }
        var positionals: [String] = []
        var index = 0
        var optionsEnded = false
        while index < words.count {
            let word = words[index]
            index += 1
            if optionsEnded || word == "-" || !word.hasPrefix("-") {
                positionals.append(word)
                continue
            }
            if word == "--" {
                optionsEnded = true
                continue
            }
            let (spelling, inlineValue) = split(word)
            guard let argument = find(spelling, in: configuration) else {
                throw ValidationError("unknown option '\(spelling)'")
            }
            switch argument.kind {
            case .flag:
                if inlineValue != nil { throw ValidationError("\(spelling) takes no value") }
                parsed.append("", for: argument)
            case .option:
                var value = inlineValue
                if value == nil, index < words.count, !words[index].hasPrefix("--") {
                    value = words[index]
                    index += 1
                }
                guard let value else {
                    throw ValidationError("missing value for \(spelling) \(argument.valueName)")
                }
                if !argument.isRepeatable, parsed.value(of: argument) != nil {
                    throw ValidationError("\(spelling) was given more than once; give it once")
                }
                parsed.append(value, for: argument)
            case .positional:
                preconditionFailure("positionals are never found by option spelling")
            }
        }
        try assign(positionals, to: configuration.positionals, in: &parsed)
        for argument in configuration.arguments where argument.isRequired && argument.kind == .option {
            guard parsed.value(of: argument) != nil else {
                throw ValidationError("missing option \(argument.label)")
            }
        }
        return parsed
    }

    // MARK: - Non public

    /// Splits `--name=value` into its spelling and inline value.
    private static func split(_ word: String) -> (spelling: String, value: String?) {
        guard let equals = word.firstIndex(of: "=") else { return (word, nil) }
        return (String(word[..<equals]), String(word[word.index(after: equals)...]))
    }

    /// The option or flag a spelling (`--model`, `-o`) names.
    private static func find(_ spelling: String, in configuration: CommandConfiguration) -> ArgumentDefinition? {
        configuration.arguments.first { argument in
            guard argument.kind != .positional else { return false }
            if spelling == "--\(argument.name)" { return true }
            if let short = argument.shortName, spelling == "-\(short)" { return true }
            return false
        }
    }

    /// Hands positional words to the declared positionals in order.
    private static func assign(
        _ words: [String], to declared: [ArgumentDefinition], in parsed: inout ParsedArguments
    ) throws(ValidationError) {
        var remaining = words[...]
        for argument in declared {
            if argument.isRepeatable {
                for word in remaining { parsed.append(word, for: argument) }
                remaining = []
            } else if let word = remaining.popFirst() {
                parsed.append(word, for: argument)
            }
            if argument.isRequired, parsed.value(of: argument) == nil {
                throw ValidationError("missing argument \(argument.valueName)")
            }
        }
        if let extra = remaining.first {
            throw ValidationError("unexpected argument '\(extra)'")
        }
    }
}
