public import TernCore

/// Runs the passes of a migration step over any engine: the part of Core Data's
/// `NSMigrationManager` that does not depend on the store.
///
/// For each pass in order, the runner calls the three stages of each entity mapping's policy:
/// instance creation for every mapping, then relationships for every mapping, then the end of
/// every mapping. Associations persist across passes, so a later pass's `destinationInstances`
/// may name an earlier pass's mappings. Remove and add mappings create nothing.
///
/// ```swift
/// let manager = InMemoryMigrationManager(source: v1, rows: rows, destination: v2)
/// try MappingRunner(policies: policies).run(step.passes, manager: manager)
/// let migrated = manager.destinationRows
/// ```
public struct MappingRunner: Sendable {
    /// The custom policies entity mappings may name.
    public var policies: MigrationPolicyRegistry

    /// Creates a runner.
    ///
    /// - Parameter policies: The custom policies entity mappings may name.
    public init(policies: MigrationPolicyRegistry = MigrationPolicyRegistry()) {
        self.policies = policies
    }

    // MARK: - Running

    /// Runs mapping models one after the other into the manager's destination.
    ///
    /// - Parameters:
    ///   - passes: The mapping models, in order; each runs its entity mappings in the order of
    ///     ``MappingModel/ordering(in:)``.
    ///   - manager: The engine.
    /// - Throws: ``MigrationError`` from a policy, a value expression or the engine, naming the
    ///   mapping and property; ``MigrationError/Code/unknownPolicy`` before anything runs when a
    ///   mapping names a policy that is not registered.
    /// - Complexity: O(*n*) policy calls for *n* source objects.
    public func run(_ passes: [MappingModel], manager: any MigrationManager) throws(MigrationError) {
        for pass in passes {
            var staged: [(EntityMapping, any EntityMigrationPolicy)] = []
            for mapping in pass.ordering(in: manager.destinationModel).entityMappings where Self.createsObjects(mapping) {
                staged.append((mapping, try policies.policy(for: mapping)))
            }
            // The default policy's property mappings are compiled once per pass, not read per object.
            let compiled = staged.map { mapping, policy in
                policy is DefaultMigrationPolicy ? CompiledEntityMapping(mapping, destination: manager.destinationModel) : nil
            }
            for ((mapping, policy), compiled) in zip(staged, compiled) {
                let attributes = Self.sourceAttributes(read: compiled?.sourceAttributes ?? policy.sourceAttributes(for: mapping), by: mapping)
                if let compiled {
                    let reader = SourceCursor(manager: manager)
                    try manager.forEachSourceInstance(of: mapping, readingAttributes: attributes) { source throws(MigrationError) in
                        try compiled.createInstance(forSource: source, manager: manager, reader: reader)
                    }
                } else {
                    try manager.forEachSourceInstance(of: mapping, readingAttributes: attributes) { source throws(MigrationError) in
                        try policy.createDestinationInstances(forSource: source, mapping: mapping, manager: manager)
                    }
                }
            }
            for ((mapping, policy), compiled) in zip(staged, compiled) {
                if let compiled {
                    // Without relationship mappings the default stage 2 does nothing: skip the walk.
                    guard compiled.hasRelationships else { continue }
                    try manager.forEachDestinationInstance(of: mapping) { destination throws(MigrationError) in
                        try compiled.setRelationships(of: destination, manager: manager)
                    }
                } else {
                    try manager.forEachDestinationInstance(of: mapping) { destination throws(MigrationError) in
                        try policy.createRelationships(forDestination: destination, mapping: mapping, manager: manager)
                    }
                }
            }
            for (mapping, policy) in staged { try policy.endEntityMapping(mapping, manager: manager) }
        }
    }

    // MARK: - Non public

    /// What stage 1 of a mapping reads: the attributes its policy or expressions read and those
    /// of its filter; nil (every attribute) when the policy does not say.
    private static func sourceAttributes(read: Set<String>?, by mapping: EntityMapping) -> Set<String>? {
        guard var attributes = read else { return nil }
        if let filter = mapping.sourceFilter {
            for keyPath in filter.keyPaths { attributes.insert(String(keyPath.prefix { $0 != "." })) }
        }
        return attributes
    }

    /// Whether an entity mapping reads source objects.
    private static func createsObjects(_ mapping: EntityMapping) -> Bool {
        switch mapping.kind {
        case .add, .remove: false
        case .copy, .transform: true
        case .custom: mapping.sourceEntityName != nil
        }
    }
}

/// A source object as value expressions read it, through its engine.
public struct SourceObject: ExpressionSource {
    /// The engine.
    public let manager: any MigrationManager
    /// The source object's handle.
    public let reference: RowReference

    /// Reads a key path through the engine; the empty path is the object itself.
    public func expressionValue(forKeyPath keyPath: [String]) throws(MigrationError) -> ExpressionValue {
        guard !keyPath.isEmpty else { return .objects([reference]) }
        return try manager.sourceValue(forKeyPath: keyPath, of: reference)
    }
}

extension MigrationManager {
    /// A source object as `$source` for value expressions.
    ///
    /// - Parameter reference: The source object's handle.
    public func source(_ reference: RowReference) -> SourceObject {
        SourceObject(manager: self, reference: reference)
    }
}

extension EntityMapping {
    // MARK: - Effective property mappings

    /// The attribute mappings that run: for a copy, `$source.<name>` for every stored attribute
    /// of the destination entity; otherwise ``attributeMappings``.
    ///
    /// - Parameter destination: The destination model.
    /// - Complexity: O(*p*) in the number of attributes.
    public func effectiveAttributeMappings(in destination: ManagedObjectModel) -> [PropertyMapping] {
        guard kind == .copy, let entity = destinationEntityName else { return attributeMappings }
        return destination.allAttributes(of: entity).filter { !$0.isTransient && !$0.isDerived }.map {
            PropertyMapping($0.name, .source(keyPath: [$0.name]))
        }
    }

    /// The relationship mappings that run: for a copy, `destinationInstances($source.<name>)` for
    /// every stored relationship of the destination entity; otherwise ``relationshipMappings``.
    ///
    /// - Parameter destination: The destination model.
    /// - Complexity: O(*p*) in the number of relationships.
    public func effectiveRelationshipMappings(in destination: ManagedObjectModel) -> [PropertyMapping] {
        guard kind == .copy, let entity = destinationEntityName else { return relationshipMappings }
        return destination.allRelationships(of: entity).filter { !$0.isTransient }.map {
            PropertyMapping($0.name, .call(.destinationInstances, [.source(keyPath: [$0.name])]))
        }
    }
}
