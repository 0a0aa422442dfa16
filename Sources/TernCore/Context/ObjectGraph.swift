/// The objects of one context and the bookkeeping around them: identity map, changed objects,
/// cached rows and inverse-relationship maintenance. Confined to its context's isolation.
final class ObjectGraph {
    struct WeakObject {
        weak var object: ManagedObject?
    }

    let model: ManagedObjectModel
    weak var context: ObjectContext?
    private var schemas: [String: EntitySchema] = [:]
    /// The schema ``schema(for:)`` returned last: rows of one entity come in runs.
    private var lastSchema: EntitySchema?
    var classes: [String: ManagedObject.Type] = [:] {
        didSet { resolvedClasses = [:] }
    }
    /// The class of each entity, its own or an ancestor's, as found by ``objectClass(for:)``.
    private var resolvedClasses: [String: ManagedObject.Type] = [:]
    /// Every live object, held weakly: unchanged objects go away when nothing else holds them.
    var registered: [ObjectID: WeakObject] = [:]
    /// Objects that must stay alive until saved: inserted, updated, deleted, or with pending work.
    var changed: [ObjectID: ManagedObject] = [:]
    /// States read from the parent, from which objects are made without another read.
    var rowCache: [ObjectID: ObjectState] = [:]
    /// The permanent ID of each object saved here under a temporary one, so that child contexts
    /// that still use the temporary ID reach the same object.
    var formerIDs: [ObjectID: ObjectID] = [:]
    /// The objects whose faults found no row: deleted by another context or process.
    var inaccessibleIDs: Set<ObjectID> = []

    init(model: ManagedObjectModel) {
        self.model = model
    }

    // MARK: - Schemas and identity

    func schema(for entityName: String) -> EntitySchema {
        if let lastSchema, lastSchema.name == entityName { return lastSchema }
        if let schema = schemas[entityName] {
            lastSchema = schema
            return schema
        }
        guard let entity = model.entity(named: entityName) else {
            preconditionFailure("the model has no entity \(entityName)")
        }
        let schema = EntitySchema(entity: entity, model: model)
        schemas[entityName] = schema
        return schema
    }

    func registeredObject(for id: ObjectID) -> ManagedObject? {
        registered[canonical(id)]?.object
    }

    /// The ID an object has now: the permanent one for a temporary ID saved since.
    func canonical(_ id: ObjectID) -> ObjectID {
        formerIDs.isEmpty ? id : formerIDs[id] ?? id
    }

    /// The object with that ID: the registered one, else one made from the row cache, else a fault.
    func object(for id: ObjectID) -> ManagedObject {
        let id = canonical(id)
        if let object = registeredObject(for: id) { return object }
        let object = make(id)
        if let state = rowCache[id] { fulfill(object, with: state) }
        return object
    }

    func make(_ id: ObjectID) -> ManagedObject {
        let schema = schema(for: id.entityName)
        let type = objectClass(for: id.entityName)
        let object = type.init(ObjectSeed(objectID: id, schema: schema, graph: self))
        registered[id] = WeakObject(object: object)
        return object
    }

    func objectClass(for entityName: String) -> ManagedObject.Type {
        if classes.isEmpty { return ManagedObject.self }
        if let type = resolvedClasses[entityName] { return type }
        var type: ManagedObject.Type = classes[entityName] ?? ManagedObject.self
        if classes[entityName] == nil {
            for ancestor in model.ancestors(of: entityName) {
                if let found = classes[ancestor.name] {
                    type = found
                    break
                }
            }
        }
        resolvedClasses[entityName] = type
        return type
    }

    func insert(_ entityName: String) -> ManagedObject {
        let schema = schema(for: entityName)
        precondition(!schema.entity.isAbstract, "\(entityName) is abstract: insert one of its subentities")
        let object = make(ObjectID(temporaryFor: entityName, identifier: TemporaryIdentifiers.next()))
        object.isLoaded = true
        object.isInserted = true
        object.values = schema.defaultValues
        changed[object.objectID] = object
        return object
    }

    /// Loads a state into an object: the object's snapshot, and its values unless it has changes.
    func fulfill(_ object: ManagedObject, with state: ObjectState) {
        let wasLoaded = object.isLoaded
        object.snapshot = state
        if !wasLoaded || !object.hasChanges { object.apply(state) }
        object.isLoaded = true
        let pending = object.pendingOperations
        object.pendingOperations = []
        for operation in pending { operation(object) }
        // A fault just loaded, with nothing pending, has no changes: skip comparing its values.
        let isClean = !wasLoaded && pending.isEmpty && !object.isInserted
        if !changed.isEmpty, isClean || !object.hasChanges, !object.isDeleted { changed[object.objectID] = nil }
    }

    func willChange(_ object: ManagedObject) {
        // An inaccessible object's row is gone: there is nothing to save for it.
        guard !object.isInaccessible else { return }
        changed[object.objectID] = object
    }

    func forget(_ id: ObjectID) {
        registered[id] = nil
        changed[id] = nil
        rowCache[id] = nil
    }

    /// Drops registry entries of objects that are gone.
    func compact() {
        registered = registered.filter { $0.value.object != nil }
    }

    // MARK: - Relationships with inverses

    /// Runs an operation on an object now, or once it is loaded when it is a fault.
    func whenLoaded(_ id: ObjectID, _ operation: @escaping (ManagedObject) -> Void) {
        let object = object(for: id)
        if object.isLoaded {
            operation(object)
        } else {
            object.pendingOperations.append(operation)
            changed[id] = object
        }
    }

    /// Makes `destination` a destination of `source.name`, updating the inverse.
    func relate(_ source: ManagedObject, _ name: String, _ destination: ObjectID) {
        guard let relationship = source.schema.relationships[name] else { return }
        if !relationship.isToMany, let old = source.toOne[name] {
            if old == destination { return }
            unrelate(source, name, old)
        }
        primitiveAdd(source, relationship, destination)
        guard let inverseName = relationship.inverseName else { return }
        let sourceID = source.objectID
        whenLoaded(destination) { [unowned self] destination in
            guard let inverse = destination.schema.relationships[inverseName] else { return }
            if !inverse.isToMany, let previous = destination.toOne[inverseName], previous != sourceID {
                self.unrelate(destination, inverseName, previous)
            }
            self.primitiveAdd(destination, inverse, sourceID)
        }
    }

    /// Removes `destination` from `source.name`, updating the inverse.
    func unrelate(_ source: ManagedObject, _ name: String, _ destination: ObjectID) {
        guard let relationship = source.schema.relationships[name] else { return }
        primitiveRemove(source, relationship, destination)
        guard let inverseName = relationship.inverseName else { return }
        let sourceID = source.objectID
        whenLoaded(destination) { [unowned self] destination in
            guard let inverse = destination.schema.relationships[inverseName] else { return }
            self.primitiveRemove(destination, inverse, sourceID)
        }
    }

    private func primitiveAdd(_ object: ManagedObject, _ relationship: RelationshipDescription, _ id: ObjectID) {
        if relationship.isToMany {
            guard !(object.toMany[relationship.name] ?? []).contains(id) else { return }
            willChange(object)
            object.toMany[relationship.name, default: []].append(id)
        } else if object.toOne[relationship.name] != id {
            willChange(object)
            object.toOne[relationship.name] = id
        }
    }

    private func primitiveRemove(_ object: ManagedObject, _ relationship: RelationshipDescription, _ id: ObjectID) {
        if relationship.isToMany {
            guard let index = object.toMany[relationship.name]?.firstIndex(of: id) else { return }
            willChange(object)
            object.toMany[relationship.name]?.remove(at: index)
        } else if object.toOne[relationship.name] == id {
            willChange(object)
            object.toOne[relationship.name] = nil
        }
    }

    // MARK: - Changes

    var insertedObjects: [ManagedObject] { changed.values.filter { $0.isInserted && !$0.isDeleted } }
    var deletedObjects: [ManagedObject] { changed.values.filter(\.isDeleted) }
    var updatedObjects: [ManagedObject] { changed.values.filter(\.isUpdated) }
    var hasChanges: Bool { changed.values.contains(where: \.hasChanges) }

    /// Replaces temporary IDs by permanent ones everywhere: registry, objects, snapshots, cache.
    func replaceIDs(_ mapping: [ObjectID: ObjectID]) {
        guard !mapping.isEmpty else { return }
        formerIDs.merge(mapping) { $1 }
        func map(_ id: ObjectID) -> ObjectID { mapping[id] ?? id }
        var live: [ManagedObject] = []
        for entry in registered.values { if let object = entry.object { live.append(object) } }
        registered = [:]
        changed = Dictionary(changed.values.map { (map($0.objectID), $0) }) { first, _ in first }
        for object in live {
            object.objectID = map(object.objectID)
            object.toOne = object.toOne.mapValues(map)
            object.toMany = object.toMany.mapValues { $0.map(map) }
            object.snapshot = object.snapshot?.replacingIDs(mapping)
            registered[object.objectID] = WeakObject(object: object)
        }
        rowCache = Dictionary(rowCache.values.map { ($0.id, $0.replacingIDs(mapping)) }) { first, _ in first }
    }
}
