/// Relationships read as instances of their destination's class: what generated classes use.
extension ManagedObject {
    // MARK: - Typed relationships

    /// The destination of a to-one relationship, as an instance of its class.
    ///
    /// ```swift
    /// var recipe: Recipe? { self[toOne: "recipe", as: Recipe.self] }
    /// var sameRecipe: Recipe? { self[toOne: "recipe"] }    // the class is inferred
    /// ```
    ///
    /// - Parameters:
    ///   - name: A to-one relationship of the entity.
    ///   - type: The class registered for the destination entity; inferred from the context
    ///     when left out.
    /// - Precondition: As for ``subscript(toOne:)``; the destination is an instance of `type`
    ///   (register the classes before the context makes the objects).
    public subscript<Destination: ManagedObject>(
        toOne name: String, as type: Destination.Type = Destination.self
    ) -> Destination? {
        guard let object = self[toOne: name] else { return nil }
        return typed(object, as: type, for: name)
    }

    /// The destinations of a to-many relationship, as instances of their class: in order for an
    /// ordered relationship.
    ///
    /// ```swift
    /// var ingredients: [Ingredient] { objects(for: "ingredients", as: Ingredient.self) }
    /// ```
    ///
    /// - Parameters:
    ///   - name: A to-many relationship of the entity.
    ///   - type: The class registered for the destination entity; inferred from the context
    ///     when left out.
    /// - Returns: The related objects; some may be faults.
    /// - Precondition: As for ``objects(for:)``; every destination is an instance of `type`.
    /// - Complexity: O(*n*) in the number of related objects.
    public func objects<Destination: ManagedObject>(
        for name: String, as type: Destination.Type = Destination.self
    ) -> [Destination] {
        objects(for: name).map { typed($0, as: type, for: name) }
    }

    // MARK: - Non public

    private func typed<Destination: ManagedObject>(
        _ object: ManagedObject, as type: Destination.Type, for name: String
    ) -> Destination {
        guard let typed = object as? Destination else {
            preconditionFailure(
                "\(object.objectID), the destination of \(schema.name).\(name), is a \(Swift.type(of: object)), not a "
                    + "\(Destination.self): the context made it before \(Destination.self) was registered; register the "
                    + "model's classes (the generated model's register(in:)) before the context reads objects")
        }
        return typed
    }
}
