/// What a context asks a store for: rows of an entity matching a predicate, sorted, with an
/// offset and a limit.
///
/// ```swift
/// var request = StoreFetchRequest(entityName: "Recipe")
/// request.sortDescriptors = [FetchSort(key: "title")]
/// request.limit = 20
/// let rows = try await store.fetch(request)
/// ```
public struct StoreFetchRequest: Sendable {
    /// The entity whose rows are fetched.
    public var entityName: String
    /// Whether rows of the entity's subentities are fetched too.
    public var includesSubentities: Bool
    /// The condition rows must meet, or nil for every row.
    public var predicate: FetchPredicate?
    /// The order of the rows; rows that compare equal come in primary-key order.
    public var sortDescriptors: [FetchSort]
    /// How many matching rows to skip.
    public var offset: Int
    /// The largest number of rows to return, or nil for all.
    public var limit: Int?
    /// The only attributes the caller reads, or nil for every property. A store may then leave
    /// out the other attributes and every relationship (a projection, for dictionary fetches);
    /// it may also return them all.
    public var propertiesToFetch: [String]?

    /// Creates a request for every row of an entity and its subentities.
    ///
    /// - Parameters:
    ///   - entityName: The entity.
    ///   - predicate: The condition rows must meet.
    ///   - sortDescriptors: The order of the rows.
    public init(entityName: String, predicate: FetchPredicate? = nil, sortDescriptors: [FetchSort] = []) {
        self.entityName = entityName
        self.includesSubentities = true
        self.predicate = predicate
        self.sortDescriptors = sortDescriptors
        self.offset = 0
        self.limit = nil
        self.propertiesToFetch = nil
    }
}
