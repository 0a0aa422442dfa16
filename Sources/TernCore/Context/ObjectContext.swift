import Foundation
import Synchronization

/// A scratch pad of objects: Core Data's `NSManagedObjectContext`, as an actor.
///
/// A context fetches objects from its coordinator's stores (or from its parent context),
/// tracks their changes, and saves them back in one step. Each context runs on its own serial
/// executor, or on the main actor's for `.main`. Objects are not `Sendable` and stay inside
/// their context's isolation: work with them in ``perform(_:)`` and pass ``ObjectID``s between
/// contexts.
///
/// ```swift
/// let context = ObjectContext(coordinator: coordinator)
/// let id = try await context.perform { context in
///     let soup = context.insert("Recipe")
///     soup[attribute: "title"] = .string("Soup")
///     try await context.save()
///     return soup.objectID
/// }
/// ```
///
/// ## Topics
///
/// ### Objects
/// - ``insert(_:)->ManagedObject``
/// - ``delete(_:)``
/// - ``object(with:)``
/// - ``register(_:forEntity:)``
///
/// ### Fetching
/// - ``fetch(_:)->[ManagedObject]``
/// - ``fetch(_:)->[T]``
/// - ``fetchObjectIDs(_:)``
/// - ``fetchDictionaries(_:)``
/// - ``count(for:)-(FetchRequest)``
/// - ``count(for:)-(FetchDescriptor<T>)``
/// - ``forEachBatch(of:_:)``
///
/// ### Saving
/// - ``save()``
/// - ``rollback()``
/// - ``hasChanges``
/// - ``mergePolicy``
/// - ``changes()``
///
/// ### Other contexts
/// - ``init(parent:queue:)``
/// - ``automaticallyMergesChanges``
/// - ``mergeChanges(from:)``
///
/// ### Faults and IDs
/// - ``fault(for:)``
/// - ``fulfillFaults(for:)``
/// - ``obtainPermanentIDs(for:)``
///
/// ### Batch operations
/// - ``batchInsert(entityName:objects:options:)``
/// - ``batchUpdate(_:values:options:)``
/// - ``batchDelete(_:options:)``
/// - ``BatchOptions``
public actor ObjectContext {
    /// The coordinator the context (or its topmost parent) reads and writes through.
    public nonisolated let coordinator: PersistentStoreCoordinator
    /// The context this one saves into, or nil when it saves to the stores.
    public nonisolated let parent: ObjectContext?
    /// How conflicts with changes saved elsewhere are resolved on save; `.error` by default.
    public var mergePolicy: MergePolicy = .error
    /// Whether the saves of other contexts on the same coordinator are merged in as they happen.
    public var automaticallyMergesChanges = false {
        didSet { if automaticallyMergesChanges { coordinator.addObserver(self) } }
    }
    /// The context's name, recorded with each transaction it saves in persistent history.
    public var name: String?
    /// Who is saving (an importer, a sync engine, a user…), recorded with each transaction this
    /// context saves in persistent history, so that readers can skip their own changes.
    public var transactionAuthor: String?

    let graph: ObjectGraph
    private nonisolated let executor: ContextExecutor?
    let listeners = Mutex<[UUID: AsyncStream<ContextDidSave>.Continuation]>([:])
    /// This context's unsaved states, as its child contexts' faults read them.
    let publication = Mutex(Publication())
    /// The child contexts, told about permanent IDs when this context obtains them.
    let children = Mutex<[WeakContext]>([])

    /// Creates a context that reads and writes the coordinator's stores.
    ///
    /// - Parameters:
    ///   - coordinator: The coordinator.
    ///   - queue: `.main` to run on the main actor, `.private` (the default) for a private executor.
    public init(coordinator: PersistentStoreCoordinator, queue: ContextQueue = .private) {
        self.init(coordinator: coordinator, parent: nil, queue: queue)
    }

    /// Creates a child context: it reads through `parent` and saves into it, not into a store.
    ///
    /// - Parameters:
    ///   - parent: The parent context.
    ///   - queue: `.main` to run on the main actor, `.private` (the default) for a private executor.
    public init(parent: ObjectContext, queue: ContextQueue = .private) {
        self.init(coordinator: parent.coordinator, parent: parent, queue: queue)
    }

    private init(coordinator: PersistentStoreCoordinator, parent: ObjectContext?, queue: ContextQueue) {
        let graph = ObjectGraph(model: coordinator.model)
        self.coordinator = coordinator
        self.parent = parent
        self.graph = graph
        self.executor = queue.isMain ? nil : ContextExecutor(label: "tern.context")
        graph.context = self
        parent?.children.withLock { children in
            children.removeAll { $0.context == nil }
            children.append(WeakContext(context: self))
        }
    }

    deinit {
        for continuation in listeners.withLock({ $0.values }) { continuation.finish() }
    }

    /// The executor the context runs on.
    public nonisolated var unownedExecutor: UnownedSerialExecutor {
        executor?.asUnownedSerialExecutor() ?? MainActor.sharedUnownedExecutor
    }

    // MARK: - Running code

    /// Runs code on the context's executor, with the context isolated.
    ///
    /// Objects may be used freely inside; only `Sendable` results (IDs, values) leave. The
    /// closure is `@Sendable`, so it captures only `Sendable` values: objects can neither come
    /// in from elsewhere nor go out.
    ///
    /// In a child context, the parent contexts first publish their unsaved changes, so that
    /// faults firing inside `body` see them as they are when `body` starts.
    ///
    /// ```swift
    /// let count = try await context.perform { context in
    ///     try await context.fetch(FetchRequest(entityName: "Recipe")).count
    /// }
    /// ```
    ///
    /// - Parameter body: The code to run.
    /// - Returns: What `body` returns.
    /// - Throws: What `body` throws.
    public func perform<T: Sendable>(_ body: @Sendable (isolated ObjectContext) async throws -> T) async rethrows -> T {
        var ancestor = parent
        while let current = ancestor {
            await current.publishUnsavedStates()
            ancestor = current.parent
        }
        return try await body(self)
    }

    // MARK: - Inserting and deleting

    /// Makes fetches and inserts of an entity (and its subentities without a class of their own)
    /// return instances of `type`.
    ///
    /// - Parameters:
    ///   - type: A subclass of ``ManagedObject``.
    ///   - entityName: The entity it represents.
    /// - Precondition: The model has the entity.
    public func register(_ type: ManagedObject.Type, forEntity entityName: String) {
        _ = graph.schema(for: entityName)
        graph.classes[entityName] = type
    }

    /// Inserts a new object, with the attributes' default values and a temporary ID.
    ///
    /// - Parameter entityName: A non-abstract entity of the model.
    /// - Returns: The new object.
    /// - Precondition: The entity exists and is not abstract.
    public func insert(_ entityName: String) -> ManagedObject {
        graph.insert(entityName)
    }

    /// Inserts a new object of a registered class.
    ///
    /// - Parameter type: A class registered with ``register(_:forEntity:)``.
    /// - Returns: The new object.
    /// - Precondition: The class is registered for exactly one entity.
    public func insert<T: ManagedObject>(_ type: T.Type) -> T {
        let entities = graph.classes.filter { $0.value == type }.map(\.key)
        precondition(entities.count == 1, "register \(type) for one entity before inserting it")
        guard let object = graph.insert(entities[0]) as? T else {
            preconditionFailure("\(type) is registered for \(entities[0]) but another class was made")
        }
        return object
    }

    /// Marks an object deleted; the deletion and its delete rules take effect on save.
    ///
    /// - Parameter object: An object of this context.
    /// - Precondition: The object belongs to this context.
    public func delete(_ object: ManagedObject) {
        precondition(object.graph === graph, "\(object.objectID) belongs to another context")
        guard !object.isDeleted else { return }
        object.isDeleted = true
        graph.willChange(object)
    }

    // MARK: - Looking up objects

    /// The object with that ID if the context holds it already, without reading anything.
    ///
    /// - Parameter id: An object ID.
    public func registeredObject(for id: ObjectID) -> ManagedObject? {
        graph.registeredObject(for: id)
    }

    /// The object with that ID without reading anything: the registered object, or a fault
    /// whose data is read when one of its properties is (Core Data's `object(with:)`).
    ///
    /// ```swift
    /// let recipe = context.fault(for: id)
    /// print(recipe.isFault, recipe["title"] as String?)   // true, then the title read at once
    /// ```
    ///
    /// - Parameter id: An object ID, temporary or permanent, from this context or another one on
    ///   the same coordinator.
    /// - Returns: The object; if its row does not exist, it becomes inaccessible when it fires.
    public func fault(for id: ObjectID) -> ManagedObject {
        graph.object(for: id)
    }

    /// The object with that ID, loaded, with its relationships' destinations loaded too.
    ///
    /// - Parameter id: An object ID, from this context or another one on the same coordinator;
    ///   a temporary ID works after its object was saved, as does the permanent one.
    /// - Returns: The object, its data loaded.
    /// - Throws: ``TernError/Code/objectNotFound`` when no store (or parent) has it.
    public func object(with id: ObjectID) async throws -> ManagedObject {
        let object = graph.object(for: id)
        if !object.isLoaded { try await fulfillFaults(for: [id]) }
        guard object.isLoaded, !object.isInaccessible else {
            throw TernError(.objectNotFound, "\(id) does not exist; it may have been deleted", objectID: id)
        }
        try await prefetch(FetchRequest(entityName: id.entityName), for: [object])
        return object
    }

    /// Loads the data of objects that are faults.
    ///
    /// - Parameter ids: Object IDs; loaded objects and unknown rows are skipped.
    /// - Throws: When the store cannot be read.
    /// - Complexity: One read of the parent for all of them.
    public func fulfillFaults(for ids: [ObjectID]) async throws {
        let missing = ids.filter {
            !(graph.registeredObject(for: $0)?.isLoaded ?? false) && (parent != nil || !$0.isTemporary)
        }
        guard !missing.isEmpty else { return }
        let states = try await loadStates(missing)
        for state in states {
            graph.rowCache[state.id] = state
            if let object = graph.registeredObject(for: state.id), !object.isLoaded {
                graph.fulfill(object, with: state)
            }
        }
    }

    // MARK: - Changes

    /// Whether any object has unsaved changes.
    public var hasChanges: Bool { graph.hasChanges }

    /// The IDs of inserted objects not saved yet.
    public var insertedObjectIDs: Set<ObjectID> { Set(graph.insertedObjects.map(\.objectID)) }
    /// The IDs of updated objects not saved yet.
    public var updatedObjectIDs: Set<ObjectID> { Set(graph.updatedObjects.map(\.objectID)) }
    /// The IDs of deleted objects not saved yet.
    public var deletedObjectIDs: Set<ObjectID> { Set(graph.deletedObjects.map(\.objectID)) }

    /// How many objects are alive in the context: the changed ones and those still referenced.
    public var registeredObjectCount: Int {
        graph.registered.count
    }

    /// Drops every unsaved change: inserted objects go away, the others return to their
    /// last saved state.
    public func rollback() {
        for object in graph.changed.values {
            if object.isInserted {
                object.isDeleted = true
                graph.forget(object.objectID)
                continue
            }
            object.isDeleted = false
            object.pendingOperations = []
            if let snapshot = object.snapshot { object.apply(snapshot) }
        }
        graph.changed = [:]
    }

    /// Forgets every object and cached row, dropping unsaved changes; temporary IDs of objects
    /// saved before no longer lead to them (their permanent IDs do).
    public func reset() {
        rollback()
        graph.registered = [:]
        graph.rowCache = [:]
        graph.inaccessibleIDs = []
        graph.formerIDs = [:]
        // What children read of this context's unsaved work: nothing is left of it.
        publication.withLock { $0 = Publication() }
    }

    /// Reloads an object from the parent.
    ///
    /// - Parameters:
    ///   - object: An object of this context.
    ///   - mergeChanges: Whether unsaved changes are kept on top of the reloaded values;
    ///     when false they are dropped.
    /// - Throws: When the parent cannot be read.
    public func refresh(_ object: ManagedObject, mergeChanges: Bool) async throws {
        guard !object.objectID.isTemporary else { return }
        let id = object.objectID
        let states = try await loadStates([id])
        guard let state = states.first else { return }
        graph.rowCache[id] = state
        if mergeChanges {
            mergeState(state, into: object)
        } else {
            object.pendingOperations = []
            object.isDeleted = false
            object.snapshot = state
            object.apply(state)
            object.isLoaded = true
            graph.changed[id] = nil
        }
    }

    // MARK: - Change events

    /// A stream of the context's saves, from now on.
    ///
    /// - Returns: A new stream; it ends when the context goes away.
    public nonisolated func changes() -> AsyncStream<ContextDidSave> {
        let (stream, continuation) = AsyncStream.makeStream(of: ContextDidSave.self)
        let key = UUID()
        listeners.withLock { $0[key] = continuation }
        continuation.onTermination = { [weak self] _ in
            _ = self?.listeners.withLock { $0.removeValue(forKey: key) }
        }
        return stream
    }

    // MARK: - Non public

    func post(_ changes: ContextDidSave) {
        for continuation in listeners.withLock({ $0.values }) { continuation.yield(changes) }
    }

    /// Keeps an object's own changes over a new state: the state becomes its snapshot, and each
    /// property it did not change takes the state's value.
    func mergeState(_ state: ObjectState, into object: ManagedObject) {
        guard object.isLoaded else {
            graph.fulfill(object, with: state)
            return
        }
        let changedKeys = object.changedKeys
        object.snapshot = state
        for name in object.schema.attributes.keys where !changedKeys.contains(name) {
            object.values[name] = state.attributes[name]
        }
        for (name, relationship) in object.schema.relationships where !changedKeys.contains(name) {
            if relationship.isToMany {
                object.toMany[name] = state.toMany[name]
            } else {
                object.toOne[name] = state.toOne[name]
            }
        }
        if !object.hasChanges { graph.changed[object.objectID] = nil }
    }
}
