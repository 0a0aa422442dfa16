package import TernCore

/// An entity mapping whose stage 2 a SQL engine can run as one statement per relationship
/// (#24): every relationship mapping is `destinationInstances([mapping,] $source.relationship)`
/// of one source relationship, whose objects are looked up in the association table by SQL.
///
/// The forms are the ones whose result is the Swift one whatever the data: each related source
/// object has at most one destination object (its mapping makes one per source object), that
/// destination is always one the destination relationship can hold (no link is dropped), and
/// no two relationships of the mapping write the same storage in an order that could matter.
/// ``analyze(_:lookingUpIn:sourceModel:destinationModel:)`` says why a mapping has no such form,
/// for `tern plan`.
///
/// ```swift
/// switch BulkRelationships.analyze(mapping, lookingUpIn: earlier, sourceModel: v1, destinationModel: v2) {
/// case .success(let bulk): bulk.relationships.map(\.name)     // ["owner", "tags"]
/// case .failure(let reason): print(reason.text)               // "tags: …"
/// }
/// ```
package struct BulkRelationships: Sendable {
    /// An entity mapping whose objects a relationship may hold.
    package struct Target: Sendable, Equatable {
        /// The mapping's name.
        package var mapping: String
        /// Its source entity.
        package var sourceEntity: String
        /// Its destination entity.
        package var destinationEntity: String
    }

    /// One relationship mapping.
    package struct Relationship: Sendable {
        /// The destination relationship it sets.
        package var name: String
        /// The source relationship it reads, of the mapping's source entity.
        package var sourceRelationship: String
        /// The mapping `destinationInstances` names; nil for any mapping.
        package var mapping: String?
        /// The mappings whose objects it may hold, at most one per source entity.
        package var targets: [Target]
        /// The source relationship's destination entity and its subentities: the entities a
        /// related source object may have (another one goes back to Swift).
        package var sourceEntities: [String]
        /// Whether the relationship is to-many.
        package var isToMany: Bool
    }

    /// An entity mapping that may have made objects before a stage 2 runs, for the lookups.
    package struct Candidate: Sendable {
        /// The entity mapping.
        package var mapping: EntityMapping
        /// Whether it makes exactly one destination object per source object it reads (the
        /// default policy and attribute policies; not custom ones).
        package var makesOnePerSource: Bool

        /// Creates a candidate.
        package init(mapping: EntityMapping, makesOnePerSource: Bool) {
            self.mapping = mapping
            self.makesOnePerSource = makesOnePerSource
        }
    }

    /// The entity mapping.
    package let mapping: EntityMapping
    /// Its source entity.
    package let sourceEntity: String
    /// Its destination entity.
    package let destinationEntity: String
    /// The relationship mappings, in the order stage 2 runs them.
    package let relationships: [Relationship]

    /// Works out the SQL form of a default-policy entity mapping's stage 2.
    ///
    /// - Parameters:
    ///   - mapping: The entity mapping.
    ///   - candidates: Every entity mapping of the passes up to and including the mapping's own
    ///     that reads a source: the associations that exist when its stage 2 runs.
    ///   - sourceModel: The source model.
    ///   - destinationModel: The destination model.
    /// - Returns: The SQL form, or the reason there is none.
    /// - Complexity: O(*r* × *m*) for *r* relationship mappings and *m* candidates.
    package static func analyze(
        _ mapping: EntityMapping, lookingUpIn candidates: [Candidate], sourceModel: ManagedObjectModel,
        destinationModel: ManagedObjectModel
    ) -> Result<BulkRelationships, BulkMapping.Reason> {
        guard mapping.kind == .transform || mapping.kind == .copy, let source = mapping.sourceEntityName,
            let destination = mapping.destinationEntityName
        else { return .failure(BulkMapping.Reason(text: "it creates no objects from a source entity")) }
        var relationships: [Relationship] = []
        for property in mapping.effectiveRelationshipMappings(in: destinationModel) {
            guard let expression = property.valueExpression else { continue }
            switch Self.relationship(
                property.name, expression, source: source, destination: destination, candidates: candidates,
                sourceModel: sourceModel, destinationModel: destinationModel)
            {
            case .success(let relationship): relationships.append(relationship)
            case .failure(let reason):
                return .failure(BulkMapping.Reason(text: "\(property.name): \(reason.text)"))
            }
        }
        if let reason = Self.interleavedWrites(
            relationships, source: source, destination: destination, sourceModel: sourceModel,
            destinationModel: destinationModel)
        {
            return .failure(reason)
        }
        return .success(
            BulkRelationships(
                mapping: mapping, sourceEntity: source, destinationEntity: destination, relationships: relationships))
    }

    // MARK: - Non public

    private init(mapping: EntityMapping, sourceEntity: String, destinationEntity: String, relationships: [Relationship])
    {
        self.mapping = mapping
        self.sourceEntity = sourceEntity
        self.destinationEntity = destinationEntity
        self.relationships = relationships
    }

    /// The SQL form of one relationship mapping, or why it has none.
    private static func relationship(
        _ name: String, _ expression: ValueExpression, source: String, destination: String,
        candidates: [Candidate], sourceModel: ManagedObjectModel, destinationModel: ManagedObjectModel
    ) -> Result<Relationship, BulkMapping.Reason> {
        func reason(_ text: String) -> Result<Relationship, BulkMapping.Reason> {
            .failure(BulkMapping.Reason(text: text))
        }
        let named: String?
        let keyPath: [String]
        switch expression {
        case .call(.destinationInstances, let arguments) where arguments.count == 1:
            guard case .source(let path) = arguments[0] else { return reason("\(expression) has no SQL form") }
            (named, keyPath) = (nil, path)
        case .call(.destinationInstances, let arguments) where arguments.count == 2:
            guard case .literal(.string(let mappingName)?) = arguments[0], case .source(let path) = arguments[1] else {
                return reason("\(expression) has no SQL form")
            }
            (named, keyPath) = (mappingName, path)
        default:
            return reason("\(expression) has no SQL form")
        }
        guard keyPath.count == 1 else { return reason("only one relationship of the source is read in SQL") }
        guard let target = destinationModel.relationship(named: name, inEntity: destination), !target.isTransient
        else { return reason("\(destination) has no stored relationship \(name)") }
        guard let read = sourceModel.relationship(named: keyPath[0], inEntity: source), !read.isTransient else {
            return reason("\(source) has no stored relationship \(keyPath[0])")
        }
        guard read.isToMany == target.isToMany else {
            return reason(
                "it reads a \(read.isToMany ? "to-many" : "to-one") relationship into a \(target.isToMany ? "to-many" : "to-one") one"
            )
        }
        let inverse = target.inverseName.flatMap {
            destinationModel.relationship(named: $0, inEntity: target.destinationEntityName)
        }
        if !target.isToMany, inverse?.isToMany == false {
            return reason("a one-to-one relationship, whose two sides are written together")
        }
        let readInverse = read.inverseName.flatMap {
            sourceModel.relationship(named: $0, inEntity: read.destinationEntityName)
        }
        if target.isToMany, inverse?.isToMany != true, readInverse?.isToMany == true {
            // A many-to-many read into a one-to-many: an object may be claimed by several owners,
            // and which one wins depends on the order Swift sets them in.
            return reason("a many-to-many relationship of the source into a one-to-many one")
        }
        let sourceEntities =
            [read.destinationEntityName] + sourceModel.allSubentities(of: read.destinationEntityName).map(\.name)
        let reachable = Set(
            [target.destinationEntityName]
                + destinationModel.allSubentities(of: target.destinationEntityName).map(\.name))
        var targets: [Target] = []
        var looked: [Candidate]
        if let named {
            looked = candidates.filter { $0.mapping.name == named }
            guard !looked.isEmpty else { return reason("no mapping named \(named) has run before it") }
        } else {
            looked = candidates.filter { $0.mapping.sourceEntityName.map(sourceEntities.contains) == true }
            for entity in sourceEntities where looked.filter({ $0.mapping.sourceEntityName == entity }).count > 1 {
                return reason("several mappings read \(entity): an object may have several destinations")
            }
        }
        for candidate in looked {
            guard candidate.makesOnePerSource else { return reason("\(candidate.mapping.name) has a custom policy") }
            guard let from = candidate.mapping.sourceEntityName, let to = candidate.mapping.destinationEntityName else {
                return reason("\(candidate.mapping.name) makes no objects")
            }
            guard reachable.contains(to) else {
                return reason("\(candidate.mapping.name) makes \(to) objects, which \(name) cannot hold")
            }
            targets.append(Target(mapping: candidate.mapping.name, sourceEntity: from, destinationEntity: to))
        }
        return .success(
            Relationship(
                name: name, sourceRelationship: read.name, mapping: named, targets: targets,
                sourceEntities: sourceEntities, isToMany: target.isToMany))
    }

    /// Why two relationships of the mapping write the same storage in an order that matters,
    /// if they do: a relationship and its inverse, both of the mapping's destination entity.
    ///
    /// A to-one and its to-many inverse write the same foreign key; they agree, whatever the
    /// order, when they read a relationship of the source and its inverse (one foreign key of
    /// the source too) through the same mappings.
    private static func interleavedWrites(
        _ relationships: [Relationship], source: String, destination: String, sourceModel: ManagedObjectModel,
        destinationModel model: ManagedObjectModel
    ) -> BulkMapping.Reason? {
        for (index, first) in relationships.enumerated() {
            guard let description = model.relationship(named: first.name, inEntity: destination),
                let inverseName = description.inverseName
            else { continue }
            for second in relationships[(index + 1)...] where second.name == inverseName {
                guard let inverse = model.relationship(named: second.name, inEntity: destination),
                    inverse.inverseName == first.name
                else { continue }
                let read = sourceModel.relationship(named: first.sourceRelationship, inEntity: source)
                let readInverse = sourceModel.relationship(named: second.sourceRelationship, inEntity: source)
                if first.isToMany != second.isToMany, first.targets == second.targets, first.mapping == second.mapping,
                    read?.inverseName == second.sourceRelationship, readInverse?.inverseName == first.sourceRelationship
                {
                    continue
                }
                return BulkMapping.Reason(
                    text: "\(first.name) and \(second.name) are inverses of one entity, set object by object in Swift")
            }
        }
        return nil
    }
}

/// An engine that can run stage 2 of a ``BulkRelationships`` in SQL: ``MappingRunner`` asks it
/// for each default-policy mapping with relationship mappings.
package protocol BulkRelationshipEngine: MigrationManager {
    /// Sets the relationships of every destination object of a mapping as the Swift path would.
    ///
    /// - Parameter bulk: The mapping's SQL form.
    /// - Returns: False, having changed nothing, when the engine declines (a storage it has no
    ///   statement for, a value the statements cannot handle as Swift does): the runner then
    ///   sets them in Swift.
    /// - Throws: ``MigrationError`` when a statement fails for another reason.
    func setRelationshipsInBulk(_ bulk: BulkRelationships) throws(MigrationError) -> Bool
}
