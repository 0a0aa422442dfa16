package import TernCore

/// How to read the rows of one concrete entity from a `SELECT`: the position and type of each
/// selected column, worked out once per entity instead of once per row.
///
/// Made by ``SQLiteStore/rowPlan(number:)`` (and the PostgreSQL store's) for every column of the root table (cached), or by
/// ``init(layout:keys:positions:relationships:)`` for a projection. A class, so that handing the plan
/// to each row costs one reference count, not one per string and array inside.
package final class RowPlan: Sendable {
    /// An attribute read from a column.
    package struct Attribute: Sendable {
        /// The attribute's name, the key of the row's value.
        package let name: String
        /// The attribute's slot in the packed values (its position in ``RowPlan/keys``).
        package let slot: Int
        /// The column's position in the selection.
        package let position: Int
        /// The attribute's type, which reads the stored value.
        package let type: AttributeType
        /// Whether the column may hold a reference to an external file.
        package let allowsExternalStorage: Bool
    }

    /// A to-one relationship read from a foreign-key column.
    package struct ToOne: Sendable {
        /// The relationship's name.
        package let name: String
        /// The position of the destination's `Z_PK` column.
        package let position: Int
        /// The position of the destination's `Z_ENT` column, when the destination has subentities.
        package let entityPosition: Int?
        /// The destination entity, when no entity column says otherwise.
        package let destination: String
    }

    /// The concrete entity.
    package let layout: EntityLayout
    /// The entity's attribute names, in the order of packed values: every attribute of the
    /// model's entity, transient ones included, sorted by name.
    package let keys: AttributeKeys
    /// The selected attributes.
    package let attributes: [Attribute]
    /// The selected attributes' columns in the order of their slots, for filling packed values
    /// in order.
    package let columns: [Column]

    /// Where a selected attribute's value is read from and where it goes: what decoding a row
    /// touches, without a reference-counted field.
    package struct Column: Sendable {
        /// The attribute's index in ``RowPlan/attributes``.
        package let attribute: Int
        /// The attribute's slot in the packed values.
        package let slot: Int
        /// The column's position in the selection.
        package let position: Int
        /// The attribute's type, which reads the stored value.
        package let type: AttributeType
        /// Whether the column may hold a reference to an external file.
        package let allowsExternalStorage: Bool
    }
    /// The selected to-one relationships.
    package let toOne: [ToOne]
    /// The to-many relationships, read with one query each.
    package let toMany: [ToManyMapping]

    /// Works out the plan of a selection.
    ///
    /// - Parameters:
    ///   - layout: The concrete entity.
    ///   - keys: The entity's attribute names in packed order.
    ///   - positions: The position of each selected column, by column name.
    ///   - relationships: Whether relationships are read (false for attribute projections).
    package init(layout: EntityLayout, keys: AttributeKeys, positions: [String: Int], relationships: Bool = true) {
        self.layout = layout
        self.keys = keys
        self.attributes = layout.attributes.compactMap { attribute in
            guard let position = positions[attribute.column], let slot = keys.position(of: attribute.name) else {
                return nil
            }
            return Attribute(
                name: attribute.name, slot: slot, position: position, type: attribute.type,
                allowsExternalStorage: attribute.allowsExternalStorage)
        }
        self.columns = attributes.enumerated().map { index, attribute in
            Column(
                attribute: index, slot: attribute.slot, position: attribute.position, type: attribute.type,
                allowsExternalStorage: attribute.allowsExternalStorage)
        }.sorted { $0.slot < $1.slot }
        self.toOne =
            !relationships
            ? []
            : layout.toOneRelationships.compactMap { relationship in
                positions[relationship.column].map {
                    ToOne(
                        name: relationship.name, position: $0,
                        entityPosition: relationship.entityColumn.flatMap { positions[$0] },
                        destination: relationship.destination)
                }
            }
        self.toMany = relationships ? layout.toManyRelationships : []
    }
}

/// The values of one selected row: a statement's current row, or values already read.
package protocol ColumnValues {
    /// The value of the column at a position.
    func value(at position: Int) -> DatabaseValue
    /// The integer value of the column at a position, or nil when it is not an integer.
    func integer(at position: Int) -> Int64?
    /// The value of the column at a position read straight as an attribute of a type, for the
    /// common pairs of column and attribute type (NULL, integers, reals, dates, text); nil when
    /// the general path (``value(at:)`` then `AttributeValue(databaseValue:type:)`) must read it.
    func commonAttributeValue(at position: Int, type: AttributeType) -> CommonColumnValue?
}

/// A column read by ``ColumnValues/commonAttributeValue(at:type:)``.
package enum CommonColumnValue {
    /// The column is NULL.
    case null
    /// The column's value.
    case value(AttributeValue)
}

extension ColumnValues {
    package func commonAttributeValue(at position: Int, type: AttributeType) -> CommonColumnValue? { nil }
}

extension Array: ColumnValues where Element == DatabaseValue {
    package func value(at position: Int) -> DatabaseValue { self[position] }
    package func integer(at position: Int) -> Int64? { self[position].int64 }
}
