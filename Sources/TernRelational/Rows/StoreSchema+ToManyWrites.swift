package import TernCore

extension StoreSchema {
    /// Checks that a relationship's destination row is of the destination entity or one of its
    /// subentities.
    ///
    /// - Throws: `TernError` with code `invalidValue` for a row of another entity, or
    ///   `schemaMismatch` for an entity the schema lacks.
    package func checkReference(_ reference: RowReference, destination: EntityLayout, relationship: String)
        throws(TernError)
    {
        let target = try entity(named: reference.entityName)
        guard destination.hierarchyNumbers.contains(target.number) else {
            throw TernError(
                .invalidValue,
                "Relationship \(SQL.quoted(relationship)) leads to \(SQL.quoted(destination.name)), not to \(SQL.quoted(target.name))."
            )
        }
    }

    /// Writes the to-many relationships of a row as Core Data stores them: the destination
    /// rows' foreign key (and entity and order columns) for a relationship with a to-one
    /// inverse, the difference to the rows of the join table otherwise, so that the inverse
    /// side, saved in the same change set, keeps the order column an ordered side wrote.
    ///
    /// - Parameters:
    ///   - row: The row, with the to-many relationships to write (absent ones are emptied).
    ///   - isNew: Whether the row was just inserted: nothing is cleared or read first.
    ///   - path: The store's file, for errors.
    ///   - connection: The connection, inside the save's transaction.
    /// - Throws: `TernError` with code `invalidValue` for a relationship the entity lacks or a
    ///   destination of another entity, `objectNotFound` for a destination row that does not
    ///   exist; the database's error when a statement fails.
    /// - Complexity: O(*r* + *d*) statements for *r* to-many relationships and *d* destinations.
    package func writeToMany(
        of row: StoreRow, isNew: Bool, path: String?, on connection: some RelationalConnection
    ) throws {
        let layout = try entity(named: row.reference.entityName)
        guard !layout.toManyRelationships.isEmpty || !row.toMany.isEmpty else { return }
        let primaryKey = row.reference.primaryKey
        for name in row.toMany.keys where layout.toMany(named: name) == nil {
            throw TernError(
                .invalidValue, "Entity \(SQL.quoted(layout.name)) has no to-many relationship \(SQL.quoted(name)).")
        }
        for relationship in layout.toManyRelationships {
            let references = row.toMany[relationship.name] ?? []
            if isNew, references.isEmpty { continue }
            let destination = try entity(named: relationship.destination)
            var seen: Set<Int64> = []
            let unique = references.filter { seen.insert($0.primaryKey).inserted }
            for reference in unique {
                try checkReference(reference, destination: destination, relationship: relationship.name)
            }
            switch relationship.storage {
            case .inverseForeignKey(let table, let column, let orderColumn):
                let entityColumn = destination.toOneRelationships.first { $0.column == column }?.entityColumn
                if !isNew {
                    var cleared = [SQL.identifier(column) + " = NULL"]
                    if let entityColumn { cleared.append(SQL.identifier(entityColumn) + " = NULL") }
                    if let orderColumn { cleared.append(SQL.identifier(orderColumn) + " = NULL") }
                    try connection.execute(
                        """
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
                        throw TernError(
                            .objectNotFound,
                            "\(layout.name).\(relationship.name) references a \(reference.entityName) row that does not exist.",
                            path: path)
                    }
                }
            case .joinTable(let table, let source, let target, let orderColumn):
                let existing =
                    isNew
                    ? []
                    : try connection.fetchAll(
                        "SELECT \(.identifier(target)) FROM \(.identifier(table)) WHERE \(.identifier(source)) = \(primaryKey)"
                    ).compactMap { $0.first?.int64 }
                let wanted = Set(unique.map(\.primaryKey))
                for key in existing where !wanted.contains(key) {
                    try connection.execute(
                        """
                        DELETE FROM \(.identifier(table)) WHERE \(.identifier(source)) = \(primaryKey) \
                        AND \(.identifier(target)) = \(key)
                        """)
                }
                let present = Set(existing)
                for (index, reference) in unique.enumerated() {
                    if !present.contains(reference.primaryKey) {
                        // The inverse side may have written the pair already in this change set.
                        try connection.execute(
                            """
                            INSERT INTO \(.identifier(table)) (\(.identifier(source)), \(.identifier(target))) \
                            VALUES (\(primaryKey), \(reference.primaryKey)) ON CONFLICT DO NOTHING
                            """)
                    }
                    if let orderColumn {
                        try connection.execute(
                            """
                            UPDATE \(.identifier(table)) SET \(.identifier(orderColumn)) = \(Int64(index + 1) * 1024) \
                            WHERE \(.identifier(source)) = \(primaryKey) AND \(.identifier(target)) = \(reference.primaryKey)
                            """)
                    }
                }
            }
        }
    }
}
