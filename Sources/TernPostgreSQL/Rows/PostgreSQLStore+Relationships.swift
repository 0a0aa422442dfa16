import Foundation
import TernCore
import TernRelational

extension PostgreSQLStore {
    // MARK: - Column values and relationships of written rows

    /// The value of each attribute and to-one column of an entity for a row (NULL when absent).
    func columnValues(of row: StoreRow, layout: EntityLayout) throws -> [(column: String, value: DatabaseValue)] {
        for name in row.attributes.keys where layout.attribute(named: name) == nil {
            throw PostgreSQLError(
                .invalidValue, "Entity \(SQL.quoted(layout.name)) has no stored attribute \(SQL.quoted(name)).")
        }
        for name in row.toOne.keys where layout.toOne(named: name) == nil {
            throw PostgreSQLError(
                .invalidValue, "Entity \(SQL.quoted(layout.name)) has no to-one relationship \(SQL.quoted(name)).")
        }
        var values: [(column: String, value: DatabaseValue)] = []
        // The store has no triggers: derived attributes are plain columns, written as given.
        for attribute in layout.attributes {
            var value = DatabaseValue.null
            if let attributeValue = row.attributes[attribute.name] {
                guard let converted = attributeValue.postgreSQLValue(for: attribute.type) else {
                    throw PostgreSQLError(
                        .invalidValue,
                        "\(layout.name).\(attribute.name) is a \(attribute.type.xcodeName) attribute; the value has another "
                            + "type, or is text holding a NUL character, which PostgreSQL cannot store.")
                }
                value = converted
            }
            values.append((attribute.column, value))
        }
        for relationship in layout.toOneRelationships {
            let reference = row.toOne[relationship.name]
            if let reference {
                try schema.checkReference(
                    reference, destination: try schema.entity(named: relationship.destination),
                    relationship: relationship.name)
            }
            values.append((relationship.column, reference.map { .integer($0.primaryKey) } ?? .null))
            if let entityColumn = relationship.entityColumn {
                let number = try reference.map { reference in try schema.entity(named: reference.entityName).number }
                values.append((entityColumn, number.map { .integer(Int64($0)) } ?? .null))
            }
        }
        return values
    }
}
