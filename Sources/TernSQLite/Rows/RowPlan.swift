import TernCore

/// How to read the rows of one concrete entity from a `SELECT`: the position and type of each
/// selected column, worked out once per entity instead of once per row.
///
/// Made by ``SQLiteStore/rowPlan(number:)`` for every column of the root table (cached), or by
/// ``init(layout:keys:positions:relationships:)`` for a projection. A class, so that handing the plan
/// to each row costs one reference count, not one per string and array inside.
final class RowPlan: Sendable {
    /// An attribute read from a column.
    struct Attribute: Sendable {
        /// The attribute's name, the key of the row's value.
        let name: String
        /// The attribute's slot in the packed values (its position in ``RowPlan/keys``).
        let slot: Int
        /// The column's position in the selection.
        let position: Int
        /// The attribute's type, which reads the stored value.
        let type: AttributeType
        /// Whether the column may hold a reference to an external file.
        let allowsExternalStorage: Bool
    }

    /// A to-one relationship read from a foreign-key column.
    struct ToOne: Sendable {
        /// The relationship's name.
        let name: String
        /// The position of the destination's `Z_PK` column.
        let position: Int
        /// The position of the destination's `Z_ENT` column, when the destination has subentities.
        let entityPosition: Int?
        /// The destination entity, when no entity column says otherwise.
        let destination: String
    }

    /// The concrete entity.
    let layout: EntityLayout
    /// The entity's attribute names, in the order of packed values: every attribute of the
    /// model's entity, transient ones included, sorted by name.
    let keys: AttributeKeys
    /// The selected attributes.
    let attributes: [Attribute]
    /// The selected to-one relationships.
    let toOne: [ToOne]
    /// The to-many relationships, read with one query each.
    let toMany: [ToManyMapping]

    /// Works out the plan of a selection.
    ///
    /// - Parameters:
    ///   - layout: The concrete entity.
    ///   - keys: The entity's attribute names in packed order.
    ///   - positions: The position of each selected column, by column name.
    ///   - relationships: Whether relationships are read (false for attribute projections).
    init(layout: EntityLayout, keys: AttributeKeys, positions: [String: Int], relationships: Bool = true) {
        self.layout = layout
        self.keys = keys
        self.attributes = layout.attributes.compactMap { attribute in
            guard let position = positions[attribute.column], let slot = keys.position(of: attribute.name) else { return nil }
            return Attribute(
                name: attribute.name, slot: slot, position: position, type: attribute.type,
                allowsExternalStorage: attribute.allowsExternalStorage)
        }
        self.toOne = !relationships ? [] : layout.toOneRelationships.compactMap { relationship in
            positions[relationship.column].map {
                ToOne(
                    name: relationship.name, position: $0, entityPosition: relationship.entityColumn.flatMap { positions[$0] },
                    destination: relationship.destination)
            }
        }
        self.toMany = relationships ? layout.toManyRelationships : []
    }
}

/// The values of one selected row: a statement's current row, or values already read.
protocol ColumnValues {
    /// The value of the column at a position.
    func value(at position: Int) -> DatabaseValue
    /// The integer value of the column at a position, or nil when it is not an integer.
    func integer(at position: Int) -> Int64?
}

extension Array: ColumnValues where Element == DatabaseValue {
    func value(at position: Int) -> DatabaseValue { self[position] }
    func integer(at position: Int) -> Int64? { self[position].int64 }
}
