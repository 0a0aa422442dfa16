extension EntityLayout {
    /// The statements that delete one row of the entity if its version is still the one read
    /// (`Z_OPT`), then its links in the join tables of its many-to-many relationships: plain SQL
    /// that SQLite and PostgreSQL both run, in one transaction.
    ///
    /// - Parameters:
    ///   - primaryKey: The row's `Z_PK`.
    ///   - version: The row's `Z_OPT` when it was read.
    /// - Returns: The `DELETE` of the row first, then one per join table.
    /// - Complexity: O(*r*) in the number of to-many relationships.
    package func deletion(ofRow primaryKey: Int64, version: Int64) -> [SQL] {
        var statements: [SQL] = [
            """
            DELETE FROM \(.identifier(table)) WHERE "Z_PK" = \(primaryKey) AND "Z_OPT" = \(version) \
            AND \(rowFilter())
            """
        ]
        for relationship in toManyRelationships {
            if case .joinTable(let table, let source, _, _) = relationship.storage {
                statements.append("DELETE FROM \(.identifier(table)) WHERE \(.identifier(source)) = \(primaryKey)")
            }
        }
        return statements
    }
}
