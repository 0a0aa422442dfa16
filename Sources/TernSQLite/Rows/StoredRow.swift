package import TernCore

/// A reference to a stored object: its entity and primary key (`Z_PK`).
package struct ObjectReference: Sendable, Hashable, Comparable {
    /// The object's entity (the exact subentity for rows of an inheritance hierarchy).
    package var entity: String
    /// The object's primary key in its root table.
    package var primaryKey: Int64

    /// Creates a reference.
    package init(entity: String, primaryKey: Int64) {
        self.entity = entity
        self.primaryKey = primaryKey
    }

    package static func < (lhs: Self, rhs: Self) -> Bool {
        (lhs.entity, lhs.primaryKey) < (rhs.entity, rhs.primaryKey)
    }
}

/// One object's row as the store keeps it: values, references and the optimistic-locking version.
///
/// Values are nil-free: a missing key is a nil attribute or an empty to-one. When writing,
/// ``toMany`` holds only the relationships to replace; when reading, every stored to-many
/// relationship is present (ordered ones in their order, others sorted by key).
package struct StoredRow: Sendable, Hashable {
    /// The object's entity.
    package var entity: String
    /// The primary key (`Z_PK`); nil on insert to have one allocated.
    package var primaryKey: Int64?
    /// The optimistic-locking version (`Z_OPT`): 1 after insert, +1 per update.
    package var version: Int64
    /// Attribute values by attribute name.
    package var attributes: [String: AttributeValue]
    /// To-one references by relationship name.
    package var toOne: [String: ObjectReference]
    /// To-many references by relationship name.
    package var toMany: [String: [ObjectReference]]

    /// Creates a row.
    package init(
        entity: String, primaryKey: Int64? = nil, version: Int64 = 0, attributes: [String: AttributeValue] = [:],
        toOne: [String: ObjectReference] = [:], toMany: [String: [ObjectReference]] = [:]
    ) {
        self.entity = entity
        self.primaryKey = primaryKey
        self.version = version
        self.attributes = attributes
        self.toOne = toOne
        self.toMany = toMany
    }

    /// The row's reference, once it has a primary key.
    package var reference: ObjectReference? {
        primaryKey.map { ObjectReference(entity: entity, primaryKey: $0) }
    }
}

/// Inserts, updates and deletes saved together in one transaction.
package struct RowChanges: Sendable {
    /// Rows to insert; rows without a primary key get one allocated.
    package var inserted: [StoredRow]
    /// Rows to update: each needs its primary key and the version it was read at.
    package var updated: [StoredRow]
    /// Rows to delete: each needs its primary key and the version it was read at.
    package var deleted: [StoredRow]

    /// Creates a change set.
    package init(inserted: [StoredRow] = [], updated: [StoredRow] = [], deleted: [StoredRow] = []) {
        self.inserted = inserted
        self.updated = updated
        self.deleted = deleted
    }
}
