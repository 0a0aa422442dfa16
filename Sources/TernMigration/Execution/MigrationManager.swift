public import TernCore

/// The engine's side of a migration step, as policies see it: Core Data's `NSMigrationManager`.
///
/// A migration engine (the SQLite store's, the in-memory ``InMemoryMigrationManager``) conforms
/// to run mapping models with ``MappingRunner``. Objects are named by ``/TernCore/RowReference`` handles:
/// source handles name rows of the source store, destination handles rows the engine created.
/// The engine owns reading, writing, batching and transactions; the protocol only asks for
/// object-level operations, so that policies never see SQL.
///
/// ```swift
/// struct SplitName: EntityMigrationPolicy {
///     func createDestinationInstances(
///         forSource source: RowReference, mapping: EntityMapping, manager: any MigrationManager
///     ) throws(MigrationError) {
///         let person = try manager.insertDestinationInstance(ofEntity: "Person")
///         let full = try manager.sourceValue(forKeyPath: ["name"], of: source)
///         if case .value(.string(let text)?) = full {
///             let parts = text.split(separator: " ", maxSplits: 1).map(String.init)
///             try manager.setDestinationValue(.string(parts.first ?? ""), forAttribute: "firstName", of: person)
///         }
///         manager.associate(source: source, withDestination: person, mapping: mapping)
///     }
/// }
/// ```
public protocol MigrationManager: AnyObject {
    /// The model of the source store.
    var sourceModel: ManagedObjectModel { get }
    /// The model of the destination.
    var destinationModel: ManagedObjectModel { get }
    /// The clock and UUID source of value expressions.
    var environment: ExpressionEnvironment { get }

    // MARK: - Reading the source

    /// Calls `body` for each source object that an entity mapping migrates: objects whose entity
    /// is exactly the mapping's source entity and that pass its filter, in primary-key order, in
    /// batches that the engine releases between calls.
    ///
    /// - Parameters:
    ///   - mapping: The entity mapping.
    ///   - body: Called with each source object's handle.
    /// - Throws: ``MigrationError`` from the engine or from `body`.
    func forEachSourceInstance(
        of mapping: EntityMapping, _ body: (RowReference) throws(MigrationError) -> Void
    ) throws(MigrationError)

    /// Calls `body` for each source object that an entity mapping migrates, as
    /// ``forEachSourceInstance(of:_:)`` does, knowing which attributes will be read.
    ///
    /// ``MappingRunner`` names the attributes that the mapping's value expressions, filter and
    /// policy (``EntityMigrationPolicy/sourceAttributes(for:)``) read, so that an engine can
    /// read fewer columns. Reading any other key path must still work, only more slowly. The
    /// default ignores `attributes`.
    ///
    /// - Parameters:
    ///   - mapping: The entity mapping.
    ///   - attributes: The source attributes that will be read; nil when unknown (every one).
    ///   - body: Called with each source object's handle.
    /// - Throws: ``MigrationError`` from the engine or from `body`.
    func forEachSourceInstance(
        of mapping: EntityMapping, readingAttributes attributes: Set<String>?,
        _ body: (RowReference) throws(MigrationError) -> Void
    ) throws(MigrationError)

    /// Calls `body` for the source objects of several entity mappings of one source entity in
    /// one walk: for each source object, in primary-key order, once per mapping whose filter it
    /// passes, in the order of `mappings`, with the mapping's index.
    ///
    /// ``MappingRunner`` asks for one walk only for mappings whose stage 1 is independent of the
    /// others (see ``EntityMigrationPolicy/createsInstancesIndependently(for:)``), so an engine
    /// may read each source row once for all of them. The default walks the mappings one after
    /// the other with ``forEachSourceInstance(of:readingAttributes:_:)``, which gives the same
    /// result for such mappings.
    ///
    /// - Parameters:
    ///   - mappings: Entity mappings with the same source entity.
    ///   - attributes: The source attributes that will be read; nil when unknown (every one).
    ///   - body: Called with the index of a mapping in `mappings` and a source object's handle.
    /// - Throws: ``MigrationError`` from the engine or from `body`.
    /// - Complexity: O(*n* · *m*) `body` calls for *n* source objects and *m* mappings.
    func forEachSourceInstance(
        of mappings: [EntityMapping], readingAttributes attributes: Set<String>?,
        _ body: (Int, RowReference) throws(MigrationError) -> Void
    ) throws(MigrationError)

    /// The value at a key path of a source object, as `$source.keyPath` reads it.
    ///
    /// - Parameters:
    ///   - keyPath: Property names; empty for the object itself.
    ///   - source: The source object.
    /// - Returns: A value, or the objects of a relationship.
    /// - Throws: ``MigrationError`` when the key path does not exist.
    func sourceValue(forKeyPath keyPath: [String], of source: RowReference) throws(MigrationError) -> ExpressionValue

    /// Stage 1 of an ``AttributeMigrationPolicy`` for one source object: reads the policy's
    /// source attributes, has it compute the destination values, creates one object of the
    /// mapping's destination entity with them and associates it with the source.
    ///
    /// The default does it one call per value, through ``sourceValue(forKeyPath:of:)``,
    /// ``insertDestinationInstance(ofEntity:)``, ``setDestinationValue(_:forAttribute:of:)`` and
    /// ``associate(source:withDestination:mapping:)``; an engine may do it in one piece.
    ///
    /// - Parameters:
    ///   - source: The source object.
    ///   - mapping: The entity mapping.
    ///   - policy: The policy.
    /// - Returns: The destination object.
    /// - Throws: ``MigrationError`` from the policy or the engine, naming the mapping.
    func createDestinationInstance(
        forSource source: RowReference, mapping: EntityMapping, policy: any AttributeMigrationPolicy
    ) throws(MigrationError) -> RowReference

    /// Stage 1 of the entity mappings of one walk over their source entity, in the order of the
    /// walk of several mappings (`forEachSourceInstance(of:readingAttributes:_:)` with an array): the mappings
    /// that have an ``AttributeMigrationPolicy`` are run by the engine, the others through `body`.
    ///
    /// For each source object and each mapping whose filter it passes, an attribute policy's
    /// mapping gets one destination object, as ``createDestinationInstance(forSource:mapping:policy:)``
    /// makes it; any other mapping gets a `body` call. The default does exactly that, one call per
    /// object; an engine may run the attribute policies a page of source objects at a time,
    /// without a call per object or per value.
    ///
    /// - Parameters:
    ///   - mappings: Entity mappings with the same source entity.
    ///   - attributePolicies: One entry per mapping: its attribute policy, or nil for `body`.
    ///   - attributes: The source attributes that will be read; nil when unknown (every one).
    ///   - body: Called with the index of a mapping without an attribute policy and a source object.
    /// - Throws: ``MigrationError`` from a policy, the engine or `body`, naming the mapping.
    /// - Complexity: O(*n* · *m*) policy or `body` calls for *n* source objects and *m* mappings.
    func createDestinationInstances(
        of mappings: [EntityMapping], attributePolicies: [(any AttributeMigrationPolicy)?],
        readingAttributes attributes: Set<String>?, otherwise body: (Int, RowReference) throws(MigrationError) -> Void
    ) throws(MigrationError)

    // MARK: - Writing the destination

    /// Creates a destination object with its entity's default values.
    ///
    /// - Parameter entity: The destination entity's name.
    /// - Returns: The new object's handle.
    /// - Throws: ``MigrationError`` for an unknown or abstract entity, or from the engine.
    func insertDestinationInstance(ofEntity entity: String) throws(MigrationError) -> RowReference

    /// Sets an attribute of a destination object; the value is converted to the attribute's type
    /// with ``TernCore/AttributeValue/converted(to:)``.
    ///
    /// - Parameters:
    ///   - value: The value; nil clears it.
    ///   - attribute: The attribute's name.
    ///   - destination: The destination object.
    /// - Throws: ``MigrationError`` for an unknown attribute or a value that does not convert.
    func setDestinationValue(_ value: AttributeValue?, forAttribute attribute: String, of destination: RowReference)
        throws(MigrationError)

    /// Sets a relationship of a destination object (and its inverse).
    ///
    /// - Parameters:
    ///   - relationship: The relationship's name.
    ///   - destination: The destination object.
    ///   - objects: The related destination objects, in order for an ordered relationship.
    /// - Throws: ``MigrationError`` for an unknown relationship or several objects for a to-one one.
    func setDestinationRelationship(_ relationship: String, of destination: RowReference, to objects: [RowReference])
        throws(MigrationError)

    /// Calls `body` for each destination object that an entity mapping created, in creation order.
    ///
    /// - Parameters:
    ///   - mapping: The entity mapping.
    ///   - body: Called with each destination object's handle.
    /// - Throws: ``MigrationError`` from the engine or from `body`.
    func forEachDestinationInstance(
        of mapping: EntityMapping, _ body: (RowReference) throws(MigrationError) -> Void
    ) throws(MigrationError)

    /// Checks the destination objects an entity mapping created against the destination model
    /// (required values, value ranges, relationship counts).
    ///
    /// - Parameter mapping: The entity mapping.
    /// - Throws: ``MigrationError`` whose failures name each invalid object and property.
    func validateDestinationInstances(of mapping: EntityMapping) throws(MigrationError)

    // MARK: - Associations

    /// Records that a source object became a destination object under an entity mapping.
    ///
    /// - Parameters:
    ///   - source: The source object.
    ///   - destination: One of the destination objects made from it.
    ///   - mapping: The entity mapping.
    func associate(source: RowReference, withDestination destination: RowReference, mapping: EntityMapping)

    /// The destination objects made from source objects under an entity mapping.
    ///
    /// - Parameters:
    ///   - mappingName: The entity mapping's name, or nil for whichever mapping made each object.
    ///   - sources: The source objects.
    /// - Returns: Their destination objects, in the order of `sources`.
    func destinationInstances(forMapping mappingName: String?, sourceInstances sources: [RowReference])
        -> [RowReference]

    /// The source objects a destination object was made from under an entity mapping.
    ///
    /// - Parameters:
    ///   - mappingName: The entity mapping's name.
    ///   - destination: The destination object.
    /// - Returns: The source objects, in the order they were associated.
    func sourceInstances(forMapping mappingName: String, destinationInstance destination: RowReference)
        -> [RowReference]
}

extension MigrationManager {
    /// Calls ``forEachSourceInstance(of:_:)``: an engine that reads whole objects needs no list
    /// of attributes.
    public func forEachSourceInstance(
        of mapping: EntityMapping, readingAttributes attributes: Set<String>?,
        _ body: (RowReference) throws(MigrationError) -> Void
    ) throws(MigrationError) {
        try forEachSourceInstance(of: mapping, body)
    }

    /// Walks the mappings one after the other: an engine that reads whole objects gains nothing
    /// from one walk.
    public func forEachSourceInstance(
        of mappings: [EntityMapping], readingAttributes attributes: Set<String>?,
        _ body: (Int, RowReference) throws(MigrationError) -> Void
    ) throws(MigrationError) {
        for (index, mapping) in mappings.enumerated() {
            try forEachSourceInstance(of: mapping, readingAttributes: attributes) { source throws(MigrationError) in
                try body(index, source)
            }
        }
    }

    /// The destination relationship a ``setDestinationRelationship(_:of:to:)`` call names, checked
    /// the way every engine checks it.
    ///
    /// - Parameters:
    ///   - relationship: The relationship's name.
    ///   - destination: The destination object.
    ///   - count: How many objects it is set to.
    /// - Returns: The relationship.
    /// - Throws: ``MigrationError`` for an unknown relationship, or several objects for a to-one one.
    public func destinationRelationship(_ relationship: String, of destination: RowReference, count: Int)
        throws(MigrationError) -> RelationshipDescription
    {
        guard let description = destinationModel.relationship(named: relationship, inEntity: destination.entityName)
        else {
            throw MigrationError(
                .invalidMapping, "\(destination.entityName) has no relationship \(relationship)",
                entity: destination.entityName, property: relationship)
        }
        guard description.isToMany || count <= 1 else {
            throw MigrationError(
                .evaluationFailed, "The to-one relationship gets \(count) objects", entity: destination.entityName,
                property: relationship)
        }
        return description
    }

    /// The objects a destination relationship can hold: those of its destination entity or a
    /// subentity. The others are links to objects whose entity left the relationship's
    /// inheritance tree in this step; as in Core Data, those links are dropped (the objects stay).
    ///
    /// - Parameters:
    ///   - description: The destination relationship.
    ///   - objects: The related destination objects.
    /// - Returns: The objects it can hold, in order.
    /// - Complexity: O(*n* · *d* log *e*) for *n* objects, *d* the depth of their entities.
    public func objects(heldBy description: RelationshipDescription, among objects: [RowReference]) -> [RowReference] {
        let target = description.destinationEntityName
        guard !objects.allSatisfy({ $0.entityName == target }) else { return objects }
        return objects.filter { $0.entityName == target || destinationModel.isKind($0.entityName, of: target) }
    }
}

/// The associations of a migration step, in memory: which destination objects each source
/// object became under each entity mapping, and back.
///
/// Engines may keep associations in a table of their own for large stores; this one serves the
/// in-memory engine and stores small enough for memory.
///
/// ```swift
/// var associations = MigrationAssociations()
/// associations.associate(source: old, withDestination: new, mapping: "EventToStamp")
/// associations.destinations(of: [old], mapping: "EventToStamp")   // [new]
/// ```
public struct MigrationAssociations: Sendable, Hashable {
    private var forward: [String: [RowReference: [RowReference]]] = [:]
    private var backward: [String: [RowReference: [RowReference]]] = [:]
    private var anyMapping: [RowReference: [RowReference]] = [:]

    /// Creates an empty table.
    public init() {}

    // MARK: - Recording

    /// Records that a source object became a destination object under a mapping.
    ///
    /// - Parameters:
    ///   - source: The source object.
    ///   - destination: The destination object.
    ///   - mapping: The entity mapping's name.
    public mutating func associate(source: RowReference, withDestination destination: RowReference, mapping: String) {
        forward[mapping, default: [:]][source, default: []].append(destination)
        backward[mapping, default: [:]][destination, default: []].append(source)
        anyMapping[source, default: []].append(destination)
    }

    // MARK: - Looking up

    /// The destination objects of source objects under a mapping, or under any mapping when nil.
    ///
    /// - Complexity: O(*n*) in the number of objects returned.
    public func destinations(of sources: [RowReference], mapping: String?) -> [RowReference] {
        guard let mapping else { return sources.flatMap { anyMapping[$0] ?? [] } }
        let table = forward[mapping] ?? [:]
        return sources.flatMap { table[$0] ?? [] }
    }

    /// The source objects of a destination object under a mapping.
    public func sources(of destination: RowReference, mapping: String) -> [RowReference] {
        backward[mapping]?[destination] ?? []
    }
}
