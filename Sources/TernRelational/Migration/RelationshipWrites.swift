package import TernCore

/// The statements a migration engine runs to set a relationship of a destination object, in
/// SQL that SQLite and PostgreSQL both run (quoted identifiers, every value bound): the to-one
/// column and its entity column with a to-one inverse's, the foreign key (and order) of a
/// one-to-many's objects, or a many-to-many's join rows.
///
/// ```swift
/// for statement in try RelationshipWrites.statements(
///     setting: "pages", inverse: "book", of: book, to: pages, in: schema
/// ) {
///     try destination.execute(statement)
/// }
/// ```
package enum RelationshipWrites {
    /// The statements that set a relationship, in the order to run them.
    ///
    /// - Parameters:
    ///   - relationship: The relationship's name.
    ///   - inverseName: Its inverse's name, if any.
    ///   - row: The destination object.
    ///   - objects: The related destination objects, in order for an ordered relationship.
    ///   - schema: The destination layout.
    /// - Returns: The statements; none for a relationship without storage.
    /// - Throws: ``TernError`` for an entity the layout does not have.
    /// - Complexity: O(*n*) statements for *n* objects.
    package static func statements(
        setting relationship: String, inverse inverseName: String?, of row: RowReference, to objects: [RowReference],
        in schema: StoreSchema
    ) throws(TernError) -> [SQL] {
        let layout = try schema.entity(named: row.entityName)
        if let toOne = layout.toOne(named: relationship) {
            var statements = [try setToOne(toOne, of: row, layout: layout, to: objects.first, in: schema)]
            // A to-one inverse has its own column; a to-many inverse is this same column.
            if let inverseName {
                for object in objects {
                    let objectLayout = try schema.entity(named: object.entityName)
                    if let inverse = objectLayout.toOne(named: inverseName) {
                        statements.append(try setToOne(inverse, of: object, layout: objectLayout, to: row, in: schema))
                    }
                }
            }
            return statements
        }
        guard let toMany = layout.toMany(named: relationship) else { return [] }
        return try setToMany(toMany, of: row, layout: layout, to: objects, in: schema)
    }

    // MARK: - Non public

    private static func setToOne(
        _ column: ToOneColumn, of row: RowReference, layout: EntityLayout, to target: RowReference?,
        in schema: StoreSchema
    ) throws(TernError) -> SQL {
        let key = target.map { DatabaseValue.integer($0.primaryKey) } ?? .null
        var set: [SQL] = [SQL.identifier(column.column) + " = \(key)"]
        if let entityColumn = column.entityColumn {
            var number = DatabaseValue.null
            if let target { number = .integer(Int64(try schema.entity(named: target.entityName).number)) }
            set.append(SQL.identifier(entityColumn) + " = \(number)")
        }
        return "UPDATE \(.identifier(layout.table)) SET \(SQL.joined(set)) WHERE \"Z_PK\" = \(row.primaryKey)"
    }

    private static func setToMany(
        _ mapping: ToManyMapping, of row: RowReference, layout: EntityLayout, to objects: [RowReference],
        in schema: StoreSchema
    ) throws(TernError) -> [SQL] {
        var statements: [SQL] = []
        switch mapping.storage {
        case .inverseForeignKey(let table, let column, let orderColumn):
            let target = try schema.entity(named: mapping.destination)
            let entityColumn = target.toOneRelationships.first { $0.column == column }?.entityColumn
            for (index, object) in objects.enumerated() {
                var set = [SQL.identifier(column) + " = \(row.primaryKey)"]
                if let entityColumn { set.append(SQL.identifier(entityColumn) + " = \(Int64(layout.number))") }
                if let orderColumn { set.append(SQL.identifier(orderColumn) + " = \(Int64(index + 1) * 1024)") }
                statements.append(
                    "UPDATE \(.identifier(table)) SET \(SQL.joined(set)) WHERE \"Z_PK\" = \(object.primaryKey)")
            }
        case .joinTable(let table, let sourceColumn, let targetColumn, let orderColumn):
            // Rows the inverse side wrote keep its order column: only this side's rows that are
            // gone are deleted, the others are inserted or get this side's position.
            let (source, target) = (SQL.identifier(sourceColumn), SQL.identifier(targetColumn))
            var stale: SQL = "DELETE FROM \(.identifier(table)) WHERE \(source) = \(row.primaryKey)"
            if !objects.isEmpty {
                stale = stale + " AND \(target) NOT IN (\(SQL.joined(objects.map { "\($0.primaryKey)" as SQL })))"
            }
            statements.append(stale)
            for (index, object) in objects.enumerated() {
                if let orderColumn {
                    let order = SQL.identifier(orderColumn)
                    statements.append(
                        """
                        INSERT INTO \(.identifier(table)) (\(source), \(target), \(order)) \
                        VALUES (\(row.primaryKey), \(object.primaryKey), \(Int64(index + 1) * 1024)) \
                        ON CONFLICT (\(source), \(target)) DO UPDATE SET \(order) = excluded.\(order)
                        """)
                } else {
                    statements.append(
                        """
                        INSERT INTO \(.identifier(table)) (\(source), \(target)) VALUES (\(row.primaryKey), \(object.primaryKey)) \
                        ON CONFLICT DO NOTHING
                        """)
                }
            }
        }
        return statements
    }
}
