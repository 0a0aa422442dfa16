/// Writes `tern`'s help text: the list of commands and each command's page.
///
/// The help text is the tool's reference documentation, so every option is listed with what it
/// does, and every command shows examples.
enum HelpFormatter {
    /// The width of the label column.
    private static let labelWidth = 26

    /// The general help: what `tern` is, its conventions and its commands.
    ///
    /// - Parameter commands: The commands to list.
    static func overview(of commands: [any Command.Type]) -> String {
        var lines = [
            "OVERVIEW: tern reads, creates and exports Core Data-compatible models and stores.",
            "",
            "USAGE: tern <command> [arguments] [options]",
            "       tern help [<command>]",
            "       tern --version",
            "",
            "COMMANDS:",
        ]
        for command in commands {
            lines.append(row(command.configuration.name, command.configuration.abstract))
        }
        lines += [
            "",
            "CONVENTIONS:",
            "  Results go to stdout; errors, notes and progress go to stderr. --json prints exactly one",
            "  JSON document (UTF-8, keys sorted). A progress bar shows on stderr for work longer than",
            "  about a second when stderr is a terminal, always with --progress, never with --quiet;",
            "  NO_COLOR turns colour off.",
            "",
            "  MODEL is an .xcdatamodeld bundle or one .xcdatamodel folder (Xcode 3 ones too), or the",
            "  compiled .momd or .mom an app ships. In a bundle the current version is the one",
            "  .xccurrentversion (VersionInfo.plist) names; a version that cannot be read is left out",
            "  with a warning. Versions are in migration order: --order \"v1,v2,...\" when given, else",
            "  natural sort of the names with the current version last. Models are read as Xcode's",
            "  compiler reads them: a value it reads leniently (\"NO\" as an integer default is 0) gives",
            "  one 'warning:' line on stderr, even with --quiet; a model without meaning (a dangling",
            "  relationship, duplicate names, an inheritance cycle) is an error.",
            "",
            "  STORE is a store file, whose type (SQLite, binary or XML) is found from its contents, never",
            "  from its name; or a PostgreSQL store named by its URL, postgres://user@host/db?schema=s.",
            "",
            "EXIT STATUS:",
            "  0  success",
            "  1  the operation failed (a missing file, a bad model or store, a migration that cannot",
            "     run); one 'error:' line on stderr, with detail lines under it where useful",
            "  2  usage error (unknown command or option, missing argument); 'error:' and a usage line",
            "  Nothing is printed on stdout after a failure, with one deliberate exception: a report",
            "  asked for with --json (verify on a damaged store, plan of a migration that cannot run)",
            "  is the result a script reads, so it is printed on stdout although the status is 1.",
            "",
            "See 'tern help <command>' or 'tern <command> --help' for a command's options.",
        ]
        return lines.joined(separator: "\n") + "\n"
    }

    /// A command's page: overview, usage, arguments, options, discussion and examples.
    ///
    /// - Parameter configuration: The command's configuration.
    static func page(for configuration: CommandConfiguration) -> String {
        var lines = ["OVERVIEW: \(configuration.abstract)", "", "USAGE: \(configuration.usage)"]
        let positionals = configuration.positionals
        if !positionals.isEmpty {
            lines += ["", "ARGUMENTS:"]
            lines += positionals.map { row($0.label, $0.help) }
        }
        lines += ["", "OPTIONS:"]
        for argument in configuration.arguments where argument.kind != .positional {
            let repeatNote = argument.isRepeatable ? " May be repeated." : ""
            let requiredNote = argument.isRequired ? " Required." : ""
            lines.append(row(argument.label, argument.help + requiredNote + repeatNote))
        }
        lines.append(row("-h, --help", "Shows this help."))
        if !configuration.discussion.isEmpty {
            lines += ["", "DISCUSSION:"]
            lines += configuration.discussion.split(separator: "\n", omittingEmptySubsequences: false)
                .map { $0.isEmpty ? "" : "  " + $0 }
        }
        if !configuration.examples.isEmpty {
            lines += ["", "EXAMPLES:"]
            lines += configuration.examples.map { "  " + $0 }
        }
        return lines.joined(separator: "\n") + "\n"
    }

    // MARK: - Non public

    /// The width help text is wrapped to.
    private static let lineWidth = 100

    /// A label and its explanation, aligned in two columns, the explanation wrapped.
    private static func row(_ label: String, _ text: String) -> String {
        let indent = String(repeating: " ", count: labelWidth)
        var lines: [String] = []
        var line = ""
        for word in text.split(separator: " ") {
            if !line.isEmpty, labelWidth + line.count + 1 + word.count > lineWidth {
                lines.append(line)
                line = ""
            }
            line += (line.isEmpty ? "" : " ") + word
        }
        lines.append(line)
        let padded = "  " + label
        let first =
            padded.count < labelWidth
            ? padded + String(repeating: " ", count: labelWidth - padded.count) + lines[0]
            : padded + "\n" + indent + lines[0]
        return ([first] + lines.dropFirst().map { indent + $0 }).joined(separator: "\n")
    }
}
