public import TernCore

/// A migration engine over rows in memory: the reference implementation of ``MigrationManager``
/// that the store engines follow, and the way to migrate small sets of rows or test mappings.
///
/// ```swift
/// let manager = InMemoryMigrationManager(source: v1, rows: oldRows, destination: v2)
/// try MappingRunner().run([mapping], manager: manager)
/// for row in manager.destinationRows { print(row.reference, row.attributes) }
/// ```
///
/// Destination primary keys count from 1 per inheritance root, in creation order.
public final class InMemoryMigrationManager: MigrationManager {
    /// The model of the source rows.
    public let sourceModel: ManagedObjectModel
    /// The model of the destination rows.
    public let destinationModel: ManagedObjectModel
    /// The clock and UUID source of value expressions.
    public let environment: ExpressionEnvironment
    /// The associations recorded so far.
    public private(set) var associations = MigrationAssociations()
    /// How many source objects ``onSourceBatch`` counts at a time.
    public var batchSize = 1000
    /// Called while source objects are read, with the number read since the last call (at most
    /// ``batchSize``, and the rest at the end of each entity mapping); throws to stop the run, for
    /// progress and cancellation.
    public var onSourceBatch: ((Int) throws(MigrationError) -> Void)?
    private let sourceRows: [RowReference: StoreRow]
    private let sourceOrder: [RowReference]
    private var rows: [RowReference: StoreRow] = [:]
    private var creationOrder: [RowReference] = []
    private var created: [String: [RowReference]] = [:]
    private var lastKeys: [String: Int64] = [:]

    /// Creates an engine over source rows.
    ///
    /// - Parameters:
    ///   - source: The source model.
    ///   - rows: The source rows.
    ///   - destination: The destination model.
    ///   - environment: The clock and UUID source of value expressions.
    /// - Complexity: O(*n* log *n*) in the number of rows.
    public init(
        source: ManagedObjectModel, rows: [StoreRow], destination: ManagedObjectModel,
        environment: ExpressionEnvironment = ExpressionEnvironment()
    ) {
        self.sourceModel = source
        self.destinationModel = destination
        self.environment = environment
        self.sourceRows = Dictionary(rows.map { ($0.reference, $0) }, uniquingKeysWith: { first, _ in first })
        self.sourceOrder = rows.map(\.reference).sorted()
    }

    /// The destination rows, in creation order.
    public var destinationRows: [StoreRow] { creationOrder.compactMap { rows[$0] } }

    // MARK: - Reading the source

    /// Each source row of exactly the mapping's source entity that passes its filter, by primary key.
    public func forEachSourceInstance(of mapping: EntityMapping, _ body: (RowReference) throws(MigrationError) -> Void)
        throws(MigrationError)
    {
        guard let entity = mapping.sourceEntityName else { return }
        var read = 0
        for reference in sourceOrder where reference.entityName == entity {
            read += 1
            if read == max(1, batchSize) {
                try onSourceBatch?(read)
                read = 0
            }
            guard try SourceRowReading.passesFilter(reference, of: mapping, manager: self) else { continue }
            try body(reference)
        }
        if read > 0 { try onSourceBatch?(read) }
    }

    /// The number of source objects of exactly an entity (subentities not included).
    ///
    /// - Complexity: O(*n*) in the number of source rows.
    public func sourceCount(ofEntity entity: String) -> Int {
        sourceOrder.reduce(0) { $0 + ($1.entityName == entity ? 1 : 0) }
    }

    /// The value at a key path of a source row, following to-one relationships.
    public func sourceValue(forKeyPath keyPath: [String], of source: RowReference) throws(MigrationError)
        -> ExpressionValue
    {
        let rows = sourceRows
        return try SourceRowReading.value(forKeyPath: keyPath, of: source, in: sourceModel) { reference in
            rows[reference]
        }
    }

    // MARK: - Writing the destination

    /// Creates a destination row with the entity's default values.
    public func insertDestinationInstance(ofEntity entity: String) throws(MigrationError) -> RowReference {
        guard let description = destinationModel.entity(named: entity), !description.isAbstract else {
            throw MigrationError(
                .invalidMapping, "The destination model has no concrete entity \(entity) to create objects of",
                entity: entity)
        }
        let root = destinationModel.rootEntity(of: entity)?.name ?? entity
        let key = (lastKeys[root] ?? 0) + 1
        lastKeys[root] = key
        let reference = RowReference(entityName: entity, primaryKey: key)
        var row = StoreRow(reference: reference, version: 1)
        for attribute in destinationModel.allAttributes(of: entity) where !attribute.isTransient {
            if let value = attribute.defaultValue { row.attributes[attribute.name] = value }
        }
        rows[reference] = row
        creationOrder.append(reference)
        return reference
    }

    /// Sets an attribute of a destination row, converting the value to the attribute's type.
    public func setDestinationValue(
        _ value: AttributeValue?, forAttribute attribute: String, of destination: RowReference
    )
        throws(MigrationError)
    {
        guard let description = destinationModel.attribute(named: attribute, inEntity: destination.entityName) else {
            throw MigrationError(
                .invalidMapping, "\(destination.entityName) has no attribute \(attribute)",
                entity: destination.entityName,
                property: attribute)
        }
        do {
            rows[destination]?.attributes[attribute] = try value?.converted(to: description.type)
        } catch {
            var located = error
            located.entityName = destination.entityName
            located.propertyName = attribute
            throw located
        }
    }

    /// Sets a relationship of a destination row and the inverse of each related row.
    public func setDestinationRelationship(
        _ relationship: String, of destination: RowReference, to objects: [RowReference]
    )
        throws(MigrationError)
    {
        let description = try destinationRelationship(relationship, of: destination, count: objects.count)
        let objects = self.objects(heldBy: description, among: objects)
        link(destination, description, objects)
        guard let inverseName = description.inverseName else { return }
        for object in objects {
            guard let inverse = destinationModel.relationship(named: inverseName, inEntity: object.entityName) else {
                continue
            }
            var current = inverse.isToMany ? rows[object]?.toMany[inverseName] ?? [] : []
            if !current.contains(destination) { current.append(destination) }
            link(object, inverse, current)
        }
    }

    /// Each destination row the mapping created, in creation order.
    public func forEachDestinationInstance(
        of mapping: EntityMapping, _ body: (RowReference) throws(MigrationError) -> Void
    ) throws(MigrationError) {
        for reference in created[mapping.name] ?? [] { try body(reference) }
    }

    /// Checks required attributes and relationships, and attribute types, of the rows a mapping created.
    public func validateDestinationInstances(of mapping: EntityMapping) throws(MigrationError) {
        var failures: [MigrationError] = []
        for reference in created[mapping.name] ?? [] {
            guard let row = rows[reference] else { continue }
            for attribute in destinationModel.allAttributes(of: reference.entityName) where !attribute.isTransient {
                let value = row.attributes[attribute.name]
                if value == nil, !attribute.isOptional {
                    failures.append(invalid(reference, attribute.name, "is required but has no value"))
                } else if let value, !value.fits(attribute.type) {
                    failures.append(invalid(reference, attribute.name, "holds a value of another type"))
                }
            }
            for relationship in destinationModel.allRelationships(of: reference.entityName)
            where !relationship.isTransient && relationship.isRequired {
                let count =
                    relationship.isToMany
                    ? row.toMany[relationship.name]?.count ?? 0 : row.toOne[relationship.name] == nil ? 0 : 1
                if count == 0 { failures.append(invalid(reference, relationship.name, "is required but empty")) }
            }
        }
        guard failures.isEmpty else {
            throw MigrationError(
                .evaluationFailed, "\(failures.count) migrated object(s) are invalid in the destination model",
                mapping: mapping.name, failures: failures)
        }
    }

    // MARK: - Associations

    /// Records an association and remembers the destination row as created by the mapping.
    public func associate(source: RowReference, withDestination destination: RowReference, mapping: EntityMapping) {
        associations.associate(source: source, withDestination: destination, mapping: mapping.name)
        if !(created[mapping.name]?.last == destination) { created[mapping.name, default: []].append(destination) }
    }

    /// The destination rows made from source rows under a mapping (or any mapping).
    public func destinationInstances(forMapping mappingName: String?, sourceInstances sources: [RowReference])
        -> [RowReference]
    {
        associations.destinations(of: sources, mapping: mappingName)
    }

    /// The source rows a destination row was made from under a mapping.
    public func sourceInstances(forMapping mappingName: String, destinationInstance destination: RowReference)
        -> [RowReference]
    {
        associations.sources(of: destination, mapping: mappingName)
    }

    // MARK: - Non public

    private func link(_ reference: RowReference, _ relationship: RelationshipDescription, _ objects: [RowReference]) {
        if relationship.isToMany {
            rows[reference]?.toMany[relationship.name] = objects.isEmpty ? nil : objects
        } else {
            rows[reference]?.toOne[relationship.name] = objects.first
        }
    }

    private func invalid(_ reference: RowReference, _ property: String, _ problem: String) -> MigrationError {
        MigrationError(
            .evaluationFailed, "\(reference) \(property) \(problem)", entity: reference.entityName, property: property)
    }
}
