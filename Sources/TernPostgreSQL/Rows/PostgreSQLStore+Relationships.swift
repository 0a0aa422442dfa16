import Foundation
import TernCore
import TernSQLite
import TernRelational

extension PostgreSQLStore {
    // MARK: - Column values and relationships of written rows

    /// The value of each attribute and to-one column of an entity for a row (NULL when absent).
    func columnValues(of row: StoreRow, layout: EntityLayout) throws -> [(column: String, value: DatabaseValue)] {
        for name in row.attributes.keys where layout.attribute(named: name) == nil {
            throw PostgreSQLError(.invalidValue, "Entity \(SQL.quoted(layout.name)) has no stored attribute \(SQL.quoted(name)).")
        }
        for name in row.toOne.keys where layout.toOne(named: name) == nil {
            throw PostgreSQLError(.invalidValue, "Entity \(SQL.quoted(layout.name)) has no to-one relationship \(SQL.quoted(name)).")
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
                try checkReference(reference, destination: try schema.entity(named: relationship.destination), relationship: relationship.name)
            }
            values.append((relationship.column, reference.map { .integer($0.primaryKey) } ?? .null))
            if let entityColumn = relationship.entityColumn {
                let number = try reference.map { reference in try schema.entity(named: reference.entityName).number }
                values.append((entityColumn, number.map { .integer(Int64($0)) } ?? .null))
            }
        }
        return values
    }

    /// Throws unless a reference names the destination entity or one of its subentities.
    func checkReference(_ reference: RowReference, destination: EntityLayout, relationship: String) throws {
        let target = try schema.entity(named: reference.entityName)
        guard destination.hierarchyNumbers.contains(target.number) else {
            throw PostgreSQLError(
                .invalidValue,
                "Relationship \(SQL.quoted(relationship)) leads to \(SQL.quoted(destination.name)), not to \(SQL.quoted(target.name)).")
        }
    }

    /// Replaces the to-many relationships of a row. A new row has no destinations yet, so nothing
    /// is cleared or read first.
    func writeToMany(_ row: StoreRow, isNew: Bool) throws {
        let layout = try schema.entity(named: row.reference.entityName)
        let primaryKey = row.reference.primaryKey
        for name in row.toMany.keys where layout.toMany(named: name) == nil {
            throw PostgreSQLError(.invalidValue, "Entity \(SQL.quoted(layout.name)) has no to-many relationship \(SQL.quoted(name)).")
        }
        for relationship in layout.toManyRelationships {
            let references = row.toMany[relationship.name] ?? []
            if isNew, references.isEmpty { continue }
            let destination = try schema.entity(named: relationship.destination)
            var seen: Set<Int64> = []
            let unique = references.filter { seen.insert($0.primaryKey).inserted }
            for reference in unique { try checkReference(reference, destination: destination, relationship: relationship.name) }
            switch relationship.storage {
            case .inverseForeignKey(let table, let column, let orderColumn):
                let entityColumn = destination.toOneRelationships.first { $0.column == column }?.entityColumn
                if !isNew {
                    var cleared = [SQL.identifier(column) + " = NULL"]
                    if let entityColumn { cleared.append(SQL.identifier(entityColumn) + " = NULL") }
                    if let orderColumn { cleared.append(SQL.identifier(orderColumn) + " = NULL") }
                    try connection.execute("""
                        UPDATE \(.identifier(table)) SET \(SQL.joined(cleared)) WHERE \(.identifier(column)) = \(primaryKey) \
                        AND \(destination.rowFilter())
                        """)
                }
                for (index, reference) in unique.enumerated() {
                    var set = [SQL.identifier(column) + " = \(primaryKey)"]
                    if let entityColumn { set.append(SQL.identifier(entityColumn) + " = \(Int64(layout.number))") }
                    if let orderColumn { set.append(SQL.identifier(orderColumn) + " = \(Int64(index + 1) * 1024)") }
                    try connection.execute(
                        "UPDATE \(.identifier(table)) SET \(SQL.joined(set)) WHERE \"Z_PK\" = \(reference.primaryKey)")
                    if connection.changedRowCount == 0 {
                        throw PostgreSQLError(
                            .rowNotFound,
                            "\(layout.name).\(relationship.name) references a \(reference.entityName) row that does not exist.")
                    }
                }
            case .joinTable(let table, let source, let target, let orderColumn):
                // Only the difference is written, so that the inverse side, saved in the same
                // change set, keeps the order column an ordered side wrote.
                let existing = isNew ? [] : try connection.fetchAll(
                    "SELECT \(.identifier(target)) FROM \(.identifier(table)) WHERE \(.identifier(source)) = \(primaryKey)"
                ).compactMap { $0.first?.int64 }
                let wanted = Set(unique.map(\.primaryKey))
                for key in existing where !wanted.contains(key) {
                    try connection.execute("""
                        DELETE FROM \(.identifier(table)) WHERE \(.identifier(source)) = \(primaryKey) \
                        AND \(.identifier(target)) = \(key)
                        """)
                }
                let present = Set(existing)
                for (index, reference) in unique.enumerated() {
                    let order: Int64? = orderColumn == nil ? nil : Int64(index + 1) * 1024
                    if !present.contains(reference.primaryKey) {
                        // The inverse side may have written the pair already in this change set.
                        try connection.execute("""
                            INSERT INTO \(.identifier(table)) (\(.identifier(source)), \(.identifier(target))) \
                            VALUES (\(primaryKey), \(reference.primaryKey)) ON CONFLICT DO NOTHING
                            """)
                    }
                    if let orderColumn, let order {
                        try connection.execute("""
                            UPDATE \(.identifier(table)) SET \(.identifier(orderColumn)) = \(order) \
                            WHERE \(.identifier(source)) = \(primaryKey) AND \(.identifier(target)) = \(reference.primaryKey)
                            """)
                    }
                }
            }
        }
    }
}
