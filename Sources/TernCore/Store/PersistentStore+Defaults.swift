extension PersistentStore {
    /// The attribute values of the rows ``fetch(_:)`` returns, keeping only the attributes the
    /// request's ``StoreFetchRequest/propertiesToFetch`` names: the default for every store.
    ///
    /// - Parameter request: What to fetch.
    /// - Returns: One dictionary per row, in the requested order.
    /// - Throws: What ``fetch(_:)`` throws.
    /// - Complexity: That of ``fetch(_:)``.
    public func fetchValues(_ request: StoreFetchRequest) async throws -> [[String: AttributeValue]] {
        let rows = try await fetch(request)
        guard let wanted = request.propertiesToFetch.map(Set.init) else { return rows.map(\.attributes) }
        return rows.map { AttributeValue.projecting($0.attributes, onto: wanted) }
    }
}

extension AttributeValue {
    /// The values of the wanted attributes only.
    ///
    /// - Complexity: O(*n*) in the number of values; no copy when all are wanted.
    package static func projecting(_ values: [String: AttributeValue], onto wanted: Set<String>) -> [String: AttributeValue] {
        values.keys.allSatisfy(wanted.contains) ? values : values.filter { wanted.contains($0.key) }
    }
}
