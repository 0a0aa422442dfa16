import Foundation
import TernCore
import TernFormats

/// Translates the `NSExpression`s of Xcode mapping models into Tern's value expressions and back.
///
/// Read: `$source` and its key paths; constants; the arithmetic built-ins (`add:to:`,
/// `from:subtract:`, `multiply:by:`, `divide:by:`), `now()`, `uppercase:`, `lowercase:` and
/// `CAST(x, "NSString" | "NSNumber" | "NSDate")`; the key-value coding keys Foundation's value
/// classes answer at the end of a key path (`timeIntervalSinceReferenceDate`, `uppercaseString`,
/// `lowercaseString`, `stringValue`, `description`, `integerValue`, `longLongValue`, `intValue`,
/// `doubleValue`, `floatValue`), also as `FUNCTION(x, "key")`;
/// `FUNCTION($manager, "destinationInstancesForEntityMappingNamed:sourceInstances:", "Mapping", x)`
/// and `FUNCTION($manager, "destinationInstancesForSourceRelationshipNamed:sourceInstances:", "rel", x)`;
/// `FUNCTION($entityPolicy, "selector:", …)`. Anything else is refused with the reason.
enum XcodeExpressionTranslation {
    /// Why an expression cannot be translated.
    struct Refusal: Error {
        /// The reason, without the expression (the caller names it).
        var reason: String
    }

    /// The key-value coding keys of Foundation's value classes Tern translates, with their function.
    static let valueKeys: [String: ValueExpression.Function] = [
        "timeIntervalSinceReferenceDate": .timeInterval, "uppercaseString": .uppercase, "lowercaseString": .lowercase,
        "stringValue": .string, "description": .string, "integerValue": .integer, "longLongValue": .integer,
        "intValue": .integer, "doubleValue": .double, "floatValue": .double,
    ]

    // MARK: - Reading

    /// The value expression of an archived expression.
    ///
    /// - Parameters:
    ///   - node: The archived expression.
    ///   - isSourceKeyPath: Whether a key path of `$source` names properties of the source model
    ///     all the way; when it does not and ends in a key of ``valueKeys``, the key becomes its function.
    /// - Throws: ``Refusal`` naming what has no translation.
    static func valueExpression(
        _ node: ExpressionNode, isSourceKeyPath: (String) -> Bool = { _ in true }, depth: Int = 0
    )
        throws(Refusal) -> ValueExpression
    {
        guard depth <= ValueExpression.maximumNestingDepth else { throw Refusal(reason: "it nests too deeply") }
        func inner(_ node: ExpressionNode) throws(Refusal) -> ValueExpression {
            try valueExpression(node, isSourceKeyPath: isSourceKeyPath, depth: depth + 1)
        }
        switch node {
        case .constant(let constant):
            return .literal(try literal(constant))
        case .variable("source"):
            return .source(keyPath: [])
        case .variable(let name):
            throw Refusal(reason: "the variable $\(name) has no value in Tern; only $source does")
        case .keyPath(let operand, let path):
            let keys = path.split(separator: ".").map(String.init)
            if case .source(let base) = try inner(operand) {
                let whole = base + keys
                if let last = whole.last, let function = valueKeys[last], whole.count > 1,
                    !isSourceKeyPath(whole.joined(separator: "."))
                {
                    return .call(function, [.source(keyPath: Array(whole.dropLast()))])
                }
                return .source(keyPath: whole)
            }
            guard keys.count == 1, let key = keys.first, let function = valueKeys[key] else {
                throw Refusal(reason: "only key paths of $source can be read")
            }
            return .call(function, [try inner(operand)])
        case .function(.variable("manager"), let selector, let arguments):
            return try managerCall(selector, arguments, inner)
        case .function(.variable("entityPolicy"), let selector, let arguments):
            var translated: [ValueExpression] = [.literal(.string(selector))]
            for argument in arguments { translated.append(try inner(argument)) }
            return .call(.policy, translated)
        case .function(let operand, let selector, let arguments):
            guard arguments.isEmpty, let function = valueKeys[selector] else {
                throw Refusal(
                    reason: "the method \(selector) sent to \(operand) has no translation; "
                        + "move it into a method of the entity's policy and call it with FUNCTION($entityPolicy, …)")
            }
            return .call(function, [try inner(operand)])
        case .builtin(let selector, let arguments):
            return try builtin(selector, arguments, inner)
        case .evaluatedObject:
            throw Refusal(reason: "SELF has no value in a mapping; use $source")
        case .aggregate:
            throw Refusal(reason: "a collection {…} is not a value a property can take")
        case .fetch:
            throw Refusal(reason: "a FETCH expression is not a value a property can take")
        case .unsupported(let className):
            throw Refusal(reason: "\(className) expressions have no translation")
        }
    }

    // MARK: - Writing

    /// The archived expression of a value expression, in the forms Xcode writes and Core Data evaluates.
    ///
    /// - Throws: ``Refusal`` for a function Core Data's expressions cannot evaluate (such as
    ///   `formatDate`), which a policy function must do instead.
    static func node(_ expression: ValueExpression) throws(Refusal) -> ExpressionNode {
        switch expression {
        case .source(let path):
            return path.isEmpty ? .variable("source") : .keyPath(.variable("source"), path.joined(separator: "."))
        case .literal(let value):
            return .constant(try constant(value))
        case .negate(let operand):
            return .builtin(selector: "from:subtract:", arguments: [.constant(.integer(0)), try node(operand)])
        case .arithmetic(let op, let lhs, let rhs):
            let selectors: [ValueExpression.ArithmeticOperator: String] = [
                .add: "add:to:", .subtract: "from:subtract:", .multiply: "multiply:by:", .divide: "divide:by:",
            ]
            return .builtin(selector: selectors[op] ?? "add:to:", arguments: [try node(lhs), try node(rhs)])
        case .call(let function, let arguments):
            var archived: [ExpressionNode] = []
            for argument in arguments { archived.append(try node(argument)) }
            return try call(function, arguments, archived)
        }
    }

    // MARK: - Non public

    private static func literal(_ constant: ExpressionNode.Constant) throws(Refusal) -> AttributeValue? {
        switch constant {
        case .null: nil
        case .bool(let flag): .bool(flag)
        case .integer(let number): .integer(number)
        case .real(let number): .double(number)
        case .string(let text): .string(text)
        case .date(let date): .date(date)
        case .data(let bytes): .data(bytes)
        case .other(let className): throw Refusal(reason: "a constant of class \(className) has no translation")
        }
    }

    private static func constant(_ value: AttributeValue?) throws(Refusal) -> ExpressionNode.Constant {
        switch value {
        case nil: .null
        case .bool(let flag)?: .bool(flag)
        case .integer(let number)?: .integer(number)
        case .double(let number)?: .real(number)
        case .decimal(let number)?: .real(NSDecimalNumber(decimal: number).doubleValue)
        case .string(let text)?: .string(text)
        case .date(let date)?: .date(date)
        case .data(let bytes)?: .data(bytes)
        case .uuid(let uuid)?: .string(uuid.uuidString)
        case .uri(let url)?: .string(url.absoluteString)
        }
    }

    private static func managerCall(
        _ selector: String, _ arguments: [ExpressionNode], _ inner: (ExpressionNode) throws(Refusal) -> ValueExpression
    ) throws(Refusal) -> ValueExpression {
        switch selector {
        case "destinationInstancesForEntityMappingNamed:sourceInstances:":
            guard arguments.count == 2, case .constant(.string(let name)) = arguments[0] else {
                throw Refusal(reason: "\(selector) needs the entity mapping's name in quotes and the source objects")
            }
            return .call(.destinationInstances, [.literal(.string(name)), try inner(arguments[1])])
        case "destinationInstancesForSourceRelationshipNamed:sourceInstances:":
            guard arguments.count == 2 else {
                throw Refusal(reason: "\(selector) needs a relationship name and the source objects")
            }
            return .call(.destinationInstances, [try inner(arguments[1])])
        default:
            throw Refusal(
                reason: "the migration manager's \(selector) has no translation; Tern knows "
                    + "destinationInstancesForEntityMappingNamed:sourceInstances: and destinationInstancesForSourceRelationshipNamed:sourceInstances:"
            )
        }
    }

    private static func builtin(
        _ selector: String, _ arguments: [ExpressionNode], _ inner: (ExpressionNode) throws(Refusal) -> ValueExpression
    ) throws(Refusal) -> ValueExpression {
        let operators: [String: ValueExpression.ArithmeticOperator] = [
            "add:to:": .add, "from:subtract:": .subtract, "multiply:by:": .multiply, "divide:by:": .divide,
        ]
        if let op = operators[selector], arguments.count == 2 {
            return .arithmetic(op, try inner(arguments[0]), try inner(arguments[1]))
        }
        switch (selector, arguments.count) {
        case ("now", 0): return .call(.now, [])
        case ("uppercase:", 1): return .call(.uppercase, [try inner(arguments[0])])
        case ("lowercase:", 1): return .call(.lowercase, [try inner(arguments[0])])
        case ("noindex:", 1): return try inner(arguments[0])
        case ("castObject:toType:", 2):
            let casts: [String: ValueExpression.Function] = ["NSString": .string, "NSNumber": .number, "NSDate": .date]
            guard case .constant(.string(let type)) = arguments[1], let function = casts[type] else {
                throw Refusal(reason: "CAST is translated to NSString, NSNumber and NSDate only")
            }
            return .call(function, [try inner(arguments[0])])
        default:
            throw Refusal(reason: "the function \(selector) has no translation")
        }
    }

    /// A key read on an expression: `$source.a.key` rather than a key path of a key path.
    private static func appending(_ key: String, to node: ExpressionNode) -> ExpressionNode {
        if case .keyPath(let operand, let path) = node { return .keyPath(operand, path + "." + key) }
        return .keyPath(node, key)
    }

    private static func call(
        _ function: ValueExpression.Function, _ arguments: [ValueExpression], _ archived: [ExpressionNode]
    ) throws(Refusal) -> ExpressionNode {
        let first = archived.first ?? .constant(.null)
        switch function {
        case .destinationInstances where archived.count == 2:
            return .function(
                .variable("manager"), selector: "destinationInstancesForEntityMappingNamed:sourceInstances:",
                arguments: archived)
        case .destinationInstances:
            let relationship: String
            if case .source(let path)? = arguments.last, let last = path.last {
                relationship = last
            } else {
                relationship = ""
            }
            return .function(
                .variable("manager"), selector: "destinationInstancesForSourceRelationshipNamed:sourceInstances:",
                arguments: [.constant(.string(relationship)), first])
        case .policy:
            guard let selector = arguments.first?.stringLiteral else {
                throw Refusal(reason: "policy() needs the selector's name in quotes")
            }
            return .function(.variable("entityPolicy"), selector: selector, arguments: Array(archived.dropFirst()))
        case .now: return .builtin(selector: "now", arguments: [])
        case .uppercase: return .builtin(selector: "uppercase:", arguments: [first])
        case .lowercase: return .builtin(selector: "lowercase:", arguments: [first])
        case .string:
            return .builtin(selector: "castObject:toType:", arguments: [first, .constant(.string("NSString"))])
        case .number:
            return .builtin(selector: "castObject:toType:", arguments: [first, .constant(.string("NSNumber"))])
        case .date: return .builtin(selector: "castObject:toType:", arguments: [first, .constant(.string("NSDate"))])
        case .timeInterval: return appending("timeIntervalSinceReferenceDate", to: first)
        case .integer: return appending("longLongValue", to: first)
        case .double: return appending("doubleValue", to: first)
        default:
            throw Refusal(
                reason: "\(function.rawValue)() has no NSExpression that Core Data evaluates; "
                    + "do it in a function of the entity's policy and call it with policy(\"selector:\", …)")
        }
    }
}
