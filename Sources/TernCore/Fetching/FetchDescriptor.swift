public import Foundation

/// A typed fetch request: objects of one ``TypedManagedObject`` class, chosen by a Foundation
/// `#Predicate` and ordered by `SortDescriptor`s, as SwiftData's `FetchDescriptor` is written.
///
/// The predicate and sort descriptors are converted to a ``FetchRequest`` (``fetchRequest()``),
/// so stores run them as they run string predicates: in SQL for the SQLite and PostgreSQL
/// stores, in memory for the others. Key paths are named through the class's key path table
/// (``TypedManagedObject/propertyName(for:)``); a key path that stands for no stored property
/// (a computed property, a transient attribute) is refused with an error that names the class.
///
/// ```swift
/// var request = Recipe.fetchRequest(
///     predicate: #Predicate<Recipe> { $0.title?.starts(with: "T") == true && $0.servings > 2 },
///     sortBy: [SortDescriptor(\.title, order: .reverse)])
/// request.fetchLimit = 10
/// let recipes = try await context.fetch(request)   // [Recipe]
/// ```
///
/// See ``FetchPredicate/init(_:keyPathName:)`` for the expressions a predicate may use. Sort
/// descriptors name one property each; strings compare as ``FetchSort`` compares them (a
/// localized string comparator has no store equivalent and is refused: see
/// ``FetchSort/init(_:keyPathName:)``).
public struct FetchDescriptor<Object: TypedManagedObject>: Sendable {
    /// The condition objects must meet, or nil for all.
    public var predicate: Predicate<Object>?
    /// The order of the results, most significant first.
    public var sortBy: [SortDescriptor<Object>]
    /// The largest number of results, or nil for all.
    public var fetchLimit: Int?
    /// How many matching results to skip.
    public var fetchOffset: Int = 0
    /// Whether objects of the entity's subentities are fetched too.
    public var includesSubentities: Bool = true
    /// Whether the context's unsaved inserts, updates and deletes count.
    public var includesPendingChanges: Bool = true
    /// The relationships whose destinations are loaded with fetched objects; nil loads every
    /// relationship's destinations (one level).
    public var relationshipKeyPathsForPrefetching: [String]?

    /// Creates a request for objects of `Object`'s entity.
    ///
    /// - Parameters:
    ///   - predicate: The condition objects must meet.
    ///   - sortBy: The order of the results.
    public init(predicate: Predicate<Object>? = nil, sortBy: [SortDescriptor<Object>] = []) {
        self.predicate = predicate
        self.sortBy = sortBy
    }

    // MARK: - Converting

    /// The request as a string-keyed ``FetchRequest``, with the predicate and sort descriptors
    /// converted.
    ///
    /// ```swift
    /// try Recipe.fetchRequest(predicate: #Predicate { $0.servings > 2 }).fetchRequest().predicate
    /// // servings > 2
    /// ```
    ///
    /// - Returns: The request.
    /// - Throws: ``TernError/Code/unsupported`` for expressions or comparators with no fetch
    ///   predicate or ``FetchSort`` equivalent; ``TernError/Code/invalidPredicate`` for a key
    ///   path that stands for no stored property of its class's entity.
    /// - Complexity: O(*n*) in the size of the predicate and the number of sort descriptors.
    public func fetchRequest() throws(TernError) -> FetchRequest {
        var request = FetchRequest(entityName: Object.entityName)
        if let predicate {
            request.predicate = try FetchPredicate(predicate, resolvingKeyPaths: Self.storedPropertyName)
        }
        for descriptor in sortBy {
            request.sortDescriptors.append(try FetchSort(descriptor, resolvingKeyPaths: Self.storedPropertyName))
        }
        request.fetchLimit = fetchLimit
        request.fetchOffset = fetchOffset
        request.includesSubentities = includesSubentities
        request.includesPendingChanges = includesPendingChanges
        request.relationshipKeyPathsForPrefetching = relationshipKeyPathsForPrefetching
        return request
    }

    // MARK: - Non public

    /// The property a key path of a typed class stands for; nil for key paths of other types,
    /// named from their description.
    static func storedPropertyName(of keyPath: AnyKeyPath) throws(TernError) -> String? {
        guard let root = type(of: keyPath).rootType as? any TypedManagedObject.Type else { return nil }
        if let name = root.propertyName(for: keyPath) { return name }
        throw TernError(
            .invalidPredicate,
            "a key path of \(root) to \(type(of: keyPath).valueType) stands for no stored attribute or relationship "
                + "of entity \(root.entityName); typed predicates and sort descriptors run in the store, so use "
                + "the properties generated from the model, not computed or transient ones",
            entity: root.entityName)
    }
}
