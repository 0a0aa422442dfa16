public import TernCore

/// A custom policy whose stage 1 computes attribute values: for each source object, one object
/// of the mapping's destination entity, its attributes computed from the source object's
/// attributes alone.
///
/// It says which source attributes it reads and which destination attributes it sets, in
/// order, and computes one list of values from the other. That lets an engine run it without a
/// call per value: the SQLite engine hands it the values of its page of source rows and writes
/// the result with one prepared `INSERT`. Destination attributes it does not list keep their
/// default values; a listed one set to nil is cleared. ``MappingRunner`` runs stage 1 through
/// ``MigrationManager/createDestinationInstances(of:attributePolicies:readingAttributes:otherwise:)``,
/// so the engine calls ``destinationValues(from:into:)`` directly (an implementation of
/// ``EntityMigrationPolicy/createDestinationInstances(forSource:mapping:manager:)`` is not
/// called: implement ``EntityMigrationPolicy`` for a stage 1 of your own). Stage 1 is independent
/// (``EntityMigrationPolicy/createsInstancesIndependently(for:)``), so several such mappings of
/// one source entity share one walk over it, even across passes. Stages 2 and 3 are the
/// defaults unless the policy implements them.
///
/// ```swift
/// struct TimeStampPolicy: AttributeMigrationPolicy {
///     let sourceAttributeNames = ["id", "timeStamp"]
///     let destinationAttributeNames = ["id", "timeStamp"]
///     func destinationValues(from source: [AttributeValue?], into destination: inout [AttributeValue?])
///         throws(MigrationError)
///     {
///         destination[0] = source[0]
///         if case .date(let date)? = source[1] { destination[1] = .double(date.timeIntervalSinceReferenceDate) }
///     }
/// }
/// ```
public protocol AttributeMigrationPolicy: EntityMigrationPolicy {
    /// The source attributes read, in the order ``destinationValues(from:into:)`` receives them.
    var sourceAttributeNames: [String] { get }
    /// The destination attributes set, in the order ``destinationValues(from:into:)`` gives them.
    var destinationAttributeNames: [String] { get }

    /// Computes the destination values of one source object.
    ///
    /// - Parameters:
    ///   - source: The source object's values, one per name of ``sourceAttributeNames``.
    ///   - destination: One value per name of ``destinationAttributeNames``, all nil on entry;
    ///     each is converted to its attribute's type when stored.
    /// - Throws: ``MigrationError`` to stop the migration.
    func destinationValues(from source: [AttributeValue?], into destination: inout [AttributeValue?])
        throws(MigrationError)
}

extension AttributeMigrationPolicy {
    /// The attributes of ``sourceAttributeNames``.
    public func sourceAttributes(for mapping: EntityMapping) -> Set<String>? { Set(sourceAttributeNames) }

    /// True: stage 1 reads only the source object's attributes and makes one object of the
    /// mapping's destination entity.
    public func createsInstancesIndependently(for mapping: EntityMapping) -> Bool { true }

    /// One destination object from ``destinationValues(from:into:)``, through
    /// ``MigrationManager/createDestinationInstance(forSource:mapping:policy:)``.
    public func createDestinationInstances(
        forSource source: RowReference, mapping: EntityMapping, manager: any MigrationManager
    ) throws(MigrationError) {
        _ = try manager.createDestinationInstance(forSource: source, mapping: mapping, policy: self)
    }
}

extension MigrationManager {
    /// Stage 1 of an ``AttributeMigrationPolicy`` for one source object, one call per value:
    /// reads the source attributes, has the policy compute the destination values, creates the
    /// destination object, sets them and associates it with the source.
    ///
    /// - Parameters:
    ///   - source: The source object.
    ///   - mapping: The entity mapping; its destination entity is created.
    ///   - policy: The policy.
    /// - Returns: The destination object.
    /// - Throws: ``MigrationError`` from the policy or the engine, naming the mapping.
    public func createDestinationInstance(
        forSource source: RowReference, mapping: EntityMapping, policy: any AttributeMigrationPolicy
    ) throws(MigrationError) -> RowReference {
        let entity = try AttributeMigrationRoute.destinationEntity(of: mapping)
        var values: [AttributeValue?] = []
        for name in policy.sourceAttributeNames {
            switch try sourceValue(forKeyPath: [name], of: source) {
            case .value(let value): values.append(value)
            default:
                throw MigrationError(
                    .invalidMapping, "\(name) is not an attribute of \(source.entityName)", mapping: mapping.name,
                    entity: source.entityName, property: name)
            }
        }
        let names = policy.destinationAttributeNames
        var computed = [AttributeValue?](repeating: nil, count: names.count)
        do throws(MigrationError) {
            try policy.destinationValues(from: values, into: &computed)
        } catch {
            throw error.located(mapping: mapping.name, property: nil)
        }
        let destination = try insertDestinationInstance(ofEntity: entity)
        for (name, value) in zip(names, computed) {
            do throws(MigrationError) {
                try setDestinationValue(value, forAttribute: name, of: destination)
            } catch {
                throw error.located(mapping: mapping.name, property: name)
            }
        }
        associate(source: source, withDestination: destination, mapping: mapping)
        return destination
    }
}

extension MigrationManager {
    /// Stage 1 of a walk's mappings one object at a time: attribute policies through
    /// ``createDestinationInstance(forSource:mapping:policy:)``, the other mappings through `body`.
    public func createDestinationInstances(
        of mappings: [EntityMapping], attributePolicies: [(any AttributeMigrationPolicy)?],
        readingAttributes attributes: Set<String>?, otherwise body: (Int, RowReference) throws(MigrationError) -> Void
    ) throws(MigrationError) {
        try forEachSourceInstance(of: mappings, readingAttributes: attributes) { index, source throws(MigrationError) in
            if let policy = attributePolicies[index] {
                _ = try createDestinationInstance(forSource: source, mapping: mappings[index], policy: policy)
            } else {
                try body(index, source)
            }
        }
    }
}

/// What every engine checks before running an ``AttributeMigrationPolicy``.
public enum AttributeMigrationRoute {
    /// The destination entity of a mapping run by an ``AttributeMigrationPolicy``.
    ///
    /// - Throws: ``MigrationError`` with code ``MigrationError/Code/invalidMapping`` when the
    ///   mapping has no destination entity.
    public static func destinationEntity(of mapping: EntityMapping) throws(MigrationError) -> String {
        guard let entity = mapping.destinationEntityName else {
            throw MigrationError(
                .invalidMapping, "An attribute migration policy needs a destination entity", mapping: mapping.name)
        }
        return entity
    }
}
