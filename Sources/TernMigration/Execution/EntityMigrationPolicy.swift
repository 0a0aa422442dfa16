public import TernCore

/// Custom code for an entity mapping, in the three stages of Core Data's `NSEntityMigrationPolicy`.
///
/// ``MappingRunner`` calls, for each pass: ``createDestinationInstances(forSource:mapping:manager:)``
/// for every source object of every entity mapping; then
/// ``createRelationships(forDestination:mapping:manager:)`` for every destination object made;
/// then ``endEntityMapping(_:manager:)`` once per entity mapping, which validates. Each stage has a
/// default that does what the mapping's property mappings say, so a policy overrides only what it
/// changes and can call ``DefaultMigrationPolicy`` for the rest.
///
/// ```swift
/// struct StepOnePolicy: EntityMigrationPolicy {
///     func createDestinationInstances(
///         forSource source: RowReference, mapping: EntityMapping, manager: any MigrationManager
///     ) throws(MigrationError) {
///         let event = try manager.insertDestinationInstance(ofEntity: "PrintedEvent")
///         let stamp = try ValueExpression(#"formatDate($source.timeStamp, "yyyy-MM-dd")"#)
///         if case .value(let text) = try stamp.evaluate(source: manager.source(source)) {
///             try manager.setDestinationValue(text, forAttribute: "printedDate", of: event)
///         }
///         manager.associate(source: source, withDestination: event, mapping: mapping)
///     }
/// }
/// var policies = MigrationPolicyRegistry()
/// policies.register(StepOnePolicy(), named: "StepOnePolicy")
/// ```
public protocol EntityMigrationPolicy: Sendable {
    /// Stage 1: creates the destination objects of one source object and associates them with it.
    ///
    /// - Parameters:
    ///   - source: The source object.
    ///   - mapping: The entity mapping.
    ///   - manager: The engine.
    /// - Throws: ``MigrationError`` to stop the migration.
    func createDestinationInstances(
        forSource source: RowReference, mapping: EntityMapping, manager: any MigrationManager)
        throws(MigrationError)

    /// The source attributes stage 1 reads for an entity mapping, so that the engine reads only
    /// their columns; nil, the default, when it may read any.
    ///
    /// Reading an attribute left out still works, one object at a time and more slowly. Key
    /// paths through relationships need only the relationship's name here.
    ///
    /// - Parameter mapping: The entity mapping.
    /// - Returns: Attribute names, or nil for every attribute.
    func sourceAttributes(for mapping: EntityMapping) -> Set<String>?

    /// Whether stage 1 of an entity mapping is independent of every other mapping, so that
    /// ``MappingRunner`` may run it in one walk over the source entity with other mappings of
    /// that entity, those of later passes included; false, the default.
    ///
    /// Return true only when stage 1 reads nothing but the source object it is given (its
    /// values and key paths), creates only objects of the mapping's destination entity and
    /// associates them under this mapping; and when stages 2 and 3 look at other mappings'
    /// objects only as the mapping's relationship mappings say (as the default stages do). The
    /// runner then still keeps every mapping whose objects another mapping's relationships
    /// name, or whose destination table another mapping writes, in its own pass.
    ///
    /// - Parameter mapping: The entity mapping.
    /// - Returns: Whether stage 1 may share a walk over the source.
    func createsInstancesIndependently(for mapping: EntityMapping) -> Bool

    /// Stage 2: sets the relationships of one destination object that the mapping created.
    ///
    /// - Parameters:
    ///   - destination: The destination object.
    ///   - mapping: The entity mapping.
    ///   - manager: The engine.
    /// - Throws: ``MigrationError`` to stop the migration.
    func createRelationships(
        forDestination destination: RowReference, mapping: EntityMapping, manager: any MigrationManager)
        throws(MigrationError)

    /// Stage 3: ends the entity mapping, after every relationship is set; the default validates
    /// the objects it created.
    ///
    /// - Parameters:
    ///   - mapping: The entity mapping.
    ///   - manager: The engine.
    /// - Throws: ``MigrationError`` to stop the migration.
    func endEntityMapping(_ mapping: EntityMapping, manager: any MigrationManager) throws(MigrationError)

    /// The functions the entity mapping's value expressions call as `policy("selector:", …)`, by
    /// selector: the methods Core Data calls for `FUNCTION($entityPolicy, "selector:", …)`.
    /// Empty by default. A mapping read from Xcode that calls a selector missing here is refused
    /// when it is read (see ``StepMapping/init(xcodeMappingModelsAt:in:policies:)``).
    ///
    /// ```swift
    /// var expressionFunctions: [String: PolicyFunction] {
    ///     ["hexForColor:": { arguments, _ throws(MigrationError) in arguments.first ?? .value(nil) }]
    /// }
    /// ```
    var expressionFunctions: [String: PolicyFunction] { get }
}

extension EntityMigrationPolicy {
    /// Creates one destination object and sets its attributes from the attribute mappings.
    public func createDestinationInstances(
        forSource source: RowReference, mapping: EntityMapping, manager: any MigrationManager
    ) throws(MigrationError) {
        try DefaultMigrationPolicy.createInstance(
            forSource: source, mapping: mapping, manager: manager, functions: expressionFunctions)
    }

    /// No functions: `policy()` calls are refused.
    public var expressionFunctions: [String: PolicyFunction] { [:] }

    /// Every attribute: a policy that does not say may read any.
    public func sourceAttributes(for mapping: EntityMapping) -> Set<String>? { nil }

    /// False: a policy that does not say may read or change anything in stage 1.
    public func createsInstancesIndependently(for mapping: EntityMapping) -> Bool { false }

    /// Sets each relationship from its relationship mapping, evaluated on the first source object.
    public func createRelationships(
        forDestination destination: RowReference, mapping: EntityMapping, manager: any MigrationManager
    ) throws(MigrationError) {
        try DefaultMigrationPolicy.setRelationships(
            of: destination, mapping: mapping, manager: manager, functions: expressionFunctions)
    }

    /// Validates the destination objects the mapping created.
    public func endEntityMapping(_ mapping: EntityMapping, manager: any MigrationManager) throws(MigrationError) {
        try manager.validateDestinationInstances(of: mapping)
    }
}

/// The policy of entity mappings without a custom one: property mappings do all the work.
public struct DefaultMigrationPolicy: EntityMigrationPolicy {
    /// Creates the default policy.
    public init() {}

    /// True: the default stage 1 reads only the source object, through the attribute mappings.
    public func createsInstancesIndependently(for mapping: EntityMapping) -> Bool { true }

    // MARK: - The default stages

    /// Stage 1 by default: one destination object per source object, attributes from the
    /// attribute mappings (for a copy, every stored attribute by name), associated with the source.
    ///
    /// - Parameters:
    ///   - source: The source object.
    ///   - mapping: The entity mapping.
    ///   - manager: The engine.
    ///   - functions: The functions `policy()` calls may use: the policy's ``EntityMigrationPolicy/expressionFunctions``.
    /// - Throws: ``MigrationError`` naming the mapping and property when a value fails.
    public static func createInstance(
        forSource source: RowReference, mapping: EntityMapping, manager: any MigrationManager,
        functions: [String: PolicyFunction] = [:]
    ) throws(MigrationError) {
        guard let entity = mapping.destinationEntityName else { return }
        let destination = try manager.insertDestinationInstance(ofEntity: entity)
        let reader = manager.source(source)
        var environment = manager.environment
        environment.policyFunctions = functions
        for property in mapping.effectiveAttributeMappings(in: manager.destinationModel) {
            guard let expression = property.valueExpression else { continue }
            do throws(MigrationError) {
                guard case .value(let value) = try expression.evaluate(source: reader, environment: environment)
                else {
                    throw MigrationError(.evaluationFailed, "The expression gives objects; an attribute needs a value")
                }
                try manager.setDestinationValue(value, forAttribute: property.name, of: destination)
            } catch {
                throw error.located(mapping: mapping.name, property: property.name)
            }
        }
        manager.associate(source: source, withDestination: destination, mapping: mapping)
    }

    /// Stage 2 by default: each relationship mapping evaluated on the destination object's first
    /// source object; `destinationInstances` markers are resolved through the associations.
    ///
    /// - Parameters:
    ///   - destination: The destination object.
    ///   - mapping: The entity mapping.
    ///   - manager: The engine.
    ///   - functions: The functions `policy()` calls may use: the policy's ``EntityMigrationPolicy/expressionFunctions``.
    /// - Throws: ``MigrationError`` naming the mapping and property when a value fails.
    public static func setRelationships(
        of destination: RowReference, mapping: EntityMapping, manager: any MigrationManager,
        functions: [String: PolicyFunction] = [:]
    ) throws(MigrationError) {
        // Most mappings have no relationship mapping: nothing to look up per object.
        guard mapping.kind == .copy || !mapping.relationshipMappings.isEmpty else { return }
        let properties = mapping.effectiveRelationshipMappings(in: manager.destinationModel)
        guard !properties.isEmpty,
            let source = manager.sourceInstances(forMapping: mapping.name, destinationInstance: destination).first
        else { return }
        let reader = manager.source(source)
        var environment = manager.environment
        environment.policyFunctions = functions
        for property in properties {
            guard let expression = property.valueExpression else { continue }
            do throws(MigrationError) {
                switch try expression.evaluate(source: reader, environment: environment) {
                case .destinationInstances(let name, let sources):
                    let objects = manager.destinationInstances(forMapping: name, sourceInstances: sources)
                    try manager.setDestinationRelationship(property.name, of: destination, to: objects)
                case .value(nil):
                    try manager.setDestinationRelationship(property.name, of: destination, to: [])
                default:
                    throw MigrationError(
                        .evaluationFailed,
                        "A relationship needs destinationInstances(\"Mapping\", $source.relationship)")
                }
            } catch {
                throw error.located(mapping: mapping.name, property: property.name)
            }
        }
    }
}

/// Custom migration policies by name, as entity mappings name them in ``EntityMapping/policyName``.
///
/// ```swift
/// var policies = MigrationPolicyRegistry()
/// policies.register(StepOnePolicy(), named: "StepOnePolicy")
/// let policy = try policies.policy(for: mapping)
/// ```
public struct MigrationPolicyRegistry: Sendable {
    private var policies: [String: any EntityMigrationPolicy] = [:]

    /// Creates an empty registry.
    public init() {}

    // MARK: - Registering

    /// Registers a policy under a name, replacing any policy of that name.
    ///
    /// - Parameters:
    ///   - policy: The policy.
    ///   - name: The name entity mappings use.
    public mutating func register(_ policy: any EntityMigrationPolicy, named name: String) {
        policies[name] = policy
    }

    // MARK: - Looking up

    /// The policy registered under a name.
    public func policy(named name: String) -> (any EntityMigrationPolicy)? { policies[name] }

    /// The policy that runs an entity mapping: its named policy, or ``DefaultMigrationPolicy``.
    ///
    /// - Parameter mapping: The entity mapping.
    /// - Returns: The policy.
    /// - Throws: ``MigrationError`` with code ``MigrationError/Code/unknownPolicy`` when the
    ///   mapping names a policy that is not registered.
    public func policy(for mapping: EntityMapping) throws(MigrationError) -> any EntityMigrationPolicy {
        guard let name = mapping.policyName else { return DefaultMigrationPolicy() }
        guard let policy = policies[name] else {
            throw MigrationError(
                .unknownPolicy,
                "No migration policy is registered under the name \(name); register it before migrating",
                mapping: mapping.name)
        }
        return policy
    }

    /// The names of the registered policies, sorted.
    public var names: [String] { policies.keys.sorted() }
}
