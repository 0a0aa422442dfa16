public import Foundation
public import TernCore

/// The result of a value expression: a value, the objects of a relationship, or a request for
/// destination instances that the migration engine resolves.
///
/// ```swift
/// switch try expression.evaluate(source: row) {
/// case .value(let value): print(value as Any)
/// case .objects(let references): print(references.count)
/// case .destinationInstances(let mapping, let sources): print(mapping ?? "any", sources.count)
/// }
/// ```
public enum ExpressionValue: Sendable, Hashable {
    /// An attribute value; `nil` when missing.
    case value(AttributeValue?)
    /// Source objects: what `$source` or `$source.relationship` gives.
    case objects([RowReference])
    /// A marker for the engine: the destination instances of these source objects under the named
    /// entity mapping, or under whichever mapping migrated each when the name is nil.
    case destinationInstances(mapping: String?, sources: [RowReference])
}

/// What `$source` reads in a value expression: the migration engine gives one per source object.
///
/// ```swift
/// struct Event: ExpressionSource {
///     var stamp: Date
///     func expressionValue(forKeyPath keyPath: [String]) throws(MigrationError) -> ExpressionValue {
///         guard keyPath == ["timeStamp"] else { throw MigrationError(.invalidMapping, "no such key path") }
///         return .value(.date(stamp))
///     }
/// }
/// ```
public protocol ExpressionSource {
    /// The value at a key path of the source object.
    ///
    /// - Parameter keyPath: The property names after `$source`; empty for the object itself.
    /// - Returns: ``ExpressionValue/value(_:)`` for an attribute (or a path of to-one
    ///   relationships ending at one), ``ExpressionValue/objects(_:)`` for a relationship or the
    ///   object itself.
    /// - Throws: ``MigrationError`` when the key path cannot be read.
    func expressionValue(forKeyPath keyPath: [String]) throws(MigrationError) -> ExpressionValue
}

/// A function that a custom policy registers for `policy("selector:", …)` calls: Core Data's
/// method called by `FUNCTION($entityPolicy, "selector:", …)`. It gets the evaluated arguments
/// (after the selector) and the source object the expression reads, and returns the value.
///
/// ```swift
/// let hex: PolicyFunction = { arguments, _ throws(MigrationError) in
///     guard case .value(.string(let text)?)? = arguments.first else { return .value(nil) }
///     return .value(.string("#" + text))
/// }
/// ```
public typealias PolicyFunction =
    @Sendable (_ arguments: [ExpressionValue], _ source: any ExpressionSource) throws(MigrationError) -> ExpressionValue

/// What value expressions need besides the source object: the clock of `now()`, the source of
/// `uuid()`, fixed for reproducible migrations and tests, and the functions `policy()` calls.
///
/// ```swift
/// let environment = ExpressionEnvironment(now: Date(timeIntervalSinceReferenceDate: 0))
/// ```
public struct ExpressionEnvironment: Sendable {
    /// The date `now()` gives: the migration's start, the same for every object.
    public var now: Date
    /// Makes the UUID that each `uuid()` call gives. Setting it makes
    /// ``generatesRandomUUIDs`` false.
    public var makeUUID: @Sendable () -> UUID {
        didSet { generatesRandomUUIDs = false }
    }
    /// Whether `uuid()` gives random (version 4) UUIDs, as `UUID()` makes them: then a mapping
    /// compiled to SQL may make them in the database, one per row (#24). False when the
    /// environment was given its own ``makeUUID``.
    public private(set) var generatesRandomUUIDs: Bool
    /// The functions `policy("selector:", …)` calls, by selector: those of the entity mapping's
    /// policy while its property mappings run; empty otherwise.
    public var policyFunctions: [String: PolicyFunction] = [:]

    /// Creates an environment.
    ///
    /// - Parameters:
    ///   - now: The date `now()` gives.
    ///   - makeUUID: Makes the UUID that each `uuid()` call gives; nil for random ones, `UUID()`.
    public init(now: Date = Date(), makeUUID: (@Sendable () -> UUID)? = nil) {
        self.now = now
        self.makeUUID = makeUUID ?? { UUID() }
        self.generatesRandomUUIDs = makeUUID == nil
    }
}

extension ValueExpression {
    // MARK: - Evaluating

    /// Evaluates the expression for one source object.
    ///
    /// ```swift
    /// let stamp = try ValueExpression("timeInterval($source.timeStamp)").evaluate(source: event)
    /// ```
    ///
    /// - Parameters:
    ///   - source: What `$source` reads.
    ///   - environment: The clock and UUID source.
    /// - Returns: The value, or a relationship marker.
    /// - Throws: ``MigrationError`` with code ``MigrationError/Code/evaluationFailed`` for a
    ///   conversion that fails, an overflow or a division by zero; the message never contains values.
    /// - Complexity: O(*n*) in the size of the expression, plus the key path reads.
    public func evaluate(
        source: some ExpressionSource, environment: ExpressionEnvironment = ExpressionEnvironment()
    ) throws(MigrationError) -> ExpressionValue {
        switch self {
        case .source(let path):
            return try source.expressionValue(forKeyPath: path)
        case .literal(let value):
            return .value(value)
        case .negate(let operand):
            return .value(try ValueArithmetic.negate(try operand.scalar(source, environment)))
        case .arithmetic(let op, let lhs, let rhs):
            let left = try lhs.scalar(source, environment)
            let right = try rhs.scalar(source, environment)
            return .value(try ValueArithmetic.apply(op, left, right))
        case .call(let function, let arguments):
            return try function.apply(to: arguments, source: source, environment: environment)
        }
    }

    // MARK: - Non public

    /// Evaluates to an attribute value, refusing objects.
    func scalar(_ source: some ExpressionSource, _ environment: ExpressionEnvironment) throws(MigrationError)
        -> AttributeValue?
    {
        switch try evaluate(source: source, environment: environment) {
        case .value(let value): return value
        case .objects, .destinationInstances:
            throw MigrationError(
                .evaluationFailed, "'\(self)' gives objects where a value is needed; wrap it in destinationInstances()")
        }
    }
}

extension ValueExpression.Function {
    /// Applies the function to its argument expressions.
    fileprivate func apply(
        to arguments: [ValueExpression], source: some ExpressionSource, environment: ExpressionEnvironment
    ) throws(MigrationError) -> ExpressionValue {
        switch self {
        case .destinationInstances:
            var mapping: String?
            if arguments.count == 2 {
                guard case .string(let name)? = try arguments[0].scalar(source, environment) else {
                    throw MigrationError(.evaluationFailed, "destinationInstances needs a mapping name as text")
                }
                mapping = name
            }
            guard let last = arguments.last else { return .value(nil) }
            switch try last.evaluate(source: source, environment: environment) {
            case .objects(let references): return .destinationInstances(mapping: mapping, sources: references)
            case .value(nil): return .destinationInstances(mapping: mapping, sources: [])
            default:
                throw MigrationError(
                    .evaluationFailed, "destinationInstances needs source objects, such as $source.owner")
            }
        case .coalesce:
            for argument in arguments {
                let value = try argument.evaluate(source: source, environment: environment)
                if value != .value(nil) { return value }
            }
            return .value(nil)
        case .now:
            return .value(.date(environment.now))
        case .uuid:
            return .value(.uuid(environment.makeUUID()))
        case .policy:
            let function = try PolicyCall.function(arguments.first?.stringLiteral, in: environment)
            var values: [ExpressionValue] = []
            for argument in arguments.dropFirst() {
                values.append(try argument.evaluate(source: source, environment: environment))
            }
            return try function(values, source)
        default:
            var values: [AttributeValue?] = []
            for argument in arguments { values.append(try argument.scalar(source, environment)) }
            return .value(try ValueConversion.apply(self, values))
        }
    }
}

/// Looking up the function of a `policy("selector:", …)` call.
enum PolicyCall {
    /// The function registered under the selector.
    ///
    /// - Throws: ``MigrationError`` with code ``MigrationError/Code/evaluationFailed`` when the
    ///   selector is not a literal or the entity mapping's policy registers no function under it.
    static func function(_ selector: String?, in environment: ExpressionEnvironment) throws(MigrationError)
        -> PolicyFunction
    {
        guard let selector else {
            throw MigrationError(
                .evaluationFailed, "policy() needs the selector's name in quotes as its first argument")
        }
        guard let function = environment.policyFunctions[selector] else {
            throw MigrationError(
                .evaluationFailed,
                "The entity mapping's policy registers no function for the selector \(selector); add it to its expressionFunctions"
            )
        }
        return function
    }
}

/// Arithmetic on attribute values.
enum ValueArithmetic {
    /// `-value`.
    static func negate(_ value: AttributeValue?) throws(MigrationError) -> AttributeValue? {
        switch value {
        case nil: return nil
        case .integer(let number):
            guard number != .min else { throw overflow }
            return .integer(-number)
        case .double(let number): return .double(-number)
        case .decimal(let number): return .decimal(-number)
        default: throw MigrationError(.evaluationFailed, "Only numbers can be negated")
        }
    }

    /// `lhs op rhs`; `nil` when either side is `nil`.
    static func apply(_ op: ValueExpression.ArithmeticOperator, _ lhs: AttributeValue?, _ rhs: AttributeValue?)
        throws(MigrationError) -> AttributeValue?
    {
        guard let lhs, let rhs else { return nil }
        switch (lhs, rhs) {
        case (.date(let date), _) where op == .add || op == .subtract:
            guard let seconds = ValueConversion.double(rhs) else { throw notNumbers(op) }
            return .date(date.addingTimeInterval(op == .add ? seconds : -seconds))
        case (.integer(let a), .integer(let b)) where op != .divide:
            let (result, didOverflow) =
                switch op {
                case .add: a.addingReportingOverflow(b)
                case .subtract: a.subtractingReportingOverflow(b)
                default: a.multipliedReportingOverflow(by: b)
                }
            guard !didOverflow else { throw overflow }
            return .integer(result)
        case (.decimal, _), (_, .decimal):
            guard let a = ValueConversion.decimal(lhs), let b = ValueConversion.decimal(rhs) else {
                throw notNumbers(op)
            }
            switch op {
            case .add: return .decimal(a + b)
            case .subtract: return .decimal(a - b)
            case .multiply: return .decimal(a * b)
            case .divide:
                guard !b.isZero else { throw divisionByZero }
                return .decimal(a / b)
            }
        default:
            guard lhs.isNumber, rhs.isNumber, let a = ValueConversion.double(lhs), let b = ValueConversion.double(rhs)
            else { throw notNumbers(op) }
            switch op {
            case .add: return .double(a + b)
            case .subtract: return .double(a - b)
            case .multiply: return .double(a * b)
            case .divide:
                guard b != 0 else { throw divisionByZero }
                return .double(a / b)
            }
        }
    }

    private static let overflow = MigrationError(.evaluationFailed, "The integer result does not fit in 64 bits")
    private static let divisionByZero = MigrationError(.evaluationFailed, "Division by zero")

    private static func notNumbers(_ op: ValueExpression.ArithmeticOperator) -> MigrationError {
        MigrationError(
            .evaluationFailed,
            "'\(op.rawValue)' needs numbers (or a date and a number of seconds); use concat() to join text")
    }
}

extension AttributeValue {
    /// Whether the value is an integer, a double or a decimal.
    var isNumber: Bool {
        switch self {
        case .integer, .double, .decimal: true
        default: false
        }
    }
}
