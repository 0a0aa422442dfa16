package import Foundation
import TernCore

/// An archived `NSExpression` as a tree: what mapping models keep as value expressions
/// (`NSValueExpression`, Xcode's `valueexpressiondata`) and source expressions.
///
/// ``ArchivedExpression`` prints expressions as text for models; this tree keeps their structure,
/// so that a translator can tell `$source.name` from `FUNCTION($manager, "…", …)` without parsing
/// text, and so that the same tree can be archived again the way Core Data archives it.
///
/// ```swift
/// let node = try ExpressionNode(archivedData: bytes)
/// if case .keyPath(.variable("source"), let path) = node { print(path) }
/// let again = node.archivedData()
/// ```
package indirect enum ExpressionNode: Sendable, Hashable {
    /// A constant (`NSConstantValueExpression`).
    case constant(Constant)
    /// A variable such as `$source`, `$manager` or `$entityPolicy` (`NSVariableExpression`).
    case variable(String)
    /// `SELF` (`NSSelfExpression`).
    case evaluatedObject
    /// A key path read on an operand (`NSKeyPathExpression`): `$source.owner.name`.
    case keyPath(ExpressionNode, String)
    /// A method sent to an operand (`NSFunctionExpression`): `FUNCTION($manager, "sel:", …)`.
    case function(ExpressionNode, selector: String, arguments: [ExpressionNode])
    /// A built-in function, sent to `_NSPredicateUtilities`: `add:to:`, `now`, `uppercase:`…
    case builtin(selector: String, arguments: [ExpressionNode])
    /// A collection of expressions (`NSAggregateExpression`).
    case aggregate([ExpressionNode])
    /// `FETCH(request, context, countOnly)` (`NSFetchRequestExpression`), as source expressions use.
    case fetch(request: ExpressionNode, context: ExpressionNode, countOnly: Bool)
    /// Any other class of expression, by class name.
    case unsupported(String)

    /// A constant's value.
    package enum Constant: Sendable, Hashable {
        /// `nil`.
        case null
        /// A Boolean (`YES`, `NO`).
        case bool(Bool)
        /// An integer.
        case integer(Int64)
        /// A floating-point number.
        case real(Double)
        /// A string.
        case string(String)
        /// A date.
        case date(Date)
        /// Bytes.
        case data(Data)
        /// A value of another class, by class name.
        case other(String)
    }

    // MARK: - Reading

    /// Reads the root expression of a keyed archive.
    ///
    /// - Parameter archivedData: An `NSKeyedArchiver` archive of an `NSExpression`.
    /// - Throws: ``TernError`` with code `corruptArchive` when the bytes are not a keyed archive,
    ///   the root is not an expression, or expressions nest deeper than ``KeyedArchive/maxDepth``.
    package init(archivedData: Data) throws {
        let root = try KeyedArchive(data: archivedData).rootObject()
        guard root.isKind(of: "NSExpression") || root.className.hasSuffix("Expression") else {
            throw TernError.corrupt("The archive holds a \(root.className), not an NSExpression.")
        }
        try self.init(root)
    }

    /// Reads an archived expression object.
    ///
    /// - Parameters:
    ///   - object: An `NSExpression` subclass's object.
    ///   - depth: How deep the object lies in the expression being read.
    /// - Throws: ``TernError`` with code `corruptArchive` for a bad reference or too deep nesting.
    package init(_ object: ArchivedObject, depth: Int = 0) throws {
        guard depth <= KeyedArchive.maxDepth else {
            throw TernError.corrupt(
                "An archived expression nests deeper than \(KeyedArchive.maxDepth) levels (a reference cycle?).")
        }
        func child(_ key: String) throws -> ExpressionNode? {
            guard let inner = try object.object(forKey: key) else { return nil }
            return try ExpressionNode(inner, depth: depth + 1)
        }
        func arguments() throws -> [ExpressionNode] {
            try (object.value(forKey: "NSArguments").elements() ?? []).map { argument in
                guard let inner = argument.object, !Self.isConstantClass(inner) else {
                    return .constant(try Constant(argument))
                }
                return try ExpressionNode(inner, depth: depth + 1)
            }
        }
        switch object.className {
        case "NSConstantValueExpression":
            if try object.string(forKey: "NSConstantValueClassName") == "_NSPredicateUtilities" {
                self = .constant(.other("_NSPredicateUtilities"))
            } else {
                self = .constant(try Constant(object.value(forKey: "NSConstantValue")))
            }
        case "NSVariableExpression":
            self = .variable(try object.string(forKey: "NSVariable") ?? "")
        case "NSSelfExpression":
            self = .evaluatedObject
        case "NSKeyPathSpecifierExpression":
            self = .keyPath(.evaluatedObject, try object.string(forKey: "NSKeyPath") ?? "")
        case "NSKeyPathExpression", "NSFunctionExpression":
            let selector = try object.string(forKey: "NSSelectorName") ?? ""
            let operand = try child("NSOperand") ?? .constant(.null)
            let arguments = try arguments()
            if selector == "valueForKey:" || selector == "valueForKeyPath:" {
                let path = arguments.map { argument -> String in
                    switch argument {
                    case .keyPath(.evaluatedObject, let path): path
                    case .constant(.string(let text)): text
                    default: ""
                    }
                }
                self = .keyPath(operand, path.joined(separator: "."))
            } else if operand == .constant(.other("_NSPredicateUtilities")) || operand == .constant(.null) {
                self = .builtin(selector: selector, arguments: arguments)
            } else {
                self = .function(operand, selector: selector, arguments: arguments)
            }
        case "NSAggregateExpression":
            let elements = try (object.value(forKey: "NSCollection").elements() ?? []).map { element in
                guard let inner = element.object, !Self.isConstantClass(inner) else {
                    return ExpressionNode.constant(try Constant(element))
                }
                return try ExpressionNode(inner, depth: depth + 1)
            }
            self = .aggregate(elements)
        case "NSFetchRequestExpression":
            self = .fetch(
                request: try child("NSFRExpression") ?? .constant(.null),
                context: try child("NSMOCExpression") ?? .constant(.null),
                countOnly: try object.bool(forKey: "NSIsCountOnly"))
        default:
            self = .unsupported(object.className)
        }
    }

    // MARK: - Writing

    /// The expression as an `NSKeyedArchiver` archive, with the classes and keys Core Data archives.
    ///
    /// - Complexity: O(*n*) in the size of the expression.
    package func archivedData() -> Data {
        var writer = KeyedArchiveWriter()
        let root = archive(in: &writer)
        return writer.archive(root: root)
    }

    /// Archives the expression into a writer.
    ///
    /// - Returns: The expression's reference.
    package func archive(in writer: inout KeyedArchiveWriter) -> BinaryPropertyList.Value {
        let base = ["NSExpression", "NSObject"]
        switch self {
        case .constant(let constant):
            return writer.object(
                ["NSConstantValueExpression"] + base,
                fields: ["NSExpressionType": .integer(0), "NSConstantValue": constant.archive(in: &writer)])
        case .variable(let name):
            return writer.object(
                ["NSVariableExpression"] + base,
                fields: ["NSExpressionType": .integer(2), "NSVariable": writer.string(name)])
        case .evaluatedObject:
            return writer.object(["NSSelfExpression"] + base, fields: ["NSExpressionType": .integer(1)])
        case .keyPath(let operand, let path):
            let archivedOperand = operand.archive(in: &writer)
            return ArchivedExpressionWriter.keyPath(path, operand: archivedOperand, in: &writer)
        case .function(let operand, let selector, let arguments):
            let archivedOperand = operand.archive(in: &writer)
            return Self.function(archivedOperand, selector, arguments, in: &writer)
        case .builtin(let selector, let arguments):
            let utilities = writer.object(
                ["NSConstantValueExpression"] + base,
                fields: [
                    "NSExpressionType": .integer(0), "NSConstantValueClassName": writer.string("_NSPredicateUtilities"),
                ])
            return Self.function(utilities, selector, arguments, in: &writer)
        case .aggregate(let elements):
            let archived = elements.map { $0.archive(in: &writer) }
            return writer.object(
                ["NSAggregateExpression"] + base,
                fields: ["NSExpressionType": .integer(14), "NSCollection": writer.array(archived)])
        case .fetch(let request, let context, let countOnly):
            let archivedRequest = request.archive(in: &writer)
            let archivedContext = context.archive(in: &writer)
            return writer.object(
                ["NSFetchRequestExpression"] + base,
                fields: [
                    "NSExpressionType": .integer(50), "NSFRExpression": archivedRequest,
                    "NSMOCExpression": archivedContext,
                    "NSIsCountOnly": .bool(countOnly),
                ])
        case .unsupported(let className):
            return writer.object([className] + base, fields: [:])
        }
    }

    // MARK: - Non public

    /// Whether an object in an argument list is a plain value (a string, number, date or data
    /// object) rather than an expression.
    private static func isConstantClass(_ object: ArchivedObject) -> Bool {
        !object.isKind(of: "NSExpression") && !object.className.hasSuffix("Expression")
    }

    private static func function(
        _ operand: BinaryPropertyList.Value, _ selector: String, _ arguments: [ExpressionNode],
        in writer: inout KeyedArchiveWriter
    ) -> BinaryPropertyList.Value {
        let archived = arguments.map { $0.archive(in: &writer) }
        return writer.object(
            ["NSFunctionExpression", "NSExpression", "NSObject"],
            fields: [
                "NSExpressionType": .integer(4), "NSSelectorName": writer.string(selector), "NSOperand": operand,
                "NSArguments": writer.array(archived, classes: ["NSMutableArray", "NSArray", "NSObject"]),
            ])
    }
}

extension ExpressionNode.Constant {
    /// Reads a constant as archived: inline numbers and strings, `NSString`, `NSDate`, `NSData`
    /// and `NSNumber` objects.
    ///
    /// - Throws: ``TernError`` with code `corruptArchive` for a bad reference.
    package init(_ value: ArchivedValue) throws {
        switch value {
        case .null: self = .null
        case .bool(let flag): self = .bool(flag)
        case .integer(let number): self = .integer(number)
        case .real(let number): self = .real(number)
        case .date(let date): self = .date(date)
        case .data(let bytes): self = .data(bytes)
        case .string(let text): self = .string(text)
        case .array: self = .other("NSArray")
        case .object(let object):
            if let text = try value.string() {
                self = .string(text)
            } else if object.isKind(of: "NSDate"), case .real(let seconds) = try object.value(forKey: "NS.time") {
                self = .date(Date(timeIntervalSinceReferenceDate: seconds))
            } else if object.isKind(of: "NSData"), case .data(let bytes) = try object.value(forKey: "NS.data") {
                self = .data(bytes)
            } else {
                self = .other(object.className)
            }
        }
    }

    /// Archives the constant as Core Data does: numbers and strings inline in `$objects`, dates as `NSDate`.
    ///
    /// - Returns: The constant's reference.
    package func archive(in writer: inout KeyedArchiveWriter) -> BinaryPropertyList.Value {
        switch self {
        case .null: KeyedArchiveWriter.null
        case .bool(let flag): writer.value(.bool(flag))
        case .integer(let number): writer.value(.integer(number))
        case .real(let number): writer.value(.real(number))
        case .string(let text): writer.string(text)
        case .date(let date):
            writer.object(["NSDate", "NSObject"], fields: ["NS.time": .real(date.timeIntervalSinceReferenceDate)])
        case .data(let bytes): writer.value(.data(bytes))
        case .other: KeyedArchiveWriter.null
        }
    }
}
