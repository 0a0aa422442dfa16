public import TernCore

/// How a property mapping computes a destination value: Core Data's mapping value expressions,
/// in a small language of its own.
///
/// An expression reads the source object through `$source.keyPath`, combines literals with
/// arithmetic, and converts values with functions. Parse one from text, print it back with
/// ``description``, check it against the models with ``MappingModel/validate(source:destination:otherPasses:)``,
/// and evaluate it with ``evaluate(source:environment:)``.
///
/// ```swift
/// let stamp = try ValueExpression("timeInterval($source.timeStamp)")
/// let label = try ValueExpression(#"formatDate($source.timeStamp, "yyyy-MM-dd HH:mm")"#)
/// let total = try ValueExpression("$source.price * $source.quantity - 1")
/// let owner = try ValueExpression(#"destinationInstances("PersonToPerson", $source.owner)"#)
/// ```
///
/// The language:
/// - `$source.a.b` reads a key path of the source object (through to-one or to-many relationships);
///   `$source` alone is the object itself. After a to-many relationship, `@distinctUnionOfSets`
///   (or `@unionOfSets`, `@distinctUnionOfObjects`, `@unionOfObjects`) goes on to the objects
///   of a relationship of each: `$source.countries.@distinctUnionOfSets.moods`.
/// - Literals: integers (`12`), decimals (`1.5`, `2e3`), strings in double or single quotes with
///   `\"`, `\'`, `\\`, `\n` and `\t` escapes, `true`, `false` and `nil`.
/// - `+ - * /` with the usual precedence, unary minus and parentheses. Integers stay integers
///   except through `/`, which always gives a double; a date plus or minus a number of seconds is a date.
/// - The functions of ``Function``.
///
/// Input is capped at ``maximumLength`` characters and ``maximumNestingDepth`` levels.
///
/// ## Topics
///
/// ### Creating expressions
/// - ``init(_:)``
/// - ``Function``
/// - ``ArithmeticOperator``
///
/// ### Using expressions
/// - ``evaluate(source:environment:)``
/// - ``description``
public indirect enum ValueExpression: Sendable, Hashable {
    /// A key path of the source object (`$source.owner.name`); empty for the object itself.
    case source(keyPath: [String])
    /// A literal value; `nil` for the literal `nil`.
    case literal(AttributeValue?)
    /// The negation of a number (`-x`).
    case negate(ValueExpression)
    /// An arithmetic operation (`a + b`).
    case arithmetic(ArithmeticOperator, ValueExpression, ValueExpression)
    /// A function call (`lowercase($source.name)`).
    case call(Function, [ValueExpression])

    /// The collection operators a key path may hold after a to-many relationship: each gives the
    /// objects of the rest of the key path for every object, without repeats.
    public static let unionOperators: Set<String> = [
        "@distinctUnionOfSets", "@unionOfSets", "@distinctUnionOfObjects", "@unionOfObjects",
    ]

    /// The longest expression text accepted, in characters.
    public static let maximumLength = 8_192
    /// The deepest nesting of parentheses, calls and operators accepted.
    public static let maximumNestingDepth = 64

    /// An arithmetic operator.
    public enum ArithmeticOperator: String, Sendable, Hashable, CaseIterable {
        /// Addition.
        case add = "+"
        /// Subtraction.
        case subtract = "-"
        /// Multiplication.
        case multiply = "*"
        /// Division; always gives a double.
        case divide = "/"

        /// How tightly the operator binds: multiplication and division before addition and subtraction.
        var precedence: Int { self == .add || self == .subtract ? 1 : 2 }
    }

    /// A function of the expression language.
    ///
    /// Every conversion passes `nil` through, so `string($source.missing)` is `nil`.
    public enum Function: String, Sendable, Hashable, CaseIterable {
        /// `string(x)`: text of any value; dates in ISO 8601 (UTC, milliseconds), data in base64.
        case string
        /// `number(x)`: an integer when the value is one (or text of one), a double otherwise.
        case number
        /// `integer(x)`: a 64-bit integer; doubles are truncated toward zero.
        case integer
        /// `double(x)`: a double.
        case double
        /// `date(x)`: a date from seconds since 2001-01-01 00:00:00 UTC (or ISO 8601 text).
        case date
        /// `formatDate(date, "yyyy-MM-dd")`: text of a date in an explicit format, UTC, POSIX locale.
        case formatDate
        /// `parseDate(text, "yyyy-MM-dd")`: a date read in an explicit format, UTC, POSIX locale.
        case parseDate
        /// `timeInterval(date)`: seconds since 2001-01-01 00:00:00 UTC, as a double.
        case timeInterval
        /// `lowercase(text)`.
        case lowercase
        /// `uppercase(text)`.
        case uppercase
        /// `trim(text)`: without leading and trailing white space and newlines.
        case trim
        /// `concat(a, b, …)`: the texts of the values joined; `nil` values are skipped.
        case concat
        /// `coalesce(a, b, …)`: the first value that is not `nil`.
        case coalesce
        /// `now()`: the migration's start date (the same for every object).
        case now
        /// `uuid()`: a new random UUID.
        case uuid
        /// `destinationInstances("Mapping", $source.rel)`: the objects migrated from the related
        /// source objects under that entity mapping; with one argument, under whichever mapping
        /// migrated each of them. Only for relationship mappings.
        case destinationInstances
        /// `policy("selector:", a, …)`: calls the function that the entity mapping's custom policy
        /// registers under that selector (``EntityMigrationPolicy/expressionFunctions``); Core
        /// Data's `FUNCTION($entityPolicy, "selector:", a, …)`. The arguments may be values or objects.
        case policy

        /// The number of arguments the function takes.
        public var arity: ClosedRange<Int> {
            switch self {
            case .now, .uuid: 0...0
            case .formatDate, .parseDate: 2...2
            case .concat, .coalesce, .policy: 1...Int.max
            case .destinationInstances: 1...2
            default: 1...1
            }
        }
    }

    // MARK: - Inspecting

    /// The selectors of the `policy("selector:", …)` calls in the expression, in order of appearance.
    ///
    /// - Complexity: O(*n*) in the size of the expression.
    public var policySelectors: [String] {
        switch self {
        case .source, .literal: []
        case .negate(let operand): operand.policySelectors
        case .arithmetic(_, let lhs, let rhs): lhs.policySelectors + rhs.policySelectors
        case .call(let function, let arguments):
            (function == .policy ? arguments.prefix(1).compactMap(\.stringLiteral) : [])
                + arguments.flatMap(\.policySelectors)
        }
    }

    /// The text of a string literal; nil for any other expression.
    var stringLiteral: String? {
        if case .literal(.string(let text)?) = self { return text }
        return nil
    }

    /// The source key paths the expression reads, dotted, in order of appearance.
    ///
    /// - Complexity: O(*n*) in the size of the expression.
    public var sourceKeyPaths: [String] {
        switch self {
        case .source(let path): [path.joined(separator: ".")]
        case .literal: []
        case .negate(let operand): operand.sourceKeyPaths
        case .arithmetic(_, let lhs, let rhs): lhs.sourceKeyPaths + rhs.sourceKeyPaths
        case .call(_, let arguments): arguments.flatMap(\.sourceKeyPaths)
        }
    }
}

extension ValueExpression: CustomStringConvertible {
    /// The expression as text that ``init(_:)`` reads back to the same expression, with only the
    /// parentheses that precedence needs.
    ///
    /// - Complexity: O(*n*) in the size of the expression.
    public var description: String { text(parentPrecedence: 0, isRightOperand: false) }

    /// The text, parenthesized when the surrounding operator binds tighter.
    private func text(parentPrecedence: Int, isRightOperand: Bool) -> String {
        switch self {
        case .source(let path):
            return (["$source"] + path).joined(separator: ".")
        case .literal(let value):
            return ValueExpression.literalText(value)
        case .negate(let operand):
            let inner = operand.text(parentPrecedence: 3, isRightOperand: false)
            // "-3" would read back as the literal -3, and "--x" does not parse: parenthesize both.
            if case .literal(let value) = operand, value?.isNumber == true || inner.hasPrefix("-") {
                return "-(\(inner))"
            }
            return inner.hasPrefix("-") ? "-(\(inner))" : "-" + inner
        case .arithmetic(let op, let lhs, let rhs):
            let own = op.precedence
            let body =
                lhs.text(parentPrecedence: own, isRightOperand: false) + " " + op.rawValue + " "
                + rhs.text(parentPrecedence: own, isRightOperand: true)
            let needsParentheses = own < parentPrecedence || (own == parentPrecedence && isRightOperand)
            return needsParentheses ? "(\(body))" : body
        case .call(let function, let arguments):
            return function.rawValue + "("
                + arguments.map { $0.text(parentPrecedence: 0, isRightOperand: false) }.joined(separator: ", ") + ")"
        }
    }
}
