import Foundation
import TernCore

/// The validation rules of an archived attribute that Tern models as properties: the regular
/// expression (`SELF MATCHES "…"`) and, when the attribute's flags carry no limits, the minimum
/// and maximum Xcode compiles into predicates (`SELF >= 1`, `length <= 50`).
struct ValidationRules {
    var regularExpression: String?
    var minimum: AttributeValue?
    var maximum: AttributeValue?

    /// Reads the simple comparisons among an attribute's `NSValidationPredicates`, looking into
    /// `AND` compounds; other predicates are left alone.
    ///
    /// - Throws: ``TernError`` with code `corruptArchive` for a bad reference or too deep nesting.
    init(_ attribute: ArchivedObject) throws {
        var pending = try (attribute.value(forKey: "NSValidationPredicates").elements() ?? []).compactMap(\.object).map
        { ($0, 0) }
        while let (predicate, depth) = pending.popLast() {
            guard depth <= KeyedArchive.maxDepth else {
                throw TernError.corrupt("An archived validation predicate nests too deep (a reference cycle?).")
            }
            if predicate.className == "NSCompoundPredicate",
                try predicate.integer(forKey: "NSCompoundPredicateType") == 1
            {
                let parts = try (predicate.value(forKey: "NSSubpredicates").elements() ?? []).compactMap(\.object)
                pending += parts.map { ($0, depth + 1) }
                continue
            }
            try read(predicate)
        }
    }

    /// Sets the rules found on an attribute, keeping limits it already has.
    func apply(to attribute: inout AttributeDescription) {
        attribute.regularExpression = attribute.regularExpression ?? regularExpression
        attribute.minimum = attribute.minimum ?? minimum.map { Self.converted($0, to: attribute.type) }
        attribute.maximum = attribute.maximum ?? maximum.map { Self.converted($0, to: attribute.type) }
    }

    // MARK: - Non public

    private mutating func read(_ predicate: ArchivedObject) throws {
        guard predicate.className == "NSComparisonPredicate",
            let left = try predicate.object(forKey: "NSLeftExpression"),
            let right = try predicate.object(forKey: "NSRightExpression"),
            right.className == "NSConstantValueExpression",
            let op = try predicate.object(forKey: "NSPredicateOperator"),
            try op.integer(forKey: "NSModifier") ?? 0 == 0
        else { return }
        let leftText = try ArchivedExpression.expressionText(left)
        guard leftText == "SELF" || leftText == "length" else { return }
        let constant = try right.value(forKey: "NSConstantValue")
        switch try op.integer(forKey: "NSOperatorType") {
        case 6:
            if leftText == "SELF", let pattern = try constant.string() { regularExpression = pattern }
        case 3:
            minimum = Self.number(constant)
        case 1:
            maximum = Self.number(constant)
        default:
            break
        }
    }

    private static func number(_ value: ArchivedValue) -> AttributeValue? {
        switch value {
        case .integer(let number): .integer(number)
        case .real(let number): .double(number)
        default: nil
        }
    }

    /// A limit read as a number, as a value of the attribute's type.
    static func converted(_ value: AttributeValue, to type: AttributeType) -> AttributeValue {
        switch (value, type) {
        case (.integer(let number), .double), (.integer(let number), .float): .double(Double(number))
        case (.integer(let number), .decimal): .decimal(Decimal(number))
        case (.double(let number), .decimal): .decimal(Decimal(number))
        case (.integer(let number), .date): .date(Date(timeIntervalSinceReferenceDate: Double(number)))
        case (.double(let number), .date): .date(Date(timeIntervalSinceReferenceDate: number))
        default: value
        }
    }
}
