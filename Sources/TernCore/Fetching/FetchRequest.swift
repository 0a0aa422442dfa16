/// What to fetch through a context: Core Data's `NSFetchRequest`.
///
/// The kind of result comes from the context method that runs the request: objects
/// (``ObjectContext/fetch(_:)->[ManagedObject]``), IDs (``ObjectContext/fetchObjectIDs(_:)``), dictionaries
/// (``ObjectContext/fetchDictionaries(_:)``) or a count (``ObjectContext/count(for:)-(FetchRequest)``), so
/// each result is typed.
///
/// ```swift
/// var request = FetchRequest(entityName: "Recipe")
/// request.sortDescriptors = [FetchSort(key: "title")]
/// request.fetchLimit = 20
/// let ids = try await context.fetchObjectIDs(request)
/// ```
public struct FetchRequest: Sendable {
    /// The entity to fetch.
    public var entityName: String
    /// Whether objects of the entity's subentities are fetched too.
    public var includesSubentities: Bool = true
    /// The condition objects must meet, or nil for all.
    public var predicate: FetchPredicate?
    /// The order of the results.
    public var sortDescriptors: [FetchSort] = []
    /// The largest number of results, or nil for all.
    public var fetchLimit: Int?
    /// How many matching results to skip.
    public var fetchOffset: Int = 0
    /// How many objects ``ObjectContext/forEachBatch(of:_:)`` loads at a time; 0 picks 100.
    public var fetchBatchSize: Int = 0
    /// Whether the context's unsaved inserts, updates and deletes count.
    public var includesPendingChanges: Bool = true
    /// The attributes ``ObjectContext/fetchDictionaries(_:)`` returns; nil for all stored ones.
    public var propertiesToFetch: [String]?
    /// The relationships whose destinations are loaded with fetched objects, so that they are
    /// not faults; nil loads every relationship's destinations (one level).
    public var relationshipKeyPathsForPrefetching: [String]?

    /// Creates a request for every object of an entity and its subentities.
    ///
    /// - Parameters:
    ///   - entityName: The entity.
    ///   - predicate: The condition objects must meet.
    ///   - sortDescriptors: The order of the results.
    public init(entityName: String, predicate: FetchPredicate? = nil, sortDescriptors: [FetchSort] = []) {
        self.entityName = entityName
        self.predicate = predicate
        self.sortDescriptors = sortDescriptors
    }

    /// The request as a store sees it.
    var storeRequest: StoreFetchRequest {
        var request = StoreFetchRequest(entityName: entityName, predicate: predicate, sortDescriptors: sortDescriptors)
        request.includesSubentities = includesSubentities
        request.offset = fetchOffset
        request.limit = fetchLimit
        return request
    }
}
