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
    /// Reading or writing fires the object's fault; the destination may be a fault itself.
    ///
    /// - Parameter name: A to-one relationship of the entity.
    /// - Precondition: The relationship exists and is to-one, a new destination belongs to the
    ///   same context and is of the destination entity.
    public subscript(toOne name: String) -> ManagedObject? {
        get {
            let relationship = relationshipDescription(name)
            precondition(!relationship.isToMany, "\(schema.name).\(name) is to-many: use objects(for:)")
            loadForAccess()
            return toOne[name].flatMap { graph?.object(for: $0) }
        }
        set {
            let relationship = relationshipDescription(name)
            precondition(!relationship.isToMany, "\(schema.name).\(name) is to-many: use add(_:to:)")
            if let newValue { checkDestination(newValue, of: relationship) }
            let destination = newValue?.objectID
            change { object in
                guard let graph = object.graph else { return }
                if let destination {
                    graph.relate(object, name, destination)
                } else if let old = object.toOne[name] {
                    graph.unrelate(object, name, old)
                }
            }
        }
    }

    // MARK: - To-many

    /// The destinations of a to-many relationship: in order for an ordered relationship.
    ///
    /// - Parameter name: A to-many relationship of the entity.
    /// - Returns: The related objects; some may be faults.
    /// - Precondition: The relationship exists and is to-many.
    /// - Complexity: O(*n*) in the number of related objects.
    public func objects(for name: String) -> [ManagedObject] {
        guard let graph else { return [] }
        return objectIDs(for: name).map { graph.object(for: $0) }
    }

    /// The IDs of the destinations of a relationship, to-one or to-many.
    ///
    /// - Parameter name: A relationship of the entity.
    /// - Precondition: The relationship exists.
    public func objectIDs(for name: String) -> [ObjectID] {
        let relationship = relationshipDescription(name)
        loadForAccess()
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
        let id = object.objectID
        change { $0.graph?.relate($0, name, id) }
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
        let id = object.objectID
        loadForAccess()
        precondition(
            index >= 0 && index <= (toMany[name] ?? []).filter { $0 != id }.count,
            "index \(index) is out of range for \(schema.name).\(name)")
        change { object in
            guard let graph = object.graph else { return }
            graph.relate(object, name, id)
            var ids = object.toMany[name] ?? []
            ids.removeAll { $0 == id }
            ids.insert(id, at: min(index, ids.count))
            graph.willChange(object)
            object.toMany[name] = ids
        }
    }

    /// Removes an object from a to-many relationship.
    ///
    /// - Parameters:
    ///   - object: A related object.
    ///   - name: A to-many relationship.
    /// - Precondition: As for ``objects(for:)``.
    public func remove(_ object: ManagedObject, from name: String) {
        _ = toManyRelationship(name)
        let id = object.objectID
        change { $0.graph?.unrelate($0, name, id) }
    }

    /// Replaces the destinations of a to-many relationship.
    ///
    /// - Parameters:
    ///   - objects: The new destinations, in order.
    ///   - name: A to-many relationship.
    /// - Precondition: As for ``add(_:to:)``.
    public func setObjects(_ objects: [ManagedObject], for name: String) {
        let relationship = toManyRelationship(name)
        for object in objects { checkDestination(object, of: relationship) }
        let ids = objects.map(\.objectID)
        change { object in
            guard let graph = object.graph else { return }
            let kept = Set(ids)
            for id in object.toMany[name] ?? [] where !kept.contains(id) { graph.unrelate(object, name, id) }
            for id in ids { graph.relate(object, name, id) }
            if relationship.isOrdered, object.toMany[name] != ids {
                graph.willChange(object)
                object.toMany[name] = ids
            }
        }
    }

    // MARK: - Non public

    private func toManyRelationship(_ name: String) -> RelationshipDescription {
        let relationship = relationshipDescription(name)
        precondition(relationship.isToMany, "\(schema.name).\(name) is to-one: use subscript(toOne:)")
        return relationship
    }

    /// Runs a relationship change now, firing the fault first; when the store cannot be read
    /// now, once the save loads the object. Inaccessible objects ignore changes.
    private func change(_ body: @escaping (ManagedObject) -> Void) {
        if loadForAccess() {
            if !isInaccessible { body(self) }
        } else {
            graph?.whenLoaded(objectID) { object in
                if !object.isInaccessible { body(object) }
            }
        }
    }

    private func checkDestination(_ object: ManagedObject, of relationship: RelationshipDescription) {
        precondition(object.graph === graph, "\(object.objectID) belongs to another context")
        precondition(
            graph?.schema(for: relationship.destinationEntityName).kinds.contains(object.schema.name) ?? true,
            "\(object.schema.name) is not a \(relationship.destinationEntityName), the destination of \(schema.name).\(relationship.name)"
        )
    }
}
