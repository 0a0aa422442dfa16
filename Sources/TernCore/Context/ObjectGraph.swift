/// The objects of one context and the bookkeeping around them: identity map, changed objects,
/// cached rows and inverse-relationship maintenance. Confined to its context's isolation.
final class ObjectGraph {
    /// A registry entry: an object the registry does not keep alive.
    ///
    /// Not a weak reference: forming one gives each object a side table, which makes every later
    /// retain and release of the object take the runtime's slow path. Instead each object removes
    /// its own entry when it goes away (``ManagedObject``'s `deinit` calls ``unregister(_:)``), so an
    /// entry never outlives its object.
    struct RegisteredObject {
        // Safe: the entry is removed in the object's deinit, before its memory is freed.
        unowned(unsafe) let object: ManagedObject
        /// The object's identity, compared without touching an object that is going away.
        let identity: ObjectIdentifier

        init(_ object: ManagedObject) {
            self.object = object
            self.identity = ObjectIdentifier(object)
        }

        /// The entry of an object that `holder` keeps alive.
        init(keeping object: ManagedObject, in holder: inout ManagedObject?) {
            holder = object
            self.init(object)
        }

        /// The object; mutating so that `registered[id, default: …].resolve()` files the default.
        mutating func resolve() -> ManagedObject { object }
    }

    let model: ManagedObjectModel
    weak var context: ObjectContext?
    /// What the graph's objects hold to reach it.
    let handle = GraphHandle()
    private var schemas: [String: EntitySchema] = [:]
    /// The schema ``schema(for:)`` returned last: rows of one entity come in runs.
    private var lastSchema: EntitySchema?
    /// The ID space ``objectID(of:inStore:)`` used last.
    private var lastSpace: ObjectIDSpace?
    // Unchecked: read for every object made, changed only by `ObjectContext.register`, in the
    // context's isolation; nothing reads it while it is being changed.
    @exclusivity(unchecked) var classes: [String: ManagedObject.Type] = [:] {
        didSet { resolvedClasses = [:] }
    }
    /// The class of each entity, its own or an ancestor's, as found by ``objectClass(for:)``.
    private var resolvedClasses: [String: ManagedObject.Type] = [:]
    /// Every live object, not kept alive: unchanged objects go away when nothing else holds them.
    ///
    /// The one way to the registry: it files the pending batch first (``deferFiling(_:)``), so
    /// that whoever looks an object up or changes the registry finds every live object, and a
    /// row read again gives the same instance.
    var registered: [ObjectID: RegisteredObject] {
        _read {
            fileBatch()
            yield filed
        }
        _modify {
            fileBatch()
            yield &filed
        }
    }
    /// The registry's entries; only ``registered`` and the batch methods touch it.
    private var filed: [ObjectID: RegisteredObject] = [:]
    /// The objects of the batch being delivered, made while the registry was empty and not
    /// filed yet: filed at the first access to ``registered`` or change of an object, else
    /// dropped without ever being hashed when nobody kept them (``takePendingBatch()``).
    private var pendingBatch: [ManagedObject] = []
    /// Objects that must stay alive until saved: inserted, updated, deleted, or with pending work.
    var changed: [ObjectID: ManagedObject] = [:]
    /// States read from the parent, from which objects are made without another read.
    var rowCache: [ObjectID: ObjectState] = [:]
    /// The permanent ID of each object saved here under a temporary one, so that child contexts
    /// and callers that still use the temporary ID reach the same object.
    ///
    /// Only objects the context still knows (alive, or with a cached row) keep their alias, and
    /// `reset()` forgets them all: the table never outgrows the context's own objects, however
    /// many rows it saves. Live child contexts get each save's mapping as it happens.
    var formerIDs: [ObjectID: ObjectID] = [:]
    /// The objects whose faults found no row: deleted by another context or process.
    var inaccessibleIDs: Set<ObjectID> = []

    init(model: ManagedObjectModel) {
        self.model = model
        handle.graph = self
    }

    deinit {
        handle.graph = nil
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
        let object = makeUnregistered(id)
        registered[id] = RegisteredObject(object)
        return object
    }

    /// A new object of an ID, not registered yet: loaded with `state` when given, else a fault.
    private func makeUnregistered(_ id: ObjectID, state: ObjectState? = nil) -> ManagedObject {
        let schema = schema(for: id.entityName)
        let type = objectClass(for: id.entityName)
        guard let state else { return type.init(ObjectSeed(fault: id, schema: schema, handle: handle)) }
        return type.init(ObjectSeed(objectID: id, schema: schema, handle: handle, state: state))
    }

    // MARK: - Batches filed on demand

    /// Whether the objects of a batch can be made without filing them: nothing is registered, so
    /// no object of the batch's rows exists yet.
    var canDeferFiling: Bool { filed.isEmpty && pendingBatch.isEmpty }

    /// A new object for a state just read, loaded with it and not filed: for a batch while
    /// ``canDeferFiling``, handed to ``deferFiling(_:)`` with the others.
    func pendingObject(for state: ObjectState) -> ManagedObject {
        let object = makeUnregistered(canonical(state.id), state: state)
        object.isUnregistered = true
        return object
    }

    /// A new object for a packed row just read from a store, loaded with it and not filed,
    /// without an ``ObjectState`` in between: as ``pendingObject(for:)``.
    ///
    /// The row is read in place, field by field, never copied whole.
    func pendingObject(for rows: [PackedRow], at index: Int, inStore storeIdentifier: String) -> ManagedObject {
        let id = objectID(of: rows[index].reference, inStore: storeIdentifier)
        let schema = schema(for: id.entityName)
        let keys = schema.attributeKeys
        let type = objectClass(for: id.entityName)
        if type == ManagedObject.self, rows[index].toOne.isEmpty, rows[index].toMany.isEmpty,
            rows[index].attributes.keys.matches(keys)
        {
            // The common case, without the state and seed in between and their copies.
            let object = ManagedObject(
                readID: id, schema: schema, handle: handle, values: rows[index].attributes, version: rows[index].version
            )
            object.isUnregistered = true
            return object
        }
        func destination(_ reference: RowReference) -> ObjectID { objectID(of: reference, inStore: storeIdentifier) }
        let state = ObjectState(
            id: id, version: rows[index].version,
            attributes: rows[index].attributes.keys.matches(keys)
                ? rows[index].attributes : PackedAttributes(keys: keys, dictionary: rows[index].attributes.dictionary),
            toOne: rows[index].toOne.isEmpty ? ManagedObject.noToOne : rows[index].toOne.mapValues(destination),
            toMany: rows[index].toMany.isEmpty
                ? ManagedObject.noToMany : rows[index].toMany.mapValues { $0.map(destination) })
        let object = type.init(ObjectSeed(objectID: id, schema: schema, handle: handle, state: state))
        object.isUnregistered = true
        return object
    }

    /// Keeps a batch's new objects aside instead of filing them: they are filed at the first
    /// access to the registry.
    ///
    /// - Precondition: ``canDeferFiling``; the caller keeps the objects alive until it calls
    ///   ``takePendingBatch()``.
    func deferFiling(_ objects: [ManagedObject]) {
        precondition(canDeferFiling, "a batch is filed on demand only while the registry is empty")
        pendingBatch = objects
    }

    /// Ends the pending batch: true when it was never filed (nobody looked the registry up nor
    /// changed an object meanwhile); its objects are then unregistered, and the caller files the
    /// ones that stay alive with ``file(_:)``.
    func takePendingBatch() -> Bool {
        guard !pendingBatch.isEmpty else { return false }
        pendingBatch = []
        return true
    }

    /// Files an object of an ended pending batch that stays alive.
    func file(_ object: ManagedObject) {
        object.isUnregistered = false
        filed[object.objectID] = RegisteredObject(object)
    }

    /// Files the pending batch, if any.
    @inline(__always)
    private func fileBatch() {
        if !pendingBatch.isEmpty { filePendingBatch() }
    }

    private func filePendingBatch() {
        let batch = pendingBatch
        pendingBatch = []
        filed.reserveCapacity(filed.count + batch.count)
        for object in batch { file(object) }
    }

    /// The permanent ID of a row of a store, through the space of the last row's entity and store
    /// when it is the same (rows of one entity come in runs), without a lookup.
    func objectID(of reference: RowReference, inStore storeIdentifier: String) -> ObjectID {
        if let lastSpace, lastSpace.entityName == reference.entityName, lastSpace.storeIdentifier == storeIdentifier {
            return ObjectID(space: lastSpace, primaryKey: reference.primaryKey)
        }
        let space = ObjectIDSpace.shared(entityName: reference.entityName, storeIdentifier: storeIdentifier)
        lastSpace = space
        return ObjectID(space: space, primaryKey: reference.primaryKey)
    }

    /// The object for a state just read from the parent (store or parent context), without
    /// going through the row cache: a new object is made and registered with one lookup of the
    /// registry; a registered one is loaded or refreshed from the state unless it has changes.
    func adopt(_ state: ObjectState) -> ManagedObject {
        let id = canonical(state.id)
        // The default is made, and filed, only when no object is registered under the ID; `made`
        // keeps it alive, since the registry does not.
        // A new object is made loaded with the state: nothing pending, unchanged, not in
        // `changed`; what `fulfill` does then.
        var made: ManagedObject?
        let object = registered[id, default: RegisteredObject(keeping: makeUnregistered(id, state: state), in: &made)]
            .resolve()
        if made == nil, !object.isLoaded || (!object.hasChanges && object.snapshot != state) {
            fulfill(object, with: state)
        }
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
        let object = make(ObjectID(space: schema.temporarySpace, temporary: TemporaryIdentifiers.next()))
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
        // A changed object is registered, as every object `changed` keeps.
        fileBatch()
        object.keepSnapshot()
        // An inaccessible object's row is gone: there is nothing to save for it.
        guard !object.isInaccessible else { return }
        changed[object.objectID] = object
    }

    func forget(_ id: ObjectID) {
        registered[id] = nil
        changed[id] = nil
        rowCache[id] = nil
    }

    /// Removes the entry of an object that is going away, unless its ID now names another object.
    func unregister(_ object: ManagedObject) {
        guard let index = registered.index(forKey: object.objectID),
            registered.values[index].identity == ObjectIdentifier(object)
        else { return }
        registered.remove(at: index)
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
    ///
    /// Only the mapped objects are filed again; of the others, only those with relationships or
    /// a snapshot that can mention a mapped ID are rewritten.
    ///
    /// - Complexity: O(*m* + *r* + *c*) for *m* mapped IDs, *r* registered objects and *c* cached
    ///   rows, with work per object only where a relationship or snapshot holds IDs.
    /// - Parameters:
    ///   - mapping: The permanent ID of each temporary one.
    ///   - objectsAreKnown: Whether every mapped object is alive here (this context's own
    ///     inserted objects), so that every mapped ID is kept as an alias without checking.
    func replaceIDs(_ mapping: [ObjectID: ObjectID], objectsAreKnown: Bool = false) {
        guard !mapping.isEmpty else { return }
        defer { keepAliases(of: mapping, objectsAreKnown: objectsAreKnown) }
        func map(_ id: ObjectID) -> ObjectID { mapping[id] ?? id }
        for (old, new) in mapping {
            if let entry = registered.removeValue(forKey: old) {
                entry.object.objectID = new
                registered[new] = entry
            }
            if let object = changed.removeValue(forKey: old) { changed[new] = object }
        }
        for entry in registered.values {
            let object = entry.object
            if !object.toOne.isEmpty { object.toOne = object.toOne.mapValues(map) }
            if !object.toMany.isEmpty { object.toMany = object.toMany.mapValues { $0.map(map) } }
            if let snapshot = object.snapshot, snapshot.mentionsIDs(of: mapping) {
                object.snapshot = snapshot.replacingIDs(mapping)
            }
        }
        var moved: [(ObjectID, ObjectState)] = []
        for (id, state) in rowCache where state.mentionsIDs(of: mapping) {
            moved.append((id, state.replacingIDs(mapping)))
        }
        for (id, _) in moved { rowCache[id] = nil }
        for (_, state) in moved { rowCache[state.id] = state }
    }

    /// Records the temporary IDs of a mapping as aliases of the permanent ones, for the objects
    /// the context still knows, and drops older aliases of objects it no longer knows.
    ///
    /// - Complexity: O(*m* + *a*) for *m* mapped IDs and *a* aliases kept before.
    private func keepAliases(of mapping: [ObjectID: ObjectID], objectsAreKnown: Bool) {
        func isKnown(_ id: ObjectID) -> Bool { registered[id] != nil || rowCache[id] != nil }
        var aliases = formerIDs.isEmpty ? formerIDs : formerIDs.filter { isKnown($0.value) }
        if aliases.isEmpty, objectsAreKnown {
            // The usual case of a save after a reset: the mapping is the alias table, shared.
            formerIDs = mapping
            return
        }
        for (temporary, permanent) in mapping where objectsAreKnown || isKnown(permanent) {
            aliases[temporary] = permanent
        }
        formerIDs = aliases
    }
}

/// What objects hold to reach their graph: cleared when the graph goes away, so that an object
/// that outlives its context sees no graph, as through a weak reference, without the cost of a
/// weak reference on every object made, read and freed.
final class GraphHandle {
    // Safe: the graph sets this to nil in its deinit, before its memory is freed, and the graph
    // and its objects are only used in their context's isolation.
    unowned(unsafe) var graph: ObjectGraph?
}
