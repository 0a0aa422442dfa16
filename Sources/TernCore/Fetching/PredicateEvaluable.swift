/// An object that can supply the values of key paths, so that predicates can be evaluated and sort
/// descriptors applied to it in memory.
///
/// The object layer and the in-memory stores conform their objects; ``FetchPredicate/evaluate(with:)``
/// and ``FetchSort`` ask them for the values of the key paths they mention.
///
/// ```swift
/// struct Person: PredicateEvaluable {
///     var name: String
///     var pets: [String]
///     func predicateValue(forKeyPath keyPath: String) throws(TernError) -> PredicateValue {
///         switch keyPath {
///         case "name": .single(.string(name))
///         case "pets.name": .many(pets.map { .string($0) })
///         case "pets": .many(pets.map { _ in nil })
///         default: throw TernError(.invalidPredicate, "Person has no key path \(keyPath)")
///         }
///     }
/// }
/// let p = try FetchPredicate("ANY pets.name == 'Rex' AND pets.@count < 3")
/// try p.evaluate(with: Person(name: "Ann", pets: ["Rex"]))  // true
/// ```
public protocol PredicateEvaluable {
    /// Returns the value at a key path.
    ///
    /// - Parameter keyPath: A dotted key path such as `name` or `owner.name`, possibly through
    ///   to-many relationships (`items.price`), or the empty string for the object itself (`SELF`).
    /// - Returns: ``PredicateValue/single(_:)`` for an attribute or a chain of to-one
    ///   relationships (`nil` when a relationship on the way is empty), ``PredicateValue/many(_:)`` when the path
    ///   goes through a to-many relationship: one element per reached value. A key path that ends
    ///   at a relationship gives one element per related object (its object ID URI, say); `@count`
    ///   counts them.
    /// - Throws: An error, such as ``TernError/Code/invalidPredicate``, when the key path does not
    ///   exist.
    func predicateValue(forKeyPath keyPath: String) throws(TernError) -> PredicateValue
}

/// The value of a key path on an object: a single value, or a collection when the path goes
/// through a to-many relationship.
///
/// ```swift
/// let name: PredicateValue = .single(.string("Ann"))
/// let prices: PredicateValue = .many([.double(1.5), .double(2)])
/// ```
public enum PredicateValue: Sendable, Hashable {
    /// The value of an attribute or of a chain of to-one relationships, `nil` when missing.
    case single(AttributeValue?)
    /// The values reached through a to-many relationship.
    case many([AttributeValue?])

    /// The value as a collection: the elements of ``many(_:)``, or a ``single(_:)`` value alone
    /// (none when it is `nil`).
    public var elements: [AttributeValue?] {
        switch self {
        case .single(nil): []
        case .single(let value): [value]
        case .many(let values): values
        }
    }
}

extension AttributeValue: PredicateEvaluable {
    /// The value itself for `SELF`, so that predicates such as `SELF BEGINSWITH "a"` apply to values.
    ///
    /// - Parameter keyPath: The empty string.
    /// - Returns: The value.
    /// - Throws: ``TernError/Code/invalidPredicate`` for any other key path.
    public func predicateValue(forKeyPath keyPath: String) throws(TernError) -> PredicateValue {
        guard keyPath.isEmpty else {
            throw TernError(
                .invalidPredicate, "A single value has no key paths; use SELF to refer to it", property: keyPath)
        }
        return .single(self)
    }
}

extension Dictionary: PredicateEvaluable where Key == String, Value == PredicateValue {
    /// The value stored under the whole dotted key path, `nil` when there is none.
    ///
    /// - Parameter keyPath: A key path, used as a key.
    /// - Returns: The stored value, or `.single(nil)`.
    public func predicateValue(forKeyPath keyPath: String) -> PredicateValue {
        self[keyPath] ?? .single(nil)
    }
}
