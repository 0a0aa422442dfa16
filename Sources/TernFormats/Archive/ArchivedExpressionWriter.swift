import Foundation
import TernCore

/// Writes `NSExpression` and `NSPredicate` objects into a keyed archive, from the text Tern keeps
/// (a derived attribute's expression) or from a parsed ``FetchPredicate``.
///
/// The objects follow the classes and keys Core Data archives (`NSFunctionExpression`,
/// `NSKeyPathExpression`, `NSComparisonPredicate`…), read back by ``ArchivedExpression``.
struct ArchivedExpressionWriter {
    private static let expressionClass = ["NSExpression", "NSObject"]

    // MARK: - Expressions from text

    /// Archives an expression in the forms derived attributes use: `count:(items)`, `now()`,
    /// `sum:(items.price)`, key paths, `$VARIABLE`s, `SELF`, quoted strings and numbers.
    /// Text it cannot parse becomes a key path expression with the whole text.
    ///
    /// - Returns: The expression's UID.
    static func expression(_ text: String, in writer: inout KeyedArchiveWriter) -> BinaryPropertyList.Value {
        var parser = Parser(Array(text.unicodeScalars))
        if let tree = parser.parseAll() { return write(tree, in: &writer) }
        return write(.keyPath(text), in: &writer)
    }

    // MARK: - Predicates

    /// Archives a parsed predicate.
    ///
    /// - Returns: The predicate's UID.
    static func predicate(_ predicate: FetchPredicate, in writer: inout KeyedArchiveWriter) -> BinaryPropertyList.Value
    {
        switch predicate {
        case .constant(let flag):
            return writer.object(
                [flag ? "NSTruePredicate" : "NSFalsePredicate", "NSPredicate", "NSObject"], fields: [:])
        case .not(let inner):
            return compound(0, [inner], in: &writer)
        case .and(let parts):
            return compound(1, parts, in: &writer)
        case .or(let parts):
            return compound(2, parts, in: &writer)
        case .comparison(let comparison):
            let left = expression(comparison.lhs, in: &writer)
            let right = expression(comparison.rhs, in: &writer)
            let op = writer.object(
                ["NSPredicateOperator", "NSObject"],
                fields: [
                    "NSOperatorType": .integer(operatorType(comparison.op)),
                    "NSModifier": .integer(
                        comparison.quantifier == .all ? 1 : comparison.quantifier == .direct ? 0 : 2),
                    "NSOptions": .integer(Int64(comparison.options.rawValue & 0x3)),
                ])
            let fields: [String: BinaryPropertyList.Value] = [
                "NSLeftExpression": left, "NSRightExpression": right, "NSPredicateOperator": op,
            ]
            let comparisonPredicate = writer.object(
                ["NSComparisonPredicate", "NSPredicate", "NSObject"], fields: fields)
            guard comparison.quantifier == .none else { return comparisonPredicate }
            // NONE x op y is NOT (ANY x op y).
            return writer.object(
                ["NSCompoundPredicate", "NSPredicate", "NSObject"],
                fields: [
                    "NSCompoundPredicateType": .integer(0), "NSSubpredicates": writer.array([comparisonPredicate]),
                ])
        }
    }

    // MARK: - Non public

    /// The expression forms the text parser produces.
    indirect enum Node {
        case keyPath(String)
        case variable(String, path: String?)
        case evaluatedObject
        case constant(BinaryPropertyList.Value)
        case function(String, [Node])
    }

    private static func write(_ node: Node, in writer: inout KeyedArchiveWriter) -> BinaryPropertyList.Value {
        switch node {
        case .evaluatedObject:
            return writer.object(["NSSelfExpression"] + expressionClass, fields: ["NSExpressionType": .integer(1)])
        case .constant(let value):
            let constant: BinaryPropertyList.Value
            switch value {
            case .string(let text): constant = writer.string(text)
            case .null: constant = KeyedArchiveWriter.null
            default: constant = writer.value(value)
            }
            return writer.object(
                ["NSConstantValueExpression"] + expressionClass,
                fields: ["NSExpressionType": .integer(0), "NSConstantValue": constant])
        case .variable(let name, let path):
            let variable = writer.object(
                ["NSVariableExpression"] + expressionClass,
                fields: ["NSExpressionType": .integer(2), "NSVariable": writer.string(name)])
            guard let path else { return variable }
            return keyPath(path, operand: variable, in: &writer)
        case .keyPath(let path):
            let operand = write(.evaluatedObject, in: &writer)
            return keyPath(path, operand: operand, in: &writer)
        case .function(let name, let arguments):
            let utilities = writer.object(
                ["NSConstantValueExpression"] + expressionClass,
                fields: [
                    "NSExpressionType": .integer(0), "NSConstantValueClassName": writer.string("_NSPredicateUtilities"),
                ])
            let archived = arguments.map { write($0, in: &writer) }
            return writer.object(
                ["NSFunctionExpression"] + expressionClass,
                fields: [
                    "NSExpressionType": .integer(4), "NSSelectorName": writer.string(name), "NSOperand": utilities,
                    "NSArguments": writer.array(archived),
                ])
        }
    }

    /// Archives `operand.path` as Core Data does: an `NSKeyPathExpression` sending
    /// `valueForKey:` (or `valueForKeyPath:`) with an `NSKeyPathSpecifierExpression`.
    ///
    /// - Returns: The expression's UID.
    static func keyPath(
        _ path: String, operand: BinaryPropertyList.Value, in writer: inout KeyedArchiveWriter
    ) -> BinaryPropertyList.Value {
        let specifier = writer.object(
            ["NSKeyPathSpecifierExpression"] + expressionClass,
            fields: ["NSExpressionType": .integer(10), "NSKeyPath": writer.string(path)])
        return writer.object(
            ["NSKeyPathExpression", "NSFunctionExpression"] + expressionClass,
            fields: [
                "NSExpressionType": .integer(3), "NSOperand": operand,
                "NSSelectorName": writer.string(path.contains(".") ? "valueForKeyPath:" : "valueForKey:"),
                "NSArguments": writer.array([specifier], classes: ["NSMutableArray", "NSArray", "NSObject"]),
            ])
    }

    private static func expression(_ expression: FetchPredicate.Expression, in writer: inout KeyedArchiveWriter)
        -> BinaryPropertyList.Value
    {
        switch expression {
        case .constant(let value):
            return write(.constant(plistValue(value)), in: &writer)
        case .keyPath(let path):
            return write(.keyPath(path), in: &writer)
        case .evaluatedObject:
            return write(.evaluatedObject, in: &writer)
        case .variable(let name):
            let parts = name.split(separator: ".", maxSplits: 1).map(String.init)
            return write(.variable(parts.first ?? name, path: parts.count > 1 ? parts[1] : nil), in: &writer)
        case .aggregate(let elements):
            let archived = elements.map { self.expression($0, in: &writer) }
            return writer.object(
                ["NSAggregateExpression"] + expressionClass,
                fields: ["NSExpressionType": .integer(14), "NSCollection": writer.array(archived)])
        case .collection(let op, let path, let key):
            return write(
                .keyPath(([path, op.rawValue] + (key.map { [$0] } ?? [])).joined(separator: ".")), in: &writer)
        }
    }

    private static func plistValue(_ value: AttributeValue?) -> BinaryPropertyList.Value {
        switch value {
        case .none: return .null
        case .integer(let number): return .integer(number)
        case .double(let number): return .real(number)
        case .decimal(let number): return .real(NSDecimalNumber(decimal: number).doubleValue)
        case .string(let text): return .string(text)
        case .bool(let flag): return .bool(flag)
        case .date(let date): return .date(date.timeIntervalSinceReferenceDate)
        case .data(let bytes): return .data(bytes)
        case .uuid(let uuid): return .string(uuid.uuidString)
        case .uri(let url): return .string(url.absoluteString)
        }
    }

    private static func compound(_ type: Int64, _ parts: [FetchPredicate], in writer: inout KeyedArchiveWriter)
        -> BinaryPropertyList.Value
    {
        let archived = parts.map { predicate($0, in: &writer) }
        return writer.object(
            ["NSCompoundPredicate", "NSPredicate", "NSObject"],
            fields: ["NSCompoundPredicateType": .integer(type), "NSSubpredicates": writer.array(archived)])
    }

    private static func operatorType(_ op: FetchPredicate.Operator) -> Int64 {
        switch op {
        case .lessThan: 0
        case .lessThanOrEqualTo: 1
        case .greaterThan: 2
        case .greaterThanOrEqualTo: 3
        case .equalTo: 4
        case .notEqualTo: 5
        case .matches: 6
        case .like: 7
        case .beginsWith: 8
        case .endsWith: 9
        case .in: 10
        case .contains: 99
        case .between: 100
        }
    }
}
