/// What a command is called, what it accepts and how it is explained: the static description
/// every ``Command`` gives, from which parsing and help are derived.
///
/// ```swift
/// static let configuration = CommandConfiguration(
///     name: "model", abstract: "Lists a model's versions and their entity version hashes.",
///     arguments: [model, version, order, .json],
///     examples: ["tern model Recipes.xcdatamodeld --json | jq .current"])
/// ```
struct CommandConfiguration: Sendable {
    /// The command's name, as typed after `tern`.
    var name: String
    /// One sentence that says what the command does.
    var abstract: String
    /// Paragraphs that explain more, printed under the options in help.
    var discussion: String
    /// The arguments, options and flags, in the order help lists them.
    var arguments: [ArgumentDefinition]
    /// Command lines that show typical use, each with an optional comment.
    var examples: [String]

    /// Creates a configuration.
    ///
    /// - Parameters:
    ///   - name: The command's name.
    ///   - abstract: One sentence that says what it does.
    ///   - discussion: Paragraphs that explain more.
    ///   - arguments: The arguments, options and flags.
    ///   - examples: Typical command lines.
    /// - Precondition: Names are unique and at most the last positional is optional or repeatable.
    init(
        name: String, abstract: String, discussion: String = "", arguments: [ArgumentDefinition] = [],
        examples: [String] = []
    ) {
        let names = arguments.map(\.name) + arguments.compactMap { $0.shortName.map(String.init) }
        precondition(Set(names).count == names.count, "command \(name) declares an argument twice")
        self.name = name
        self.abstract = abstract
        self.discussion = discussion
        self.arguments = arguments
        self.examples = examples
    }

    /// The usage line: `tern model MODEL [--version NAME] [--json]`.
    var usage: String {
        (["tern", name] + arguments.map(\.usage)).joined(separator: " ")
    }

    /// The positional arguments, in order.
    var positionals: [ArgumentDefinition] { arguments.filter { $0.kind == .positional } }
}
