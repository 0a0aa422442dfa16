import Foundation

/// The checks of one attribute, run by ``ManagedObjectModel/validationIssues``.
extension AttributeDescription {
    // MARK: - Non public

    /// What an attribute's minimum and maximum bound.
    private enum RangeKind {
        /// The value itself, compared in the attribute's type.
        case value
        /// The length of a string or of binary data.
        case length
        /// Nothing: the type takes no range.
        case none
    }

    /// The problems of this attribute, owned by the entity named `entityName`.
    func validationIssues(inEntity entityName: String) -> [ModelIssue] {
        func issue(_ kind: ModelIssue.Kind, _ message: String) -> ModelIssue {
            ModelIssue(kind, entity: entityName, property: name, message)
        }
        var issues: [ModelIssue] = []
        if type == .undefined && !isTransient {
            issues.append(issue(.undefinedType, "a stored attribute has no type; choose a type or make it transient"))
        }
        var defaultFits = true
        if let defaultValue, !defaultValue.fits(type) || !fitsIntegerWidth(defaultValue) {
            defaultFits = false
            issues.append(
                issue(
                    .invalidDefaultValue,
                    "the default value does not fit the type \(type.xcodeName); change the value or the type"))
        }
        let bounds = [("minimum", minimum), ("maximum", maximum)].compactMap { label, value in
            value.map { (label: label, value: $0) }
        }
        var boundsFit = true
        for bound in bounds where !boundFits(bound.value) {
            boundsFit = false
            issues.append(issue(.invalidRange, boundProblem(bound.label)))
        }
        if boundsFit, let minimum, let maximum, isLess(maximum, than: minimum) {
            issues.append(issue(.invalidRange, "the minimum is larger than the maximum; swap them or fix one"))
        }
        if boundsFit, defaultFits, let defaultValue, !isWithinBounds(defaultValue) {
            issues.append(
                issue(
                    .invalidDefaultValue,
                    "the default value is outside the minimum and maximum; change the value or widen the range"))
        }
        issues += regularExpressionIssues(defaultFits: defaultFits).map { issue($0.kind, $0.message) }
        return issues
    }

    private var rangeKind: RangeKind {
        if type.isNumeric || type == .date { return .value }
        if type == .string || type == .binary { return .length }
        return .none
    }

    private func boundFits(_ bound: AttributeValue) -> Bool {
        switch rangeKind {
        case .value: bound.fits(type) && fitsIntegerWidth(bound)
        case .length: if case .integer(let length) = bound { length >= 0 } else { false }
        case .none: false
        }
    }

    private func boundProblem(_ label: String) -> String {
        switch rangeKind {
        case .value: "the \(label) is not a \(type.xcodeName) value; give it in the attribute's type"
        case .length: "the \(label) of a \(type.xcodeName) attribute is a length; give a whole number of 0 or more"
        case .none: "a \(type.xcodeName) attribute takes no \(label); remove it"
        }
    }

    /// Whether an integer value fits the attribute's width (other values always do).
    private func fitsIntegerWidth(_ value: AttributeValue) -> Bool {
        guard case .integer(let number) = value else { return true }
        switch type {
        case .integer16: return Int16(exactly: number) != nil
        case .integer32: return Int32(exactly: number) != nil
        default: return true
        }
    }

    /// Whether a default value (which fits the type) lies within the minimum and maximum.
    private func isWithinBounds(_ value: AttributeValue) -> Bool {
        let measured: AttributeValue
        switch (rangeKind, value) {
        case (.value, _): measured = value
        case (.length, .string(let string)): measured = .integer(Int64(string.utf16.count))
        case (.length, .data(let data)): measured = .integer(Int64(data.count))
        default: return true
        }
        if let minimum, isLess(measured, than: minimum) { return false }
        if let maximum, isLess(maximum, than: measured) { return false }
        return true
    }

    /// Whether `lhs` orders before `rhs`; values of different kinds never do.
    private func isLess(_ lhs: AttributeValue, than rhs: AttributeValue) -> Bool {
        switch (lhs, rhs) {
        case (.integer(let a), .integer(let b)): a < b
        case (.double(let a), .double(let b)): a < b
        case (.decimal(let a), .decimal(let b)): a < b
        case (.date(let a), .date(let b)): a < b
        default: false
        }
    }

    private func regularExpressionIssues(defaultFits: Bool) -> [(kind: ModelIssue.Kind, message: String)] {
        guard let pattern = regularExpression else { return [] }
        guard type == .string else {
            return [
                (
                    .invalidRegularExpression,
                    "a regular expression only applies to String attributes; remove it or change the type"
                )
            ]
        }
        guard let expression = try? NSRegularExpression(pattern: pattern) else {
            return [(.invalidRegularExpression, "the regular expression does not compile; fix its syntax")]
        }
        guard defaultFits, case .string(let value)? = defaultValue else { return [] }
        let whole = NSRange(value.startIndex..<value.endIndex, in: value)
        let match = expression.firstMatch(in: value, options: [.anchored], range: whole)
        guard match?.range != whole else { return [] }
        return [(.invalidDefaultValue, "the default value does not match the regular expression; change one of them")]
    }
}
