/// One version of a data model: a set of entities. Core Data's `NSManagedObjectModel`.
///
/// A model is a value. Entities are kept sorted by name, as Core Data orders them for hashing,
/// so two models with the same entities are equal however they were built.
///
/// ```swift
/// let model = ManagedObjectModel(entities: [
///     EntityDescription(name: "Recipe", attributes: [
///         AttributeDescription(name: "title", type: .string, isOptional: false),
///     ]),
/// ])
/// model.entity(named: "Recipe")?.attributes.count   // 1
/// ```
public struct ManagedObjectModel: Sendable, Hashable {
    /// The model's entities, sorted by name.
    public var entities: [EntityDescription] {
        didSet { entities.sort { $0.name < $1.name } }
    }
    /// Named groups of entities, used to assign entities to stores.
    public var configurations: [Configuration]
    /// Named fetch requests stored in the model.
    public var fetchRequestTemplates: [FetchRequestTemplate]
    /// The developer's version identifiers (Xcode's `userDefinedModelVersionIdentifier`).
    public var versionIdentifiers: [String]

    /// Creates a model.
    ///
    /// - Parameters:
    ///   - entities: The model's entities, in any order.
    ///   - configurations: Named groups of entities.
    ///   - versionIdentifiers: The developer's version identifiers.
    public init(
        entities: [EntityDescription] = [], configurations: [Configuration] = [],
        versionIdentifiers: [String] = []
    ) {
        self.entities = entities.sorted { $0.name < $1.name }
        self.configurations = configurations
        self.fetchRequestTemplates = []
        self.versionIdentifiers = versionIdentifiers
    }

    // MARK: - Looking up entities

    /// The entity with that name.
    ///
    /// - Complexity: O(log *n*) in the number of entities.
    public func entity(named name: String) -> EntityDescription? {
        var low = 0
        var high = entities.count
        while low < high {
            let mid = (low + high) / 2
            if entities[mid].name < name { low = mid + 1 } else { high = mid }
        }
        return low < entities.count && entities[low].name == name ? entities[low] : nil
    }
}

/// A named group of entities, used to place entities in stores: a Core Data configuration.
public struct Configuration: Sendable, Hashable {
    /// The configuration's name.
    public var name: String
    /// The names of the entities in the configuration.
    public var entityNames: [String]

    /// Creates a configuration.
    public init(name: String, entityNames: [String]) {
        self.name = name
        self.entityNames = entityNames
    }
}

/// A fetch request stored in a model under a name (Xcode's model-level `<fetchRequest>`).
public struct FetchRequestTemplate: Sendable, Hashable {
    /// The template's name.
    public var name: String
    /// The entity it fetches.
    public var entityName: String
    /// Its predicate in NSPredicate's text format, with `$VARIABLE` placeholders.
    public var predicate: String?
    /// Other settings as Xcode writes them (`fetchLimit`, `resultType`, …), by attribute name.
    public var settings: [String: String]

    /// Creates a fetch request template.
    public init(name: String, entityName: String, predicate: String? = nil, settings: [String: String] = [:]) {
        self.name = name
        self.entityName = entityName
        self.predicate = predicate
        self.settings = settings
    }
}
