package import TernCore
package import TernMigration

/// What a mapping compiled to SQL (#24) reads from its source entity's table, shared by the
/// SQLite and PostgreSQL engines: the columns of its stored attributes, and for each to-one
/// relationship the destination's table, joined under an alias of its own, with the columns of
/// the destination's attributes. The source table's alias is `s`.
package struct BulkSourceColumns: Sendable {
    /// A to-one relationship's destination table, joined on its `Z_PK`.
    package struct Join: Sendable {
        /// The joined table's alias.
        package let alias: String
        /// The destination's table.
        package let table: String
        /// The source column holding the destination's key.
        package let foreignKey: String
        /// The destination entity.
        package let destination: EntityLayout
        /// The column of each stored attribute of the destination.
        package let attributes: [String: String]
    }

    /// The column of each stored attribute of the source entity.
    package let attributes: [String: String]
    /// The join of each to-one relationship, by relationship name.
    package let joins: [String: Join]

    /// The columns of a source entity and of its to-one relationships' destinations.
    ///
    /// - Parameters:
    ///   - layout: The source entity.
    ///   - schema: The source store's schema.
    /// - Complexity: O(*n*) in the attributes of the entity and of its destinations.
    package init(layout: EntityLayout, schema: StoreSchema) {
        attributes = Self.columns(of: layout)
        var joins: [String: Join] = [:]
        for (index, relationship) in layout.toOneRelationships.enumerated() {
            guard let destination = try? schema.entity(named: relationship.destination) else { continue }
            joins[relationship.name] = Join(
                alias: "j\(index)", table: destination.table, foreignKey: relationship.column,
                destination: destination, attributes: Self.columns(of: destination))
        }
        self.joins = joins
    }

    /// The `LEFT JOIN`s of the relationships some values read, after `FROM source AS s`.
    ///
    /// - Parameters:
    ///   - values: The values of a mapping.
    ///   - schema: The schema the source tables are in.
    /// - Returns: The joins, or nil when a relationship has no join.
    package func joinClause(for values: [BulkMapping.Value], schema: String) -> SQL? {
        var clause: SQL = ""
        for name in Set(values.flatMap(\.relationships)).sorted() {
            guard let join = joins[name] else { return nil }
            let alias = SQL.identifier(join.alias)
            clause.append(
                " LEFT JOIN \(.identifier(schema)).\(.identifier(join.table)) AS \(alias) ON \(alias).\(.identifier("Z_PK")) = s.\(.identifier(join.foreignKey))"
            )
        }
        return clause
    }

    /// The value of a destination's attribute read through a join, in `read` (which makes the
    /// column's SQL from `alias.column`): NULL when the relationship is empty, `fallback` when
    /// its key names no object of the destination entity (Swift decides what that means).
    ///
    /// - Returns: The SQL, or nil when the relationship or attribute has no column.
    package func related(
        _ relationship: String, attribute: String, fallback: SQL, read: (SQL) -> SQL
    ) -> SQL? {
        guard let join = joins[relationship], let column = join.attributes[attribute] else { return nil }
        let alias = SQL.identifier(join.alias)
        let key: SQL = "s.\(.identifier(join.foreignKey))"
        let found: SQL =
            "\(alias).\(.identifier("Z_PK")) IS NOT NULL AND "
            + join.destination.rowFilter(includingSubentities: true, alias: join.alias)
        return "(CASE WHEN " + key + " IS NULL THEN NULL WHEN " + found + " THEN "
            + read("\(alias).\(.identifier(column))")
            + " ELSE " + fallback + " END)"
    }

    /// The condition that the source row `s` passes a mapping's filter, translated as the store
    /// translates fetch predicates: `EXISTS` over the row's key, so that the filter's own joins
    /// stay inside it.
    ///
    /// - Parameters:
    ///   - filter: The filter.
    ///   - entity: The source entity.
    ///   - schema: The source store's schema.
    ///   - dialect: The store's dialect.
    ///   - tableSchema: The schema the source tables are in.
    /// - Returns: The condition, or nil when the filter cannot be expressed exactly in SQL.
    package static func filterCondition(
        _ filter: FetchPredicate, entity: String, schema: StoreSchema, dialect: any SQLDialect, tableSchema: String
    ) -> SQL? {
        var request = StoreFetchRequest(entityName: entity)
        request.predicate = filter
        request.includesSubentities = false
        guard let query = FetchQuery(request, schema: schema, dialect: dialect, tableSchema: tableSchema) else {
            return nil
        }
        return "EXISTS (SELECT 1 FROM " + query.from + " WHERE " + dialect.primaryKey(of: "t0") + " = s."
            + .identifier("Z_PK") + " AND " + query.condition + ")"
    }

    // MARK: - Non public

    private static func columns(of layout: EntityLayout) -> [String: String] {
        var columns: [String: String] = [:]
        for column in layout.attributes where column.derivation == nil { columns[column.name] = column.column }
        return columns
    }
}
