import TernCore

/// A value expression compiled once into a tree of closures, for evaluation once per source object.
///
/// ``ValueExpression/evaluate(source:environment:)`` walks the expression's syntax tree on every
/// call; a compiled expression has resolved everything that does not depend on the source object
/// beforehand: literals, function dispatch, the date format of `formatDate` (a plain numeric
/// format is written without a `DateFormatter`). Both give the same values and the same errors.
/// ``MappingRunner`` compiles the property mappings of each entity mapping once per pass.
///
/// ```swift
/// let stamp = CompiledExpression(try ValueExpression("timeInterval($source.timeStamp)"))
/// for event in events {
///     let value = try stamp.evaluate(source: manager.source(event), environment: environment)
/// }
/// ```
public struct CompiledExpression: Sendable {
    /// Evaluates to any result.
    typealias Body = @Sendable (any ExpressionSource, ExpressionEnvironment) throws(MigrationError) -> ExpressionValue
    /// Evaluates to an attribute value, refusing objects.
    typealias ScalarBody =
        @Sendable (any ExpressionSource, ExpressionEnvironment) throws(MigrationError) -> AttributeValue?

    /// The expression compiled.
    public let expression: ValueExpression
    private let body: Body

    /// Compiles an expression.
    ///
    /// - Parameter expression: The expression.
    /// - Complexity: O(*n*) in the size of the expression.
    public init(_ expression: ValueExpression) {
        self.expression = expression
        self.body = Self.compile(expression)
    }

    // MARK: - Evaluating

    /// Evaluates the expression for one source object, as ``ValueExpression/evaluate(source:environment:)`` does.
    ///
    /// - Parameters:
    ///   - source: What `$source` reads.
    ///   - environment: The clock and UUID source.
    /// - Returns: The value, or a relationship marker.
    /// - Throws: ``MigrationError`` with code ``MigrationError/Code/evaluationFailed`` for a
    ///   conversion that fails, an overflow or a division by zero; the message never contains values.
    /// - Complexity: O(*n*) in the size of the expression, plus the key path reads.
    public func evaluate(
        source: any ExpressionSource, environment: ExpressionEnvironment = ExpressionEnvironment()
    ) throws(MigrationError) -> ExpressionValue {
        try body(source, environment)
    }

    // MARK: - Non public

    /// The closure of a node.
    private static func compile(_ expression: ValueExpression) -> Body {
        switch expression {
        case .source(let path):
            return { source, _ throws(MigrationError) in try source.expressionValue(forKeyPath: path) }
        case .literal(let value):
            let result = ExpressionValue.value(value)
            return { _, _ in result }
        case .negate, .arithmetic:
            let scalar = compileScalar(expression)
            return { source, environment throws(MigrationError) in .value(try scalar(source, environment)) }
        case .call(let function, let arguments):
            return compileCall(function, arguments)
        }
    }

    /// The closure of a node whose result must be an attribute value.
    private static func compileScalar(_ expression: ValueExpression) -> ScalarBody {
        switch expression {
        case .literal(let value):
            return { _, _ in value }
        case .negate(let operand):
            let operand = compileScalar(operand)
            return { source, environment throws(MigrationError) in
                try ValueArithmetic.negate(try operand(source, environment))
            }
        case .arithmetic(let op, let lhs, let rhs):
            let (left, right) = (compileScalar(lhs), compileScalar(rhs))
            return { source, environment throws(MigrationError) in
                let a = try left(source, environment)
                let b = try right(source, environment)
                return try ValueArithmetic.apply(op, a, b)
            }
        case .source, .call:
            let body = compile(expression)
            let text = expression.description
            return { source, environment throws(MigrationError) in
                switch try body(source, environment) {
                case .value(let value): return value
                case .objects, .destinationInstances:
                    throw MigrationError(
                        .evaluationFailed,
                        "'\(text)' gives objects where a value is needed; wrap it in destinationInstances()")
                }
            }
        }
    }

    /// The closure of a function call, its arguments compiled.
    private static func compileCall(_ function: ValueExpression.Function, _ arguments: [ValueExpression]) -> Body {
        switch function {
        case .destinationInstances:
            let name = arguments.count == 2 ? compileScalar(arguments[0]) : nil
            let last = arguments.last.map(compile)
            return { source, environment throws(MigrationError) in
                var mapping: String?
                if let name {
                    guard case .string(let text)? = try name(source, environment) else {
                        throw MigrationError(.evaluationFailed, "destinationInstances needs a mapping name as text")
                    }
                    mapping = text
                }
                guard let last else { return .value(nil) }
                switch try last(source, environment) {
                case .objects(let references): return .destinationInstances(mapping: mapping, sources: references)
                case .value(nil): return .destinationInstances(mapping: mapping, sources: [])
                default:
                    throw MigrationError(
                        .evaluationFailed, "destinationInstances needs source objects, such as $source.owner")
                }
            }
        case .coalesce:
            let bodies = arguments.map(compile)
            return { source, environment throws(MigrationError) in
                for body in bodies {
                    let value = try body(source, environment)
                    if value != .value(nil) { return value }
                }
                return .value(nil)
            }
        case .policy:
            let selector = arguments.first?.stringLiteral
            let bodies = arguments.dropFirst().map(compile)
            return { source, environment throws(MigrationError) in
                let function = try PolicyCall.function(selector, in: environment)
                var values: [ExpressionValue] = []
                for body in bodies { values.append(try body(source, environment)) }
                return try function(values, source)
            }
        case .now:
            return { _, environment in .value(.date(environment.now)) }
        case .uuid:
            return { _, environment in .value(.uuid(environment.makeUUID())) }
        case .formatDate where arguments.count == 2:
            guard case .literal(.string(let format)?) = arguments[1], let pattern = DatePattern(format) else { break }
            let date = compileScalar(arguments[0])
            return { source, environment throws(MigrationError) in
                guard let value = try date(source, environment) else { return .value(nil) }
                guard case .date(let stamp) = value else {
                    return .value(try ValueConversion.apply(.formatDate, [value, .string(format)]))
                }
                if let text = pattern.string(from: stamp) { return .value(.string(text)) }
                return .value(try ValueConversion.apply(.formatDate, [value, .string(format)]))
            }
        default:
            break
        }
        let scalars = arguments.map(compileScalar)
        return { source, environment throws(MigrationError) in
            var values: [AttributeValue?] = []
            values.reserveCapacity(scalars.count)
            for scalar in scalars { values.append(try scalar(source, environment)) }
            return .value(try ValueConversion.apply(function, values))
        }
    }
}
