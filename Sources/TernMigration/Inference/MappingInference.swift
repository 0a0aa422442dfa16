public import TernCore

/// The mapping that Core Data's lightweight migration would infer between two model versions,
/// with the changes it makes and, for what cannot be inferred, why and what to write instead.
///
/// Inference handles added and removed entities, attributes and relationships; renames through
/// renaming identifiers (also chained through intermediate versions); an optional attribute
/// becoming required when it has a default value; a required one becoming optional; to-one
/// relationships becoming to-many and to-many ones becoming ordered or unordered; entities
/// moving in the inheritance tree and properties moving up or down it; number types that widen
/// (Integer 16 → 32 → 64, Boolean → integers, integers and Booleans → Float or Double, integers →
/// Decimal, Float → Double) or keep an SQLite `INTEGER` (a narrower integer, a Boolean).
///
/// Like Core Data's lightweight migration, it accepts the changes whose outcome depends on the
/// store's data, and leaves the counting to the store (`StepDataCheck` in the SQL stores): a new
/// required property without a default, or a property becoming required, refuses the migration
/// only when objects lack a value; tightened to-many bounds, links a relationship whose
/// destination changed can no longer hold, and integers a narrower type cannot hold are relaxed
/// and reported as ``MigrationWarning``s with their counts. Their changes say "checked before
/// migrating" or "counted before migrating".
///
/// ```swift
/// let inference = MappingInference(from: v1, to: v2)
/// if inference.isInferable {
///     print(inference.changes.map(\.summary))
/// } else {
///     for issue in inference.issues { print(issue) }
///     // Recipe.cookingTime changes from String to Integer 32, which cannot be inferred; add a
///     // mapping with an expression such as integer($source.cookingTime)
/// }
/// ```
///
/// Transient properties are ignored: the store keeps no value for them.
///
/// ## Topics
///
/// ### Inferring
/// - ``init(from:to:through:name:)``
/// - ``MappingModel/inferred(from:to:through:name:)``
public struct MappingInference: Sendable, Hashable {
    /// The inferred mapping model: an add, remove, copy or transform entity mapping per entity.
    public var mapping: MappingModel
    /// The changes between the models, in words.
    public var changes: [ModelChange]
    /// What cannot be inferred: each error names the entity, the property and the reason, and
    /// suggests a mapping. Empty when the whole migration can be inferred.
    public var issues: [MigrationError]

    /// Infers the mapping between two models.
    ///
    /// - Parameters:
    ///   - source: The model the store was written with.
    ///   - destination: The model to migrate to.
    ///   - intermediates: The versions between them, in order, whose renaming identifiers chain
    ///     renames across versions; empty for adjacent versions.
    ///   - name: The mapping model's name.
    /// - Complexity: O(*e* · *p*²) for *e* entities of at most *p* properties.
    public init(
        from source: ManagedObjectModel, to destination: ManagedObjectModel,
        through intermediates: [ManagedObjectModel] = [],
        name: String = "Inferred"
    ) {
        var builder = InferenceBuilder(
            source: source, destination: destination,
            correspondence: ModelCorrespondence(chain: [source] + intermediates + [destination]))
        builder.run()
        mapping = MappingModel(name: name, source: source, destination: destination, entityMappings: builder.mappings)
        changes = builder.changes
        issues = builder.issues
    }

    /// Whether everything can be inferred.
    public var isInferable: Bool { issues.isEmpty }
}

extension MappingModel {
    /// The inferred mapping model between two models.
    ///
    /// ```swift
    /// let mapping = try MappingModel.inferred(from: v1, to: v3, through: [v2])
    /// ```
    ///
    /// - Parameters:
    ///   - source: The model the store was written with.
    ///   - destination: The model to migrate to.
    ///   - intermediates: The versions between them, for chains of renames.
    ///   - name: The mapping model's name.
    /// - Returns: The mapping model.
    /// - Throws: ``MigrationError`` with code ``MigrationError/Code/notInferable`` whose
    ///   ``MigrationError/failures`` are the ``MappingInference/issues``.
    /// - Complexity: That of ``MappingInference/init(from:to:through:name:)``.
    public static func inferred(
        from source: ManagedObjectModel, to destination: ManagedObjectModel,
        through intermediates: [ManagedObjectModel] = [],
        name: String = "Inferred"
    ) throws(MigrationError) -> MappingModel {
        let inference = MappingInference(from: source, to: destination, through: intermediates, name: name)
        guard inference.isInferable else {
            throw MigrationError(
                .notInferable,
                "\(inference.issues.count) change(s) cannot be inferred; add a mapping model for this step",
                failures: inference.issues)
        }
        return inference.mapping
    }
}

/// Builds an inference: entity mappings, changes and issues.
struct InferenceBuilder {
    let source: ManagedObjectModel
    let destination: ManagedObjectModel
    let correspondence: ModelCorrespondence
    var mappings: [EntityMapping] = []
    var changes: [ModelChange] = []
    var issues: [MigrationError] = []
    /// Source properties that some destination property takes its values from: "Entity.property"
    /// with the source entity that declares it.
    var consumed: Set<String> = []
    private var seenIssues: Set<String> = []
    private var seenChanges: Set<String> = []

    init(source: ManagedObjectModel, destination: ManagedObjectModel, correspondence: ModelCorrespondence) {
        self.source = source
        self.destination = destination
        self.correspondence = correspondence
    }

    mutating func run() {
        for entity in destination.entities {
            guard let sourceName = correspondence.entities[entity.name] else {
                change(.addEntity, entity.name, nil, "add entity \(entity.name)")
                if !entity.isAbstract {
                    mappings.append(EntityMapping(kind: .add, source: nil, destination: entity.name))
                }
                continue
            }
            entityChanges(entity, from: sourceName)
            let mapping = propertyMappings(of: entity.name, from: sourceName)
            guard let sourceEntity = source.entity(named: sourceName), !sourceEntity.isAbstract else {
                if !entity.isAbstract {
                    mappings.append(EntityMapping(kind: .add, source: nil, destination: entity.name))
                }
                continue
            }
            if entity.isAbstract {
                issue(
                    entity.name, nil,
                    "\(entity.name) becomes abstract, so the \(sourceName) objects in the store would have no entity, which cannot be inferred; "
                        + "add a mapping that moves them to a concrete entity")
                continue
            }
            let isCopy =
                sourceName == entity.name
                && source.versionHash(ofEntity: sourceName) == destination.versionHash(ofEntity: entity.name)
            mappings.append(
                EntityMapping(
                    kind: isCopy ? .copy : .transform, source: sourceName, destination: entity.name,
                    attributes: isCopy ? [] : mapping.attributes, relationships: isCopy ? [] : mapping.relationships))
        }
        let claimed = Set(correspondence.entities.values)
        for entity in source.entities where !claimed.contains(entity.name) {
            change(.removeEntity, entity.name, nil, "remove entity \(entity.name)")
            if !entity.isAbstract {
                mappings.append(EntityMapping(kind: .remove, source: entity.name, destination: nil))
            }
        }
        for entity in source.entities where claimed.contains(entity.name) {
            for property in entity.properties
            where property.isStored && !consumed.contains(entity.name + "." + property.name) {
                let kind = if case .attribute = property { "attribute" } else { "relationship" }
                change(.removeProperty, entity.name, property.name, "remove \(kind) \(entity.name).\(property.name)")
            }
        }
    }

    // MARK: - Recording

    mutating func change(_ kind: ModelChange.Kind, _ entity: String, _ property: String?, _ summary: String) {
        guard seenChanges.insert(summary).inserted else { return }
        changes.append(ModelChange(kind, entity: entity, property: property, summary))
    }

    mutating func issue(_ entity: String, _ property: String?, _ message: String) {
        guard seenIssues.insert(message).inserted else { return }
        issues.append(MigrationError(.notInferable, message, entity: entity, property: property))
    }

    // MARK: - Non public

    private mutating func entityChanges(_ entity: EntityDescription, from sourceName: String) {
        if sourceName != entity.name {
            change(.renameEntity, entity.name, nil, "rename entity \(sourceName) to \(entity.name)")
        }
        let oldParent = source.entity(named: sourceName)?.parentName
        let oldParentNow = oldParent.flatMap { old in correspondence.entities.first { $0.value == old }?.key }
        guard oldParentNow != entity.parentName || (oldParent != nil && oldParentNow == nil) else { return }
        let from = oldParent.map { "from under \($0)" } ?? "from the root"
        let to = entity.parentName.map { "to under \($0)" } ?? "to the root"
        change(.moveEntity, entity.name, nil, "move entity \(entity.name) \(from) \(to)")
        droppedLinks(of: entity, from: sourceName)
    }

    /// Records the relationships that could hold objects of a moved entity and no longer can:
    /// their links to those objects are dropped, as in Core Data.
    private mutating func droppedLinks(of entity: EntityDescription, from sourceName: String) {
        for owner in destination.entities {
            for relationship in owner.relationships {
                let target = relationship.destinationEntityName
                guard let sourceTarget = correspondence.entities[target], source.isKind(sourceName, of: sourceTarget),
                    !destination.isKind(entity.name, of: target)
                else { continue }
                change(
                    .dropLinks, owner.name, relationship.name,
                    "drop links from \(owner.name).\(relationship.name) to \(entity.name) objects "
                        + "(\(entity.name) is no longer a kind of \(target))")
            }
        }
    }
}
