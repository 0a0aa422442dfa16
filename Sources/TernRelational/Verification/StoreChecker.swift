package import Foundation
package import TernCore

/// The checks of one verification over a store in Core Data's layout, with the problems found so
/// far: SQL that SQLite and PostgreSQL both run (quoted identifiers, bound values), read through
/// a row reader the store gives. Used by one actor call only.
///
/// ```swift
/// let checker = StoreChecker(schema: schema, limit: 1000) { sql, body in
///     try connection.forEachRow(sql) { body($0) }
/// }
/// let report = try checker.verify(progress: nil)
/// ```
package final class StoreChecker {
    /// Runs a query and hands each of its rows to the body, one row in memory at a time.
    package typealias RowReader = (SQL, ([DatabaseValue]) -> Void) throws -> Void

    /// One column of a join table and the entity whose objects it must name.
    package struct JoinColumn {
        /// The join table.
        let table: String
        /// The column.
        let column: String
        /// The entity the column's keys belong to (with its subentities).
        let entity: EntityLayout
        /// The relationship whose objects the column lists.
        let relationship: String
    }

    /// Runs the checks' queries.
    private let readRows: RowReader
    /// The store's layout.
    package let schema: StoreSchema
    /// The most problems to keep.
    package let limit: Int
    /// The problems found so far.
    private(set) var problems: [StoreProblem] = []
    /// What was found that Core Data reads all the same, at most `limit` of them.
    private(set) var warnings: [StoreProblem] = []
    /// Whether problems were dropped because the limit was reached.
    private(set) var isTruncated = false

    /// The model.
    package var model: ManagedObjectModel { schema.model }

    /// Creates a checker.
    ///
    /// - Parameters:
    ///   - schema: How the store's tables map the model.
    ///   - limit: The most problems to keep.
    ///   - readRows: Runs a query on the store and hands each row to the body.
    package init(schema: StoreSchema, limit: Int, readRows: @escaping RowReader) {
        self.schema = schema
        self.limit = limit
        self.readRows = readRows
    }

    // MARK: - Running every check

    /// Runs every check that applies to any store in this layout: primary-key counters and entity
    /// numbers, required values, references, inverses, to-many counts, join tables, uniqueness.
    ///
    /// - Parameters:
    ///   - progress: Receives one unit per step (its total is set here), if given.
    ///   - additionalCheck: A check of the store's own to run on the objects of each concrete entity.
    /// - Returns: The problems found and the number of objects checked.
    /// - Throws: The reader's error when a query fails.
    /// - Complexity: O(*n* log *n*) in the number of rows; memory bounded by the limit.
    package func verify(
        progress: Progress?, additionalCheck: (EntityLayout) throws -> Void = { _ in }
    ) throws -> StoreVerificationReport {
        let roots = schema.tables.values.sorted { $0.name < $1.name }
        let entities = schema.entities.values.filter { !$0.isAbstract }.sorted { $0.name < $1.name }
        let joinColumns = joinTableColumns()
        progress?.totalUnitCount = Int64(roots.count + entities.count + joinColumns.count + schema.entities.count)
        var objectCount = 0
        checkEntityHierarchy()
        for table in roots {
            objectCount += try checkTable(table)
            progress?.completedUnitCount += 1
        }
        for entity in entities {
            try checkObjects(of: entity)
            try additionalCheck(entity)
            progress?.completedUnitCount += 1
        }
        for join in joinColumns {
            try checkJoinColumn(join)
            progress?.completedUnitCount += 1
        }
        for entity in schema.entities.values.sorted(by: { $0.name < $1.name }) {
            try checkUniqueness(of: entity)
            progress?.completedUnitCount += 1
        }
        return StoreVerificationReport(
            problems: problems, objectCount: objectCount, isTruncated: isTruncated, warnings: warnings)
    }

    /// Keeps a problem, or notes that the report is truncated.
    package func add(_ problem: StoreProblem) {
        if problems.count < limit { problems.append(problem) } else { isTruncated = true }
    }

    // MARK: - Tables

    /// Checks a root table's primary-key counter and entity numbers.
    ///
    /// - Returns: The number of rows in the table.
    package func checkTable(_ table: TableLayout) throws -> Int {
        guard let root = schema.entities[table.rootEntity] else { return 0 }
        let name = SQL.identifier(table.name)
        let summary = try fetchOne("SELECT COUNT(*), MAX(\"Z_PK\") FROM \(name)")
        let count = Int(summary?[0].int64 ?? 0)
        let largest = summary?[1].int64 ?? 0
        let counter = try fetchOne("SELECT \"Z_MAX\" FROM \"Z_PRIMARYKEY\" WHERE \"Z_ENT\" = \(root.number)")
        if counter == nil {
            add(
                StoreProblem(
                    .primaryKeyCounter, entityName: root.name,
                    message: "Z_PRIMARYKEY has no row for entity \(root.name) (Z_ENT \(root.number))"))
        } else if let counter, (counter[0].int64 ?? 0) < largest {
            add(
                StoreProblem(
                    .primaryKeyCounter, entityName: root.name, primaryKey: largest,
                    message:
                        "Z_MAX of \(root.name) is \(counter[0].int64 ?? 0), below the largest primary key \(largest) "
                        + "in \(table.name); new objects would reuse keys"))
        }
        let sql: SQL = "SELECT \"Z_PK\", \"Z_ENT\" FROM \(name) WHERE \(schema.strayRows(of: root))"
        try forEach(sql) { row in
            let number = row[1].int64.map(String.init) ?? "NULL"
            let what =
                row[1].int64.flatMap { schema.entityNames[Int($0)] }.map { "abstract entity \($0)" } ?? "no entity"
            add(
                StoreProblem(
                    .unknownEntity, entityName: root.name, primaryKey: row[0].int64,
                    message:
                        "row \(row[0].int64 ?? 0) of \(table.name) has Z_ENT \(number), which is \(what) of this table")
            )
        }
        guard let mislabelled = root.mislabelledRows() else { return count }
        try forEach("SELECT \"Z_PK\", \"Z_ENT\" FROM \(name) WHERE \(mislabelled) ORDER BY \"Z_PK\"") { row in
            guard warnings.count < limit else { return }
            let number = row[1].int64.map(String.init) ?? "NULL"
            warnings.append(
                StoreProblem(
                    .entityNumberMismatch, entityName: root.name, primaryKey: row[0].int64,
                    message:
                        "row \(row[0].int64 ?? 0) of \(table.name) has Z_ENT \(number), not \(root.number); the table is "
                        + "\(root.name)'s alone, so Core Data reads the row as one of its objects, as Tern does "
                        + "(a migration in place rewrites its Z_ENT)"))
        }
        return count
    }

    /// Checks that each entity's `Z_PRIMARYKEY` row names its superentity (`Z_SUPER`) as the model
    /// does: the superentity's number, or 0 for a root.
    ///
    /// - Complexity: O(*n*) in the number of entities.
    package func checkEntityHierarchy() {
        for entity in schema.entities.values.sorted(by: { $0.name < $1.name }) {
            let parent = model.parent(of: entity.name)
            let expected = parent.flatMap { schema.entities[$0.name]?.number } ?? 0
            guard entity.superNumber != expected else { continue }
            let found =
                schema.entityNames[entity.superNumber].map { "\(entity.superNumber) (\($0))" }
                ?? "\(entity.superNumber)"
            let wanted =
                parent.map { "\(expected), the number of its superentity \($0.name)" } ?? "0: it is a root entity"
            add(
                StoreProblem(
                    .entityHierarchy, entityName: entity.name,
                    message:
                        "Z_PRIMARYKEY gives \(entity.name) (Z_ENT \(entity.number)) the superentity number Z_SUPER \(found); "
                        + "the model says \(wanted)"))
        }
    }

    // MARK: - Objects of one entity

    /// Checks the objects of exactly one entity: required values, to-one references and their
    /// inverses, to-many counts.
    package func checkObjects(of entity: EntityLayout) throws {
        try checkRequiredValues(of: entity)
        for relationship in entity.toOneRelationships {
            try checkReference(relationship, of: entity)
            try checkInverse(of: relationship, in: entity)
        }
        for relationship in model.allRelationships(of: entity.name)
        where relationship.isToMany && !relationship.isTransient {
            try checkCount(of: relationship, in: entity)
        }
    }

    /// Reports required attributes and to-one relationships whose column is NULL.
    package func checkRequiredValues(of entity: EntityLayout) throws {
        var columns: [(property: String, column: String)] = []
        for attribute in model.allAttributes(of: entity.name)
        where !attribute.isOptional && !attribute.isTransient && !attribute.isDerived {
            if let column = entity.attribute(named: attribute.name)?.column { columns.append((attribute.name, column)) }
        }
        for relationship in model.allRelationships(of: entity.name)
        where relationship.isRequired && !relationship.isToMany && !relationship.isTransient {
            if let column = entity.toOne(named: relationship.name)?.column {
                columns.append((relationship.name, column))
            }
        }
        guard !columns.isEmpty else { return }
        let nulls = SQL.joined(columns.map { "\(SQL.identifier($0.column)) IS NULL" })
        let any = SQL.joined(columns.map { "\(SQL.identifier($0.column)) IS NULL" }, separator: " OR ")
        let sql: SQL =
            "SELECT \"Z_PK\", \(nulls) FROM \(.identifier(entity.table)) WHERE \(entity.rowFilter(includingSubentities: false)) AND (\(any))"
        try forEach(sql) { row in
            for (index, column) in columns.enumerated() where row[index + 1].int64 == 1 {
                add(
                    StoreProblem(
                        .missingValue, entityName: entity.name, primaryKey: row[0].int64, propertyName: column.property,
                        message: "required \(entity.name).\(column.property) has no value"))
            }
        }
    }

    /// Reports to-one references to objects that do not exist, or of the wrong entity.
    package func checkReference(_ relationship: ToOneColumn, of entity: EntityLayout) throws {
        guard let destination = schema.entities[relationship.destination] else { return }
        let column = SQL.identifier(relationship.column)
        let entityColumn = relationship.entityColumn.map { SQL.identifier($0) }
        let sameEntity: SQL = entityColumn.map { "AND d.\"Z_ENT\" = s.\($0)" } ?? ""
        let selectedEntity: SQL = entityColumn.map { "s.\($0)" } ?? "NULL"
        let sql: SQL = """
            SELECT s."Z_PK", s.\(column), \(selectedEntity) FROM \(.identifier(entity.table)) AS s \
            WHERE \(entity.rowFilter(includingSubentities: false, alias: "s")) AND s.\(column) IS NOT NULL AND NOT EXISTS (\
            SELECT 1 FROM \(.identifier(destination.table)) AS d WHERE d."Z_PK" = s.\(column) \
            AND \(destination.rowFilter(alias: "d")) \(sameEntity))
            """
        try forEach(sql) { row in
            let key = row[1].int64 ?? 0
            var target = "\(destination.name)/p\(key)"
            if let number = row[2].int64 {
                target = "\(schema.entityNames[Int(number)] ?? "entity \(number)")/p\(key)"
            } else if relationship.entityColumn != nil {
                target += " (its entity column \(relationship.entityColumn ?? "") is NULL)"
            }
            add(
                StoreProblem(
                    .danglingReference, entityName: entity.name, primaryKey: row[0].int64,
                    propertyName: relationship.name,
                    message: "\(entity.name).\(relationship.name) points to \(target), which does not exist"))
        }
    }

    /// Reports one-to-one relationships whose two columns disagree: Core Data stores a
    /// one-to-one on both sides, so A → B requires B → A. (One-to-many and many-to-many are
    /// stored once, in a foreign key or a join table, and cannot disagree.)
    package func checkInverse(of relationship: ToOneColumn, in entity: EntityLayout) throws {
        guard let description = model.relationship(named: relationship.name, inEntity: entity.name),
            let inverseName = description.inverseName,
            let inverse = model.relationship(named: inverseName, inEntity: relationship.destination), !inverse.isToMany,
            let destination = schema.entities[relationship.destination],
            let back = destination.toOne(named: inverseName)
        else { return }
        let column = SQL.identifier(relationship.column)
        let backColumn = SQL.identifier(back.column)
        let backEntity: SQL =
            back.entityColumn.map { " OR d.\(SQL.identifier($0)) IS NOT " + entity.rowEntityNumber(alias: "s") } ?? ""
        let sql: SQL = """
            SELECT s."Z_PK", \(destination.rowEntityNumber(alias: "d")), d."Z_PK", d.\(backColumn) FROM \(.identifier(entity.table)) AS s \
            JOIN \(.identifier(destination.table)) AS d ON d."Z_PK" = s.\(column) \
            AND \(destination.rowFilter(alias: "d")) \
            WHERE \(entity.rowFilter(includingSubentities: false, alias: "s")) AND (d.\(backColumn) IS DISTINCT FROM s."Z_PK"\(backEntity))
            """
        try forEach(sql) { row in
            let target =
                "\(row[1].int64.flatMap { schema.entityNames[Int($0)] } ?? destination.name)/p\(row[2].int64 ?? 0)"
            let back = row[3].int64.map { "p\($0)" } ?? "nothing"
            add(
                StoreProblem(
                    .inverseMismatch, entityName: entity.name, primaryKey: row[0].int64,
                    propertyName: relationship.name,
                    message:
                        "\(entity.name).\(relationship.name) points to \(target), whose \(inverseName) points to \(back)"
                ))
        }
    }

    /// Reports to-many relationships holding a count the model does not allow
    /// (``RelationshipDescription/allows(count:)``): none when the relationship is required,
    /// fewer objects than their minimum when not empty, or more than their maximum.
    package func checkCount(of relationship: RelationshipDescription, in entity: EntityLayout) throws {
        let required = relationship.isRequired
        let minimum = max(relationship.minCount, 1)
        let maximum = relationship.maxCount > 0 ? relationship.maxCount : Int.max
        guard required || minimum > 1 || maximum < Int.max, let mapping = entity.toMany(named: relationship.name),
            let destination = schema.entities[mapping.destination]
        else { return }
        let count: SQL
        switch mapping.storage {
        case .inverseForeignKey(let table, let column, _):
            count = """
                SELECT COUNT(*) FROM \(.identifier(table)) AS d WHERE d.\(.identifier(column)) = s."Z_PK" \
                AND \(destination.rowFilter(alias: "d"))
                """
        case .joinTable(let table, let source, _, _):
            count = "SELECT COUNT(*) FROM \(.identifier(table)) AS j WHERE j.\(.identifier(source)) = s.Z_PK"
        }
        let sql: SQL = """
            SELECT pk, n FROM (SELECT s."Z_PK" AS pk, (\(count)) AS n FROM \(.identifier(entity.table)) AS s \
            WHERE \(entity.rowFilter(includingSubentities: false, alias: "s"))) AS counts \
            WHERE \(required ? "n < \(minimum)" : "(n > 0 AND n < \(minimum))" as SQL) OR n > \(Int64(clamping: maximum))
            """
        try forEach(sql) { row in
            let bounds =
                (required ? "" : "none or ") + (maximum == Int.max ? "at least \(minimum)" : "\(minimum) to \(maximum)")
            add(
                StoreProblem(
                    .countOutOfRange, entityName: entity.name, primaryKey: row[0].int64,
                    propertyName: relationship.name,
                    message:
                        "\(entity.name).\(relationship.name) holds \(row[1].int64 ?? 0) objects; the model allows \(bounds)"
                ))
        }
    }

    // MARK: - Join tables

    /// Every column of every join table, with the entity whose objects it must name: the widest
    /// entity (the declaring one) among those that map a relationship to it.
    package func joinTableColumns() -> [JoinColumn] {
        var found: [String: JoinColumn] = [:]
        func note(_ table: String, _ column: String, _ entity: EntityLayout, _ relationship: String) {
            let key = table + "." + column
            if let known = found[key], known.entity.hierarchyNumbers.count >= entity.hierarchyNumbers.count { return }
            found[key] = JoinColumn(table: table, column: column, entity: entity, relationship: relationship)
        }
        for entity in schema.entities.values {
            for mapping in entity.toManyRelationships {
                guard case .joinTable(let table, let source, let target, _) = mapping.storage,
                    let destination = schema.entities[mapping.destination]
                else { continue }
                note(table, source, entity, mapping.name)
                note(table, target, destination, mapping.name)
            }
        }
        return found.values.sorted { ($0.table, $0.column) < ($1.table, $1.column) }
    }

    /// Reports join-table rows whose column names an object that does not exist.
    package func checkJoinColumn(_ join: JoinColumn) throws {
        let column = SQL.identifier(join.column)
        let sql: SQL = """
            SELECT j.\(column), COUNT(*) FROM \(.identifier(join.table)) AS j WHERE NOT EXISTS (\
            SELECT 1 FROM \(.identifier(join.entity.table)) AS o WHERE o."Z_PK" = j.\(column) \
            AND \(join.entity.rowFilter(alias: "o"))) GROUP BY j.\(column)
            """
        try forEach(sql) { row in
            let key = row[0].int64.map { "p\($0)" } ?? "NULL"
            add(
                StoreProblem(
                    .danglingReference, entityName: join.entity.name, primaryKey: row[0].int64,
                    propertyName: join.relationship,
                    message: "\(row[1].int64 ?? 0) row(s) of join table \(join.table) name \(join.entity.name)/\(key) "
                        + "in \(join.column), which does not exist"))
        }
    }

    // MARK: - Uniqueness

    /// Reports groups of objects (of the entity and its subentities) that share the values of
    /// one of the entity's own uniqueness constraints; objects with a NULL in the key are skipped.
    package func checkUniqueness(of entity: EntityLayout) throws {
        guard let description = model.entity(named: entity.name) else { return }
        for constraint in description.uniquenessConstraints where !constraint.isEmpty {
            var columns: [SQL] = []
            for property in constraint {
                if let column = entity.attribute(named: property)?.column ?? entity.toOne(named: property)?.column {
                    columns.append(.identifier(column))
                }
            }
            guard columns.count == constraint.count else { continue }
            let notNull = SQL.joined(columns.map { "\($0) IS NOT NULL" }, separator: " AND ")
            let sql: SQL = """
                SELECT MIN("Z_PK"), MAX("Z_PK"), COUNT(*) FROM \(.identifier(entity.table)) \
                WHERE \(entity.rowFilter()) AND \(notNull) \
                GROUP BY \(SQL.joined(columns)) HAVING COUNT(*) > 1
                """
            let names = constraint.joined(separator: ", ")
            try forEach(sql) { row in
                let first = row[0].int64 ?? 0
                add(
                    StoreProblem(
                        .uniquenessViolation, entityName: entity.name, primaryKey: row[1].int64,
                        propertyName: constraint.first,
                        message: "\(row[2].int64 ?? 0) \(entity.name) objects share (\(names)); "
                            + "p\(row[1].int64 ?? 0) has the same values as p\(first)"))
            }
        }
    }

    // MARK: - Non public

    /// Streams the rows of a query to `body`, one row in memory at a time.
    package func forEach(_ sql: SQL, _ body: ([DatabaseValue]) -> Void) throws {
        try readRows(sql, body)
    }

    /// The first row of a query, if any.
    private func fetchOne(_ sql: SQL) throws -> [DatabaseValue]? {
        var first: [DatabaseValue]?
        try readRows(sql) { row in if first == nil { first = row } }
        return first
    }
}
