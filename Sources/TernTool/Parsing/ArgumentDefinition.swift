/// One thing a command accepts on its command line: a positional argument, an option with a
/// value, or a Boolean flag.
///
/// Commands declare their arguments as static constants and list them in their
/// ``CommandConfiguration``; the parsed values are read back through the same constants.
///
/// ```swift
/// static let model = ArgumentDefinition.positional("MODEL", help: "The .xcdatamodeld bundle.")
/// static let order = ArgumentDefinition.option("order", value: "LIST", help: "Version order.")
/// static let json = ArgumentDefinition.flag("json", help: "Prints one JSON document.")
/// ```
struct ArgumentDefinition: Sendable, Hashable {
    /// What kind of argument this is.
    enum Kind: Sendable, Hashable {
        /// A value given by its place on the command line.
        case positional
        /// `--name VALUE` or `--name=VALUE`.
        case option
        /// `--name`, true when present.
        case flag
    }

    /// What kind of argument this is.
    var kind: Kind
    /// The long name without dashes (`model`), or the value name of a positional (`MODEL`).
    var name: String
    /// A one-letter short name (`o` for `-o`), if any.
    var shortName: Character?
    /// The placeholder for the value in help text (`PATH`).
    var valueName: String
    /// Whether the user must give it.
    var isRequired: Bool
    /// Whether it may be given more than once (an option) or take every remaining value (a positional).
    var isRepeatable: Bool
    /// One line that says what it does.
    var help: String

    // MARK: - Declaring arguments

    /// A positional argument.
    ///
    /// - Parameters:
    ///   - valueName: Its name in help text, upper case (`STORE`).
    ///   - isRequired: Whether the user must give it.
    ///   - help: One line that says what it is.
    static func positional(_ valueName: String, isRequired: Bool = true, help: String) -> Self {
        Self(
            kind: .positional, name: valueName, shortName: nil, valueName: valueName,
            isRequired: isRequired, isRepeatable: false, help: help)
    }

    /// An option that takes a value: `--name VALUE`, `--name=VALUE` or `-n VALUE`.
    ///
    /// - Parameters:
    ///   - name: The long name without dashes.
    ///   - short: A one-letter short name.
    ///   - value: The value's placeholder in help text.
    ///   - isRequired: Whether the user must give it.
    ///   - isRepeatable: Whether it may be given more than once.
    ///   - help: One line that says what it does.
    static func option(
        _ name: String, short: Character? = nil, value: String, isRequired: Bool = false,
        isRepeatable: Bool = false, help: String
    ) -> Self {
        Self(
            kind: .option, name: name, shortName: short, valueName: value, isRequired: isRequired,
            isRepeatable: isRepeatable, help: help)
    }

    /// A Boolean flag: `--name`, true when present.
    ///
    /// - Parameters:
    ///   - name: The long name without dashes.
    ///   - short: A one-letter short name.
    ///   - help: One line that says what it does.
    static func flag(_ name: String, short: Character? = nil, help: String) -> Self {
        Self(
            kind: .flag, name: name, shortName: short, valueName: "", isRequired: false,
            isRepeatable: false, help: help)
    }

    // MARK: - Common flags

    /// `--json`: one JSON document on stdout.
    static let json = flag("json", help: "Prints one JSON document with sorted keys instead of text.")
    /// `--progress`: show progress on stderr even when it is not a terminal.
    static let progress = flag(
        "progress", help: "Shows progress on stderr even when it is not a terminal or the work is short.")
    /// `--quiet`: no progress and no diagnostics other than errors.
    static let quiet = flag("quiet", short: "q", help: "Shows no progress and no notes; errors are still printed.")

    // MARK: - Spelling

    /// How the argument is written in a usage line: `MODEL`, `[--json]`, `--model PATH`, `[--mapping FILE]…`,
    /// `[-o FILE]` (options with a short name use it).
    var usage: String {
        var text: String
        switch kind {
        case .positional: text = valueName
        case .option: text = shortName.map { "-\($0) \(valueName)" } ?? "--\(name) \(valueName)"
        case .flag: text = "--\(name)"
        }
        if !isRequired { text = "[\(text)]" }
        if isRepeatable { text += "…" }
        return text
    }

    /// How the argument is written in the list of a command's help: `-o, --output FILE`.
    var label: String {
        switch kind {
        case .positional: return valueName
        case .option, .flag:
            let long = kind == .option ? "--\(name) \(valueName)" : "--\(name)"
            return shortName.map { "-\($0), \(long)" } ?? long
        }
    }

    /// The name as the user types it, for messages: `--model` or `MODEL`.
    var displayName: String {
        kind == .positional ? valueName : "--\(name)"
    }
}
