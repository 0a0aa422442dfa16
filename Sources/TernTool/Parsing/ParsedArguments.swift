/// The values a command line gave to a command's declared arguments.
///
/// Read values back with the same ``ArgumentDefinition`` constants the command declared.
///
/// ```swift
/// let parsed = try CommandLineParser.parse(["Recipes.xcdatamodeld", "--json"], for: ModelCommand.configuration)
/// parsed.value(of: ModelCommand.model)   // "Recipes.xcdatamodeld"
/// parsed.isSet(.json)                     // true
/// ```
struct ParsedArguments: Sendable, Hashable {
    /// Every value given, by argument name, in command-line order.
    private(set) var values: [String: [String]] = [:]
    /// Whether `--help` or `-h` was given.
    var wantsHelp = false

    // MARK: - Reading values

    /// The value of an option or positional, or nil when it was not given.
    func value(of argument: ArgumentDefinition) -> String? {
        values[argument.name]?.last
    }

    /// The value of a required option or positional.
    ///
    /// - Throws: ``ValidationError`` when it was not given (the parser reports that first, so this
    ///   happens only when a command reads an argument it did not declare required).
    func requiredValue(of argument: ArgumentDefinition) throws(ValidationError) -> String {
        guard let value = value(of: argument) else {
            throw ValidationError("missing \(argument.kind == .positional ? "argument" : "option") \(argument.usage)")
        }
        return value
    }

    /// Every value of a repeatable option, in command-line order.
    func values(of argument: ArgumentDefinition) -> [String] {
        values[argument.name] ?? []
    }

    /// Whether a flag was given.
    func isSet(_ flag: ArgumentDefinition) -> Bool {
        values[flag.name] != nil
    }

    // MARK: - Non public

    /// Records one value.
    mutating func append(_ value: String, for argument: ArgumentDefinition) {
        values[argument.name, default: []].append(value)
    }
}
