/// A translation of predicates into another form, such as a store's SQL, built bottom-up.
///
/// Stores that query in their own language implement a visitor and call
/// ``FetchPredicate/accept(_:)``: each compound receives its already translated operands, and each
/// comparison arrives whole with its ``FetchPredicate/Comparison/lhs``, operator, options and
/// ``FetchPredicate/Comparison/rhs`` expressions to translate. ``LikePattern`` converts `LIKE`,
/// `BEGINSWITH`, `ENDSWITH` and `CONTAINS` to SQL `LIKE` or `GLOB` patterns.
///
/// ```swift
/// struct SQLTranslator: PredicateVisitor {
///     mutating func visitConstant(_ value: Bool) -> String { value ? "1" : "0" }
///     mutating func visitNot(_ operand: String) -> String { "NOT (\(operand))" }
///     …
/// }
/// ```
package protocol PredicateVisitor {
    /// The translation of a predicate.
    associatedtype Translation

    /// Translates `TRUEPREDICATE` or `FALSEPREDICATE`.
    mutating func visitConstant(_ value: Bool) throws(TernError) -> Translation
    /// Translates the negation of a translated predicate.
    mutating func visitNot(_ operand: Translation) throws(TernError) -> Translation
    /// Translates the conjunction of translated predicates (none means true).
    mutating func visitAnd(_ terms: [Translation]) throws(TernError) -> Translation
    /// Translates the disjunction of translated predicates (none means false).
    mutating func visitOr(_ terms: [Translation]) throws(TernError) -> Translation
    /// Translates a comparison.
    mutating func visitComparison(_ comparison: FetchPredicate.Comparison) throws(TernError) -> Translation
}

extension FetchPredicate {
    /// Translates the predicate with a visitor, operands first.
    ///
    /// - Parameter visitor: The translator.
    /// - Returns: The translation.
    /// - Throws: The visitor's errors.
    /// - Complexity: O(*n*) visits in the size of the predicate.
    package func accept<Visitor: PredicateVisitor>(_ visitor: inout Visitor) throws(TernError) -> Visitor.Translation {
        switch self {
        case .constant(let value):
            return try visitor.visitConstant(value)
        case .not(let operand):
            return try visitor.visitNot(operand.accept(&visitor))
        case .and(let terms):
            var translated: [Visitor.Translation] = []
            for term in terms { translated.append(try term.accept(&visitor)) }
            return try visitor.visitAnd(translated)
        case .or(let terms):
            var translated: [Visitor.Translation] = []
            for term in terms { translated.append(try term.accept(&visitor)) }
            return try visitor.visitOr(translated)
        case .comparison(let comparison):
            return try visitor.visitComparison(comparison)
        }
    }

    /// The key paths that the predicate reads, for stores that must join relationships: plain key
    /// paths as written, and for collection operators the to-many key path followed by the key.
    ///
    /// - Complexity: O(*n*) in the size of the predicate.
    public var keyPaths: Set<String> {
        Set(
            expressions.compactMap { expression in
                switch expression {
                case .keyPath(let path): path
                case .collection(_, let path, let key): key.map { path + "." + $0 } ?? path
                default: nil
                }
            })
    }
}

extension FetchPredicate.Comparison {
    /// The wildcard pattern of a `LIKE`, `BEGINSWITH`, `ENDSWITH` or `CONTAINS` comparison with a
    /// constant string on the right, which a SQL store can run as `LIKE` or `GLOB`; `nil` otherwise.
    package var pattern: LikePattern? {
        guard case .constant(.string(let text)?) = rhs else { return nil }
        switch op {
        case .like: return LikePattern(like: text)
        case .beginsWith: return .prefix(text)
        case .endsWith: return .suffix(text)
        case .contains: return .substring(text)
        default: return nil
        }
    }
}
