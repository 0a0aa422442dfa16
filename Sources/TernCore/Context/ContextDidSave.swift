/// What one save changed: Core Data's `NSManagedObjectContextDidSave` notification as a value.
///
/// ```swift
/// for await changes in context.changes() {
///     print(changes.inserted.count, "new objects")
/// }
/// ```
public struct ContextDidSave: Hashable, Sendable {
    /// The IDs of the inserted objects (permanent once saved to a store).
    public var inserted: Set<ObjectID>
    /// The IDs of the updated objects.
    public var updated: Set<ObjectID>
    /// The IDs of the deleted objects.
    public var deleted: Set<ObjectID>
    /// The names of the properties that changed, for each updated object.
    public var changedKeys: [ObjectID: Set<String>]

    /// Creates a change set.
    ///
    /// - Parameters:
    ///   - inserted: Inserted IDs.
    ///   - updated: Updated IDs.
    ///   - deleted: Deleted IDs.
    ///   - changedKeys: Changed properties of updated objects.
    public init(
        inserted: Set<ObjectID> = [], updated: Set<ObjectID> = [], deleted: Set<ObjectID> = [],
        changedKeys: [ObjectID: Set<String>] = [:]
    ) {
        self.inserted = inserted
        self.updated = updated
        self.deleted = deleted
        self.changedKeys = changedKeys
    }

    /// Whether the save changed nothing.
    public var isEmpty: Bool { inserted.isEmpty && updated.isEmpty && deleted.isEmpty }
}
