package import TernCore

extension RelationshipDescription {
    /// The counts the relationship allows, in words: `at least 2`, `1 to 5`, `at most 3`.
    package var allowedCountText: String {
        let minimum = max(minCount, isRequired ? 1 : 0)
        switch (minimum, maxCount) {
        case (let minimum, 0): return "at least \(minimum)"
        case (0, let maximum): return "at most \(maximum)"
        case (let minimum, let maximum): return "\(minimum) to \(maximum)"
        }
    }

    /// Whether this relationship refuses a count of objects that an older version allowed: it
    /// became required, its minimum grew or its maximum shrank.
    ///
    /// - Parameter old: The relationship in the older version.
    package func tightensBounds(of old: RelationshipDescription) -> Bool {
        (old.isOptional && isRequired) || minCount > old.minCount
            || (maxCount > 0 && (old.maxCount == 0 || maxCount < old.maxCount))
    }
}
