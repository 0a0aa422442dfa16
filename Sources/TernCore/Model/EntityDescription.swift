/// A kind of object in a model: Core Data's `NSEntityDescription`.
///
/// An entity holds its own attributes and relationships; inherited ones come from its parent
/// through the ``ManagedObjectModel``. Properties are kept sorted by name, so two entities
/// with the same properties are equal however they were built.
///
/// ```swift
/// var recipe = EntityDescription(name: "Recipe")
/// recipe.attributes = [AttributeDescription(name: "title", type: .string, isOptional: false)]
/// recipe.uniquenessConstraints = [["title"]]
/// ```
public struct EntityDescription: Sendable, Hashable {
    /// The entity's name, unique in its model.
    public var name: String
    /// The name of the parent entity, or nil for a root entity.
    public var parentName: String?
    /// Whether the entity has no instances of its own, only of its subentities.
    public var isAbstract: Bool
    /// The entity's own attributes, sorted by name.
    public var attributes: [AttributeDescription] {
        didSet { attributes.sort { $0.name < $1.name } }
    }
    /// The entity's own relationships, sorted by name.
    public var relationships: [RelationshipDescription] {
        didSet { relationships.sort { $0.name < $1.name } }
    }
    /// The entity's own fetched properties, sorted by name.
    public var fetchedProperties: [FetchedPropertyDescription] {
        didSet { fetchedProperties.sort { $0.name < $1.name } }
    }
    /// Sets of property names whose combined values must be unique among the entity's objects.
    public var uniquenessConstraints: [[String]]
    /// Indexes that speed up fetches.
    public var fetchIndexes: [FetchIndex]
    /// Text that forces a new version hash without any other change.
    public var versionHashModifier: String?
    /// The identifier that names the entity this one was renamed from (Xcode's `elementID`).
    public var renamingIdentifier: String?
    /// The name of the class that represents the entity's objects in code.
    public var representedClassName: String?
    /// How Xcode generates code for the entity (`class`, `category`, or nil for manual).
    public var codeGenerationType: String?
    /// Free-form keys and values for the application.
    public var userInfo: [String: String]

    /// Creates an entity.
    ///
    /// - Parameters:
    ///   - name: The entity's name.
    ///   - parent: The parent entity's name, for a subentity.
    ///   - isAbstract: Whether the entity has no instances of its own.
    ///   - attributes: Its own attributes.
    ///   - relationships: Its own relationships.
    public init(
        name: String, parent: String? = nil, isAbstract: Bool = false,
        attributes: [AttributeDescription] = [], relationships: [RelationshipDescription] = []
    ) {
        self.name = name
        self.parentName = parent
        self.isAbstract = isAbstract
        self.attributes = attributes.sorted { $0.name < $1.name }
        self.relationships = relationships.sorted { $0.name < $1.name }
        self.fetchedProperties = []
        self.uniquenessConstraints = []
        self.fetchIndexes = []
        self.versionHashModifier = nil
        self.renamingIdentifier = nil
        self.representedClassName = nil
        self.codeGenerationType = nil
        self.userInfo = [:]
    }

    // MARK: - Looking up own properties

    /// The entity's own attribute with that name.
    ///
    /// - Complexity: O(*n*) in the number of attributes.
    public func attribute(named name: String) -> AttributeDescription? {
        attributes.first { $0.name == name }
    }

    /// The entity's own relationship with that name.
    ///
    /// - Complexity: O(*n*) in the number of relationships.
    public func relationship(named name: String) -> RelationshipDescription? {
        relationships.first { $0.name == name }
    }
}

/// An index over one or more properties of an entity: Core Data's `NSFetchIndexDescription`.
public struct FetchIndex: Sendable, Hashable {
    /// One property of the index, with its kind and order.
    public struct Element: Sendable, Hashable {
        /// The indexed property's name.
        public var property: String
        /// The index kind (`Binary` or `R-Tree`); Xcode writes `Binary`.
        public var kind: String
        /// Whether the index sorts ascending.
        public var isAscending: Bool

        /// Creates an index element.
        public init(property: String, kind: String = "Binary", isAscending: Bool = true) {
            self.property = property
            self.kind = kind
            self.isAscending = isAscending
        }
    }

    /// The index's name.
    public var name: String
    /// The indexed properties, in order.
    public var elements: [Element]

    /// Creates a fetch index.
    public init(name: String, elements: [Element]) {
        self.name = name
        self.elements = elements
    }
}
