// Building models in Swift with result builders.
//
// The builder is a thin layer over the description types: `Entity`, `Attribute`,
// `Relationship` and `FetchedProperty` are the model's own ``EntityDescription``,
// ``AttributeDescription``, ``RelationshipDescription`` and ``FetchedPropertyDescription``,
// with short initializers and chainable modifiers. Building a model validates it.
//
// ```swift
// let model = try ManagedObjectModel {
//     Entity("Recipe") {
//         Attribute("title", .string).required()
//         Attribute("servings", .integer16).default(.integer(2)).range(1...100)
//         Relationship("ingredients", to: "Ingredient", inverse: "recipe").toMany().cascade()
//         Unique("title")
//     }
//     Entity("Ingredient") {
//         Attribute("name", .string)
//         Relationship("recipe", to: "Recipe", inverse: "ingredients")
//     }
// }
// ```

/// An entity, in the builder's spelling: `Entity("Recipe") { … }`.
public typealias Entity = EntityDescription
/// An attribute, in the builder's spelling: `Attribute("title", .string).required()`.
public typealias Attribute = AttributeDescription
/// A relationship, in the builder's spelling: `Relationship("recipe", to: "Recipe")`.
public typealias Relationship = RelationshipDescription
/// A fetched property, in the builder's spelling: `FetchedProperty("recent", fetching: "Recipe")`.
public typealias FetchedProperty = FetchedPropertyDescription

/// The collecting part of Tern's result builders: blocks, conditions and loops of components
/// become one flat array.
///
/// Conforming builders only add `buildExpression` overloads for what they accept.
public protocol ListBuilder {
    /// What the builder collects.
    associatedtype Component

    /// Joins the components of a block.
    static func buildBlock(_ parts: [Component]...) -> [Component]
}

extension ListBuilder {
    /// Joins the components of a block, in order.
    public static func buildBlock(_ parts: [Component]...) -> [Component] { parts.flatMap { $0 } }
    /// The components of an `if` without `else`, when its condition holds.
    public static func buildOptional(_ part: [Component]?) -> [Component] { part ?? [] }
    /// The components of the first branch of an `if`/`else` or `switch`.
    public static func buildEither(first part: [Component]) -> [Component] { part }
    /// The components of the second branch of an `if`/`else` or `switch`.
    public static func buildEither(second part: [Component]) -> [Component] { part }
    /// The components of every iteration of a `for` loop.
    public static func buildArray(_ parts: [[Component]]) -> [Component] { parts.flatMap { $0 } }
}

// MARK: - Entities

/// A uniqueness constraint: objects of the entity may not share the values of these properties.
///
/// ```swift
/// Entity("Person") {
///     Attribute("firstName", .string)
///     Attribute("lastName", .string)
///     Unique("firstName", "lastName")
/// }
/// ```
public struct Unique: Sendable, Hashable {
    /// The constrained properties' names.
    public var propertyNames: [String]

    /// Creates a uniqueness constraint.
    ///
    /// - Parameter propertyNames: The attributes or to-one relationships whose combined
    ///   values must be unique.
    public init(_ propertyNames: String...) {
        self.propertyNames = propertyNames
    }
}

/// One part of an entity collected by ``EntityBuilder``: a property, a constraint or an index.
public struct EntityMember: Sendable {
    enum Content: Sendable {
        case attribute(AttributeDescription)
        case relationship(RelationshipDescription)
        case fetchedProperty(FetchedPropertyDescription)
        case uniqueness([String])
        case index(FetchIndex)
    }

    let content: Content
}

/// The result builder of an entity's body: attributes, relationships, fetched properties,
/// ``Unique`` constraints and ``FetchIndex``es, with `if` and `for`.
@resultBuilder
public enum EntityBuilder: ListBuilder {
    /// An entity builder collects entity members.
    public typealias Component = EntityMember

    /// An attribute.
    public static func buildExpression(_ attribute: AttributeDescription) -> [EntityMember] {
        [EntityMember(content: .attribute(attribute))]
    }
    /// A relationship.
    public static func buildExpression(_ relationship: RelationshipDescription) -> [EntityMember] {
        [EntityMember(content: .relationship(relationship))]
    }
    /// A fetched property.
    public static func buildExpression(_ fetched: FetchedPropertyDescription) -> [EntityMember] {
        [EntityMember(content: .fetchedProperty(fetched))]
    }
    /// A uniqueness constraint.
    public static func buildExpression(_ unique: Unique) -> [EntityMember] {
        [EntityMember(content: .uniqueness(unique.propertyNames))]
    }
    /// A fetch index.
    public static func buildExpression(_ index: FetchIndex) -> [EntityMember] {
        [EntityMember(content: .index(index))]
    }
}

extension EntityDescription {
    /// Creates an entity from a builder body.
    ///
    /// ```swift
    /// Entity("SportCar", parent: "Car") {
    ///     Attribute("topSpeed", .double)
    /// }
    /// ```
    ///
    /// - Parameters:
    ///   - name: The entity's name.
    ///   - parent: The parent entity's name, for a subentity.
    ///   - members: The entity's properties, uniqueness constraints and fetch indexes.
    public init(_ name: String, parent: String? = nil, @EntityBuilder _ members: () -> [EntityMember] = { [] }) {
        self.init(name: name, parent: parent)
        var attributes: [AttributeDescription] = []
        var relationships: [RelationshipDescription] = []
        var fetched: [FetchedPropertyDescription] = []
        for member in members() {
            switch member.content {
            case .attribute(let attribute): attributes.append(attribute)
            case .relationship(let relationship): relationships.append(relationship)
            case .fetchedProperty(let property): fetched.append(property)
            case .uniqueness(let names): uniquenessConstraints.append(names)
            case .index(let index): fetchIndexes.append(index)
            }
        }
        // Property observers do not run in an initializer: sort here as the setters would.
        self.attributes = attributes.sorted { $0.name < $1.name }
        self.relationships = relationships.sorted { $0.name < $1.name }
        self.fetchedProperties = fetched.sorted { $0.name < $1.name }
    }

    /// A copy of the entity marked abstract: it has no instances of its own, only of subentities.
    public func abstract() -> Self { updating { $0.isAbstract = true } }

    /// A copy of the entity with a version hash modifier, to force a new version hash.
    ///
    /// - Parameter modifier: Any text; changing it changes the entity's version hash.
    public func versionHashModifier(_ modifier: String) -> Self { updating { $0.versionHashModifier = modifier } }

    /// A copy of the entity that records the name it had in the previous model version.
    ///
    /// - Parameter identifier: The entity's previous name (Xcode's renaming identifier).
    public func renamed(from identifier: String) -> Self { updating { $0.renamingIdentifier = identifier } }

    /// A copy of the entity whose objects are represented by a class of that name.
    ///
    /// - Parameter className: The class name, as Core Data's `representedClassName`.
    public func represented(by className: String) -> Self { updating { $0.representedClassName = className } }

    // MARK: - Non public

    private func updating(_ change: (inout Self) -> Void) -> Self {
        var copy = self
        change(&copy)
        return copy
    }
}

extension FetchIndex {
    /// Creates an ascending binary index over some properties.
    ///
    /// ```swift
    /// FetchIndex("byMakerAndPlate", on: "maker", "numberPlate")
    /// ```
    ///
    /// - Parameters:
    ///   - name: The index's name.
    ///   - properties: The indexed properties, in order.
    public init(_ name: String, on properties: String...) {
        self.init(name: name, elements: properties.map { Element(property: $0) })
    }
}

extension FetchedPropertyDescription {
    /// Creates a fetched property, in the builder's spelling.
    ///
    /// - Parameters:
    ///   - name: The property's name.
    ///   - entityName: The entity the fetch returns.
    ///   - predicate: The fetch's predicate in NSPredicate's text format.
    public init(_ name: String, fetching entityName: String, where predicate: String? = nil) {
        self.init(name: name, entityName: entityName, predicate: predicate)
    }
}

// MARK: - Models

/// One part of a model collected by ``ModelBuilder``: an entity, a configuration or a fetch
/// request template.
public struct ModelMember: Sendable {
    enum Content: Sendable {
        case entity(EntityDescription)
        case configuration(Configuration)
        case fetchRequest(FetchRequestTemplate)
    }

    let content: Content
}

/// The result builder of a model's body: entities, configurations and fetch request
/// templates, with `if` and `for`.
@resultBuilder
public enum ModelBuilder: ListBuilder {
    /// A model builder collects model members.
    public typealias Component = ModelMember

    /// An entity.
    public static func buildExpression(_ entity: EntityDescription) -> [ModelMember] {
        [ModelMember(content: .entity(entity))]
    }
    /// A configuration.
    public static func buildExpression(_ configuration: Configuration) -> [ModelMember] {
        [ModelMember(content: .configuration(configuration))]
    }
    /// A fetch request template.
    public static func buildExpression(_ template: FetchRequestTemplate) -> [ModelMember] {
        [ModelMember(content: .fetchRequest(template))]
    }
}

extension ManagedObjectModel {
    /// Creates and validates a model from a builder body.
    ///
    /// ```swift
    /// let model = try ManagedObjectModel {
    ///     Entity("Note") { Attribute("text", .string).required() }
    /// }
    /// ```
    ///
    /// - Parameters:
    ///   - versionIdentifiers: The developer's version identifiers.
    ///   - members: The model's entities, configurations and fetch request templates.
    /// - Throws: ``TernError`` with code ``TernError/Code/invalidModel`` listing every problem
    ///   that ``validate()`` finds.
    /// - Complexity: That of ``validationIssues``.
    public init(versionIdentifiers: [String] = [], @ModelBuilder _ members: () -> [ModelMember]) throws(TernError) {
        self.init(unvalidated: members(), versionIdentifiers: versionIdentifiers)
        try validate()
    }

    // MARK: - Non public

    init(unvalidated members: [ModelMember], versionIdentifiers: [String]) {
        var entities: [EntityDescription] = []
        var configurations: [Configuration] = []
        var templates: [FetchRequestTemplate] = []
        for member in members {
            switch member.content {
            case .entity(let entity): entities.append(entity)
            case .configuration(let configuration): configurations.append(configuration)
            case .fetchRequest(let template): templates.append(template)
            }
        }
        self.init(entities: entities, configurations: configurations, versionIdentifiers: versionIdentifiers)
        fetchRequestTemplates = templates
    }
}

extension Configuration {
    /// Creates a configuration, in the builder's spelling.
    ///
    /// - Parameters:
    ///   - name: The configuration's name.
    ///   - entityNames: The entities it places in its store.
    public init(_ name: String, entities entityNames: String...) {
        self.init(name: name, entityNames: entityNames)
    }
}
