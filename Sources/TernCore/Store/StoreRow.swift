/// The identity of a row in a store: its concrete entity and primary key (`Z_ENT`, `Z_PK`).
///
/// Primary keys are unique within an inheritance root, so a reference names one row of a store.
///
/// ```swift
/// let reference = RowReference(entityName: "Recipe", primaryKey: 3)
/// ```
public struct RowReference: Hashable, Sendable, Comparable, CustomStringConvertible {
    /// The row's concrete entity.
    public var entityName: String
    /// The row's primary key.
    public var primaryKey: Int64

    /// Creates a row reference.
    ///
    /// - Parameters:
    ///   - entityName: The row's concrete entity.
    ///   - primaryKey: Its primary key.
    public init(entityName: String, primaryKey: Int64) {
        self.entityName = entityName
        self.primaryKey = primaryKey
    }

    /// Orders references by primary key, then by entity name.
    public static func < (lhs: Self, rhs: Self) -> Bool {
        (lhs.primaryKey, lhs.entityName) < (rhs.primaryKey, rhs.entityName)
    }

    /// `Entity/p<key>`.
    public var description: String { "\(entityName)/p\(primaryKey)" }
}

/// One object as a store keeps it: its attribute values and the rows its relationships point to.
///
/// Stores exchange rows with contexts; the context turns them into objects. Transient properties
/// never appear in a row.
///
/// ```swift
/// var row = StoreRow(reference: RowReference(entityName: "Recipe", primaryKey: 1))
/// row.attributes["title"] = .string("Soup")
/// row.toMany["ingredients"] = [RowReference(entityName: "Ingredient", primaryKey: 4)]
/// ```
public struct StoreRow: Hashable, Sendable {
    /// The row's identity.
    public var reference: RowReference
    /// The optimistic-locking version (`Z_OPT`): 1 once inserted, one more on each update.
    ///
    /// In a ``StoreChangeSet``'s updates, the version the context read the row at.
    public var version: Int64
    /// The non-nil attribute values, by attribute name; an absent key is nil.
    public var attributes: [String: AttributeValue]
    /// The destination of each non-empty to-one relationship, by relationship name.
    public var toOne: [String: RowReference]
    /// The destinations of each to-many relationship, by relationship name: in order for an
    /// ordered relationship, in any order otherwise. An absent key is an empty relationship.
    public var toMany: [String: [RowReference]]

    /// Creates a row.
    ///
    /// - Parameters:
    ///   - reference: The row's identity.
    ///   - version: Its version.
    ///   - attributes: Its non-nil attribute values.
    ///   - toOne: Its to-one destinations.
    ///   - toMany: Its to-many destinations.
    public init(
        reference: RowReference, version: Int64 = 0, attributes: [String: AttributeValue] = [:],
        toOne: [String: RowReference] = [:], toMany: [String: [RowReference]] = [:]
    ) {
        self.reference = reference
        self.version = version
        self.attributes = attributes
        self.toOne = toOne
        self.toMany = toMany
    }
}

/// What a save writes to one store, applied as one transaction.
///
/// ```swift
/// var changes = StoreChangeSet()
/// changes.inserted.append(newRow)
/// changes.updated.append(editedRow)            // editedRow.version: the version it was read at
/// changes.deleted[oldRow.reference] = oldRow.version
/// let result = try await store.save(changes)
/// ```
public struct StoreChangeSet: Hashable, Sendable {
    /// New rows. Their primary keys come from ``PersistentStore/newPrimaryKeys(forEntity:count:)``.
    public var inserted: [StoreRow]
    /// Whole new states of existing rows, each carrying the version it was read at.
    public var updated: [StoreRow]
    /// Rows to delete, with the version each was read at.
    public var deleted: [RowReference: Int64]
    /// Who saved: the context's ``ObjectContext/transactionAuthor``, recorded in the history.
    public var author: String?
    /// The saving context's ``ObjectContext/name``, recorded in the history.
    public var contextName: String?

    /// Creates a change set.
    ///
    /// - Parameters:
    ///   - inserted: New rows.
    ///   - updated: Changed rows with the versions they were read at.
    ///   - deleted: Deleted rows with the versions they were read at.
    ///   - author: Who saved, for the history.
    ///   - contextName: The saving context's name, for the history.
    public init(
        inserted: [StoreRow] = [], updated: [StoreRow] = [], deleted: [RowReference: Int64] = [:],
        author: String? = nil, contextName: String? = nil
    ) {
        self.inserted = inserted
        self.updated = updated
        self.deleted = deleted
        self.author = author
        self.contextName = contextName
    }

    /// Whether the change set changes nothing.
    public var isEmpty: Bool { inserted.isEmpty && updated.isEmpty && deleted.isEmpty }
}

/// What a store reports after a save.
public struct StoreSaveResult: Hashable, Sendable {
    /// The version each inserted and updated row has now.
    public var newVersions: [RowReference: Int64]

    /// Creates a save result.
    ///
    /// - Parameter newVersions: The version of each inserted and updated row.
    public init(newVersions: [RowReference: Int64] = [:]) {
        self.newVersions = newVersions
    }
}
