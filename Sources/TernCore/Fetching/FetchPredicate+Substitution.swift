extension FetchPredicate {
    // MARK: - Substituting variables

    /// Returns the predicate with its `$VARIABLE`s replaced by values, as Core Data does for fetch
    /// request templates.
    ///
    /// Variables missing from `variables` stay in place; evaluating a predicate that still has
    /// variables throws.
    ///
    /// ```swift
    /// let template = try FetchPredicate("age >= $MIN_AGE")
    /// let adults = template.substituting(variables: ["MIN_AGE": .integer(18)])
    /// ```
    ///
    /// - Parameter variables: Values by variable name, without the `$`.
    /// - Returns: The predicate with the given variables replaced.
    /// - Complexity: O(*n*) in the size of the predicate.
    public func substituting(variables: [String: AttributeValue?]) -> FetchPredicate {
        substituting(arguments: variables.mapValues { .value($0) })
    }

    /// Returns the predicate with its `$VARIABLE`s replaced by values, collections or key paths.
    ///
    /// ```swift
    /// let template = try FetchPredicate("$KEY IN $ALLOWED")
    /// let p = template.substituting(arguments: ["KEY": .keyPath("status"), "ALLOWED": .values([.integer(1), .integer(2)])])
    /// ```
    ///
    /// - Parameter arguments: Replacements by variable name, without the `$`.
    /// - Returns: The predicate with the given variables replaced.
    /// - Complexity: O(*n*) in the size of the predicate.
    public func substituting(arguments: [String: Argument]) -> FetchPredicate {
        switch self {
        case .constant:
            return self
        case .not(let operand):
            return .not(operand.substituting(arguments: arguments))
        case .and(let terms):
            return .and(terms.map { $0.substituting(arguments: arguments) })
        case .or(let terms):
            return .or(terms.map { $0.substituting(arguments: arguments) })
        case .comparison(var comparison):
            comparison.lhs = comparison.lhs.substituting(arguments)
            comparison.rhs = comparison.rhs.substituting(arguments)
            return .comparison(comparison)
        }
    }

    /// The names of the variables in the predicate, without the `$`.
    ///
    /// - Complexity: O(*n*) in the size of the predicate.
    public var variableNames: Set<String> {
        Set(
            expressions.compactMap { expression in
                if case .variable(let name) = expression { name } else { nil }
            })
    }

    /// Every expression of the predicate's comparisons, including the elements of collections,
    /// outermost first.
    var expressions: [Expression] {
        var found: [Expression] = []
        func collect(_ expression: Expression) {
            found.append(expression)
            if case .aggregate(let elements) = expression { elements.forEach(collect) }
        }
        func walk(_ predicate: FetchPredicate) {
            switch predicate {
            case .constant: break
            case .not(let operand): walk(operand)
            case .and(let terms), .or(let terms): terms.forEach(walk)
            case .comparison(let comparison):
                collect(comparison.lhs)
                collect(comparison.rhs)
            }
        }
        walk(self)
        return found
    }
}

extension FetchPredicate.Expression {
    /// The expression with variables replaced.
    func substituting(_ arguments: [String: FetchPredicate.Argument]) -> Self {
        switch self {
        case .variable(let name):
            switch arguments[name] {
            case .value(let value)?: .constant(value)
            case .values(let values)?: .aggregate(values.map { .constant($0) })
            case .keyPath(let path)?: .keyPath(path)
            case nil: self
            }
        case .aggregate(let elements): .aggregate(elements.map { $0.substituting(arguments) })
        default: self
        }
    }
}
