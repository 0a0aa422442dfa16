package import TernCore
package import TernMigration

/// What a mapping compiled to SQL (#24) reads from its source entity's table, shared by the
/// SQLite and PostgreSQL engines: the columns of its stored attributes, and for each path of
/// to-one relationships its values read through (`owner`, `owner.team`) the destination's table,
/// joined under an alias of its own, with the columns of the destination's attributes. The source
/// table's alias is `s`.
package struct BulkSourceColumns: Sendable {
    /// A to-one relationship's destination table, joined on its `Z_PK`.
    package struct Join: Sendable {
        /// The joined table's alias.
        package let alias: String
        /// The destination's table.
        package let table: String
        /// The column holding the destination's key, qualified with the alias of the table it is
        /// in (`s` or the join before).
        package let foreignKey: SQL
        /// The destination entity.
        package let destination: EntityLayout
        /// The column of each stored attribute of the destination.
        package let attributes: [String: String]
    }

    /// The column of each stored attribute of the source entity.
    package let attributes: [String: String]
    /// The join of each path of to-one relationships the values read through, by the path's
    /// names joined with dots; a path's prefixes come first.
    package let joins: [(path: String, join: Join)]
    /// Whether every relationship the values read through is a stored to-one relationship.
    private let isComplete: Bool

    /// The columns of a source entity and of the destinations its values read through.
    ///
    /// - Parameters:
    ///   - layout: The source entity.
    ///   - schema: The source store's schema.
    ///   - values: The values of a mapping.
    /// - Complexity: O(*n*) in the attributes of the entity and of the destinations read.
    package init(layout: EntityLayout, schema: StoreSchema, values: [BulkMapping.Value]) {
        attributes = Self.columns(of: layout)
        var prefixes: Set<[String]> = []
        for path in values.flatMap(\.relationshipPaths) {
            for end in path.indices { prefixes.insert(Array(path[...end])) }
        }
        var joins: [(path: String, join: Join)] = []
        var complete = true
        // Shorter paths first, so that each join's foreign key is in a table joined before it.
        for path in prefixes.sorted(by: {
            ($0.count, $0.joined(separator: ".")) < ($1.count, $1.joined(separator: "."))
        }) {
            let owner: (alias: String, layout: EntityLayout)? =
                path.count == 1
                ? ("s", layout)
                : joins.first { $0.path == path.dropLast().joined(separator: ".") }.map {
                    ($0.join.alias, $0.join.destination)
                }
            guard let owner, let relationship = owner.layout.toOne(named: path[path.count - 1]),
                let destination = try? schema.entity(named: relationship.destination)
            else {
                complete = false
                continue
            }
            joins.append(
                (
                    path.joined(separator: "."),
                    Join(
                        alias: "j\(joins.count)", table: destination.table,
                        foreignKey: "\(.identifier(owner.alias)).\(.identifier(relationship.column))",
                        destination: destination, attributes: Self.columns(of: destination))
                ))
        }
        self.joins = joins
        isComplete = complete
    }

    /// The `LEFT JOIN`s of the relationships the values read through, after `FROM source AS s`.
    ///
    /// - Parameter schema: The schema the source tables are in.
    /// - Returns: The joins, or nil when a relationship has no join.
    package func joinClause(schema: String) -> SQL? {
        guard isComplete else { return nil }
        var clause: SQL = ""
        for (_, join) in joins {
            let alias = SQL.identifier(join.alias)
            clause.append(
                " LEFT JOIN \(.identifier(schema)).\(.identifier(join.table)) AS \(alias) ON \(alias).\(.identifier("Z_PK")) = "
                    + join.foreignKey)
        }
        return clause
    }

    /// The value of a destination's attribute read through a path of joins, in `read` (which makes
    /// the column's SQL from `alias.column`): NULL when a relationship on the way is empty,
    /// `fallback` when a key names no object of the relationship's destination entity (Swift
    /// decides what that means).
    ///
    /// - Returns: The SQL, or nil when a relationship or the attribute has no column.
    package func related(
        _ path: [String], attribute: String, fallback: SQL, read: (SQL) -> SQL
    ) -> SQL? {
        var steps: [Join] = []
        for end in path.indices {
            let name = path[...end].joined(separator: ".")
            guard let join = joins.first(where: { $0.path == name })?.join else { return nil }
            steps.append(join)
        }
        guard let last = steps.last, let column = last.attributes[attribute] else { return nil }
        var sql = read("\(.identifier(last.alias)).\(.identifier(column))")
        for join in steps.reversed() {
            let alias = SQL.identifier(join.alias)
            let found: SQL =
                "\(alias).\(.identifier("Z_PK")) IS NOT NULL AND "
                + join.destination.rowFilter(includingSubentities: true, alias: join.alias)
            sql =
                "(CASE WHEN " + join.foreignKey + " IS NULL THEN NULL WHEN " + found + " THEN " + sql + " ELSE "
                + fallback + " END)"
        }
        return sql
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

    /// Whether a mapping's filter has an SQL form in a dialect, on a store of a model laid out
    /// as Tern lays out a new one: what `tern plan` forecasts (#24), before any store is read.
    ///
    /// - Parameters:
    ///   - filter: The mapping's filter.
    ///   - entity: The source entity.
    ///   - model: The source model.
    ///   - dialect: The store's dialect.
    /// - Complexity: O(*n*) in the size of the model, to lay out its tables.
    package static func translates(
        _ filter: FetchPredicate, of entity: String, in model: ManagedObjectModel, dialect: any SQLDialect
    ) -> Bool {
        guard let schema = try? StoreSchema(model: model, numbers: StoreSchema.assignedNumbers(for: model)) else {
            return false
        }
        return filterCondition(filter, entity: entity, schema: schema, dialect: dialect, tableSchema: "source") != nil
    }

    /// The fields of a date's text in a format, put together as `YYYY-MM-DD HH:MM:SS` (a field
    /// the format lacks as `00`), which SQLite's date functions and PostgreSQL's `timestamp`
    /// both read; shared by the engines' `parseDate`.
    ///
    /// - Parameters:
    ///   - text: The SQL of the text.
    ///   - fields: Where the format's fields sit in its text.
    package static func dateText(of text: SQL, fields: BulkMapping.DateFields) -> SQL {
        func field(_ position: Int?, _ length: Int) -> SQL {
            guard let position else { return "'00'" }
            return "substr(" + text + ", CAST(\(position) AS integer), CAST(\(length) AS integer))"
        }
        return field(fields.year, 4) + " || '-' || " + field(fields.month, 2) + " || '-' || " + field(fields.day, 2)
            + " || ' ' || " + field(fields.hour, 2) + " || ':' || " + field(fields.minute, 2) + " || ':' || "
            + field(fields.second, 2)
    }

    // MARK: - Non public

    private static func columns(of layout: EntityLayout) -> [String: String] {
        var columns: [String: String] = [:]
        for column in layout.attributes where column.derivation == nil { columns[column.name] = column.column }
        return columns
    }
}
