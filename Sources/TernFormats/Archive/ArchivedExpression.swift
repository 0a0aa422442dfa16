import Foundation
import TernCore

/// Prints archived `NSExpression` and `NSPredicate` objects in NSPredicate's text format, the
/// way Core Data prints them (`count:(pages)`, `authorAlias == $FETCH_SOURCE.alias`).
///
/// Covers the forms models use: constants, `SELF`, variables, key paths, functions,
/// comparison, compound, true and false predicates. Other forms print as
/// `<NSSomeExpression>` so that decoding never fails on them.
enum ArchivedExpression {
    /// The text of an archived expression.
    ///
    /// - Throws: ``TernError`` with code `corruptArchive` for a bad reference or nesting deeper
    ///   than ``KeyedArchive/maxDepth`` (which is what a reference cycle becomes).
    static func expressionText(_ expression: ArchivedObject, depth: Int = 0) throws -> String {
        try checkDepth(depth)
        switch expression.className {
        case "NSSelfExpression":
            return "SELF"
        case "NSVariableExpression":
            return "$" + (try expression.string(forKey: "NSVariable") ?? "")
        case "NSKeyPathSpecifierExpression":
            return try expression.string(forKey: "NSKeyPath") ?? ""
        case "NSConstantValueExpression":
            return try constantText(expression.value(forKey: "NSConstantValue"), depth: depth + 1)
        case "NSKeyPathExpression", "NSFunctionExpression":
            return try functionText(expression, depth: depth)
        case "NSAggregateExpression":
            let elements = try (expression.value(forKey: "NSCollection").elements() ?? []).map { element -> String in
                guard let object = element.object, object.isKind(of: "NSExpression") else {
                    return try constantText(element, depth: depth + 1)
                }
                return try expressionText(object, depth: depth + 1)
            }
            return "{" + elements.joined(separator: ", ") + "}"
        default:
            return "<\(expression.className)>"
        }
    }

    /// The text of an archived predicate.
    ///
    /// - Throws: ``TernError`` with code `corruptArchive` for a bad reference or too deep nesting.
    static func predicateText(_ predicate: ArchivedObject, depth: Int = 0) throws -> String {
        try checkDepth(depth)
        switch predicate.className {
        case "NSTruePredicate": return "TRUEPREDICATE"
        case "NSFalsePredicate": return "FALSEPREDICATE"
        case "NSCompoundPredicate":
            let parts = try (predicate.value(forKey: "NSSubpredicates").elements() ?? []).compactMap(\.object)
            let texts = try parts.map { part -> String in
                let text = try predicateText(part, depth: depth + 1)
                return part.className == "NSCompoundPredicate" ? "(\(text))" : text
            }
            switch try predicate.integer(forKey: "NSCompoundPredicateType") ?? 1 {
            case 0: return "NOT " + (texts.first ?? "TRUEPREDICATE")
            case 2: return texts.joined(separator: " OR ")
            default: return texts.joined(separator: " AND ")
            }
        case "NSComparisonPredicate":
            guard let left = try predicate.object(forKey: "NSLeftExpression"),
                let right = try predicate.object(forKey: "NSRightExpression"),
                let op = try predicate.object(forKey: "NSPredicateOperator")
            else { return "<NSComparisonPredicate>" }
            let modifier: String
            switch try op.integer(forKey: "NSModifier") ?? 0 {
            case 1: modifier = "ALL "
            case 2: modifier = "ANY "
            default: modifier = ""
            }
            let leftText = try expressionText(left, depth: depth + 1)
            let rightText = try expressionText(right, depth: depth + 1)
            return "\(modifier)\(leftText) \(try operatorText(op)) \(rightText)"
        default:
            return "<\(predicate.className)>"
        }
    }

    // MARK: - Non public

    private static func checkDepth(_ depth: Int) throws {
        guard depth <= KeyedArchive.maxDepth else {
            throw TernError.corrupt(
                "An archived expression nests deeper than \(KeyedArchive.maxDepth) levels (a reference cycle?).")
        }
    }

    private static func functionText(_ expression: ArchivedObject, depth: Int) throws -> String {
        let selector = try expression.string(forKey: "NSSelectorName") ?? ""
        let arguments = try (expression.value(forKey: "NSArguments").elements() ?? []).map { argument -> String in
            guard let object = argument.object else { return try constantText(argument, depth: depth + 1) }
            return try expressionText(object, depth: depth + 1)
        }
        let operand = try expression.object(forKey: "NSOperand")
        if selector == "valueForKey:" || selector == "valueForKeyPath:" {
            let path = arguments.joined(separator: ".")
            guard let operand, operand.className != "NSSelfExpression" else { return path }
            return try expressionText(operand, depth: depth + 1) + "." + path
        }
        // Built-in functions are sent to the `_NSPredicateUtilities` class: `name:(arguments)`.
        if let operand, operand.className == "NSConstantValueExpression",
            try operand.value(forKey: "NSConstantValue").isNull
        {
            return "\(selector)(\(arguments.joined(separator: ", ")))"
        }
        let target = try operand.map { try expressionText($0, depth: depth + 1) } ?? "nil"
        return "FUNCTION(\(([target, "\"\(selector)\""] + arguments).joined(separator: ", ")))"
    }

    private static func constantText(_ value: ArchivedValue, depth: Int) throws -> String {
        switch value {
        case .null: return "nil"
        case .bool(let flag): return flag ? "YES" : "NO"
        case .integer(let number): return String(number)
        case .real(let number): return String(number)
        case .string(let text): return quoted(text)
        case .date(let date): return "CAST(\(date.timeIntervalSinceReferenceDate), \"NSDate\")"
        case .data, .array: return "<data>"
        case .object(let object):
            if let text = try value.string() { return quoted(text) }
            if let elements = try value.elements() {
                try checkDepth(depth)
                let texts = try elements.map { try constantText($0, depth: depth + 1) }
                return "{" + texts.joined(separator: ", ") + "}"
            }
            return "<\(object.className)>"
        }
    }

    private static func quoted(_ text: String) -> String {
        "\"" + text.replacingOccurrences(of: "\\", with: "\\\\").replacingOccurrences(of: "\"", with: "\\\"") + "\""
    }

    private static func operatorText(_ op: ArchivedObject) throws -> String {
        let symbol: String
        switch try op.integer(forKey: "NSOperatorType") ?? 4 {
        case 0: symbol = "<"
        case 1: symbol = "<="
        case 2: symbol = ">"
        case 3: symbol = ">="
        case 4: symbol = "=="
        case 5: symbol = "!="
        case 6: symbol = "MATCHES"
        case 7: symbol = "LIKE"
        case 8: symbol = "BEGINSWITH"
        case 9: symbol = "ENDSWITH"
        case 10: symbol = "IN"
        case 99: symbol = "CONTAINS"
        case 100: symbol = "BETWEEN"
        case let other: symbol = "<operator \(other)>"
        }
        let options = try op.integer(forKey: "NSOptions") ?? op.integer(forKey: "NSFlags") ?? 0
        var flags = ""
        if options & 1 != 0 { flags += "c" }
        if options & 2 != 0 { flags += "d" }
        return flags.isEmpty ? symbol : "\(symbol)[\(flags)]"
    }
}
