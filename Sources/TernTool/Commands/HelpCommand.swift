/// `tern help [COMMAND]`: the list of commands, or one command's page.
struct HelpCommand: Command {
    /// The command to explain.
    static let command = ArgumentDefinition.positional(
        "COMMAND", isRequired: false, help: "The command to explain; all commands when omitted.")

    /// The command's name, arguments and help.
    static let configuration = CommandConfiguration(
        name: "help", abstract: "Shows the list of commands, or the options of one command.",
        arguments: [command],
        examples: ["tern help", "tern help model        # the same as: tern model --help"])

    /// The command to explain, or nil for all.
    var commandName: String?

    /// Makes the command from its parsed command line.
    init(_ arguments: ParsedArguments) throws(ValidationError) {
        commandName = arguments.value(of: Self.command)
        if let commandName, Tern.command(named: commandName) == nil {
            throw ValidationError("unknown command '\(commandName)'; run 'tern help' for the list of commands")
        }
    }

    /// Prints the help.
    func run(in context: CommandContext) async throws {
        if let commandName, let command = Tern.command(named: commandName) {
            context.print(HelpFormatter.page(for: command.configuration), terminator: "")
        } else {
            context.print(HelpFormatter.overview(of: Tern.commands), terminator: "")
        }
    }
}
