/// A property whose value is the result of a fetch: Core Data's `NSFetchedPropertyDescription`.
///
/// Fetched properties are never stored and do not enter version hashes.
public struct FetchedPropertyDescription: Sendable, Hashable {
    /// The property's name.
    public var name: String
    /// The entity the fetch returns.
    public var entityName: String
    /// The fetch's predicate in NSPredicate's text format, if any.
    public var predicate: String?
    /// Whether the property may be empty.
    public var isOptional: Bool
    /// Free-form keys and values for the application.
    public var userInfo: [String: String]

    /// Creates a fetched property.
    ///
    /// - Parameters:
    ///   - name: The property's name.
    ///   - entityName: The entity the fetch returns.
    ///   - predicate: The fetch's predicate text.
    public init(name: String, entityName: String, predicate: String? = nil) {
        self.name = name
        self.entityName = entityName
        self.predicate = predicate
        self.isOptional = true
        self.userInfo = [:]
    }
}
