import TernCore

/// The default policy's stages 1 and 2 for one entity mapping, with its property mappings
/// compiled once: what ``MappingRunner`` runs per object for mappings without a custom policy.
///
/// It does exactly what ``DefaultMigrationPolicy/createInstance(forSource:mapping:manager:functions:)``
/// and ``DefaultMigrationPolicy/setRelationships(of:mapping:manager:functions:)`` do, without working out
/// the effective property mappings and walking their syntax trees for every object. A class, so
/// that reaching it object after object costs one reference count, not a copy.
///
/// ```swift
/// let compiled = CompiledEntityMapping(mapping, destination: manager.destinationModel)
/// let reader = SourceCursor(manager: manager)
/// try manager.forEachSourceInstance(of: mapping) { source throws(MigrationError) in
///     try compiled.createInstance(forSource: source, manager: manager, reader: reader)
/// }
/// ```
final class CompiledEntityMapping {
    /// The entity mapping.
    let mapping: EntityMapping
    /// The destination entity's name.
    private let destinationEntity: String?
    /// The attribute mappings that run, by destination attribute name.
    private let attributes: [(name: String, expression: CompiledExpression)]
    /// The relationship mappings that run, by destination relationship name.
    private let relationships: [(name: String, expression: CompiledExpression)]

    /// Compiles an entity mapping's effective property mappings.
    ///
    /// - Parameters:
    ///   - mapping: The entity mapping.
    ///   - destination: The destination model.
    /// - Complexity: O(*n*) in the size of its property mappings.
    init(_ mapping: EntityMapping, destination: ManagedObjectModel) {
        self.mapping = mapping
        self.destinationEntity = mapping.destinationEntityName
        self.attributes = mapping.effectiveAttributeMappings(in: destination).compactMap { property in
            property.valueExpression.map { (property.name, CompiledExpression($0)) }
        }
        self.relationships = mapping.effectiveRelationshipMappings(in: destination).compactMap { property in
            property.valueExpression.map { (property.name, CompiledExpression($0)) }
        }
    }

    /// The source attributes stage 1 reads: the first name of each key path of the attribute mappings.
    var sourceAttributes: Set<String> {
        Set(attributes.flatMap { $0.expression.expression.sourceKeyPaths.map { String($0.prefix { $0 != "." }) } })
    }

    /// Whether stage 2 has anything to set.
    var hasRelationships: Bool { !relationships.isEmpty }

    // MARK: - Running the stages

    /// Stage 1: one destination object, its attributes from the attribute mappings, associated
    /// with the source object.
    ///
    /// - Parameters:
    ///   - source: The source object.
    ///   - manager: The engine.
    ///   - reader: `$source`, reused object after object; it is pointed at `source` here.
    /// - Throws: ``MigrationError`` naming the mapping and property when a value fails.
    func createInstance(forSource source: RowReference, manager: any MigrationManager, reader: SourceCursor)
        throws(MigrationError)
    {
        guard let entity = destinationEntity else { return }
        let destination = try manager.insertDestinationInstance(ofEntity: entity)
        reader.reference = source
        let environment = manager.environment
        for (name, expression) in attributes {
            do throws(MigrationError) {
                guard case .value(let value) = try expression.evaluate(source: reader, environment: environment) else {
                    throw MigrationError(.evaluationFailed, "The expression gives objects; an attribute needs a value")
                }
                try manager.setDestinationValue(value, forAttribute: name, of: destination)
            } catch {
                throw error.located(mapping: mapping.name, property: name)
            }
        }
        manager.associate(source: source, withDestination: destination, mapping: mapping)
    }

    /// Stage 2: each relationship mapping evaluated on the destination object's first source object.
    ///
    /// - Throws: ``MigrationError`` naming the mapping and property when a value fails.
    func setRelationships(of destination: RowReference, manager: any MigrationManager) throws(MigrationError) {
        guard !relationships.isEmpty,
            let source = manager.sourceInstances(forMapping: mapping.name, destinationInstance: destination).first
        else { return }
        let reader: any ExpressionSource = manager.source(source)
        let environment = manager.environment
        for (name, expression) in relationships {
            do throws(MigrationError) {
                switch try expression.evaluate(source: reader, environment: environment) {
                case .destinationInstances(let target, let sources):
                    let objects = manager.destinationInstances(forMapping: target, sourceInstances: sources)
                    try manager.setDestinationRelationship(name, of: destination, to: objects)
                case .value(nil):
                    try manager.setDestinationRelationship(name, of: destination, to: [])
                default:
                    throw MigrationError(
                        .evaluationFailed,
                        "A relationship needs destinationInstances(\"Mapping\", $source.relationship)")
                }
            } catch {
                throw error.located(mapping: mapping.name, property: name)
            }
        }
    }
}

/// `$source` for one source object after another: a class, so that handing it to value
/// expressions as `any ExpressionSource` boxes nothing per object.
final class SourceCursor: ExpressionSource {
    /// The engine that reads the object.
    let manager: any MigrationManager
    /// The object read.
    var reference: RowReference

    /// Creates a cursor on no object yet.
    ///
    /// - Parameter manager: The engine that reads source objects.
    init(manager: any MigrationManager) {
        self.manager = manager
        self.reference = RowReference(entityName: "", primaryKey: 0)
    }

    /// Reads a key path of the current object through the engine; the empty path is the object itself.
    func expressionValue(forKeyPath keyPath: [String]) throws(MigrationError) -> ExpressionValue {
        guard !keyPath.isEmpty else { return .objects([reference]) }
        return try manager.sourceValue(followingUnions: keyPath, of: reference)
    }
}
