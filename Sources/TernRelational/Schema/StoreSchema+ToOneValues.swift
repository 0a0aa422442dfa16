package import TernCore

extension StoreSchema {
    /// The column values of a row's to-one relationships, in the layout's order: each
    /// relationship's destination key (NULL when it is empty), then the destination's entity
    /// number where the relationship has an entity column.
    ///
    /// - Parameters:
    ///   - row: The row to write.
    ///   - layout: The row's entity.
    ///   - body: Called with each column and its value.
    /// - Throws: `TernError` with code `invalidValue` for a destination of an entity the
    ///   relationship cannot hold, or `schemaMismatch` for an entity the schema lacks.
    package func forEachToOneValue(
        of row: StoreRow, layout: EntityLayout, _ body: (_ column: String, _ value: DatabaseValue) -> Void
    ) throws(TernError) {
        for relationship in layout.toOneRelationships {
            let reference = row.toOne[relationship.name]
            if let reference {
                try checkReference(
                    reference, destination: try entity(named: relationship.destination), relationship: relationship.name
                )
            }
            body(relationship.column, reference.map { .integer($0.primaryKey) } ?? .null)
            if let entityColumn = relationship.entityColumn {
                let number = try reference.map { reference throws(TernError) in
                    try entity(named: reference.entityName).number
                }
                body(entityColumn, number.map { .integer(Int64($0)) } ?? .null)
            }
        }
    }
}
