import Foundation
import Synchronization

extension FetchPredicate {
    // MARK: - Evaluating

    /// Evaluates the predicate on an object, with the semantics of `NSPredicate` in Core Data.
    ///
    /// - Numbers compare by value across integer, double, decimal and Boolean; dates with dates
    ///   (and with numbers as seconds since 2001); strings with `[c]` and `[d]` through Foundation's
    ///   case- and diacritic-insensitive comparison.
    /// - `nil` equals only `nil`; every other comparison with `nil` is false.
    /// - `IN` tests membership in a collection, or that a string is a substring of another;
    ///   `CONTAINS` tests the reverse. `BETWEEN {low, high}` is inclusive.
    /// - `BEGINSWITH`, `ENDSWITH` and `CONTAINS` with an empty string are true for every string.
    /// - `LIKE` matches the whole string with `*` and `?`; `MATCHES` matches the whole string with an
    ///   ICU regular expression.
    /// - `ANY` (`SOME`), `ALL` and `NONE` quantify over the values of a to-many key path; `ALL` and
    ///   `NONE` are true when there are none. `@count`, `@sum`, `@avg`, `@min` and `@max` reduce them.
    ///
    /// ```swift
    /// let p = try FetchPredicate("name LIKE[c] 'a*' AND age BETWEEN {18, 65}")
    /// let row: [String: PredicateValue] = ["name": .single(.string("Ann")), "age": .single(.integer(30))]
    /// try p.evaluate(with: row)  // true
    /// ```
    ///
    /// - Parameter object: The object that supplies key path values.
    /// - Returns: Whether the object satisfies the predicate.
    /// - Throws: ``TernError/Code/invalidPredicate`` when a `$VARIABLE` was not substituted, a to-many
    ///   key path is compared without a quantifier, `BETWEEN` has no two bounds, or a `MATCHES`
    ///   pattern is no regular expression; errors of `object` for unknown key paths.
    /// - Complexity: O(*n*) in the size of the predicate and of the values it compares.
    public func evaluate(with object: some PredicateEvaluable) throws(TernError) -> Bool {
        switch self {
        case .constant(let value):
            return value
        case .not(let operand):
            return try !operand.evaluate(with: object)
        case .and(let terms):
            for term in terms where try !term.evaluate(with: object) { return false }
            return true
        case .or(let terms):
            for term in terms where try term.evaluate(with: object) { return true }
            return false
        case .comparison(let comparison):
            return try comparison.evaluate(with: object)
        }
    }
}

extension FetchPredicate.Comparison {
    /// Evaluates the comparison on an object.
    ///
    /// - Parameter object: The object that supplies key path values.
    /// - Returns: Whether the object satisfies the comparison.
    /// - Throws: See ``FetchPredicate/evaluate(with:)``.
    public func evaluate(with object: some PredicateEvaluable) throws(TernError) -> Bool {
        let left = try lhs.value(with: object)
        let right = try rhs.value(with: object)
        switch quantifier {
        case .direct:
            guard case .single(let value) = left else { return try compareCollection(left.elements, right) }
            return try compare(value, right)
        case .any:
            for element in left.elements where try compare(element, right) { return true }
            return false
        case .all:
            for element in left.elements where try !compare(element, right) { return false }
            return true
        case .none:
            for element in left.elements where try compare(element, right) { return false }
            return true
        }
    }

    // MARK: - Non public

    private var propertyName: String? {
        if case .keyPath(let path) = lhs { return path }
        return nil
    }

    /// A comparison whose left side is a collection, without a quantifier.
    private func compareCollection(_ left: [AttributeValue?], _ right: PredicateValue) throws(TernError) -> Bool {
        switch (op, right) {
        case (.contains, .single(let element)):
            return left.contains { Self.equal($0, element, options) }
        case (.contains, .many(let elements)):
            return elements.allSatisfy { element in left.contains { Self.equal($0, element, options) } }
        case (.equalTo, .many(let elements)), (.notEqualTo, .many(let elements)):
            let same =
                left.allSatisfy { value in elements.contains { Self.equal($0, value, options) } }
                && elements.allSatisfy { value in left.contains { Self.equal($0, value, options) } }
            return same == (op == .equalTo)
        default:
            throw TernError(
                .invalidPredicate,
                "The left side of \(op.rawValue) is a to-many key path or a collection; quantify it with ANY, ALL or NONE, or count it with @count",
                property: propertyName)
        }
    }

    /// Compares one value of the left side with the right side.
    private func compare(_ value: AttributeValue?, _ right: PredicateValue) throws(TernError) -> Bool {
        switch (op, right) {
        case (.in, .many(let elements)):
            return elements.contains { Self.equal(value, $0, options) }
        case (.in, .single(let container)):
            if case .string(let string)? = value, case .string(let text)? = container {
                return Self.contains(text, string, options)
            }
            return Self.equal(value, container, options)
        case (.between, .many(let bounds)):
            guard bounds.count == 2 else {
                throw TernError(
                    .invalidPredicate, "BETWEEN needs two bounds {low, high}, not \(bounds.count)",
                    property: propertyName)
            }
            return Self.compare(value, bounds[0], options, accepting: [.orderedDescending, .orderedSame])
                && Self.compare(value, bounds[1], options, accepting: [.orderedAscending, .orderedSame])
        case (.between, .single):
            throw TernError(.invalidPredicate, "BETWEEN needs two bounds {low, high}", property: propertyName)
        case (.equalTo, .many), (.lessThan, .many), (.lessThanOrEqualTo, .many), (.greaterThan, .many),
            (.greaterThanOrEqualTo, .many), (.beginsWith, .many), (.endsWith, .many), (.contains, .many),
            (.like, .many), (.matches, .many):
            return false
        case (.notEqualTo, .many):
            return true
        case (_, .single(let other)):
            return try compare(value, other)
        }
    }

    /// Compares two single values with an operator other than `IN` and `BETWEEN`.
    private func compare(_ value: AttributeValue?, _ other: AttributeValue?) throws(TernError) -> Bool {
        switch op {
        case .equalTo: return Self.equal(value, other, options)
        case .notEqualTo: return !Self.equal(value, other, options)
        case .lessThan: return Self.compare(value, other, options, accepting: [.orderedAscending])
        case .lessThanOrEqualTo:
            return Self.compare(value, other, options, accepting: [.orderedAscending, .orderedSame])
        case .greaterThan: return Self.compare(value, other, options, accepting: [.orderedDescending])
        case .greaterThanOrEqualTo:
            return Self.compare(value, other, options, accepting: [.orderedDescending, .orderedSame])
        case .in, .between: return false  // Handled by the caller.
        default: break
        }
        guard case .string(let string)? = value, case .string(let pattern)? = other else { return false }
        switch op {
        case .beginsWith: return LikePattern.prefix(pattern).matches(string, options: options)
        case .endsWith: return LikePattern.suffix(pattern).matches(string, options: options)
        case .contains: return Self.contains(string, pattern, options)
        case .like: return LikePattern(like: pattern).matches(string, options: options)
        default: return try Self.matches(string, pattern: pattern, options: options)
        }
    }

    private static func equal(
        _ lhs: AttributeValue?, _ rhs: AttributeValue?, _ options: FetchPredicate.ComparisonOptions
    ) -> Bool {
        guard let lhs, let rhs else { return lhs == nil && rhs == nil }
        return lhs.isEqual(to: rhs, options: options)
    }

    private static func compare(
        _ lhs: AttributeValue?, _ rhs: AttributeValue?, _ options: FetchPredicate.ComparisonOptions,
        accepting results: Set<ComparisonResult>
    ) -> Bool {
        guard let lhs, let rhs, let result = lhs.compare(to: rhs, options: options) else { return false }
        return results.contains(result)
    }

    private static func contains(_ text: String, _ substring: String, _ options: FetchPredicate.ComparisonOptions)
        -> Bool
    {
        if substring.isEmpty { return true }
        return text.range(of: substring, options: AttributeValue.stringOptions(options)) != nil
    }

    /// Whether the whole string matches an ICU regular expression.
    private static func matches(
        _ string: String, pattern: String, options: FetchPredicate.ComparisonOptions
    ) throws(TernError) -> Bool {
        let whole = try RegularExpressionCache.shared.expression(
            matchingWhole: pattern, caseInsensitive: options.contains(.caseInsensitive))
        let subject =
            options.contains(.diacriticInsensitive)
            ? string.folding(options: .diacriticInsensitive, locale: nil) : string
        let range = NSRange(subject.startIndex..<subject.endIndex, in: subject)
        return whole.firstMatch(in: subject, options: [.anchored], range: range) != nil
    }
}

extension FetchPredicate.Expression {
    /// The value of the expression for an object.
    ///
    /// - Parameter object: The object that supplies key path values.
    /// - Returns: A single value or a collection.
    /// - Throws: ``TernError/Code/invalidPredicate`` for a variable that was not substituted, and
    ///   errors of `object`.
    public func value(with object: some PredicateEvaluable) throws(TernError) -> PredicateValue {
        switch self {
        case .constant(let value):
            return .single(value)
        case .keyPath(let path):
            return try object.predicateValue(forKeyPath: path)
        case .evaluatedObject:
            return try object.predicateValue(forKeyPath: "")
        case .variable(let name):
            throw TernError(
                .invalidPredicate,
                "The variable $\(name) has no value; replace it with substituting(variables:) before evaluating")
        case .aggregate(let elements):
            var values: [AttributeValue?] = []
            for element in elements {
                switch try element.value(with: object) {
                case .single(let value): values.append(value)
                case .many(let more): values += more
                }
            }
            return .many(values)
        case .collection(let op, let path, let key):
            let values = try object.predicateValue(forKeyPath: key.map { path + "." + $0 } ?? path).elements
            return .single(Self.reduce(values, with: op))
        }
    }

    // MARK: - Non public

    private static func reduce(_ values: [AttributeValue?], with op: FetchPredicate.CollectionOperator)
        -> AttributeValue?
    {
        if op == .count { return .integer(Int64(values.count)) }
        let present = values.compactMap { $0 }
        switch op {
        case .minimum, .maximum:
            let wanted: ComparisonResult = op == .minimum ? .orderedAscending : .orderedDescending
            return present.dropFirst().reduce(present.first) { best, value in
                guard let best else { return value }
                return value.compare(to: best) == wanted ? value : best
            }
        case .sum:
            return sum(present.compactMap(NumericValue.init)) ?? .integer(0)
        default:
            let numbers = present.compactMap(NumericValue.init)
            guard !numbers.isEmpty, let total = sum(numbers) else { return nil }
            switch total {
            case .decimal(let value): return .decimal(value / Decimal(numbers.count))
            default: return .double((NumericValue(total)?.doubleValue ?? .nan) / Double(numbers.count))
            }
        }
    }

    /// The sum of numbers: an integer while every term is one and it fits, a decimal when a term is
    /// a decimal, a double otherwise.
    private static func sum(_ numbers: [NumericValue]) -> AttributeValue? {
        guard !numbers.isEmpty else { return nil }
        if numbers.contains(where: { if case .decimal = $0 { true } else { false } }) {
            return .decimal(
                numbers.reduce(Decimal(0)) { total, number in
                    switch number {
                    case .integer(let value): total + Decimal(value)
                    case .decimal(let value): total + value
                    case .double(let value): total + Decimal(value)
                    }
                })
        }
        var integerTotal: Int64 = 0
        var isInteger = true
        for case .integer(let value) in numbers {
            let (total, overflow) = integerTotal.addingReportingOverflow(value)
            if overflow { isInteger = false }
            integerTotal = total
        }
        if isInteger, numbers.allSatisfy({ if case .integer = $0 { true } else { false } }) {
            return .integer(integerTotal)
        }
        return .double(numbers.reduce(0) { $0 + $1.doubleValue })
    }
}

/// Compiled `MATCHES` patterns, so that evaluating a predicate over many objects compiles each
/// pattern once.
private final class RegularExpressionCache: Sendable {
    static let shared = RegularExpressionCache()

    private struct Key: Hashable {
        var pattern: String
        var caseInsensitive: Bool
    }

    /// The most patterns kept; the cache empties when it is full.
    private static let capacity = 64
    private let expressions = Mutex<[Key: NSRegularExpression]>([:])

    /// A regular expression that matches the whole string, anchored at its start by the caller.
    func expression(matchingWhole pattern: String, caseInsensitive: Bool) throws(TernError) -> NSRegularExpression {
        let key = Key(pattern: pattern, caseInsensitive: caseInsensitive)
        if let cached = expressions.withLock({ $0[key] }) { return cached }
        let options: NSRegularExpression.Options = caseInsensitive ? [.caseInsensitive] : []
        let whole: NSRegularExpression
        do {
            // Checked alone first, so that wrapping cannot give meaning to a broken pattern.
            _ = try NSRegularExpression(pattern: pattern, options: options)
            whole = try NSRegularExpression(pattern: "(?:" + pattern + ")\\z", options: options)
        } catch {
            throw TernError(
                .invalidPredicate, "The pattern of MATCHES is not an ICU regular expression; check its syntax",
                underlyingError: error)
        }
        expressions.withLock { cache in
            if cache.count >= Self.capacity { cache.removeAll() }
            cache[key] = whole
        }
        return whole
    }
}
