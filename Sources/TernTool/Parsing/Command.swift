/// A `tern` command: a value made from its parsed command line that runs once.
///
/// A command declares its arguments as static ``ArgumentDefinition`` constants, lists them in its
/// ``configuration``, reads them back in ``init(_:)`` (checking what it must, with
/// ``ValidationError``), and does its work in ``run(in:)``.
///
/// ```swift
/// struct GreetCommand: Command {
///     static let who = ArgumentDefinition.positional("NAME", help: "Who to greet.")
///     static let configuration = CommandConfiguration(name: "greet", abstract: "Greets.", arguments: [who])
///     var name: String
///     init(_ arguments: ParsedArguments) throws(ValidationError) {
///         name = try arguments.requiredValue(of: Self.who)
///     }
///     func run(in context: CommandContext) async throws { context.print("hello, \(name)") }
/// }
/// ```
protocol Command {
    /// The command's name, arguments and help.
    static var configuration: CommandConfiguration { get }

    /// Makes the command from its parsed command line.
    ///
    /// - Throws: ``ValidationError`` when values do not make sense together.
    init(_ arguments: ParsedArguments) throws(ValidationError)

    /// Does the command's work, writing results to the context.
    ///
    /// - Throws: ``CommandFailure``, ``ValidationError``, or a Tern error for a failed operation.
    func run(in context: CommandContext) async throws
}
