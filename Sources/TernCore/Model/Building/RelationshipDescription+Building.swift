/// The builder's spelling of relationships: a short initializer and chainable modifiers.
///
/// ```swift
/// Relationship("ingredients", to: "Ingredient", inverse: "recipe").toMany().cascade()
/// Relationship("steps", to: "Step", inverse: "recipe").toMany(ordered: true).count(1...20)
/// Relationship("recipe", to: "Recipe", inverse: "ingredients").required()
/// ```
extension RelationshipDescription {
    /// Creates an optional to-one relationship that nullifies on delete.
    ///
    /// - Parameters:
    ///   - name: The relationship's name.
    ///   - destination: The destination entity's name.
    ///   - inverse: The inverse relationship's name on the destination.
    public init(_ name: String, to destination: String, inverse: String? = nil) {
        self.init(name: name, destination: destination, inverse: inverse)
    }

    // MARK: - Cardinality

    /// A copy that holds any number of objects.
    ///
    /// - Parameter ordered: Whether the objects keep an order.
    public func toMany(ordered: Bool = false) -> Self {
        updating {
            $0.isToMany = true
            $0.isOrdered = ordered
            if $0.maxCount == 1 { $0.maxCount = 0 }
        }
    }

    /// A copy of a to-many relationship that holds between `range` objects.
    ///
    /// - Parameter range: The smallest and largest number of objects.
    public func count(_ range: ClosedRange<Int>) -> Self {
        updating {
            $0.minCount = range.lowerBound
            $0.maxCount = range.upperBound
        }
    }

    /// A copy of a to-many relationship that holds at least `range.lowerBound` objects.
    ///
    /// - Parameter range: The smallest number of objects, with no largest.
    public func count(_ range: PartialRangeFrom<Int>) -> Self {
        updating {
            $0.minCount = range.lowerBound
            $0.maxCount = 0
        }
    }

    // MARK: - Delete rule

    /// A copy with a delete rule: what deleting the source does to the destination objects.
    ///
    /// - Parameter rule: The delete rule.
    public func onDelete(_ rule: DeleteRule) -> Self { updating { $0.deleteRule = rule } }

    /// A copy that deletes the destination objects with the source.
    public func cascade() -> Self { onDelete(.cascade) }

    /// A copy that refuses to delete the source while destination objects exist.
    public func deny() -> Self { onDelete(.deny) }

    // MARK: - Storage

    /// A copy with a legacy index.
    public func indexed() -> Self { updating { $0.isIndexed = true } }
}
