/// Inserting and fetching instances of ``TypedManagedObject`` classes, and fetched properties.
extension ObjectContext {
    // MARK: - Typed objects

    /// Inserts a new object of a typed class's entity, registering the classes of its model
    /// first when the context has no class for that entity yet.
    ///
    /// ```swift
    /// let soup = context.insert(Recipe.self)
    /// soup.title = "Soup"
    /// ```
    ///
    /// - Parameter type: A typed class, such as one generated from the model.
    /// - Returns: The new object.
    /// - Precondition: The entity exists, is not abstract, and another class is not registered
    ///   for it.
    public func insert<T: TypedManagedObject>(_ type: T.Type) -> T {
        registerClasses(of: type)
        let object = graph.insert(T.entityName)
        guard let typed = object as? T else {
            preconditionFailure("\(Swift.type(of: object)) is registered for \(T.entityName), not \(T.self)")
        }
        return typed
    }

    /// The objects a typed request matches, as instances of its class, registering the classes of
    /// its model first when the context has no class for the entity yet.
    ///
    /// ```swift
    /// let recipes = try await context.fetch(
    ///     Recipe.fetchRequest(predicate: #Predicate { $0.servings > 2 }, sortBy: [SortDescriptor(\.servings)]))
    /// ```
    ///
    /// - Parameter descriptor: What to fetch.
    /// - Returns: The objects, in the requested order.
    /// - Throws: What ``FetchDescriptor/fetchRequest()`` throws; when a store cannot be read;
    ///   ``TernError/Code/unsupported`` when the context made a matching object as another class
    ///   before the classes were registered.
    /// - Complexity: As fetching a `FetchRequest`.
    public func fetch<T: TypedManagedObject>(_ descriptor: FetchDescriptor<T>) async throws -> [T] {
        registerClasses(of: T.self)
        return try typed(try await fetch(try descriptor.fetchRequest()), as: T.self)
    }

    /// How many objects a typed request matches.
    ///
    /// - Parameter descriptor: What to count.
    /// - Returns: The number of objects, after offset and limit.
    /// - Throws: What ``FetchDescriptor/fetchRequest()`` throws; when a store cannot be read.
    public func count<T: TypedManagedObject>(for descriptor: FetchDescriptor<T>) async throws -> Int {
        try await count(for: try descriptor.fetchRequest())
    }

    // MARK: - Fetched properties

    /// The objects of a fetched property of an object: the destination entity's objects that
    /// match the property's predicate, `$FETCH_SOURCE` standing for the object.
    ///
    /// Core Data evaluates a fetched property when it is first read and keeps the result until the
    /// object is refreshed; here each call fetches again.
    ///
    /// ```swift
    /// let cheap = try await context.objects(forFetchedProperty: "cheapItems", of: shop)
    /// ```
    ///
    /// - Parameters:
    ///   - name: A fetched property of the object's entity (own or inherited).
    ///   - object: An object of this context.
    /// - Returns: The matching objects.
    /// - Throws: ``TernError/Code/invalidPredicate`` when the entity has no such fetched property
    ///   or its predicate does not parse; ``TernError/Code/unsupported`` when it uses
    ///   `$FETCHED_PROPERTY`; store errors.
    public func objects(forFetchedProperty name: String, of object: ManagedObject) async throws -> [ManagedObject] {
        let entity = object.schema.name
        guard let property = coordinator.model.allFetchedProperties(of: entity).first(where: { $0.name == name }) else {
            throw TernError(
                .invalidPredicate, "\(entity) has no fetched property \(name)", entity: entity, property: name)
        }
        var request = FetchRequest(entityName: property.entityName)
        if let text = property.predicate {
            let parsed: FetchPredicate
            do {
                parsed = try FetchPredicate(text)
            } catch {
                throw TernError(
                    .invalidPredicate, "the predicate of the fetched property does not parse: \(error.message)",
                    entity: entity, property: name, underlyingError: error)
            }
            let predicate = parsed.substituting(arguments: [
                "FETCH_SOURCE": .value(.uri(object.objectID.uriRepresentation))
            ])
            if predicate.variableNames.contains("FETCHED_PROPERTY") {
                throw TernError(
                    .unsupported,
                    "the predicate of the fetched property uses $FETCHED_PROPERTY, which Tern does not provide",
                    entity: entity, property: name)
            }
            request.predicate = predicate
        }
        return try await fetch(request)
    }

    /// The objects of a fetched property, as instances of the destination's class.
    ///
    /// - Parameters:
    ///   - name: A fetched property of the object's entity.
    ///   - object: An object of this context.
    ///   - type: The class registered for the fetched property's entity; inferred from the
    ///     context when left out.
    /// - Returns: The matching objects.
    /// - Throws: As ``objects(forFetchedProperty:of:)``; ``TernError/Code/unsupported`` when an
    ///   object was made as another class.
    public func objects<T: ManagedObject>(
        forFetchedProperty name: String, of object: ManagedObject, as type: T.Type = T.self
    ) async throws -> [T] {
        try typed(try await objects(forFetchedProperty: name, of: object), as: type)
    }

    // MARK: - Non public

    /// Registers the model classes of a typed class when its entity has no class yet.
    func registerClasses<T: TypedManagedObject>(of type: T.Type) {
        if graph.classes[T.entityName] == nil { T.registerModelClasses(in: self) }
    }

    /// Objects as instances of a class, refusing those made as another class.
    private func typed<T: ManagedObject>(_ objects: [ManagedObject], as type: T.Type) throws(TernError) -> [T] {
        var result: [T] = []
        result.reserveCapacity(objects.count)
        for object in objects {
            guard let typed = object as? T else {
                throw TernError(
                    .unsupported,
                    "\(object.objectID) is a \(Swift.type(of: object)), not a \(T.self): the context made it before "
                        + "\(T.self) was registered; register the model's classes (the generated model's register(in:)) "
                        + "before the context reads objects",
                    objectID: object.objectID)
            }
            result.append(typed)
        }
        return result
    }
}
