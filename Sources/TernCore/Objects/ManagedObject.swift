/// What a context needs to create an object; the context makes these, applications never do.
public struct ObjectSeed {
    let objectID: ObjectID
    let schema: EntitySchema
    let handle: GraphHandle
    /// Whether the object starts loaded with ``state``, just read; false for a fault.
    let isLoaded: Bool
    /// The state read for the object, which has no transient values to keep; no values for a
    /// fault.
    let state: ObjectState

    /// The seed of an object loaded with a state just read from the parent (store or parent
    /// context).
    init(objectID: ObjectID, schema: EntitySchema, handle: GraphHandle, state: ObjectState) {
        self.objectID = objectID
        self.schema = schema
        self.handle = handle
        self.isLoaded = true
        self.state = state
    }

    /// The seed of a fault.
    init(fault objectID: ObjectID, schema: EntitySchema, handle: GraphHandle) {
        self.objectID = objectID
        self.schema = schema
        self.handle = handle
        self.isLoaded = false
        self.state = ObjectState(id: objectID, attributes: PackedAttributes(keys: schema.attributeKeys))
    }
}

/// An object of an entity, living in one ``ObjectContext``: Core Data's `NSManagedObject`.
///
/// Objects are not `Sendable`: each belongs to the context that made it and never leaves it
/// (use its ``objectID`` to find it again elsewhere). Read and write properties inside the
/// context's isolation, for example in ``ObjectContext/perform(_:)``. Writing a relationship
/// keeps its inverse up to date.
///
/// An object may be a fault (``isFault``): its data is not loaded yet. Reading or writing a
/// property fires the fault: the data is read at once from the context's row cache, the parent
/// contexts' unsaved changes or the store (``PersistentStore/rowsSynchronously(for:)``), as Core
/// Data does. When the object's row no longer exists (another context or process deleted it),
/// the object becomes inaccessible (``isInaccessible``): it counts as deleted, its properties read
/// as nil and empty, and writes to it are ignored — Core Data's `shouldDeleteInaccessibleFaults`.
/// When the store cannot be read at all, the object stays a fault and reads give nil; call
/// ``fireFault()`` to get the error.
///
/// Values are checked against the model: an unknown property name or a value of the wrong
/// type is a programmer error and stops the program; ``setValue(_:forAttribute:)`` throws
/// instead. Rules such as "required" or "at most 10 characters" are checked on save.
///
/// For typed access, let the `TernModelCodegen` build plugin or `tern generate` write the classes
/// from the model, as Xcode does (`docs/Codegen.md`), or subclass and register the class with the
/// context:
///
/// ```swift
/// final class Recipe: ManagedObject {
///     var title: String? {
///         get { self["title"] }
///         set { self["title"] = newValue }
///     }
///     var ingredients: [ManagedObject] { objects(for: "ingredients") }
/// }
///
/// try await context.perform { context in
///     context.register(Recipe.self, forEntity: "Recipe")
///     let soup = context.insert(Recipe.self)
///     soup.title = "Soup"
///     try await context.save()
/// }
/// ```
///
/// ## Topics
///
/// ### Attributes
/// - ``subscript(attribute:)``
/// - ``subscript(_:)``
/// - ``setValue(_:forAttribute:)``
///
/// ### Relationships
/// - ``subscript(toOne:)``
/// - ``objects(for:)``
/// - ``add(_:to:)``
/// - ``remove(_:from:)``
///
/// ### State
/// - ``isInserted``
/// - ``isUpdated``
/// - ``isDeleted``
/// - ``hasChanges``
/// - ``isFault``
/// - ``changedKeys``
open class ManagedObject {
    /// The object's identity; temporary until the object is first saved.
    public internal(set) var objectID: ObjectID
    /// The object's entity.
    public var entity: EntityDescription { schema.entity }
    /// Whether the object was inserted and not saved yet.
    public internal(set) var isInserted: Bool = false
    /// Whether the object was deleted and the deletion not saved yet (or the object is gone).
    public internal(set) var isDeleted: Bool = false
    /// Whether the object's row was gone when its fault fired: deleted by another context or
    /// process. Such an object is also ``isDeleted``; it reads as nil and empty and ignores writes.
    public internal(set) var isInaccessible: Bool = false

    let schema: EntitySchema
    /// How the object reaches its context's graph (nil once the context is gone).
    let graphHandle: GraphHandle
    /// The object graph of the object's context, or nil once that context is gone.
    var graph: ObjectGraph? { graphHandle.graph }
    /// The attribute values, one slot per attribute of the entity (``EntitySchema/attributeKeys``).
    // Unchecked: read on every attribute access, and objects are confined to their context's
    // isolation; no access to `values` runs code that could reach the same object's values
    // while a change to them is in progress (PackedAttributes calls nothing outside itself).
    @exclusivity(unchecked) var values: PackedAttributes
    var toOne: [String: ObjectID]
    var toMany: [String: [ObjectID]]
    /// The state last read from or saved to the parent (store or parent context).
    ///
    /// An object read and not changed since keeps no copy: its values are the snapshot
    /// (``snapshotIsCurrent``), and ``ObjectGraph/willChange(_:)`` keeps a copy before the first
    /// change. Code that changes values, to-one or to-many destinations without going through
    /// `willChange` sets this first.
    var snapshot: ObjectState? {
        get {
            guard snapshotIsCurrent else { return storedSnapshot }
            return ObjectState(id: objectID, version: currentVersion, attributes: values, toOne: toOne, toMany: toMany)
        }
        set {
            storedSnapshot = newValue
            snapshotIsCurrent = false
        }
    }
    /// The snapshot kept apart from the values, when ``snapshotIsCurrent`` is false.
    private var storedSnapshot: ObjectState?
    /// Whether the values, to-one and to-many destinations are exactly the state last read,
    /// of version ``currentVersion``, so that no snapshot is kept apart.
    private(set) var snapshotIsCurrent: Bool
    /// The version of the state last read, when ``snapshotIsCurrent``.
    private var currentVersion: Int64 = 0
    /// Whether the object's data is in memory; false for a fault.
    // Unchecked: a Bool read on every attribute access and only ever assigned whole, in the
    // context's isolation.
    @exclusivity(unchecked) var isLoaded: Bool
    /// Whether the graph has already dropped the object's registry entry (a batch let go whole).
    var isUnregistered = false
    /// Relationship changes made while the object was a fault, applied once it is loaded.
    var pendingOperations: [(ManagedObject) -> Void] = []

    /// Creates an object; only contexts call this.
    ///
    /// - Parameter seed: What the context passes.
    public required init(_ seed: ObjectSeed) {
        self.objectID = seed.objectID
        self.schema = seed.schema
        self.graphHandle = seed.handle
        self.values = seed.state.attributes
        self.toOne = seed.state.toOne
        self.toMany = seed.state.toMany
        self.currentVersion = seed.state.version
        // A loaded object starts with its values as the state read: they are its snapshot.
        self.snapshotIsCurrent = seed.isLoaded
        self.isLoaded = seed.isLoaded
    }

    /// Creates a plain object loaded with values just read, with no to-one nor to-many
    /// destinations: what ``init(_:)`` does with such a seed, without the seed's copies.
    ///
    /// Only for ``ManagedObject`` itself: subclasses are made through ``init(_:)``, which they
    /// may override.
    init(readID objectID: ObjectID, schema: EntitySchema, handle: GraphHandle, values: PackedAttributes, version: Int64)
    {
        self.objectID = objectID
        self.schema = schema
        self.graphHandle = handle
        self.values = values
        self.toOne = Self.noToOne
        self.toMany = Self.noToMany
        self.currentVersion = version
        self.snapshotIsCurrent = true
        self.isLoaded = true
    }

    /// No to-one destinations, made once: an empty dictionary literal costs a call per use.
    static let noToOne: [String: ObjectID] = [:]
    /// No to-many destinations, made once.
    static let noToMany: [String: [ObjectID]] = [:]

    /// Keeps the snapshot apart from the values before they change (see ``snapshot``).
    @inline(__always)
    func keepSnapshot() {
        if snapshotIsCurrent { snapshot = snapshot }
    }

    deinit {
        if !isUnregistered { graph?.unregister(self) }
    }

    // MARK: - State

    /// The context the object belongs to, or nil once that context is gone.
    public var context: ObjectContext? { graph?.context }

    /// Whether the object's data has not been loaded yet: reading or writing a property loads it.
    public var isFault: Bool { !isLoaded }

    /// Loads the object's data now if it is a fault, reporting what goes wrong.
    ///
    /// Reading a property does the same silently; call this to tell a missing row from a store
    /// that cannot be read.
    ///
    /// ```swift
    /// do {
    ///     try recipe.fireFault()
    /// } catch let error as TernError where error.code == .objectNotFound {
    ///     // deleted elsewhere: recipe.isInaccessible
    /// }
    /// ```
    ///
    /// - Throws: ``TernError/Code/objectNotFound`` when the row no longer exists (the object is
    ///   then inaccessible); ``TernError/Code/unreadableStore`` when the store cannot be read or
    ///   does not support reading without suspending (the object stays a fault).
    public func fireFault() throws(TernError) {
        if !isLoaded {
            guard let graph else {
                throw TernError(
                    .unreadableStore, "\(objectID) is a fault whose context is gone; fetch it again", objectID: objectID
                )
            }
            try graph.loadFault(self)
        }
        if isInaccessible {
            throw TernError(
                .objectNotFound, "\(objectID) was deleted by another context or process; fetch the objects again",
                objectID: objectID)
        }
    }

    /// Whether the object has unsaved changes of its values (not inserted nor deleted).
    public var isUpdated: Bool { !isInserted && !isDeleted && !changedKeys.isEmpty }

    /// Whether the object is inserted, deleted or updated.
    public var hasChanges: Bool { isInserted || isDeleted || !changedKeys.isEmpty || !pendingOperations.isEmpty }

    /// The names of the properties whose values differ from the last saved ones.
    ///
    /// - Complexity: O(*p*) in the number of properties.
    public var changedKeys: Set<String> {
        guard isLoaded, !snapshotIsCurrent else { return [] }
        let current = state
        let names = schema.attributes.keys.map { $0 } + schema.relationships.keys.map { $0 }
        return Set(names.filter { current.value(of: $0) != snapshot?.value(of: $0) })
    }

    /// The last saved value of an attribute.
    ///
    /// - Parameter name: An attribute of the entity.
    /// - Returns: Its value when last read or saved; nil for a new object.
    public func committedValue(forAttribute name: String) -> AttributeValue? {
        _ = attributeDescription(name)
        loadForAccess()
        return snapshot?.attributes[name]
    }

    // MARK: - Attributes

    /// The value of an attribute.
    ///
    /// Reading or writing fires the object's fault. An inaccessible object reads nil and
    /// ignores writes.
    ///
    /// - Parameter name: An attribute of the entity (own or inherited).
    /// - Precondition: The entity has such an attribute, it is not derived, and a new value fits
    ///   its type.
    public subscript(attribute name: String) -> AttributeValue? {
        get {
            guard let position = schema.position(of: name) else {
                preconditionFailure("\(schema.name) has no attribute \(name)")
            }
            if !isLoaded { loadForAccess() }
            return values[position: position]
        }
        set {
            do {
                try setValue(newValue, forAttribute: name)
            } catch let error where error.code == .objectNotFound && isInaccessible {
                return
            } catch {
                preconditionFailure(error.description)
            }
        }
    }

    /// The value of an attribute, firing the fault and reporting what goes wrong.
    ///
    /// - Parameter name: An attribute of the entity (own or inherited).
    /// - Returns: The value, or nil.
    /// - Throws: As ``fireFault()``; ``TernError/Code/validationFailed`` when the entity has no
    ///   such attribute.
    public func value(forAttribute name: String) throws(TernError) -> AttributeValue? {
        guard schema.attributes[name] != nil else {
            throw TernError(
                .validationFailed, "\(schema.name) has no attribute \(name)", objectID: objectID, property: name)
        }
        try fireFault()
        return values[name]
    }

    /// The value of an attribute as a Swift type.
    ///
    /// - Parameter name: An attribute of the entity (own or inherited).
    /// - Returns: The value, or nil when it is nil or of another kind.
    /// - Precondition: As for ``subscript(attribute:)``.
    public subscript<Value: AttributeValueConvertible>(_ name: String) -> Value? {
        get { self[attribute: name].flatMap(Value.init(attributeValue:)) }
        set { self[attribute: name] = newValue?.attributeValue }
    }

    /// Sets an attribute, checking the value's type.
    ///
    /// - Parameters:
    ///   - value: The new value, or nil.
    ///   - name: An attribute of the entity.
    /// - Throws: ``TernError/Code/validationFailed`` when the value does not fit the attribute's
    ///   type, the attribute is derived or does not exist; ``TernError/Code/objectNotFound`` when
    ///   the object is inaccessible (its row was deleted elsewhere).
    public func setValue(_ value: AttributeValue?, forAttribute name: String) throws(TernError) {
        guard let attribute = schema.attributes[name] else {
            throw TernError(
                .validationFailed, "\(schema.name) has no attribute \(name)", objectID: objectID, property: name)
        }
        if attribute.isDerived {
            throw TernError(
                .validationFailed, "\(schema.name).\(name) is derived and cannot be set",
                objectID: objectID, property: name)
        }
        if let value, !value.fits(attribute.type) {
            throw TernError(
                .validationFailed, "the value does not fit \(schema.name).\(name) of type \(attribute.type.xcodeName)",
                objectID: objectID, property: name)
        }
        guard loadForAccess() else {
            // The store cannot be read now: the change waits until the save loads the object.
            graph?.whenLoaded(objectID) { object in
                guard object.values[name] != value else { return }
                object.keepSnapshot()
                object.graph?.willChange(object)
                object.values[name] = value
            }
            return
        }
        if isInaccessible {
            throw TernError(
                .objectNotFound, "\(objectID) was deleted by another context or process; the change is dropped",
                objectID: objectID, property: name)
        }
        guard values[name] != value else { return }
        keepSnapshot()
        graph?.willChange(self)
        values[name] = value
    }

    // MARK: - Non public

    /// The object's current stored state.
    var state: ObjectState {
        let transient = schema.hasTransientRelationships
        return ObjectState(
            id: objectID, version: snapshot?.version ?? 0,
            attributes: schema.transientPositions.isEmpty ? values : values.clearing(schema.transientPositions),
            toOne: transient ? toOne.filter { schema.relationships[$0.key]?.isTransient == false } : toOne,
            toMany: toMany.isEmpty
                ? toMany
                : toMany.filter {
                    !$0.value.isEmpty && (!transient || schema.relationships[$0.key]?.isTransient == false)
                })
    }

    /// Replaces the object's values with a state (keeping transient values).
    func apply(_ state: ObjectState) {
        keepSnapshot()
        // Without transient values to keep, share the state's storage instead of copying it.
        if schema.transientPositions.isEmpty || values.isEmpty {
            values = state.attributes
        } else {
            var merged = state.attributes
            for position in schema.transientPositions { merged[position: position] = values[position: position] }
            values = merged
        }
        toOne = state.toOne
        toMany = state.toMany
    }

    func attributeDescription(_ name: String) -> AttributeDescription {
        guard let attribute = schema.attributes[name] else {
            preconditionFailure("\(schema.name) has no attribute \(name)")
        }
        return attribute
    }

    func relationshipDescription(_ name: String) -> RelationshipDescription {
        guard let relationship = schema.relationships[name] else {
            preconditionFailure("\(schema.name) has no relationship \(name)")
        }
        return relationship
    }

    /// Fires the fault if the object is one; whether its data is in memory now (inaccessible
    /// objects count as loaded, with no values).
    @discardableResult
    func loadForAccess() -> Bool {
        if !isLoaded, let graph { try? graph.loadFault(self) }
        return isLoaded
    }
}

extension ManagedObject: CustomStringConvertible {
    /// The entity and ID, with the object's state; never its values.
    public var description: String {
        let state =
            isFault
            ? "fault"
            : isInaccessible
                ? "inaccessible" : isDeleted ? "deleted" : isInserted ? "inserted" : hasChanges ? "updated" : "saved"
        return "\(schema.name) \(objectID) (\(state))"
    }
}
