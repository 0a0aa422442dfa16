/// Entity inheritance: parents, subentities and inherited properties.
///
/// Entities name their parent (``EntityDescription/parentName``); these helpers resolve the
/// names through the model. They tolerate broken models: an unknown parent ends the chain and
/// an inheritance cycle is walked only once, so they are safe to call before
/// ``ManagedObjectModel/validate()``.
///
/// ```swift
/// model.parent(of: "SportCar")?.name                 // "Car"
/// model.allAttributes(of: "SportCar").map(\.name)     // Car's attributes, inherited
/// model.isKind("ExpensiveSportCar", of: "Car")        // true
/// ```
extension ManagedObjectModel {
    // MARK: - Walking up

    /// The parent of an entity.
    ///
    /// - Parameter entityName: An entity's name.
    /// - Returns: The parent entity, or nil for a root entity, an unknown entity or an unknown parent.
    /// - Complexity: O(log *n*) in the number of entities.
    public func parent(of entityName: String) -> EntityDescription? {
        entity(named: entityName)?.parentName.flatMap(entity(named:))
    }

    /// The ancestors of an entity, nearest first: its parent, its parent's parent, and so on.
    ///
    /// - Parameter entityName: An entity's name.
    /// - Returns: The ancestors; empty for a root or unknown entity. In a cycle, each entity
    ///   appears once and the walk stops before the entity itself comes back.
    /// - Complexity: O(*d* log *n*), where *d* is the depth of the entity.
    public func ancestors(of entityName: String) -> [EntityDescription] {
        var result: [EntityDescription] = []
        var seen: Set<String> = [entityName]
        var current = parent(of: entityName)
        while let entity = current, seen.insert(entity.name).inserted {
            result.append(entity)
            current = parent(of: entity.name)
        }
        return result
    }

    /// The root of an entity's inheritance chain: the entity itself when it has no parent.
    ///
    /// - Parameter entityName: An entity's name.
    /// - Returns: The topmost ancestor, or nil for an unknown entity. In a cycle, the last
    ///   entity reached before the walk comes back.
    /// - Complexity: O(*d* log *n*), where *d* is the depth of the entity.
    public func rootEntity(of entityName: String) -> EntityDescription? {
        ancestors(of: entityName).last ?? entity(named: entityName)
    }

    /// Whether an entity is another one or descends from it.
    ///
    /// - Parameters:
    ///   - entityName: The entity to test.
    ///   - ancestorName: The entity it may be a kind of.
    /// - Returns: `true` when `entityName` equals `ancestorName` or one of its ancestors is
    ///   `ancestorName`. An unknown entity is a kind of nothing, not even itself.
    /// - Complexity: O(*d* log *n*), where *d* is the depth of the entity.
    public func isKind(_ entityName: String, of ancestorName: String) -> Bool {
        guard entity(named: entityName) != nil else { return false }
        return entityName == ancestorName || ancestors(of: entityName).contains { $0.name == ancestorName }
    }

    // MARK: - Walking down

    /// The direct subentities of an entity, sorted by name.
    ///
    /// - Parameter entityName: An entity's name.
    /// - Returns: The entities whose parent is `entityName`.
    /// - Complexity: O(*n*) in the number of entities.
    public func subentities(of entityName: String) -> [EntityDescription] {
        entities.filter { $0.parentName == entityName && $0.name != entityName }
    }

    /// All descendants of an entity, depth first: each subentity comes before its own
    /// subentities, and siblings are sorted by name.
    ///
    /// - Parameter entityName: An entity's name.
    /// - Returns: The subentities, their subentities, and so on; never the entity itself.
    /// - Complexity: O(*n*) in the number of entities.
    public func allSubentities(of entityName: String) -> [EntityDescription] {
        var children: [String: [EntityDescription]] = [:]
        for entity in entities {
            if let parentName = entity.parentName { children[parentName, default: []].append(entity) }
        }
        var result: [EntityDescription] = []
        var seen: Set<String> = [entityName]
        var stack = Array((children[entityName] ?? []).reversed())
        while let entity = stack.popLast() {
            guard seen.insert(entity.name).inserted else { continue }
            result.append(entity)
            stack.append(contentsOf: (children[entity.name] ?? []).reversed())
        }
        return result
    }

    // MARK: - Inherited properties

    /// The attributes of an entity, its own and inherited, sorted by name.
    ///
    /// A subentity's own attribute replaces an inherited one of the same name, and a nearer
    /// ancestor's replaces a farther one's.
    ///
    /// - Parameter entityName: An entity's name.
    /// - Returns: The attributes; empty for an unknown entity.
    /// - Complexity: O(*d* log *n* + *p* log *p*), where *d* is the depth of the entity and *p*
    ///   the number of attributes along its chain.
    public func allAttributes(of entityName: String) -> [AttributeDescription] {
        inherited(of: entityName, \.attributes, name: \.name)
    }

    /// The relationships of an entity, its own and inherited, sorted by name.
    ///
    /// A subentity's own relationship replaces an inherited one of the same name.
    ///
    /// - Parameter entityName: An entity's name.
    /// - Returns: The relationships; empty for an unknown entity.
    /// - Complexity: O(*d* log *n* + *p* log *p*), where *d* is the depth of the entity and *p*
    ///   the number of relationships along its chain.
    public func allRelationships(of entityName: String) -> [RelationshipDescription] {
        inherited(of: entityName, \.relationships, name: \.name)
    }

    /// The fetched properties of an entity, its own and inherited, sorted by name.
    ///
    /// - Parameter entityName: An entity's name.
    /// - Returns: The fetched properties; empty for an unknown entity.
    /// - Complexity: O(*d* log *n* + *p* log *p*), where *d* is the depth of the entity and *p*
    ///   the number of fetched properties along its chain.
    public func allFetchedProperties(of entityName: String) -> [FetchedPropertyDescription] {
        inherited(of: entityName, \.fetchedProperties, name: \.name)
    }

    /// A property of an entity, its own or inherited, by name.
    ///
    /// - Parameters:
    ///   - name: The property's name.
    ///   - entityName: The entity's name.
    /// - Returns: The nearest property with that name along the entity's chain, or nil.
    /// - Complexity: O(*d* (log *n* + *p*)), where *d* is the depth of the entity and *p* the
    ///   largest number of own properties along its chain.
    public func property(named name: String, inEntity entityName: String) -> PropertyDescription? {
        for entity in chain(of: entityName) {
            if let attribute = entity.attribute(named: name) { return .attribute(attribute) }
            if let relationship = entity.relationship(named: name) { return .relationship(relationship) }
            if let fetched = entity.fetchedProperties.first(where: { $0.name == name }) {
                return .fetchedProperty(fetched)
            }
        }
        return nil
    }

    /// An attribute of an entity, its own or inherited, by name.
    ///
    /// - Parameters:
    ///   - name: The attribute's name.
    ///   - entityName: The entity's name.
    /// - Returns: The attribute, or nil when the entity has no attribute with that name.
    /// - Complexity: O(*d* (log *n* + *p*)), where *d* is the depth of the entity and *p* the
    ///   largest number of own properties along its chain.
    public func attribute(named name: String, inEntity entityName: String) -> AttributeDescription? {
        if case .attribute(let attribute)? = property(named: name, inEntity: entityName) { return attribute }
        return nil
    }

    /// A relationship of an entity, its own or inherited, by name.
    ///
    /// - Parameters:
    ///   - name: The relationship's name.
    ///   - entityName: The entity's name.
    /// - Returns: The relationship, or nil when the entity has no relationship with that name.
    /// - Complexity: O(*d* (log *n* + *p*)), where *d* is the depth of the entity and *p* the
    ///   largest number of own properties along its chain.
    public func relationship(named name: String, inEntity entityName: String) -> RelationshipDescription? {
        if case .relationship(let relationship)? = property(named: name, inEntity: entityName) {
            return relationship
        }
        return nil
    }

    // MARK: - Non public

    /// The entity followed by its ancestors, nearest first; empty for an unknown entity.
    func chain(of entityName: String) -> [EntityDescription] {
        guard let entity = entity(named: entityName) else { return [] }
        return [entity] + ancestors(of: entityName)
    }

    /// Merges one kind of property along an entity's chain, the nearest definition winning.
    private func inherited<Property>(
        of entityName: String, _ properties: KeyPath<EntityDescription, [Property]>,
        name: KeyPath<Property, String>
    ) -> [Property] {
        let chain = chain(of: entityName)
        // An entity without a parent: its own properties, already sorted by name, are the answer
        // unless two share a name (then merged below, the first winning).
        if chain.count == 1 {
            let own = chain[0][keyPath: properties]
            if zip(own, own.dropFirst()).allSatisfy({ $0[keyPath: name] != $1[keyPath: name] }) { return own }
        }
        var byName: [String: Property] = [:]
        for entity in chain {
            for property in entity[keyPath: properties] where byName[property[keyPath: name]] == nil {
                byName[property[keyPath: name]] = property
            }
        }
        return byName.values.sorted { $0[keyPath: name] < $1[keyPath: name] }
    }
}
