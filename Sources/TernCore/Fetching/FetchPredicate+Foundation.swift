public import Foundation

extension FetchPredicate {
    // MARK: - Converting typed predicates

    /// Converts a typed Foundation predicate, written with `#Predicate`, into a fetch predicate, so
    /// that stores can run it in SQL.
    ///
    /// Supported: comparisons (`==`, `!=`, `<`, `<=`, `>`, `>=`) of key paths and constants, `&&`,
    /// `||`, `!`, Boolean key paths, `nil`, optional chaining through to-one relationships
    /// (`$0.owner?.name`), `contains(_:)` on strings (`CONTAINS`), on constant arrays (`IN`) and on
    /// collections (`CONTAINS`), `starts(with:)` (`BEGINSWITH`), `count` of a collection (`@count`),
    /// and `contains(where:)`/`allSatisfy(_:)` over a to-many relationship with one comparison inside
    /// (`ANY`/`ALL`). Optional values, as generated classes have them, may be tested through an
    /// optional chain compared with `true`, `false` or `nil` (`$0.title?.starts(with: "T") == true`,
    /// `title BEGINSWITH "T"`) or followed by `?? true`/`?? false`, and through `??` with a
    /// fallback (`($0.price ?? 0) > 5`, `price != nil AND price > 5`).
    ///
    /// ```swift
    /// let typed = #Predicate<Person> { $0.age >= 18 && $0.name.starts(with: "A") }
    /// let predicate = try FetchPredicate(typed)  // age >= 18 AND name BEGINSWITH "A"
    /// ```
    ///
    /// - Parameters:
    ///   - predicate: A predicate over one input.
    ///   - keyPathName: The key of a property's Swift key path (one property, such as
    ///     `\Person.name`); return `nil` to use the property's name, read from the key path's
    ///     description.
    /// - Throws: ``TernError/Code/unsupported`` for expressions outside the supported set, and for
    ///   key paths whose name cannot be known.
    /// - Complexity: O(*n*) in the size of the predicate.
    public init<Root>(
        _ predicate: Predicate<Root>, keyPathName: (AnyKeyPath) -> String? = { _ in nil }
    ) throws(TernError) {
        self = try TypedPredicateContext.resolving(with: keyPathName) { resolver throws(TernError) in
            try FetchPredicate(predicate, resolvingKeyPaths: resolver)
        }
    }

    /// Converts a typed predicate, naming key paths with a resolver that may refuse them.
    ///
    /// - Parameters:
    ///   - predicate: A predicate over one input.
    ///   - resolver: The property name of a single-property key path, nil to read it from the key
    ///     path's description, or an error for a key path that stands for no stored property.
    init<Root>(
        _ predicate: Predicate<Root>, resolvingKeyPaths resolver: (AnyKeyPath) throws(TernError) -> String?
    ) throws(TernError) {
        let converted = withoutActuallyEscaping(resolver) { resolver in
            var context = TypedPredicateContext(keyPathName: resolver)
            context.prefixes[predicate.variable.key] = ""
            return Result { () throws(TernError) in try context.predicate(from: predicate.expression) }
        }
        self = try converted.get()
    }
}

/// What converting a typed predicate needs: how to name key paths, and the key path each
/// closure variable stands for.
struct TypedPredicateContext {
    var keyPathName: (AnyKeyPath) throws(TernError) -> String?
    /// The key path that each variable stands for: empty for the predicate's input.
    var prefixes: [PredicateExpressions.VariableID: String] = [:]

    /// Runs `body` with a resolver that names key paths through `keyPathName`, which never
    /// refuses one: what the public conversions, which take such a closure, share.
    static func resolving<Converted>(
        with keyPathName: (AnyKeyPath) -> String?,
        _ body: ((AnyKeyPath) throws(TernError) -> String?) throws(TernError) -> Converted
    ) throws(TernError) -> Converted {
        let converted = withoutActuallyEscaping(keyPathName) { keyPathName in
            Result { () throws(TernError) in try body { keyPath throws(TernError) in keyPathName(keyPath) } }
        }
        return try converted.get()
    }

    static func unsupported(_ what: String) -> TernError {
        TernError(
            .unsupported,
            "\(what) has no equivalent in fetch predicates; use comparisons of key paths with constants, &&, ||, !, contains, starts(with:) or count"
        )
    }

    func predicate(from expression: Any) throws(TernError) -> FetchPredicate {
        if let convertible = expression as? any TypedPredicateConvertible {
            return try convertible.fetchPredicate(in: self)
        }
        if let coalescing = expression as? any TypedNilCoalescing, let predicate = try coalescedPredicate(coalescing) {
            return predicate
        }
        switch try self.expression(from: expression) {
        case .constant(.bool(let value)?): return .constant(value)
        case let value: return .compare(value, .equalTo, .constant(.bool(true)))
        }
    }

    func expression(from expression: Any) throws(TernError) -> FetchPredicate.Expression {
        guard let convertible = expression as? any TypedExpressionConvertible else {
            throw Self.unsupported("The expression \(type(of: expression))")
        }
        return try convertible.fetchExpression(in: self)
    }

    /// The key path a key path expression stands for.
    func keyPath(from expression: Any) throws(TernError) -> String {
        guard case .keyPath(let path) = try self.expression(from: expression) else {
            throw Self.unsupported("A closure over something other than a key path")
        }
        return path
    }

    /// The name of a single-property key path: the caller's, else the last member of its description.
    func name(of keyPath: AnyKeyPath) throws(TernError) -> String {
        if let name = try keyPathName(keyPath) { return name }
        let text = String(describing: keyPath)
        guard let dot = text.lastIndex(of: "."), !text.contains("<"), !text.contains("?"), !text.contains("!")
        else {
            throw Self.unsupported("The computed or unnamed key path \(text)")
        }
        return String(text[text.index(after: dot)...])
    }

    /// A constant for a Swift value, `nil` when the value's type has no attribute value.
    static func constant(_ value: Any) -> FetchPredicate.Expression? {
        if let optional = value as? any TypedPredicateOptional {
            guard let wrapped = optional.wrappedValue else { return .constant(nil) }
            return constant(wrapped)
        }
        if let array = value as? [Any] {
            var elements: [FetchPredicate.Expression] = []
            for element in array {
                guard let converted = constant(element) else { return nil }
                elements.append(converted)
            }
            return .aggregate(elements)
        }
        let attribute: AttributeValue? =
            switch value {
            case let number as Int: .integer(Int64(number))
            case let number as Int64: .integer(number)
            case let number as Int32: .integer(Int64(number))
            case let number as Int16: .integer(Int64(number))
            case let number as Int8: .integer(Int64(number))
            case let number as UInt8: .integer(Int64(number))
            case let number as UInt16: .integer(Int64(number))
            case let number as UInt32: .integer(Int64(number))
            case let number as UInt: Int64(exactly: number).map { .integer($0) } ?? .double(Double(number))
            case let number as UInt64: Int64(exactly: number).map { .integer($0) } ?? .double(Double(number))
            case let number as Double: .double(number)
            case let number as Float: .double(Double(number))
            case let number as Decimal: .decimal(number)
            case let string as String: .string(string)
            case let string as Substring: .string(String(string))
            case let flag as Bool: .bool(flag)
            case let date as Date: .date(date)
            case let data as Data: .data(data)
            case let uuid as UUID: .uuid(uuid)
            case let url as URL: .uri(url)
            default: nil
            }
        return attribute.map { .constant($0) }
    }
}

// MARK: - Conversions of Foundation's expressions

/// A Boolean expression of a typed predicate that converts to a fetch predicate.
protocol TypedPredicateConvertible {
    func fetchPredicate(in context: TypedPredicateContext) throws(TernError) -> FetchPredicate
}

/// A value expression of a typed predicate that converts to a fetch predicate expression.
protocol TypedExpressionConvertible {
    func fetchExpression(in context: TypedPredicateContext) throws(TernError) -> FetchPredicate.Expression
}

/// A closure variable of a typed predicate.
protocol TypedPredicateVariable {
    var variableID: PredicateExpressions.VariableID { get }
}

/// An optional, seen through `Any`.
protocol TypedPredicateOptional {
    var wrappedValue: Any? { get }
}

/// A collection whose `count` key path becomes `@count`.
protocol TypedPredicateCountable {
    static func isCount(_ keyPath: AnyKeyPath) -> Bool
}

extension Optional: TypedPredicateOptional {
    var wrappedValue: Any? { self.map { $0 as Any } }
}

extension Array: TypedPredicateCountable {
    static func isCount(_ keyPath: AnyKeyPath) -> Bool { keyPath == \Self.count }
}

extension Set: TypedPredicateCountable {
    static func isCount(_ keyPath: AnyKeyPath) -> Bool { keyPath == \Self.count }
}

extension PredicateExpressions.Variable: TypedPredicateVariable {
    var variableID: PredicateExpressions.VariableID { key }
}

extension PredicateExpressions.Conjunction: TypedPredicateConvertible {
    func fetchPredicate(in context: TypedPredicateContext) throws(TernError) -> FetchPredicate {
        .and(
            try context.terms(lhs, rhs) { predicate in
                if case .and(let nested) = predicate { nested } else { nil }
            })
    }
}

extension PredicateExpressions.Disjunction: TypedPredicateConvertible {
    func fetchPredicate(in context: TypedPredicateContext) throws(TernError) -> FetchPredicate {
        .or(
            try context.terms(lhs, rhs) { predicate in
                if case .or(let nested) = predicate { nested } else { nil }
            })
    }
}

extension PredicateExpressions.Negation: TypedPredicateConvertible {
    func fetchPredicate(in context: TypedPredicateContext) throws(TernError) -> FetchPredicate {
        .not(try context.predicate(from: wrapped))
    }
}

extension PredicateExpressions.Equal: TypedPredicateConvertible {
    func fetchPredicate(in context: TypedPredicateContext) throws(TernError) -> FetchPredicate {
        try context.comparison(lhs, .equalTo, rhs)
    }
}

extension PredicateExpressions.NotEqual: TypedPredicateConvertible {
    func fetchPredicate(in context: TypedPredicateContext) throws(TernError) -> FetchPredicate {
        try context.comparison(lhs, .notEqualTo, rhs)
    }
}

extension PredicateExpressions.Comparison: TypedPredicateConvertible {
    func fetchPredicate(in context: TypedPredicateContext) throws(TernError) -> FetchPredicate {
        let converted: FetchPredicate.Operator =
            switch op {
            case .lessThan: .lessThan
            case .lessThanOrEqual: .lessThanOrEqualTo
            case .greaterThan: .greaterThan
            case .greaterThanOrEqual: .greaterThanOrEqualTo
            }
        return try context.comparison(lhs, converted, rhs)
    }
}

extension PredicateExpressions.CollectionContainsCollection: TypedPredicateConvertible {
    func fetchPredicate(in context: TypedPredicateContext) throws(TernError) -> FetchPredicate {
        try context.comparison(base, .contains, other)
    }
}

extension PredicateExpressions.SequenceStartsWith: TypedPredicateConvertible {
    func fetchPredicate(in context: TypedPredicateContext) throws(TernError) -> FetchPredicate {
        try context.comparison(base, .beginsWith, prefix)
    }
}

extension PredicateExpressions.SequenceContains: TypedPredicateConvertible {
    func fetchPredicate(in context: TypedPredicateContext) throws(TernError) -> FetchPredicate {
        let collection = try context.expression(from: sequence)
        let element = try context.expression(from: element)
        if case .aggregate = collection { return .compare(element, .in, collection) }
        return .compare(collection, .contains, element)
    }
}

extension PredicateExpressions.SequenceContainsWhere: TypedPredicateConvertible {
    func fetchPredicate(in context: TypedPredicateContext) throws(TernError) -> FetchPredicate {
        try context.quantified(.any, over: sequence, variable: variable.key, test: test)
    }
}

extension PredicateExpressions.SequenceAllSatisfy: TypedPredicateConvertible {
    func fetchPredicate(in context: TypedPredicateContext) throws(TernError) -> FetchPredicate {
        try context.quantified(.all, over: sequence, variable: variable.key, test: test)
    }
}

extension TypedPredicateContext {
    /// The terms of a compound of two sides, splicing in the terms of a side that is the same
    /// compound, since `a && b && c` nests on the left.
    func terms(
        _ lhs: Any, _ rhs: Any, nested: (FetchPredicate) -> [FetchPredicate]?
    ) throws(TernError) -> [FetchPredicate] {
        var terms: [FetchPredicate] = []
        for side in [lhs, rhs] {
            let term = try predicate(from: side)
            terms += nested(term) ?? [term]
        }
        return terms
    }

    /// A comparison of two value expressions; a side that is an optional chain ending in a test
    /// (`$0.title?.starts(with: "T") == true`) or a nil-coalescing (`($0.title ?? "") == "T"`)
    /// becomes the equivalent comparisons of the optional value.
    func comparison(_ lhs: Any, _ op: FetchPredicate.Operator, _ rhs: Any) throws(TernError) -> FetchPredicate {
        if let predicate = try optionalComparison(lhs, op, rhs) { return predicate }
        return .compare(try expression(from: lhs), op, try expression(from: rhs))
    }

    /// `ANY`/`ALL` over a to-many key path, for a closure holding one comparison of its element.
    func quantified(
        _ quantifier: FetchPredicate.Quantifier, over sequence: Any, variable: PredicateExpressions.VariableID,
        test: Any
    ) throws(TernError) -> FetchPredicate {
        var inner = self
        inner.prefixes[variable] = try keyPath(from: sequence)
        guard case .comparison(var comparison) = try inner.predicate(from: test), comparison.quantifier == .direct
        else {
            throw Self.unsupported("A contains(where:) or allSatisfy closure with more than one comparison")
        }
        comparison.quantifier = quantifier
        return .comparison(comparison)
    }
}

extension PredicateExpressions.KeyPath: TypedExpressionConvertible {
    func fetchExpression(in context: TypedPredicateContext) throws(TernError) -> FetchPredicate.Expression {
        let prefix: String
        if let variable = root as? any TypedPredicateVariable {
            guard let known = context.prefixes[variable.variableID] else {
                throw TypedPredicateContext.unsupported("A key path on an unknown variable")
            }
            prefix = known
        } else {
            prefix = try context.keyPath(from: root)
        }
        if let countable = Root.Output.self as? any TypedPredicateCountable.Type, countable.isCount(keyPath) {
            guard !prefix.isEmpty else { throw TypedPredicateContext.unsupported("The count of the input") }
            return .collection(.count, keyPath: prefix, key: nil)
        }
        let name = try context.name(of: keyPath)
        return .keyPath(prefix.isEmpty ? name : prefix + "." + name)
    }
}

extension PredicateExpressions.Value: TypedExpressionConvertible {
    func fetchExpression(in context: TypedPredicateContext) throws(TernError) -> FetchPredicate.Expression {
        guard let constant = TypedPredicateContext.constant(value) else {
            throw TypedPredicateContext.unsupported("A constant of type \(Output.self)")
        }
        return constant
    }
}

extension PredicateExpressions.UnaryMinus: TypedExpressionConvertible {
    func fetchExpression(in context: TypedPredicateContext) throws(TernError) -> FetchPredicate.Expression {
        switch try context.expression(from: wrapped) {
        case .constant(.integer(let number)?) where number != .min: .constant(.integer(-number))
        case .constant(.double(let number)?): .constant(.double(-number))
        case .constant(.decimal(let number)?): .constant(.decimal(-number))
        default: throw TypedPredicateContext.unsupported("Negating something other than a constant")
        }
    }
}

extension PredicateExpressions.NilLiteral: TypedExpressionConvertible {
    func fetchExpression(in context: TypedPredicateContext) throws(TernError) -> FetchPredicate.Expression {
        .constant(nil)
    }
}

extension PredicateExpressions.ForcedUnwrap: TypedExpressionConvertible {
    func fetchExpression(in context: TypedPredicateContext) throws(TernError) -> FetchPredicate.Expression {
        try context.expression(from: inner)
    }
}

extension PredicateExpressions.OptionalFlatMap: TypedExpressionConvertible {
    func fetchExpression(in context: TypedPredicateContext) throws(TernError) -> FetchPredicate.Expression {
        var inner = context
        inner.prefixes[variable.key] = try context.keyPath(from: wrapped)
        return try inner.expression(from: transform)
    }
}
