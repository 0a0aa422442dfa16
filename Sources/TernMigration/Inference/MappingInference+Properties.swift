import TernCore

/// Inference of attribute and relationship mappings.
extension InferenceBuilder {
    /// The property mappings of a destination entity from its source entity; records changes
    /// and issues on the way.
    mutating func propertyMappings(of entity: String, from sourceEntity: String) -> (
        attributes: [PropertyMapping], relationships: [PropertyMapping]
    ) {
        var attributes: [PropertyMapping] = []
        var relationships: [PropertyMapping] = []
        for attribute in destination.allAttributes(of: entity) where !attribute.isTransient {
            // As Core Data's validation error 134110: only a store without objects of the entity
            // can migrate; the store is checked before anything is written.
            let note =
                !attribute.isOptional && attribute.defaultValue == nil
                ? ", required without a default value (the store must have no \(sourceEntity) objects; checked before migrating)"
                : ""
            guard let match = origin(of: attribute.name, kind: "attribute", entity, sourceEntity, note),
                let old = source.attribute(named: match.sourceName, inEntity: sourceEntity)
            else { continue }
            let owner = match.owner
            if let expression = attributeExpression(old, attribute, owner: owner) {
                attributes.append(PropertyMapping(attribute.name, expression))
            }
        }
        for relationship in destination.allRelationships(of: entity) where !relationship.isTransient {
            let note =
                !relationship.isRequired
                ? ""
                : relationship.isToMany
                    ? ", required (existing \(sourceEntity) objects get an empty one, as in Core Data; counted before migrating)"
                    : ", required (the store must have no \(sourceEntity) objects; checked before migrating)"
            guard let match = origin(of: relationship.name, kind: "relationship", entity, sourceEntity, note),
                let old = source.relationship(named: match.sourceName, inEntity: sourceEntity)
            else { continue }
            if relationshipIsInferable(old, relationship, owner: match.owner) {
                let expression = ValueExpression.call(.destinationInstances, [.source(keyPath: [match.sourceName])])
                relationships.append(PropertyMapping(relationship.name, expression))
            }
        }
        return (attributes, relationships)
    }

    /// Where a destination property's values come from: its declaring entity and its source
    /// property, recorded as consumed, with a rename or move recorded as a change. Nil, with the
    /// addition recorded (its summary ending with `note`), for a new property; nil, with an issue,
    /// when an attribute and a relationship swap kinds.
    private mutating func origin(
        of name: String, kind: String, _ entity: String, _ sourceEntity: String, _ note: String
    ) -> (owner: String, sourceName: String)? {
        let owner = declaringEntity(name, of: entity, in: destination)
        guard let sourceName = correspondence.sourceProperty(name, ofEntity: entity) else {
            change(.addProperty, owner, name, "add \(kind) \(owner).\(name)\(note)")
            return nil
        }
        let sourceOwner = declaringEntity(sourceName, of: sourceEntity, in: source)
        consumed.insert(sourceOwner + "." + sourceName)
        let wasAttribute = source.attribute(named: sourceName, inEntity: sourceEntity) != nil
        guard wasAttribute == (kind == "attribute") else {
            let was = wasAttribute ? "an attribute" : "a relationship"
            issue(
                owner, name,
                "\(owner).\(name) changes from \(was) to a\(kind == "attribute" ? "n" : "") \(kind), which cannot be inferred; "
                    + "add a mapping or a custom migration policy")
            return nil
        }
        moved(sourceOwner, sourceName, to: owner, name, kind: kind)
        return (owner, sourceName)
    }

    // MARK: - Attributes

    /// The value expression of an attribute that existed before, or nil (with an issue) when the
    /// change cannot be inferred.
    private mutating func attributeExpression(_ old: AttributeDescription, _ new: AttributeDescription, owner: String)
        -> ValueExpression?
    {
        var expression = ValueExpression.source(keyPath: [old.name])
        if old.type != new.type {
            if Self.sharesIntegerStorage(old.type, new.type), !Self.isWidening(old.type, to: new.type) {
                // Core Data's lightweight migration carries the stored integer; values the new
                // type cannot hold are counted before migrating and kept as stored.
                change(
                    .changeType, owner, new.name,
                    "change \(owner).\(new.name) from \(old.type.xcodeName) to \(new.type.xcodeName) "
                        + "(values outside \(new.type.xcodeName)'s range are counted before migrating and kept as stored)"
                )
                return expression
            }
            guard Self.isWidening(old.type, to: new.type) else {
                issue(
                    owner, new.name,
                    "\(owner).\(new.name) changes from \(old.type.xcodeName) to \(new.type.xcodeName), which cannot be inferred; "
                        + "add a mapping with an expression such as \(Self.suggestion(from: old, to: new.type))")
                return nil
            }
            change(
                .changeType, owner, new.name,
                "change \(owner).\(new.name) from \(old.type.xcodeName) to \(new.type.xcodeName)")
        }
        if old.isOptional, !new.isOptional {
            guard let defaultValue = new.defaultValue else {
                // As in Core Data's lightweight migration: inferable, and the store's values are
                // checked before anything is written (objects without a value stop the migration).
                change(
                    .changeOptionality, owner, new.name,
                    "\(owner).\(new.name) becomes required; every object must already have a value (checked before migrating)"
                )
                return expression
            }
            change(
                .changeOptionality, owner, new.name,
                "\(owner).\(new.name) becomes required; objects without a value get its default value")
            expression = .call(.coalesce, [expression, .literal(defaultValue)])
        } else if !old.isOptional, new.isOptional {
            change(.changeOptionality, owner, new.name, "\(owner).\(new.name) becomes optional")
        }
        return expression
    }

    /// Whether a number type change is one Core Data's lightweight migration makes by carrying
    /// the stored value: to a wider integer, from a Boolean to an integer, from an integer or a
    /// Boolean to a floating-point type, from an integer to a Decimal, from Float to Double.
    static func isWidening(_ old: AttributeType, to new: AttributeType) -> Bool {
        let isIntegral = old.isInteger || old == .boolean
        if old.isInteger && new.isInteger { return old.rawValue <= new.rawValue }
        if old == .boolean && new.isInteger { return true }
        if isIntegral && (new == .double || new == .float) { return true }
        if old.isInteger && new == .decimal { return true }
        return old == .float && new == .double
    }

    /// Whether both types keep an SQLite `INTEGER` (the integer widths and Boolean), so that the
    /// stored value carries over whichever way the change goes.
    static func sharesIntegerStorage(_ old: AttributeType, _ new: AttributeType) -> Bool {
        (old.isInteger || old == .boolean) && (new.isInteger || new == .boolean)
    }

    /// A value expression that would convert a value of the old attribute to the new type.
    static func suggestion(from old: AttributeDescription, to type: AttributeType) -> String {
        let source = "$source.\(old.name)"
        switch type {
        case .integer16, .integer32, .integer64: return "integer(\(source))"
        case .double, .float: return old.type == .date ? "timeInterval(\(source))" : "double(\(source))"
        case .decimal: return "number(\(source))"
        case .string:
            return old.type == .date ? "formatDate(\(source), \"yyyy-MM-dd HH:mm\")" : "string(\(source))"
        case .date: return old.type == .string ? "parseDate(\(source), \"yyyy-MM-dd\")" : "date(\(source))"
        default: return "a custom migration policy"
        }
    }

    // MARK: - Relationships

    /// Whether a relationship change can be inferred; records the change or the issue.
    private mutating func relationshipIsInferable(
        _ old: RelationshipDescription, _ new: RelationshipDescription, owner: String
    ) -> Bool {
        let place = "\(owner).\(new.name)"
        let oldTargets = [old.destinationEntityName] + source.allSubentities(of: old.destinationEntityName).map(\.name)
        let leaving = oldTargets.filter { name in
            // Objects of a removed entity go with it; only objects that stay can lose their links.
            guard let now = correspondence.entities.first(where: { $0.value == name })?.key else { return false }
            return !destination.isKind(now, of: new.destinationEntityName)
        }
        if !leaving.isEmpty, old.destinationEntityName != new.destinationEntityName {
            // As in Core Data: the links to objects that are still of the new destination's kind
            // carry over, the others are dropped (and counted in the store before migrating).
            change(
                .dropLinks, owner, new.name,
                "\(place) now holds \(new.destinationEntityName) objects instead of \(old.destinationEntityName) objects: "
                    + "links to objects that are not \(new.destinationEntityName) objects are dropped (counted before migrating)"
            )
        }
        if old.isToMany, !new.isToMany {
            issue(
                owner, new.name,
                "\(place) changes from to-many to to-one, which cannot be inferred; add a mapping that chooses one object, "
                    + "or a custom migration policy")
            return false
        }
        if !new.isToMany, old.isOptional, !new.isOptional {
            change(
                .changeOptionality, owner, new.name,
                "\(place) becomes required; every object must already have one (checked before migrating)")
        }
        if new.isToMany, old.isToMany, new.tightensBounds(of: old) {
            change(
                .changeCardinality, owner, new.name,
                "\(place) must now hold \(new.allowedCountText) object(s); objects holding another number are kept as they are, "
                    + "as in Core Data (counted before migrating)")
        }
        if !old.isToMany, new.isToMany {
            change(.changeCardinality, owner, new.name, "\(place) becomes to-many")
        } else if old.isToMany, old.isOrdered != new.isOrdered {
            change(.changeCardinality, owner, new.name, "\(place) becomes \(new.isOrdered ? "ordered" : "unordered")")
        }
        if !old.isOptional, new.isOptional { change(.changeOptionality, owner, new.name, "\(place) becomes optional") }
        return true
    }

    // MARK: - Non public

    /// Records a rename or a move up or down the tree.
    private mutating func moved(
        _ sourceOwner: String, _ sourceName: String, to owner: String, _ name: String, kind: String
    ) {
        let sourceOwnerNow = correspondence.entities.first { $0.value == sourceOwner }?.key ?? sourceOwner
        if sourceName != name {
            change(.renameProperty, owner, name, "rename \(kind) \(owner).\(sourceName) to \(name)")
        }
        if sourceOwnerNow != owner {
            change(.moveProperty, owner, name, "move \(kind) \(name) from \(sourceOwnerNow) to \(owner)")
        }
    }

    /// The entity along the chain of `entity` that declares a property.
    private func declaringEntity(_ property: String, of entity: String, in model: ManagedObjectModel) -> String {
        var current: String? = entity
        var seen: Set<String> = []
        while let name = current, seen.insert(name).inserted, let description = model.entity(named: name) {
            if description.attribute(named: property) != nil || description.relationship(named: property) != nil {
                return name
            }
            current = description.parentName
        }
        return entity
    }
}
