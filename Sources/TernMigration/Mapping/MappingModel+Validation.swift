public import TernCore

/// Checking mapping models against their source and destination models.
///
/// ```swift
/// do {
///     try mapping.validate(source: v1, destination: v2)
/// } catch {
///     print(error)   // one line per problem, naming the mapping, the property and the position
/// }
/// ```
extension MappingModel {
    // MARK: - Checking

    /// Checks every entity mapping against the two models and throws all problems found.
    ///
    /// It checks that entity and property names exist, that each mapping kind has the entities it
    /// needs, that copies are between entities with the same properties, that key paths in value
    /// expressions and filters exist, that functions get arguments of the right types, that values
    /// fit their destination attributes, and that relationships get `destinationInstances`
    /// of mappings that exist.
    ///
    /// - Parameters:
    ///   - source: The source model.
    ///   - destination: The destination model.
    ///   - otherPasses: The other mapping models of the same step, whose entity mappings
    ///     `destinationInstances` may name.
    /// - Throws: ``MigrationError`` with code ``MigrationError/Code/invalidMapping`` whose
    ///   ``MigrationError/failures`` hold one error per problem.
    /// - Complexity: O(*n*) in the total size of the mappings, plus model lookups.
    public func validate(
        source: ManagedObjectModel, destination: ManagedObjectModel, otherPasses: [MappingModel] = []
    ) throws(MigrationError) {
        let problems = validationProblems(source: source, destination: destination, otherPasses: otherPasses)
        guard problems.isEmpty else {
            throw MigrationError(
                .invalidMapping,
                "The mapping model \(name) does not fit its models (\(problems.count) problem(s)); fix the entity mappings listed",
                failures: problems)
        }
    }

    /// Every problem ``validate(source:destination:otherPasses:)`` would report.
    ///
    /// - Parameters:
    ///   - source: The source model.
    ///   - destination: The destination model.
    ///   - otherPasses: The other mapping models of the same step.
    /// - Returns: One error per problem, each naming its entity mapping and property.
    /// - Complexity: O(*n*) in the total size of the mappings, plus model lookups.
    public func validationProblems(
        source: ManagedObjectModel, destination: ManagedObjectModel, otherPasses: [MappingModel] = []
    ) -> [MigrationError] {
        var problems: [MigrationError] = []
        var destinations: [String: String?] = [:]
        var seen: Set<String> = []
        for pass in otherPasses + [self] {
            for mapping in pass.entityMappings { destinations[mapping.name] = mapping.destinationEntityName }
        }
        for mapping in entityMappings {
            if !seen.insert(mapping.name).inserted {
                problems.append(
                    MigrationError(
                        .invalidMapping, "Two entity mappings are named \(mapping.name)", mapping: mapping.name))
            }
            let checker = ExpressionTypeChecker(
                sourceModel: source, sourceEntity: mapping.sourceEntityName, mappingDestinations: destinations)
            var mappingChecker = MappingChecker(
                mapping: mapping, source: source, destination: destination, checker: checker)
            problems += mappingChecker.problems()
        }
        return problems
    }
}

/// Checks one entity mapping.
private struct MappingChecker {
    let mapping: EntityMapping
    let source: ManagedObjectModel
    let destination: ManagedObjectModel
    var checker: ExpressionTypeChecker

    mutating func problems() -> [MigrationError] {
        var problems = entityProblems()
        guard problems.isEmpty else { return problems }
        if let filter = mapping.sourceFilter, let entity = mapping.sourceEntityName {
            for keyPath in filter.keyPaths.sorted() where !keyPathExists(keyPath, in: entity) {
                problems.append(fail("The filter reads the unknown key path \(keyPath) of \(entity)"))
            }
        }
        if mapping.policyName == nil {
            for property in mapping.propertyMappings {
                guard let selector = property.valueExpression?.policySelectors.first else { continue }
                problems.append(
                    fail(
                        "'\(property.valueExpression.map(String.init(describing:)) ?? "")' calls the policy's \(selector), "
                            + "but the entity mapping names no policy", property.name))
            }
        }
        guard let destinationEntity = mapping.destinationEntityName else {
            if !mapping.propertyMappings.isEmpty { problems.append(fail("A remove mapping has no property mappings")) }
            return problems
        }
        for property in mapping.attributeMappings {
            let attribute = destination.attribute(named: property.name, inEntity: destinationEntity)
            guard let (expression, type) = typed(property, exists: attribute != nil, "attribute", &problems),
                let attribute
            else { continue }
            if !type.fits(attribute.type) {
                problems.append(
                    fail(
                        "'\(expression)' gives \(type.name) but \(destinationEntity).\(attribute.name) is \(attribute.type.xcodeName); "
                            + "convert it, for example with \(Self.converter(for: attribute.type))(…)", property.name))
            }
        }
        for property in mapping.relationshipMappings {
            let relationship = destination.relationship(named: property.name, inEntity: destinationEntity)
            guard let (expression, type) = typed(property, exists: relationship != nil, "relationship", &problems),
                let relationship
            else { continue }
            switch type {
            case .null, .unknown: break
            case .instances(let entity, _):
                if let entity, !destination.isKind(entity, of: relationship.destinationEntityName) {
                    problems.append(
                        fail(
                            "'\(expression)' gives \(entity) objects but \(destinationEntity).\(relationship.name) holds \(relationship.destinationEntityName) objects",
                            property.name))
                }
            // Many objects for a to-one relationship are accepted as Core Data accepts them (a
            // to-many source relationship with one object each): more than one fails when it runs.
            case let other:
                problems.append(
                    fail(
                        "'\(expression)' gives \(other.name); a relationship needs destinationInstances(\"Mapping\", $source.relationship)",
                        property.name))
            }
        }
        return problems
    }

    // MARK: - Non public

    /// A property mapping's expression and its type, or nil after recording why there is none to
    /// check: an unknown destination property (a problem), no expression, or a type error (a problem).
    private mutating func typed(
        _ property: PropertyMapping, exists: Bool, _ kind: String, _ problems: inout [MigrationError]
    ) -> (ValueExpression, ExpressionType)? {
        guard exists else {
            problems.append(
                fail("\(mapping.destinationEntityName ?? "") has no \(kind) '\(property.name)'", property.name))
            return nil
        }
        guard let expression = property.valueExpression else { return nil }
        do {
            return (expression, try check(expression))
        } catch {
            problems.append(located(error, expression, property.name))
            return nil
        }
    }

    private func entityProblems() -> [MigrationError] {
        var problems: [MigrationError] = []
        let needsSource = mapping.kind != .add
        let needsDestination = mapping.kind != .remove
        switch (mapping.sourceEntityName, needsSource) {
        case (nil, true) where mapping.kind != .custom:
            problems.append(fail("A \(mapping.kind.rawValue) mapping needs a source entity"))
        case (let name?, _) where source.entity(named: name) == nil:
            problems.append(fail("The source model has no entity \(name)", entity: name))
        case (let name?, false):
            problems.append(fail("An add mapping has no source entity", entity: name))
        default: break
        }
        switch (mapping.destinationEntityName, needsDestination) {
        case (nil, true) where mapping.kind != .custom:
            problems.append(fail("A \(mapping.kind.rawValue) mapping needs a destination entity"))
        case (let name?, _) where destination.entity(named: name) == nil:
            problems.append(fail("The destination model has no entity \(name)"))
        case (let name?, _) where destination.entity(named: name)?.isAbstract == true:
            problems.append(fail("The destination entity \(name) is abstract and can have no objects"))
        case (_?, false):
            problems.append(fail("A remove mapping has no destination entity"))
        default: break
        }
        if mapping.kind == .custom, mapping.policyName == nil {
            problems.append(fail("A custom mapping needs the name of its migration policy"))
        }
        if problems.isEmpty, mapping.kind == .copy, let from = mapping.sourceEntityName,
            let to = mapping.destinationEntityName, !Self.sameStoredProperties(source, from, destination, to)
        {
            problems.append(
                fail("A copy needs \(from) and \(to) to have the same attributes and relationships; use transform"))
        }
        return problems
    }

    private mutating func check(_ expression: ValueExpression) throws(MigrationError) -> ExpressionType {
        let positions = (try? ValueExpression.parsedWithPositions(expression.description).positions) ?? []
        return try checker.check(expression, positions: positions)
    }

    private func keyPathExists(_ keyPath: String, in entity: String) -> Bool {
        var current = entity
        let names = keyPath.split(separator: ".").map(String.init)
        for (offset, name) in names.enumerated() {
            switch source.property(named: name, inEntity: current) {
            case .attribute?: return offset == names.count - 1
            case .relationship(let relationship)?: current = relationship.destinationEntityName
            default: return name.hasPrefix("@") && offset > 0
            }
        }
        return true
    }

    /// A problem of the mapping, about the destination entity unless `entity` names another
    /// (a source entity at fault).
    private func fail(_ message: String, _ property: String? = nil, entity: String? = nil) -> MigrationError {
        MigrationError(
            .invalidMapping, message, mapping: mapping.name, entity: entity ?? mapping.destinationEntityName,
            property: property)
    }

    private func located(_ error: MigrationError, _ expression: ValueExpression, _ property: String) -> MigrationError {
        var copy = error.located(mapping: mapping.name, property: property)
        copy.entityName = copy.entityName ?? mapping.destinationEntityName
        copy.message += " (in '\(expression)')"
        return copy
    }

    /// The conversion function that produces values for an attribute type.
    static func converter(for type: AttributeType) -> String {
        switch type {
        case .integer16, .integer32, .integer64: "integer"
        case .double, .float: "double"
        case .decimal: "number"
        case .date: "date"
        default: "string"
        }
    }

    /// Whether two entities have the same stored attributes (names and types) and relationships (names).
    static func sameStoredProperties(
        _ source: ManagedObjectModel, _ from: String, _ destination: ManagedObjectModel, _ to: String
    ) -> Bool {
        let attributes = { (model: ManagedObjectModel, entity: String) in
            model.allAttributes(of: entity).filter { !$0.isTransient }.map { "\($0.name):\($0.type.rawValue)" }
        }
        let relationships = { (model: ManagedObjectModel, entity: String) in
            model.allRelationships(of: entity).filter { !$0.isTransient }.map(\.name)
        }
        return attributes(source, from) == attributes(destination, to)
            && relationships(source, from) == relationships(destination, to)
    }
}
