/// A condition on objects, in the language of Core Data's `NSPredicate` format strings.
///
/// A fetch predicate is a plain value: an abstract syntax tree that stores translate into their own
/// query language (SQL for the SQLite store) and that in-memory stores evaluate with
/// ``evaluate(with:)``. Parse one from the format language users know from Core Data, or build the
/// tree directly.
///
/// ```swift
/// let adults = try FetchPredicate("age >= 18 AND name BEGINSWITH[cd] %@", arguments: ["jo"])
/// let anyCheap = try FetchPredicate("ANY items.price < 2.5 OR items.@count == 0")
/// print(adults)  // age >= 18 AND name BEGINSWITH[cd] "jo"
/// ```
///
/// The language covers comparisons (`== = != <> < <= =< > >= =>`), `AND && OR || NOT !` (with `NOT`
/// binding tighter than `AND`, and `AND` tighter than `OR`), parentheses, `IN`, `BETWEEN`, the string
/// operators `BEGINSWITH ENDSWITH CONTAINS LIKE MATCHES` with `[c]`, `[d]` and `[cd]` modifiers, key
/// paths (`owner.name`), `ANY SOME ALL NONE`, the collection operators `@count @sum @avg @min @max`,
/// `nil`/`NULL`, `TRUEPREDICATE`/`FALSEPREDICATE`, `TRUE FALSE YES NO`, numbers, quoted strings,
/// `CAST(…, "NSDate")` dates, `%@` and `%K` arguments, `$VARIABLE`s and `SELF`.
///
/// ## Topics
///
/// ### Creating predicates
/// - ``init(_:arguments:)``
/// - ``Argument``
///
/// ### The tree
/// - ``Comparison``
/// - ``Expression``
/// - ``Operator``
/// - ``Quantifier``
/// - ``ComparisonOptions``
/// - ``CollectionOperator``
///
/// ### Using predicates
/// - ``evaluate(with:)``
/// - ``substituting(variables:)``
/// - ``description``
public indirect enum FetchPredicate: Sendable, Hashable {
    /// A predicate that is always true (`TRUEPREDICATE`) or always false (`FALSEPREDICATE`).
    case constant(Bool)
    /// The negation of a predicate (`NOT p`).
    case not(FetchPredicate)
    /// The conjunction of predicates (`p AND q AND …`); true when there are none.
    case and([FetchPredicate])
    /// The disjunction of predicates (`p OR q OR …`); false when there are none.
    case or([FetchPredicate])
    /// A comparison of two expressions (`age > 18`).
    case comparison(Comparison)

    // MARK: - Building

    /// Creates a comparison predicate.
    ///
    /// ```swift
    /// let p = FetchPredicate.compare(.keyPath("name"), .beginsWith, .constant(.string("A")), options: .caseInsensitive)
    /// ```
    ///
    /// - Parameters:
    ///   - lhs: The left expression.
    ///   - op: The operator.
    ///   - rhs: The right expression.
    ///   - options: String comparison options.
    ///   - quantifier: How a to-many left expression is quantified, if it is.
    /// - Returns: A ``comparison(_:)`` predicate.
    public static func compare(
        _ lhs: Expression, _ op: Operator, _ rhs: Expression, options: ComparisonOptions = [],
        quantifier: Quantifier = .direct
    ) -> FetchPredicate {
        .comparison(Comparison(lhs, op, rhs, options: options, quantifier: quantifier))
    }
}

// MARK: - Comparison

extension FetchPredicate {
    /// A comparison of two expressions, such as `ANY items.name BEGINSWITH[c] "a"`.
    public struct Comparison: Sendable, Hashable {
        /// The left expression.
        public var lhs: Expression
        /// The operator.
        public var op: Operator
        /// The right expression.
        public var rhs: Expression
        /// String comparison options (`[c]`, `[d]`, `[cd]`).
        public var options: ComparisonOptions
        /// How a to-many left expression is quantified (`ANY`, `ALL`, `NONE`), or ``Quantifier/direct``.
        public var quantifier: Quantifier

        /// Creates a comparison.
        ///
        /// - Parameters:
        ///   - lhs: The left expression.
        ///   - op: The operator.
        ///   - rhs: The right expression.
        ///   - options: String comparison options.
        ///   - quantifier: How a to-many left expression is quantified, if it is.
        public init(
            _ lhs: Expression, _ op: Operator, _ rhs: Expression, options: ComparisonOptions = [],
            quantifier: Quantifier = .direct
        ) {
            self.lhs = lhs
            self.op = op
            self.rhs = rhs
            self.options = options
            self.quantifier = quantifier
        }
    }

    /// A comparison operator.
    public enum Operator: String, Sendable, Hashable, CaseIterable {
        /// `==` (also `=`).
        case equalTo = "=="
        /// `!=` (also `<>`).
        case notEqualTo = "!="
        /// `<`.
        case lessThan = "<"
        /// `<=` (also `=<`).
        case lessThanOrEqualTo = "<="
        /// `>`.
        case greaterThan = ">"
        /// `>=` (also `=>`).
        case greaterThanOrEqualTo = ">="
        /// `IN`: membership in a collection, or a substring of a string.
        case `in` = "IN"
        /// `BETWEEN`: inclusive range given as a two-element collection `{low, high}`.
        case between = "BETWEEN"
        /// `BEGINSWITH`: string prefix.
        case beginsWith = "BEGINSWITH"
        /// `ENDSWITH`: string suffix.
        case endsWith = "ENDSWITH"
        /// `CONTAINS`: substring of a string, or membership of an element in a collection.
        case contains = "CONTAINS"
        /// `LIKE`: wildcard match, `*` for any run of characters and `?` for one character.
        case like = "LIKE"
        /// `MATCHES`: full-string ICU regular expression match.
        case matches = "MATCHES"
    }

    /// The quantifier of a comparison whose left expression is a to-many key path.
    public enum Quantifier: String, Sendable, Hashable, CaseIterable {
        /// No quantifier: the left expression is compared as a whole.
        case direct = ""
        /// `ANY` (also `SOME`): true when some element satisfies the comparison.
        case any = "ANY"
        /// `ALL`: true when every element satisfies the comparison (or there are none).
        case all = "ALL"
        /// `NONE`: true when no element satisfies the comparison.
        case none = "NONE"
    }

    /// String comparison options, written `[c]`, `[d]` or `[cd]` after an operator.
    public struct ComparisonOptions: OptionSet, Sendable, Hashable {
        /// The options' bits.
        public let rawValue: UInt8

        /// Creates options from their bits.
        ///
        /// - Parameter rawValue: The bits.
        public init(rawValue: UInt8) { self.rawValue = rawValue }

        /// `[c]`: case-insensitive.
        public static let caseInsensitive = ComparisonOptions(rawValue: 1 << 0)
        /// `[d]`: diacritic-insensitive.
        public static let diacriticInsensitive = ComparisonOptions(rawValue: 1 << 1)
        /// `[n]`: compares normalized strings (accepted for compatibility; Swift strings compare
        /// by canonical equivalence already).
        public static let normalized = ComparisonOptions(rawValue: 1 << 2)
    }

    /// A collection operator applied to a to-many key path (`items.@count`, `items.@sum.price`).
    public enum CollectionOperator: String, Sendable, Hashable, CaseIterable {
        /// `@count`: the number of elements.
        case count = "@count"
        /// `@sum`: the sum of numbers.
        case sum = "@sum"
        /// `@avg`: the average of numbers, `nil` when there are none.
        case average = "@avg"
        /// `@min`: the smallest value, `nil` when there are none.
        case minimum = "@min"
        /// `@max`: the largest value, `nil` when there are none.
        case maximum = "@max"
    }
}

// MARK: - Expression

extension FetchPredicate {
    /// One side of a comparison.
    public indirect enum Expression: Sendable, Hashable {
        /// A constant value, or `nil` for `nil`/`NULL`.
        case constant(AttributeValue?)
        /// A key path such as `name` or `owner.name`, through attributes and to-one or to-many
        /// relationships.
        case keyPath(String)
        /// The object being evaluated (`SELF`).
        case evaluatedObject
        /// A variable (`$NAME`), to be replaced with ``FetchPredicate/substituting(variables:)``.
        case variable(String)
        /// A literal collection (`{1, 2, 3}`), as used by `IN` and `BETWEEN`.
        case aggregate([Expression])
        /// A collection operator applied to a to-many key path: `items.@count` is
        /// `.collection(.count, keyPath: "items", key: nil)`, `items.@sum.price` is
        /// `.collection(.sum, keyPath: "items", key: "price")`.
        case collection(CollectionOperator, keyPath: String, key: String?)
    }

    /// A value given to a format string's `%@` or `%K`.
    ///
    /// ```swift
    /// try FetchPredicate("%K == %@ AND age IN %@", arguments: [.keyPath("name"), "Ann", .values([.integer(1), .integer(2)])])
    /// ```
    public enum Argument: Sendable, Hashable {
        /// A single value, or `nil`, for `%@`. A string value is also accepted by `%K`.
        case value(AttributeValue?)
        /// A key path, for `%K` (or for `%@`, which then stands for the key path).
        case keyPath(String)
        /// A collection of values for `%@`, as used by `IN` and `BETWEEN`.
        case values([AttributeValue?])
    }
}

extension FetchPredicate.Argument: ExpressibleByStringLiteral, ExpressibleByIntegerLiteral,
    ExpressibleByFloatLiteral, ExpressibleByBooleanLiteral, ExpressibleByNilLiteral, ExpressibleByArrayLiteral
{
    /// A collection of values, for `IN` and `BETWEEN`.
    ///
    /// - Parameter elements: The values.
    public init(arrayLiteral elements: AttributeValue?...) { self = .values(elements) }
    /// A string value.
    ///
    /// - Parameter value: The string.
    public init(stringLiteral value: String) { self = .value(.string(value)) }
    /// An integer value.
    ///
    /// - Parameter value: The integer.
    public init(integerLiteral value: Int64) { self = .value(.integer(value)) }
    /// A floating-point value.
    ///
    /// - Parameter value: The number.
    public init(floatLiteral value: Double) { self = .value(.double(value)) }
    /// A Boolean value.
    ///
    /// - Parameter value: The Boolean.
    public init(booleanLiteral value: Bool) { self = .value(.bool(value)) }
    /// The `nil` value.
    ///
    /// - Parameter nilLiteral: Nothing.
    public init(nilLiteral: ()) { self = .value(nil) }
}

// MARK: - Parsing

extension FetchPredicate {
    /// The longest format string accepted, in Unicode scalars.
    public static let maximumFormatLength = 1 << 20
    /// The deepest nesting of parentheses, `NOT`s and collections accepted.
    public static let maximumNestingDepth = 256

    /// Parses a predicate from the `NSPredicate` format language.
    ///
    /// ```swift
    /// let p = try FetchPredicate("name ==[c] %@ AND ANY tags.label IN %@", arguments: ["ann", .values([.string("a")])])
    /// ```
    ///
    /// - Parameters:
    ///   - format: The format string.
    ///   - arguments: Values for `%@` and key paths for `%K`, in order.
    /// - Throws: ``TernError/Code/invalidPredicate`` with the character offset of the problem and
    ///   what was expected there, when the text is not a predicate, is longer than
    ///   ``maximumFormatLength`` or nests deeper than ``maximumNestingDepth``, or when the arguments
    ///   do not match the placeholders.
    /// - Complexity: O(*n*) in the length of the format and the arguments.
    public init(_ format: String, arguments: [Argument] = []) throws(TernError) {
        var parser = try PredicateParser(format, arguments: arguments)
        self = try parser.parse()
    }
}
