/// Checking a model for the mistakes Core Data refuses or that break a store.
///
/// Validation collects every problem rather than stopping at the first, so that one run shows
/// everything to fix. Building a model with the builder validates it; a model read from a file
/// or assembled by hand can be checked with ``ManagedObjectModel/validate()``.
///
/// ```swift
/// do {
///     try model.validate()
/// } catch {
///     print(error)   // every problem, one a line
/// }
/// model.validationIssues.filter { $0.entityName == "Recipe" }
/// ```
extension ManagedObjectModel {
    // MARK: - Validating

    /// Checks the model and throws if anything is wrong.
    ///
    /// - Throws: ``TernError`` with code ``TernError/Code/invalidModel`` whose message lists
    ///   every issue of ``validationIssues``. The error's entity (and property) are set when all
    ///   issues concern the same one.
    /// - Complexity: That of ``validationIssues``.
    public func validate() throws(TernError) {
        let issues = validationIssues
        guard let first = issues.first else { return }
        let sameEntity = issues.allSatisfy { $0.entityName == first.entityName }
        let sameProperty = sameEntity && issues.allSatisfy { $0.propertyName == first.propertyName }
        let message =
            issues.count == 1
            ? "The model is invalid: \(first.message)"
            : "The model has \(issues.count) problems; fix each of them:\n"
                + issues.map { "- \($0)" }.joined(separator: "\n")
        throw TernError(
            .invalidModel, message, entity: sameEntity ? first.entityName : nil,
            property: sameProperty ? first.propertyName : nil)
    }

    /// Every problem of the model, entity by entity in name order.
    ///
    /// Checks names, duplicate entities and properties (including redefined inherited ones),
    /// inheritance, relationship destinations, inverses and counts, attribute types, default
    /// values, ranges and regular expressions, uniqueness constraints, fetch indexes,
    /// configurations and fetch request templates. An abstract entity without subentities is
    /// allowed, as in Core Data.
    ///
    /// - Complexity: O(*n* · *p* · *d* log *n*) for *n* entities of up to *p* properties and
    ///   inheritance depth *d*.
    public var validationIssues: [ModelIssue] {
        var issues = duplicateEntityIssues()
        for entity in entities {
            issues += entityIssues(entity)
        }
        issues += modelLevelIssues()
        return issues
    }

    /// The problems that leave the model without a meaning, entity by entity in name order:
    /// two entities with one name, two properties of one entity with one name, a parent entity
    /// that is not in the model, an entity that is its own ancestor, and a relationship whose
    /// destination entity or inverse relationship does not exist.
    ///
    /// They are a subset of ``validationIssues``. Readers of model files refuse a model that
    /// has any of them, and accept the other issues, which Core Data tolerates: a model that
    /// has only those still describes its objects and their store.
    ///
    /// ```swift
    /// if let issue = model.structuralIssues.first { print(issue) }   // "A: the entity is its own ancestor …"
    /// ```
    ///
    /// - Complexity: O(*n* · *p* · *d* log *n*) for *n* entities of up to *p* properties and
    ///   inheritance depth *d*.
    public var structuralIssues: [ModelIssue] {
        var issues = duplicateEntityIssues()
        for entity in entities {
            issues += inheritanceIssues(of: entity)
            issues += duplicatePropertyIssues(entity)
            for relationship in entity.relationships {
                issues += danglingReferenceIssues(relationship, in: entity)
            }
        }
        return issues
    }

    /// The inheritance problems of the model: parents that are not in the model, and entities
    /// that are their own ancestors (each entity of a cycle has one issue).
    ///
    /// - Complexity: O(*n* · *d* log *n*) for *n* entities of inheritance depth *d*.
    package var inheritanceIssues: [ModelIssue] {
        entities.flatMap { inheritanceIssues(of: $0) }
    }

    // MARK: - Non public

    /// Whether a name is an identifier: a letter or underscore, then letters, digits and underscores.
    static func isIdentifier(_ name: String) -> Bool {
        guard let first = name.first, first.isLetter || first == "_" else { return false }
        return name.allSatisfy { $0.isLetter || $0 == "_" || ("0"..."9").contains($0) }
    }

    /// The issue of an empty or non-identifier name, if any.
    static func nameIssue(_ name: String, entity: String, property: String?, what: String) -> ModelIssue? {
        if name.isEmpty {
            return ModelIssue(
                .invalidName, entity: entity, property: property, "the \(what) has an empty name; give it one")
        }
        guard !isIdentifier(name) else { return nil }
        return ModelIssue(
            .invalidName, entity: entity, property: property,
            "'\(name)' is not a valid \(what) name; use letters, digits and underscores, not starting with a digit")
    }

    private func duplicateEntityIssues() -> [ModelIssue] {
        var issues: [ModelIssue] = []
        var index = 0
        while index < entities.count {
            let name = entities[index].name
            var end = index + 1
            while end < entities.count, entities[end].name == name { end += 1 }
            if end - index > 1 {
                issues.append(
                    ModelIssue(
                        .duplicateEntity, entity: name,
                        "\(end - index) entities are named '\(name)'; rename or remove all but one"))
            }
            index = end
        }
        return issues
    }

    private func entityIssues(_ entity: EntityDescription) -> [ModelIssue] {
        var issues: [ModelIssue] = []
        if let issue = Self.nameIssue(entity.name, entity: entity.name, property: nil, what: "entity") {
            issues.append(issue)
        }
        issues += inheritanceIssues(of: entity)
        issues += propertyNameIssues(entity)
        for attribute in entity.attributes {
            issues += attribute.validationIssues(inEntity: entity.name)
        }
        for relationship in entity.relationships {
            issues += relationshipIssues(relationship, in: entity)
        }
        for fetched in entity.fetchedProperties where self.entity(named: fetched.entityName) == nil {
            issues.append(
                ModelIssue(
                    .unknownEntity, entity: entity.name, property: fetched.name,
                    "the fetched property fetches '\(fetched.entityName)', which is not in the model; add that entity or fix the name"
                ))
        }
        issues += constraintIssues(entity)
        return issues
    }

    private func inheritanceIssues(of entity: EntityDescription) -> [ModelIssue] {
        guard let parentName = entity.parentName else { return [] }
        guard self.entity(named: parentName) != nil else {
            return [
                ModelIssue(
                    .unknownParent, entity: entity.name,
                    "the parent entity '\(parentName)' is not in the model; add it or remove the parent")
            ]
        }
        var current: String? = parentName
        var steps = 0
        while let name = current, steps <= entities.count {
            if name == entity.name {
                return [
                    ModelIssue(
                        .inheritanceCycle, entity: entity.name,
                        "the entity is its own ancestor through '\(parentName)'; break the cycle of parent entities")
                ]
            }
            current = self.entity(named: name)?.parentName
            steps += 1
        }
        return []
    }

    private func propertyNameIssues(_ entity: EntityDescription) -> [ModelIssue] {
        var issues: [ModelIssue] = []
        var counts: [String: Int] = [:]
        let own = entity.properties
        for property in own {
            counts[property.name, default: 0] += 1
            if let issue = Self.nameIssue(property.name, entity: entity.name, property: property.name, what: "property")
            {
                issues.append(issue)
            }
        }
        issues += duplicatePropertyIssues(entity)
        let ancestors = ancestors(of: entity.name)
        for name in counts.keys.sorted() {
            guard let owner = ancestors.first(where: { $0.properties.contains { $0.name == name } }) else { continue }
            issues.append(
                ModelIssue(
                    .duplicateProperty, entity: entity.name, property: name,
                    "redefines the property '\(name)' inherited from \(owner.name), which Core Data forbids; rename it or remove it from one of the two entities"
                ))
        }
        return issues
    }

    /// Two or more own properties of an entity with one name.
    private func duplicatePropertyIssues(_ entity: EntityDescription) -> [ModelIssue] {
        var counts: [String: Int] = [:]
        for property in entity.properties { counts[property.name, default: 0] += 1 }
        return counts.sorted(by: { $0.key < $1.key }).filter { $0.value > 1 }.map { name, count in
            ModelIssue(
                .duplicateProperty, entity: entity.name, property: name,
                "\(count) properties are named '\(name)'; rename or remove all but one")
        }
    }

    private func relationshipIssues(_ relationship: RelationshipDescription, in entity: EntityDescription)
        -> [ModelIssue]
    {
        let dangling = danglingReferenceIssues(relationship, in: entity)
        let issues = cardinalityIssues(relationship, in: entity.name) + dangling
        guard dangling.isEmpty, let inverseName = relationship.inverseName,
            case .relationship(let inverse)? = property(
                named: inverseName, inEntity: relationship.destinationEntityName)
        else { return issues }
        guard inverse.inverseName != relationship.name || !isKind(entity.name, of: inverse.destinationEntityName) else {
            return issues
        }
        let back = inverse.inverseName.map { "'\($0)' on \(inverse.destinationEntityName)" } ?? "nothing"
        return issues + [
            ModelIssue(
                .mismatchedInverse, entity: entity.name, property: relationship.name,
                "the inverse \(relationship.destinationEntityName).\(inverseName) points back to \(back), not to this relationship; make the two relationships name each other"
            )
        ]
    }

    /// A destination entity that is not in the model, or an inverse that is not a relationship
    /// of the destination.
    private func danglingReferenceIssues(_ relationship: RelationshipDescription, in entity: EntityDescription)
        -> [ModelIssue]
    {
        let destination = relationship.destinationEntityName
        guard self.entity(named: destination) != nil else {
            return [
                ModelIssue(
                    .unknownEntity, entity: entity.name, property: relationship.name,
                    "the destination entity '\(destination)' is not in the model; add it or fix the destination")
            ]
        }
        guard let inverseName = relationship.inverseName,
            self.relationship(named: inverseName, inEntity: destination) == nil
        else { return [] }
        return [
            ModelIssue(
                .unknownInverse, entity: entity.name, property: relationship.name,
                "the inverse '\(inverseName)' is not a relationship of \(destination); add it there or fix the inverse name"
            )
        ]
    }

    private func cardinalityIssues(_ relationship: RelationshipDescription, in entityName: String) -> [ModelIssue] {
        func issue(_ message: String) -> ModelIssue {
            ModelIssue(.invalidCardinality, entity: entityName, property: relationship.name, message)
        }
        var issues: [ModelIssue] = []
        let (min, max) = (relationship.minCount, relationship.maxCount)
        if min < 0 || max < 0 {
            issues.append(issue("the counts are negative (min \(min), max \(max)); use 0 or more"))
        }
        if !relationship.isToMany && max != 1 {
            issues.append(issue("a to-one relationship has a maximum count of \(max); set it to 1 or make it to-many"))
        }
        if relationship.isToMany && max == 1 {
            issues.append(
                issue(
                    "a to-many relationship has a maximum count of 1; use 0 (unbounded), 2 or more, or make it to-one"))
        }
        if max > 0 && min > max {
            issues.append(
                issue(
                    "the minimum count \(min) exceeds the maximum count \(max); lower the minimum or raise the maximum")
            )
        }
        if relationship.isOrdered && !relationship.isToMany {
            issues.append(issue("only to-many relationships can be ordered; make it to-many or unordered"))
        }
        return issues
    }

    private func constraintIssues(_ entity: EntityDescription) -> [ModelIssue] {
        var issues: [ModelIssue] = []
        func check(_ name: String, in what: String) {
            let problem: String
            switch property(named: name, inEntity: entity.name) {
            case .attribute?: return
            case .relationship(let relationship)? where !relationship.isToMany: return
            case .relationship?:
                problem =
                    "'\(name)' is a to-many relationship, which \(what) cannot use; use attributes or to-one relationships"
            case .fetchedProperty?:
                problem =
                    "'\(name)' is a fetched property, which \(what) cannot use; use attributes or to-one relationships"
            case nil:
                problem =
                    "\(what) names '\(name)', which is not a property of the entity; fix the name or add the property"
            }
            issues.append(ModelIssue(.invalidConstraint, entity: entity.name, property: name, problem))
        }
        for constraint in entity.uniquenessConstraints {
            for name in constraint { check(name, in: "a uniqueness constraint") }
        }
        for index in entity.fetchIndexes {
            for element in index.elements { check(element.property, in: "the fetch index '\(index.name)'") }
        }
        return issues
    }

    private func modelLevelIssues() -> [ModelIssue] {
        var issues: [ModelIssue] = []
        for configuration in configurations {
            for name in configuration.entityNames where entity(named: name) == nil {
                issues.append(
                    ModelIssue(
                        .unknownConfigurationEntity, entity: name,
                        "the configuration '\(configuration.name)' lists '\(name)', which is not in the model; remove it from the configuration or add the entity"
                    ))
            }
        }
        for template in fetchRequestTemplates where entity(named: template.entityName) == nil {
            issues.append(
                ModelIssue(
                    .unknownEntity, entity: template.entityName,
                    "the fetch request '\(template.name)' fetches '\(template.entityName)', which is not in the model; fix its entity or remove it"
                ))
        }
        return issues
    }
}
