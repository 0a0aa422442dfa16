import Foundation

// MARK: - Optional values in typed predicates
//
// Classes generated from a model declare object attributes optional, as Xcode's do
// (`title: String?`), so typed predicates test them through optional chains
// (`$0.title?.starts(with: "T") == true`) and nil-coalescing (`($0.title ?? "").starts(with: "T")`).
// Neither has a fetch predicate of its own; each becomes the comparisons of the optional value that
// say the same, with explicit `!= nil` and `== nil` terms, so that SQL and in-memory evaluation
// agree on missing values.

/// A `??` of a typed predicate.
protocol TypedNilCoalescing {
    /// The optional side.
    var optionalOperand: Any { get }
    /// The value used when the optional side is nil.
    var fallbackOperand: Any { get }
}

/// An optional chain of a typed predicate (`wrapped?.…`).
protocol TypedOptionalChaining {
    /// The optional value chained through.
    var wrappedOperand: Any { get }
    /// The variable that stands for the unwrapped value in ``transformOperand``.
    var chainVariable: PredicateExpressions.VariableID { get }
    /// What is computed from the unwrapped value.
    var transformOperand: Any { get }
}

extension PredicateExpressions.NilCoalesce: TypedNilCoalescing {
    var optionalOperand: Any { lhs }
    var fallbackOperand: Any { rhs }
}

extension PredicateExpressions.OptionalFlatMap: TypedOptionalChaining {
    var wrappedOperand: Any { wrapped }
    var chainVariable: PredicateExpressions.VariableID { variable.key }
    var transformOperand: Any { transform }
}

extension PredicateExpressions.Variable: TypedExpressionConvertible {
    /// The key path the variable stands for (the unwrapped value of an optional chain, the
    /// element of a to-many relationship), or `SELF` for the predicate's input.
    func fetchExpression(in context: TypedPredicateContext) throws(TernError) -> FetchPredicate.Expression {
        guard let prefix = context.prefixes[key] else {
            throw TypedPredicateContext.unsupported("A variable from outside the predicate")
        }
        return prefix.isEmpty ? .evaluatedObject : .keyPath(prefix)
    }
}

extension TypedPredicateContext {
    /// The comparison of an optional chain ending in a test, or of a nil-coalescing, with another
    /// expression; nil when neither side is one.
    func optionalComparison(_ lhs: Any, _ op: FetchPredicate.Operator, _ rhs: Any) throws(TernError) -> FetchPredicate?
    {
        for (side, other, onLeft) in [(lhs, rhs, true), (rhs, lhs, false)] {
            if let (path, test) = try optionalTest(side) {
                guard op == .equalTo || op == .notEqualTo, case .constant(let value) = try expression(from: other)
                else {
                    throw Self.unsupported(
                        "Comparing an optional chain that ends in a test with anything but true, false or nil")
                }
                return try chainComparison(path, test, isEqual: op == .equalTo, to: value)
            }
            if let coalescing = side as? any TypedNilCoalescing {
                return try coalescedComparison(coalescing, op, try expression(from: other), onLeft: onLeft)
            }
        }
        return nil
    }

    /// A nil-coalescing used as the whole test: `$0.title?.starts(with: "T") ?? false`,
    /// `$0.isDone ?? false`.
    func coalescedPredicate(_ coalescing: any TypedNilCoalescing) throws(TernError) -> FetchPredicate? {
        guard let (path, test) = try optionalTest(coalescing.optionalOperand) else {
            return try coalescedComparison(coalescing, .equalTo, .constant(.bool(true)), onLeft: true)
        }
        guard case .constant(.bool(let fallback)?) = try expression(from: coalescing.fallbackOperand) else {
            throw Self.unsupported(
                "A ?? after an optional chain that ends in a test, with a fallback other than true or false")
        }
        return fallback ? .or([.compare(path, .equalTo, .constant(nil)), test]) : test
    }

    // MARK: - Non public

    /// The key path of an optional chain whose end is a test (`$0.title?.starts(with: "T")`), and
    /// the test on it; nil when `expression` is no such chain.
    private func optionalTest(_ expression: Any) throws(TernError) -> (FetchPredicate.Expression, FetchPredicate)? {
        guard let chain = expression as? any TypedOptionalChaining,
            chain.transformOperand is any TypedPredicateConvertible
        else { return nil }
        let path = try keyPath(from: chain.wrappedOperand)
        var inner = self
        inner.prefixes[chain.chainVariable] = path
        return (.keyPath(path), try inner.predicate(from: chain.transformOperand))
    }

    /// `chain == true`, `chain != false`, `chain == nil`…: the test, its negation, or whether
    /// the chained value is there.
    private func chainComparison(
        _ path: FetchPredicate.Expression, _ test: FetchPredicate, isEqual: Bool, to value: AttributeValue?
    ) throws(TernError) -> FetchPredicate {
        let absent = FetchPredicate.compare(path, .equalTo, .constant(nil))
        let present = FetchPredicate.compare(path, .notEqualTo, .constant(nil))
        switch (value, isEqual) {
        case (.bool(true)?, true): return test
        case (.bool(true)?, false): return .or([absent, .not(test)])
        case (.bool(false)?, true): return .and([present, .not(test)])
        case (.bool(false)?, false): return .or([absent, test])
        case (nil, true): return absent
        case (nil, false): return present
        default:
            throw Self.unsupported(
                "Comparing an optional chain that ends in a test with anything but true, false or nil")
        }
    }

    /// `(value ?? fallback) op other`: `value op other` where the value is there, `fallback op
    /// other` where it is not (folded to true or false when both are constants).
    private func coalescedComparison(
        _ coalescing: any TypedNilCoalescing, _ op: FetchPredicate.Operator, _ other: FetchPredicate.Expression,
        onLeft: Bool
    ) throws(TernError) -> FetchPredicate {
        let value = try expression(from: coalescing.optionalOperand)
        let fallback = try expression(from: coalescing.fallbackOperand)
        func compare(_ side: FetchPredicate.Expression) -> FetchPredicate {
            onLeft ? .compare(side, op, other) : .compare(other, op, side)
        }
        let present = FetchPredicate.and([.compare(value, .notEqualTo, .constant(nil)), compare(value)])
        let absent = FetchPredicate.compare(value, .equalTo, .constant(nil))
        var whenAbsent = compare(fallback)
        if case .constant = fallback, case .constant = other {
            // Two constants: no object is read, so any evaluated value will do.
            whenAbsent = .constant(try whenAbsent.evaluate(with: AttributeValue.bool(true)))
        }
        switch whenAbsent {
        case .constant(true): return .or([absent, compare(value)])
        case .constant(false): return present
        default: return .or([present, .and([absent, whenAbsent])])
        }
    }
}
