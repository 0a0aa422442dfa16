import Foundation

extension ExpressionNode: CustomStringConvertible {
    /// The expression in NSExpression's format, as Xcode's mapping editor shows it:
    /// `$source.name`, `FUNCTION($manager, "destinationInstancesForEntityMappingNamed:sourceInstances:", "AToB", $source.b)`.
    ///
    /// - Complexity: O(*n*) in the size of the expression.
    package var description: String {
        switch self {
        case .constant(let constant):
            return constant.description
        case .variable(let name):
            return "$" + name
        case .evaluatedObject:
            return "SELF"
        case .keyPath(.evaluatedObject, let path):
            return path
        case .keyPath(let operand, let path):
            return "\(operand).\(path)"
        case .function(let operand, let selector, let arguments):
            return "FUNCTION("
                + ([operand.description, "\"\(selector)\""] + arguments.map(\.description)).joined(separator: ", ")
                + ")"
        case .builtin(let selector, let arguments):
            let symbols = ["add:to:": "+", "from:subtract:": "-", "multiply:by:": "*", "divide:by:": "/"]
            if let symbol = symbols[selector], arguments.count == 2 {
                return "(\(arguments[0]) \(symbol) \(arguments[1]))"
            }
            if selector == "castObject:toType:", arguments.count == 2 {
                return "CAST(\(arguments[0]), \(arguments[1]))"
            }
            return "\(selector)(" + arguments.map(\.description).joined(separator: ", ") + ")"
        case .aggregate(let elements):
            return "{" + elements.map(\.description).joined(separator: ", ") + "}"
        case .fetch(let request, let context, let countOnly):
            return "FETCH(\(request), \(context), \(countOnly ? "YES" : "NO"))"
        case .unsupported(let className):
            return "<\(className)>"
        }
    }
}

extension ExpressionNode.Constant: CustomStringConvertible {
    /// The constant in NSExpression's format: `nil`, `YES`, `12`, `"text"`, `CAST(0.0, "NSDate")`.
    package var description: String {
        switch self {
        case .null: "nil"
        case .bool(let flag): flag ? "YES" : "NO"
        case .integer(let number): String(number)
        case .real(let number): String(number)
        case .string(let text):
            "\"" + text.replacingOccurrences(of: "\\", with: "\\\\").replacingOccurrences(of: "\"", with: "\\\"") + "\""
        case .date(let date): "CAST(\(date.timeIntervalSinceReferenceDate), \"NSDate\")"
        case .data(let bytes): "<data of \(bytes.count) bytes>"
        case .other(let className): "<\(className)>"
        }
    }
}
