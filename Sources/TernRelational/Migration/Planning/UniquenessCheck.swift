import TernCore
package import TernMigration

/// The count a migration runs before it creates the unique index of a uniqueness constraint:
/// the values shared by more than one object, and those objects.
///
/// Core Data creates the index and the migration fails on duplicates. Tern counts first and
/// refuses with the entity, the properties and the counts, before anything is written in place,
/// or before a store built beside replaces the old one. The query is plain SQL (any SQL store runs
/// it); rows with an empty value in one of the columns never clash, as in SQLite's and
/// PostgreSQL's unique indexes.
package struct UniquenessCheck: Sendable, Hashable {
    /// The table the index is on.
    package var table: String
    /// The unique index's name.
    package var index: String
    /// The indexed columns.
    package var columns: [String]
    /// The entity whose constraint it is.
    package var entity: String
    /// The constraint's properties.
    package var properties: [String]

    /// The checks of a layout's uniqueness constraints, by index name.
    ///
    /// - Parameter schema: The destination layout.
    /// - Complexity: O(*e* · *i*) in the number of entities and indexes.
    package static func checks(of schema: StoreSchema) -> [String: Self] {
        var checks: [String: Self] = [:]
        for entity in schema.model.entities {
            guard let table = schema.entities[entity.name]?.table, let layout = schema.tables[table] else { continue }
            for properties in entity.uniquenessConstraints {
                let name = "Z_\(entity.name)_UNIQUE_" + properties.joined(separator: "_")
                guard let index = layout.indexes.first(where: { $0.name == name && $0.isUnique }) else { continue }
                checks[name] = Self(
                    table: table, index: name, columns: index.columns.map(\.name), entity: entity.name,
                    properties: properties)
            }
        }
        return checks
    }

    /// The query returning one row: the number of values shared by several objects, and the
    /// number of objects sharing them (NULL when none).
    ///
    /// - Complexity: O(*n* log *n*) in the table's rows.
    package var countQuery: SQL { Self.countQuery(from: .identifier(table), columns: columns) }

    /// ``countQuery`` over any rows: a table, or a subquery with its alias.
    ///
    /// - Parameters:
    ///   - rows: The SQL of the rows (`"ZTABLE"`, or `(SELECT …) AS rows`).
    ///   - columns: The columns of the rows that hold the constraint's values.
    package static func countQuery(from rows: SQL, columns: [String]) -> SQL {
        let columns = columns.map { SQL.identifier($0) }
        let filled = SQL.joined(columns.map { "\($0) IS NOT NULL" as SQL }, separator: " AND ")
        return """
            SELECT COUNT(*), SUM(n) FROM (SELECT COUNT(*) AS n FROM \(rows) WHERE \(filled) \
            GROUP BY \(SQL.joined(columns)) HAVING COUNT(*) > 1) AS duplicates
            """
    }

    /// The refusal for values found shared, or nil when there are none.
    ///
    /// - Parameters:
    ///   - groups: How many values are shared (the first column of ``countQuery``).
    ///   - objects: How many objects share them (its second column).
    ///   - version: The destination version's name.
    package func failure(groups: Int64, objects: Int64, version: String) -> MigrationError? {
        guard groups > 0 else { return nil }
        return MigrationError(
            .constraintViolated,
            "\(entity) has a uniqueness constraint on (\(properties.joined(separator: ", "))) in \(version), but \(objects) "
                + "objects share \(groups) value(s) of it; nothing was written. Remove the duplicates before migrating "
                + "(PersistentContainer.removeDuplicates), or give the step a mapping that makes the values unique",
            entity: entity, property: properties.count == 1 ? properties[0] : nil, version: version)
    }
}
