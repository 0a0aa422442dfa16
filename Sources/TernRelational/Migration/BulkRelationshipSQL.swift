package import TernCore
package import TernMigration

/// The statements that run stage 2 of a ``TernMigration/BulkRelationships`` (#24), in SQL that
/// SQLite and PostgreSQL both run: each relationship's pairs of destination objects, read from
/// the source's storage of the relationship and looked up in `TERN_ASSOCIATION`, then written
/// as ``RelationshipWrites`` writes them one object at a time.
///
/// - A to-one: one `UPDATE … FROM` of the mapping's objects, its column and entity column
///   (NULL where the source has no object, or it has no destination).
/// - A to-many kept as the related objects' foreign key: the pairs, numbered in the source's
///   order, in a temporary table, then one `UPDATE … FROM` of those objects.
/// - A to-many kept in a join table: the pairs in a temporary table, the mapping's rows of the
///   join table that are not pairs deleted, the pairs inserted (or their order updated).
///
/// A related source object whose entity is not one the source relationship can hold calls the
/// engine's fallback, which fails the statements so that the mapping runs in Swift.
///
/// ```swift
/// let writer = BulkRelationshipSQL(
///     source: sourceSchema, sourceTables: "tern_source", destination: schema, fallback: "tern_bulk_fallback()")
/// for statement in try writer.statements(bulk) ?? [] { try connection.execute(statement) }
/// ```
package struct BulkRelationshipSQL {
    /// The source's layout.
    package var source: StoreSchema
    /// The schema the source tables are in.
    package var sourceTables: String
    /// The destination's layout.
    package var destination: StoreSchema
    /// The SQL of a text value that fails the statement (the engine's fallback function).
    package var fallback: SQL

    /// Creates a writer.
    ///
    /// - Parameters:
    ///   - source: The source's layout.
    ///   - sourceTables: The schema the source tables are in (attached on SQLite).
    ///   - destination: The destination's layout.
    ///   - fallback: The SQL of a text value that fails the statement.
    package init(source: StoreSchema, sourceTables: String, destination: StoreSchema, fallback: SQL) {
        self.source = source
        self.sourceTables = sourceTables
        self.destination = destination
        self.fallback = fallback
    }

    /// The name of the temporary table of a join table's pairs.
    package static let pairTable = "tern_pairs"

    /// The statements of a mapping's stage 2, in the order to run them.
    ///
    /// - Parameter bulk: The mapping's SQL form.
    /// - Returns: The statements; nil when a relationship's storage has none (a to-many read from
    ///   a join table into a foreign key, which several owners could claim).
    /// - Throws: ``TernError`` for an entity the layouts do not have.
    /// - Complexity: O(*r*) statements for *r* relationships.
    package func statements(_ bulk: BulkRelationships) throws(TernError) -> [SQL]? {
        let owner = try destination.entity(named: bulk.destinationEntity)
        let sourceOwner = try source.entity(named: bulk.sourceEntity)
        var statements: [SQL] = []
        for relationship in bulk.relationships {
            guard let related = try self.related(relationship, of: sourceOwner) else { return nil }
            if let toOne = owner.toOne(named: relationship.name) {
                statements.append(try setToOne(toOne, of: owner, from: related, relationship, bulk: bulk))
            } else if let toMany = owner.toMany(named: relationship.name) {
                guard
                    let written = try setToMany(toMany, of: owner, from: related, relationship, bulk: bulk)
                else { return nil }
                statements += written
            } else {
                return nil
            }
        }
        return statements
    }

    // MARK: - Non public

    /// How a source relationship's objects are read: the joins from the owner `s` to rows `t`
    /// (and `j`), each object's key and entity name, and the order Swift reads them in.
    private struct Related {
        var joins: SQL
        var key: SQL
        var entity: SQL
        var order: SQL?
        var isJoinTable: Bool
    }

    /// How the source's storage of a relationship is read, or nil when it has none.
    private func related(_ relationship: BulkRelationships.Relationship, of owner: EntityLayout) throws(TernError)
        -> Related?
    {
        let target = try source.entity(named: relationship.sourceEntities[0])
        if let toOne = owner.toOne(named: relationship.sourceRelationship) {
            // As the Swift read: the entity column's entity, else the relationship's destination.
            let key = "s." + SQL.identifier(toOne.column)
            var entity: SQL = "CASE WHEN " + key + " IS NULL THEN NULL"
            if let column = toOne.entityColumn {
                let number = "s." + SQL.identifier(column)
                entity.append(" WHEN " + number + " IS NULL THEN \(toOne.destination)")
                entity.append(try names(of: relationship.sourceEntities, number: number) + " END")
            } else {
                entity.append(" ELSE \(toOne.destination) END")
            }
            return Related(joins: "", key: key, entity: entity, order: nil, isJoinTable: false)
        }
        guard let toMany = owner.toMany(named: relationship.sourceRelationship) else { return nil }
        switch toMany.storage {
        case .inverseForeignKey(let table, let column, let orderColumn):
            let joins: SQL =
                " JOIN \(sourceTable(table)) AS t ON t.\(.identifier(column)) = s.\"Z_PK\" AND "
                + target.rowFilter(alias: "t")
            let entity =
                "CASE" + (try names(of: relationship.sourceEntities, number: target.rowEntityNumber(alias: "t")))
            return Related(
                joins: joins, key: "t.\"Z_PK\"", entity: entity + " END",
                order: (orderColumn.map { "t." + SQL.identifier($0) + ", " } ?? "") + "t.\"Z_PK\"", isJoinTable: false)
        case .joinTable(let table, let sourceColumn, let destinationColumn, let orderColumn):
            let joins: SQL =
                " JOIN \(sourceTable(table)) AS j ON j.\(.identifier(sourceColumn)) = s.\"Z_PK\" JOIN "
                + "\(sourceTable(target.table)) AS t ON t.\"Z_PK\" = j.\(.identifier(destinationColumn))"
            let entity =
                "CASE" + (try names(of: relationship.sourceEntities, number: target.rowEntityNumber(alias: "t")))
            return Related(
                joins: joins, key: "t.\"Z_PK\"", entity: entity + " END",
                order: (orderColumn.map { "j." + SQL.identifier($0) + ", " } ?? "") + "t.\"Z_PK\"", isJoinTable: true)
        }
    }

    /// ` WHEN number = n THEN 'Entity' … ELSE fallback` over a relationship's source entities.
    private func names(of entities: [String], number: SQL) throws(TernError) -> SQL {
        var cases: SQL = ""
        for name in entities {
            let layout = try source.entity(named: name)
            cases.append(" WHEN " + number + " = \(Int64(layout.number)) THEN CAST(\(name) AS TEXT)")
        }
        return cases + " ELSE " + fallback
    }

    /// A source table, qualified with its schema.
    private func sourceTable(_ table: String) -> SQL {
        SQL.identifier(sourceTables) + "." + SQL.identifier(table)
    }

    /// The `FROM` and `WHERE` of a relationship's pairs: the mapping's source objects `s` with
    /// their destination runs `a`, the related objects `t` (or `s`'s to-one key), and each related
    /// object's destination run `b` (joined inner, or left for a to-one).
    private func pairs(
        _ relationship: BulkRelationships.Relationship, from related: Related, bulk: BulkRelationships, left: Bool
    ) throws(TernError) -> SQL {
        let sourceOwner = try source.entity(named: bulk.sourceEntity)
        let key = related.key
        var lookup: SQL =
            (left ? " LEFT JOIN " : " JOIN ") + "\"TERN_ASSOCIATION\" AS b ON b.\"SENT\" = " + related.entity
            + " AND b.\"SSTART\" BETWEEN " + key + " - \(AssociationRuns.runLimit - 1) AND " + key
            + " AND b.\"SSTART\" + b.\"COUNT\" > " + key
        if let mapping = relationship.mapping { lookup.append(" AND b.\"MAPPING\" = \(mapping)") }
        // Each source object `s` of the mapping's entity finds its destination's run `a` by its
        // own key, through the index on (SENT, SSTART): no table of the mapping's objects is read,
        // so the planner may start from the related rows (a foreign key without an index).
        let owners: SQL =
            " FROM \(sourceTable(sourceOwner.table)) AS s JOIN \"TERN_ASSOCIATION\" AS a ON a.\"SENT\" = "
            + "\(bulk.sourceEntity) AND a.\"SSTART\" BETWEEN s.\"Z_PK\" - \(AssociationRuns.runLimit - 1) AND s.\"Z_PK\" "
            + "AND a.\"SSTART\" + a.\"COUNT\" > s.\"Z_PK\""
        let condition: SQL =
            " WHERE a.\"MAPPING\" = \(bulk.mapping.name) AND a.\"DENT\" = \(bulk.destinationEntity)"
        return owners + related.joins + lookup + condition
    }

    /// The temporary table of pairs: integer columns, so that SQLite compares them with the
    /// join table's through the index (a table made `AS SELECT` has untyped columns, which it
    /// cannot: 2.2 s to delete from 30,000 join rows, against 0.01 s).
    private static func pairTableStatement(ordered: Bool) -> SQL {
        "CREATE TEMPORARY TABLE " + SQL.identifier(pairTable) + " (pk BIGINT, k BIGINT"
            + (ordered ? ", p BIGINT)" : ")")
    }

    /// The destination key of the mapping's object, from its source object `s` and run `a`.
    private static let ownerKey: SQL = "SELECT a.\"DSTART\" + (s.\"Z_PK\" - a.\"SSTART\")"

    /// The destination key of the related object's destination `b`.
    private static func destinationKey(_ related: Related) -> SQL {
        "b.\"DSTART\" + (" + related.key + " - b.\"SSTART\")"
    }

    /// Sets a to-one of every destination object of the mapping.
    private func setToOne(
        _ column: ToOneColumn, of owner: EntityLayout, from related: Related,
        _ relationship: BulkRelationships.Relationship, bulk: BulkRelationships
    ) throws(TernError) -> SQL {
        var select: SQL = Self.ownerKey + " AS pk, " + Self.destinationKey(related) + " AS k"
        var set: SQL = SQL.identifier(column.column) + " = x.k"
        if let entityColumn = column.entityColumn {
            var number: SQL = "CASE b.\"DENT\""
            for target in relationship.targets {
                let layout = try destination.entity(named: target.destinationEntity)
                number.append(" WHEN \(target.destinationEntity) THEN CAST(\(Int64(layout.number)) AS INTEGER)")
            }
            select.append(", " + number + " END AS e")
            set.append(", " + SQL.identifier(entityColumn) + " = x.e")
        }
        let table = SQL.identifier(owner.table)
        let from = try pairs(relationship, from: related, bulk: bulk, left: true)
        return "UPDATE " + table + " SET " + set + " FROM (" + select + from + ") AS x WHERE " + table
            + ".\"Z_PK\" = x.pk"
    }

    /// Sets a to-many of every destination object of the mapping.
    private func setToMany(
        _ toMany: ToManyMapping, of owner: EntityLayout, from related: Related,
        _ relationship: BulkRelationships.Relationship, bulk: BulkRelationships
    ) throws(TernError) -> [SQL]? {
        var select: SQL = Self.ownerKey + " AS pk, " + Self.destinationKey(related) + " AS k"
        // Positions as Swift numbers the objects it found, in the order it read them.
        let position: SQL =
            "ROW_NUMBER() OVER (PARTITION BY s.\"Z_PK\" ORDER BY " + (related.order ?? "t.\"Z_PK\"") + ")"
        let from = try pairs(relationship, from: related, bulk: bulk, left: false)
        switch toMany.storage {
        case .inverseForeignKey(let table, let column, let orderColumn):
            // Several owners could claim one object: its last one wins in Swift.
            guard !related.isJoinTable else { return nil }
            let target = try destination.entity(named: toMany.destination)
            var set: SQL = SQL.identifier(column) + " = x.pk"
            if let entityColumn = target.toOneRelationships.first(where: { $0.column == column })?.entityColumn {
                set.append(", " + SQL.identifier(entityColumn) + " = CAST(\(Int64(owner.number)) AS INTEGER)")
            }
            if let orderColumn {
                select.append(", " + position + " AS p")
                set.append(", " + SQL.identifier(orderColumn) + " = x.p * 1024")
            }
            // The pairs in a table of their own: SQLite joins a subquery with a window function
            // row by row to the updated table (1.8 s for 10,000 books, against 0.05 s so).
            let updated = SQL.identifier(table)
            let pairs = SQL.identifier(Self.pairTable)
            return [
                "DROP TABLE IF EXISTS " + pairs,
                Self.pairTableStatement(ordered: orderColumn != nil),
                "INSERT INTO " + pairs + " " + select + from,
                "UPDATE " + updated + " SET " + set + " FROM " + pairs + " AS x WHERE " + updated + ".\"Z_PK\" = x.k",
                "DROP TABLE " + pairs,
            ]
        case .joinTable(let table, let sourceColumn, let destinationColumn, let orderColumn):
            if orderColumn != nil { select.append(", " + position + " AS p") }
            let pairs = SQL.identifier(Self.pairTable)
            let (joinTable, owners, targets) = (
                SQL.identifier(table), SQL.identifier(sourceColumn), SQL.identifier(destinationColumn)
            )
            var statements: [SQL] = [
                "DROP TABLE IF EXISTS " + pairs,
                Self.pairTableStatement(ordered: orderColumn != nil),
                "INSERT INTO " + pairs + " " + select + from,
                "CREATE INDEX \"tern_pairs_pk\" ON " + pairs + " (pk, k)",
            ]
            // The mapping's rows of the join table that are not pairs, as Swift deletes them
            // object by object (rows the inverse side wrote among them).
            // A row's owner is one of the mapping's objects when a run of the mapping holds its key
            // (through the index on MAPPING, DENT, DSTART): `IN (the mapping's objects)` made
            // SQLite read the join table once per object (3 s for 7 tags of 10,000 books).
            let owner = joinTable + "." + owners
            statements.append(
                "DELETE FROM " + joinTable + " WHERE EXISTS (SELECT 1 FROM \"TERN_ASSOCIATION\" AS a WHERE "
                    + "a.\"MAPPING\" = \(bulk.mapping.name) AND a.\"DENT\" = \(bulk.destinationEntity) AND a.\"DSTART\" "
                    + "BETWEEN " + owner + " - \(AssociationRuns.runLimit - 1) AND " + owner + " AND " + owner
                    + " < a.\"DSTART\" + a.\"COUNT\") AND NOT EXISTS (SELECT 1 FROM " + pairs + " AS x WHERE x.pk = "
                    + owner + " AND x.k = " + joinTable + "." + targets + ")")
            if let orderColumn {
                let order = SQL.identifier(orderColumn)
                // An object read twice takes its last position, as Swift's second write does.
                statements.append(
                    "INSERT INTO " + joinTable + " (" + owners + ", " + targets + ", " + order + ") SELECT pk, k, "
                        + "MAX(p) * 1024 FROM " + pairs + " WHERE TRUE GROUP BY pk, k ON CONFLICT (" + owners + ", "
                        + targets + ") DO UPDATE SET " + order + " = excluded." + order)
            } else {
                statements.append(
                    "INSERT INTO " + joinTable + " (" + owners + ", " + targets + ") SELECT DISTINCT pk, k FROM "
                        + pairs
                        + " WHERE TRUE ON CONFLICT DO NOTHING")
            }
            statements.append("DROP TABLE " + pairs)
            return statements
        }
    }
}
