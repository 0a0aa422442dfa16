public import Foundation
public import TernCore

/// How to migrate a store from one model version to another: Core Data's `NSMappingModel`.
///
/// A mapping model is a list of entity mappings, run in order, between two models identified by
/// their entity version hashes. Explicit mapping models are written in Swift or read from JSON
/// (see `docs/MappingFormat.md`); inferred ones come from ``MappingInference``. Several mapping
/// models run one after the other into the same destination are the passes of one step.
///
/// ```swift
/// let stepOne = MappingModel(name: "StepOne", source: v1, destination: v2, entityMappings: [
///     EntityMapping(name: "EventToStamp", kind: .transform, source: "Event", destination: "StampEvent",
///                   attributes: [PropertyMapping("stamp", try ValueExpression("timeInterval($source.timeStamp)"))]),
/// ])
/// try stepOne.validate(source: v1, destination: v2)
/// ```
///
/// ## Topics
///
/// ### Parts
/// - ``EntityMapping``
/// - ``PropertyMapping``
///
/// ### Checking
/// - ``validate(source:destination:otherPasses:)``
public struct MappingModel: Sendable, Hashable {
    /// The mapping model's name, such as `StepOne`; used in messages and to tell passes apart.
    public var name: String
    /// The entity version hashes of the source model, by entity name; empty when not yet bound.
    public var sourceEntityVersionHashes: [String: Data]
    /// The entity version hashes of the destination model, by entity name; empty when not yet bound.
    public var destinationEntityVersionHashes: [String: Data]
    /// The entity mappings, in the order they run.
    public var entityMappings: [EntityMapping]
    /// How the entity mappings are ordered when the mapping model runs; ``MappingOrder/given`` by
    /// default, as in Core Data (see ``ordering(in:)``).
    public var order: MappingOrder = .given

    /// Creates a mapping model bound to two models.
    ///
    /// - Parameters:
    ///   - name: The mapping model's name.
    ///   - source: The source model; its entity hashes are recorded.
    ///   - destination: The destination model; its entity hashes are recorded.
    ///   - entityMappings: The entity mappings in the order they run.
    /// - Complexity: That of computing both models' entity version hashes.
    public init(
        name: String, source: ManagedObjectModel, destination: ManagedObjectModel, entityMappings: [EntityMapping]
    ) {
        self.init(
            name: name, sourceHashes: source.entityVersionHashes, destinationHashes: destination.entityVersionHashes,
            entityMappings: entityMappings)
    }

    /// Creates a mapping model from entity hashes (empty when not yet bound to models).
    ///
    /// - Parameters:
    ///   - name: The mapping model's name.
    ///   - sourceHashes: The source model's entity version hashes.
    ///   - destinationHashes: The destination model's entity version hashes.
    ///   - entityMappings: The entity mappings in the order they run.
    public init(
        name: String, sourceHashes: [String: Data] = [:], destinationHashes: [String: Data] = [:],
        entityMappings: [EntityMapping]
    ) {
        self.name = name
        self.sourceEntityVersionHashes = sourceHashes
        self.destinationEntityVersionHashes = destinationHashes
        self.entityMappings = entityMappings
    }

    // MARK: - Looking up

    /// The entity mapping with that name.
    ///
    /// - Complexity: O(*n*) in the number of entity mappings.
    public func entityMapping(named name: String) -> EntityMapping? {
        entityMappings.first { $0.name == name }
    }

    /// Whether the mapping model was made for these two models: their entity hashes are the recorded ones.
    ///
    /// - Complexity: That of computing both models' entity version hashes.
    public func isBound(source: ManagedObjectModel, destination: ManagedObjectModel) -> Bool {
        source.entityVersionHashes == sourceEntityVersionHashes
            && destination.entityVersionHashes == destinationEntityVersionHashes
    }
}

/// How the objects of one source entity become objects of one destination entity:
/// Core Data's `NSEntityMapping`.
///
/// An entity mapping migrates the objects whose entity is exactly ``sourceEntityName`` (not its
/// subentities, which have mappings of their own) and that pass ``sourceFilter``.
///
/// ```swift
/// let mapping = EntityMapping(
///     name: "RecipeToRecipe", kind: .transform, source: "Recipe", destination: "Recipe",
///     filter: try FetchPredicate("servings > 0"),
///     attributes: [PropertyMapping("minutes", try ValueExpression("integer($source.cookingTime)"))],
///     relationships: [PropertyMapping("book", try ValueExpression(#"destinationInstances("BookToBook", $source.book)"#))])
/// ```
public struct EntityMapping: Sendable, Hashable {
    /// What an entity mapping does: Core Data's `NSEntityMappingType`.
    public enum Kind: String, Sendable, Hashable, CaseIterable, Codable {
        /// The destination entity is new; no source objects are read.
        case add
        /// The source entity goes away; its objects are not migrated.
        case remove
        /// Objects are copied unchanged: the entities have the same stored properties.
        case copy
        /// Objects are transformed through the property mappings.
        case transform
        /// A custom policy (``policyName``) does the work.
        case custom
    }

    /// The entity mapping's name, unique in its step; `destinationInstances` refers to it.
    public var name: String
    /// What the mapping does.
    public var kind: Kind
    /// The source entity's name; nil for ``Kind/add``.
    public var sourceEntityName: String?
    /// The destination entity's name; nil for ``Kind/remove``.
    public var destinationEntityName: String?
    /// Which source objects the mapping migrates; nil for all.
    public var sourceFilter: FetchPredicate?
    /// How each destination attribute is computed, sorted by name; a destination attribute
    /// without a mapping gets its default value.
    public var attributeMappings: [PropertyMapping] {
        didSet { attributeMappings.sort { $0.name < $1.name } }
    }
    /// How each destination relationship is computed (usually with `destinationInstances`), sorted by name.
    public var relationshipMappings: [PropertyMapping] {
        didSet { relationshipMappings.sort { $0.name < $1.name } }
    }
    /// The name of the custom migration policy, looked up in a ``MigrationPolicyRegistry``.
    public var policyName: String?
    /// Free-form text the mapping carries for its policy: Core Data's `userInfo`, read from and
    /// written to Xcode mapping models and mapping files; empty by default.
    public var userInfo: [String: String] = [:]

    /// Creates an entity mapping.
    ///
    /// - Parameters:
    ///   - name: The mapping's name; by default `<Source>To<Destination>`, `Add<Destination>` or `Remove<Source>`.
    ///   - kind: What the mapping does.
    ///   - source: The source entity's name.
    ///   - destination: The destination entity's name.
    ///   - filter: Which source objects to migrate.
    ///   - attributes: The attribute mappings.
    ///   - relationships: The relationship mappings.
    ///   - policy: The custom migration policy's name.
    public init(
        name: String? = nil, kind: Kind, source: String?, destination: String?, filter: FetchPredicate? = nil,
        attributes: [PropertyMapping] = [], relationships: [PropertyMapping] = [], policy: String? = nil
    ) {
        self.name = name ?? Self.defaultName(kind: kind, source: source, destination: destination)
        self.kind = kind
        self.sourceEntityName = source
        self.destinationEntityName = destination
        self.sourceFilter = filter
        self.attributeMappings = attributes.sorted { $0.name < $1.name }
        self.relationshipMappings = relationships.sorted { $0.name < $1.name }
        self.policyName = policy
    }

    /// All property mappings: attributes, then relationships.
    public var propertyMappings: [PropertyMapping] { attributeMappings + relationshipMappings }

    /// The name Core Data's tools give an entity mapping.
    ///
    /// - Returns: `<Source>To<Destination>`, `Add<Destination>` or `Remove<Source>`.
    public static func defaultName(kind: Kind, source: String?, destination: String?) -> String {
        switch kind {
        case .add: "Add" + (destination ?? "")
        case .remove: "Remove" + (source ?? "")
        default: (source ?? "") + "To" + (destination ?? "")
        }
    }
}

/// How one destination property is computed: Core Data's `NSPropertyMapping`.
///
/// ```swift
/// let printed = PropertyMapping("printedDate", try ValueExpression(#"formatDate($source.timeStamp, "yyyy-MM-dd")"#))
/// ```
public struct PropertyMapping: Sendable, Hashable {
    /// The destination property's name.
    public var name: String
    /// The value expression; nil leaves the property at its default value (or empty).
    public var valueExpression: ValueExpression?

    /// Creates a property mapping.
    ///
    /// - Parameters:
    ///   - name: The destination property's name.
    ///   - valueExpression: How its value is computed; nil for the default value.
    public init(_ name: String, _ valueExpression: ValueExpression?) {
        self.name = name
        self.valueExpression = valueExpression
    }
}
