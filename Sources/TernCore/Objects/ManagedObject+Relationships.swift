/// Reading and writing relationships. Every write updates the inverse relationship too.
extension ManagedObject {
    // MARK: - To-one

    /// The destination of a to-one relationship.
    ///
    /// Setting it also updates the inverse: the old destination loses this object, the new one
    /// gains it.
    ///
    /// ```swift
    /// ingredient[toOne: "recipe"] = soup   // soup.objects(for: "ingredients") now holds it
    /// ```
    ///
    /// - Parameter name: A to-one relationship of the entity.
    /// - Precondition: The relationship exists and is to-one, the object is not a fault, a new
    ///   destination belongs to the same context and is of the destination entity.
    public subscript(toOne name: String) -> ManagedObject? {
        get {
            let relationship = relationshipDescription(name)
            precondition(!relationship.isToMany, "\(schema.name).\(name) is to-many: use objects(for:)")
            requireLoaded(name)
            return toOne[name].flatMap { graph?.object(for: $0) }
        }
        set {
            let relationship = relationshipDescription(name)
            precondition(!relationship.isToMany, "\(schema.name).\(name) is to-many: use add(_:to:)")
            requireLoaded(name)
            guard let graph else { return }
            if let newValue {
                checkDestination(newValue, of: relationship)
                graph.relate(self, name, newValue.objectID)
            } else if let old = toOne[name] {
                graph.unrelate(self, name, old)
            }
        }
    }

    // MARK: - To-many

    /// The destinations of a to-many relationship: in order for an ordered relationship.
    ///
    /// - Parameter name: A to-many relationship of the entity.
    /// - Returns: The related objects; some may be faults.
    /// - Precondition: The relationship exists and is to-many; the object is not a fault.
    /// - Complexity: O(*n*) in the number of related objects.
    public func objects(for name: String) -> [ManagedObject] {
        guard let graph else { return [] }
        return objectIDs(for: name).map { graph.object(for: $0) }
    }

    /// The IDs of the destinations of a relationship, to-one or to-many.
    ///
    /// - Parameter name: A relationship of the entity.
    /// - Precondition: The relationship exists; the object is not a fault.
    public func objectIDs(for name: String) -> [ObjectID] {
        let relationship = relationshipDescription(name)
        requireLoaded(name)
        return relationship.isToMany ? toMany[name] ?? [] : toOne[name].map { [$0] } ?? []
    }

    /// Adds an object to a to-many relationship (at the end of an ordered one).
    ///
    /// - Parameters:
    ///   - object: An object of the destination entity, in the same context.
    ///   - name: A to-many relationship.
    /// - Precondition: As for ``objects(for:)``; the object fits the destination.
    public func add(_ object: ManagedObject, to name: String) {
        let relationship = toManyRelationship(name)
        checkDestination(object, of: relationship)
        graph?.relate(self, name, object.objectID)
    }

    /// Inserts an object into an ordered to-many relationship, or moves it there when it is in
    /// the relationship already.
    ///
    /// - Parameters:
    ///   - object: An object of the destination entity, in the same context.
    ///   - name: An ordered to-many relationship.
    ///   - index: Where to put it, from 0 to the number of objects.
    /// - Precondition: The relationship is ordered and `index` is in range.
    public func insert(_ object: ManagedObject, into name: String, at index: Int) {
        let relationship = toManyRelationship(name)
        precondition(relationship.isOrdered, "\(schema.name).\(name) is not ordered")
        checkDestination(object, of: relationship)
        guard let graph else { return }
        graph.relate(self, name, object.objectID)
        var ids = toMany[name] ?? []
        ids.removeAll { $0 == object.objectID }
        precondition(index >= 0 && index <= ids.count, "index \(index) is out of range for \(schema.name).\(name)")
        ids.insert(object.objectID, at: index)
        graph.willChange(self)
        toMany[name] = ids
    }

    /// Removes an object from a to-many relationship.
    ///
    /// - Parameters:
    ///   - object: A related object.
    ///   - name: A to-many relationship.
    /// - Precondition: As for ``objects(for:)``.
    public func remove(_ object: ManagedObject, from name: String) {
        _ = toManyRelationship(name)
        graph?.unrelate(self, name, object.objectID)
    }

    /// Replaces the destinations of a to-many relationship.
    ///
    /// - Parameters:
    ///   - objects: The new destinations, in order.
    ///   - name: A to-many relationship.
    /// - Precondition: As for ``add(_:to:)``.
    public func setObjects(_ objects: [ManagedObject], for name: String) {
        let relationship = toManyRelationship(name)
        let kept = Set(objects.map(\.objectID))
        for id in toMany[name] ?? [] where !kept.contains(id) { graph?.unrelate(self, name, id) }
        for object in objects {
            checkDestination(object, of: relationship)
            graph?.relate(self, name, object.objectID)
        }
        if relationship.isOrdered, toMany[name] != objects.map(\.objectID) {
            graph?.willChange(self)
            toMany[name] = objects.map(\.objectID)
        }
    }

    // MARK: - Non public

    private func toManyRelationship(_ name: String) -> RelationshipDescription {
        let relationship = relationshipDescription(name)
        precondition(relationship.isToMany, "\(schema.name).\(name) is to-one: use subscript(toOne:)")
        requireLoaded(name)
        return relationship
    }

    private func checkDestination(_ object: ManagedObject, of relationship: RelationshipDescription) {
        precondition(object.graph === graph, "\(object.objectID) belongs to another context")
        precondition(
            graph?.schema(for: relationship.destinationEntityName).kinds.contains(object.schema.name) ?? true,
            "\(object.schema.name) is not a \(relationship.destinationEntityName), the destination of \(schema.name).\(relationship.name)")
    }
}
