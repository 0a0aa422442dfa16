import TernCore
import TernMigration
import TernRelational

extension Connection {
    // MARK: - Running a table migration plan

    /// Applies a table migration plan with SQL; the caller holds the transaction.
    ///
    /// The order follows SQLite's advice for schema changes ("Making Other Kinds Of Table Schema
    /// Changes", <https://www.sqlite.org/lang_altertable.html>): triggers are dropped first and
    /// recreated last; indexes that no longer match are dropped; each table that is rebuilt is
    /// renamed out of the way, a new table is created with the destination's exact `CREATE TABLE`
    /// text, its rows are copied with `INSERT … SELECT`, the old table is dropped and the indexes
    /// are created again. Tables altered in place get `DROP COLUMN`, `RENAME COLUMN`, `ADD COLUMN`
    /// (with a `DEFAULT` when one integer fills every row) and `UPDATE`s. New derived counts are
    /// filled before their triggers are created.
    /// `Z_PRIMARYKEY` is rewritten with the destination's entity numbers.
    ///
    /// - Parameters:
    ///   - plan: The plan.
    ///   - versionName: The destination version's name, for messages.
    ///   - checkpoint: Called between statements; throws to stop (the caller rolls back).
    /// - Throws: ``SQLiteError`` when a statement fails, ``TernMigration/MigrationError`` (code
    ///   `constraintViolated`) when a new uniqueness constraint has duplicates, or what
    ///   `checkpoint` throws.
    /// - Complexity: O(*n* log *n*) in the number of rows of rebuilt tables; altered tables cost
    ///   O(*n*) per `UPDATE` and nothing for renamed or added columns without a default.
    func apply(_ plan: TableMigrationPlan, versionName: String, checkpoint: () throws -> Void) throws {
        for trigger in try names("SELECT name FROM sqlite_master WHERE type = 'trigger' ORDER BY name") {
            try executeOnce("DROP TRIGGER \(.identifier(trigger))")
        }
        let wanted = Self.indexStatements(of: plan.destination)
        let kept = Set(plan.alterations.map(\.table.name)).union(plan.keptJoinTables)
        for row in try fetchAll(
            "SELECT name, tbl_name, sql FROM sqlite_master WHERE type = 'index' AND sql IS NOT NULL")
        {
            guard let name = row[0].string, let table = row[1].string else { continue }
            if !kept.contains(table) || wanted[name] != row[2].string {
                try executeOnce("DROP INDEX \(.identifier(name))")
            }
        }
        for table in plan.replacedTables.sorted() {
            try executeOnce("ALTER TABLE \(.identifier(table)) RENAME TO \(.identifier(Self.replacedName(table)))")
        }
        for alteration in plan.alterations {
            try alter(alteration)
            try checkpoint()
        }
        for rebuild in plan.rebuilds {
            try executeOnce(StoreSchema.tableStatement(rebuild.table))
            for copy in [rebuild.copy].compactMap({ $0 }) + rebuild.movedCopies {
                try execute(Self.insertion(into: rebuild.table, from: copy))
                try checkpoint()
            }
        }
        for rebuild in plan.joinRebuilds {
            try executeOnce(StoreSchema.tableStatement(rebuild.table))
            for source in rebuild.sources {
                try execute(
                    Self.insertion(
                        into: rebuild.table, from: source, orders: rebuild.orders, shift: rebuild.keyShifts[source],
                        exclusions: rebuild.exclusions[source] ?? []))
            }
            try checkpoint()
        }
        for derived in plan.derivedCounts {
            let table = SQL.identifier(derived.table)
            try execute(
                """
                UPDATE \(table) SET \(.identifier(derived.column)) = (SELECT COUNT(*) FROM \(.identifier(derived.countedTable)) \
                AS counted WHERE counted.\(.identifier(derived.foreignKey)) = \(table).Z_PK) WHERE Z_ENT IN (\(Self.list(derived.numbers)))
                """)
            try checkpoint()
        }
        for table in plan.replacedTables.sorted() {
            try executeOnce("DROP TABLE \(.identifier(Self.replacedName(table)))")
        }
        let existing = Set(try names("SELECT name FROM sqlite_master WHERE type = 'index'"))
        let constraints = UniquenessCheck.checks(of: plan.destination)
        for (name, statement) in wanted.sorted(by: { $0.key < $1.key }) where !existing.contains(name) {
            if let check = constraints[name] { try checkUnique(check, version: versionName) }
            try executeOnce(SQL(unsafeSQL: statement))
        }
        for trigger in plan.destination.derivedAttributeTriggers { try executeOnce(trigger) }
        try execute("DELETE FROM Z_PRIMARYKEY")
        for row in plan.destination.primaryKeyRows { try execute(row) }
        for layout in plan.destination.entities.values where layout.superNumber == 0 {
            let largest = try fetchValue("SELECT MAX(Z_PK) FROM \(.identifier(layout.table))")?.int64 ?? 0
            let carried = plan.carriedKeys[layout.table] ?? 0
            try execute("UPDATE Z_PRIMARYKEY SET Z_MAX = \(max(largest, carried)) WHERE Z_ENT = \(layout.number)")
        }
    }

    // MARK: - Non public

    /// The name a replaced table has until it is dropped.
    static func replacedName(_ table: String) -> String { "TERN_REPLACED_" + table }

    /// The destination's index statements, by index name.
    static func indexStatements(of schema: StoreSchema) -> [String: String] {
        var statements: [String: String] = [:]
        for table in schema.tables.values {
            for (index, statement) in zip(table.indexes, StoreSchema.indexStatements(of: table)) {
                statements[index.name] = statement.text
            }
        }
        for join in schema.joinTables.values {
            statements["\(join.name)_\(join.columns[1])_INDEX"] = StoreSchema.indexStatement(of: join).text
        }
        return statements
    }

    /// The declared default that fills a column added to an altered table with its values per
    /// source entity number, without an `UPDATE` of the rows (``defaultLiteral(_:)``); nil when
    /// the rows must be updated.
    static func defaultFill(
        of alteration: TableMigrationPlan.TableAlteration, _ values: [Int: DatabaseValue]
    ) -> String? {
        guard alteration.fillsByDefault(values) else { return nil }
        return values.first.flatMap { defaultLiteral($0.value) }
    }

    /// A constant as `DEFAULT` text, for DDL, which cannot bind values: an integer's decimal
    /// digits, or a string between single quotes with each quote doubled (SQLite's string
    /// literal has no other escape; strings with a NUL character are refused).
    static func defaultLiteral(_ value: DatabaseValue) -> String? {
        switch value {
        case .integer(let number): return String(number)
        case .text(let text) where !text.unicodeScalars.contains("\0"):
            return "'" + text.split(separator: "'", omittingEmptySubsequences: false).joined(separator: "''") + "'"
        default: return nil
        }
    }

    /// The first column of every row of a query, as text.
    private func names(_ sql: SQL) throws(SQLiteError) -> [String] {
        try fetchAll(sql).compactMap { $0.first?.string }
    }

    /// Renames, adds and rewrites the columns of a table kept in place.
    private func alter(_ alteration: TableMigrationPlan.TableAlteration) throws(SQLiteError) {
        let table = SQL.identifier(alteration.table.name)
        for column in alteration.droppedColumns {
            try executeOnce("ALTER TABLE \(table) DROP COLUMN \(.identifier(column))")
        }
        for (from, to) in alteration.renamedColumns {
            try executeOnce("ALTER TABLE \(table) RENAME COLUMN \(.identifier(from)) TO \(.identifier(to))")
        }
        for (column, values) in alteration.addedColumns {
            var definition = StoreSchema.schemaName(column.name) + " " + column.type
            if let literal = Self.defaultFill(of: alteration, values) {
                // A constant default costs nothing per row (SQLite keeps it in the schema).
                definition += " DEFAULT " + literal
                try executeOnce("ALTER TABLE \(table) ADD COLUMN \(SQL(unsafeSQL: definition))")
                continue
            }
            try executeOnce("ALTER TABLE \(table) ADD COLUMN \(SQL(unsafeSQL: definition))")
            var numbersByValue: [DatabaseValue: [Int]] = [:]
            for (number, value) in values { numbersByValue[value, default: []].append(number) }
            for (value, numbers) in numbersByValue.sorted(by: { $0.value.min() ?? 0 < $1.value.min() ?? 0 }) {
                try execute(
                    """
                    UPDATE \(table) SET \(.identifier(column.name)) = \(value) WHERE Z_ENT IN (\(Self.list(numbers)))
                    """)
            }
        }
        for (column, value, numbers) in alteration.rewrittenColumns {
            try execute(
                """
                UPDATE \(table) SET \(.identifier(column)) = \(value.sql(constant: Self.constant)) WHERE Z_ENT IN (\(Self.list(numbers)))
                """)
        }
    }

    /// `INSERT … SELECT` of a rebuilt table's rows from the renamed source table.
    private static func insertion(into table: TableLayout, from copy: TableMigrationPlan.TableCopy) -> SQL {
        let columns = ["Z_PK", "Z_ENT", "Z_OPT"] + table.columns.map(\.name)
        let values = columns.map { column -> SQL in
            switch column {
            case "Z_PK": return copy.keyOffset == 0 ? .identifier(column) : "Z_PK + \(copy.keyOffset)"
            case "Z_OPT": return .identifier(column)
            default: return copy.sql(of: column, constant: constant)
            }
        }
        return """
            INSERT INTO \(.identifier(table.name)) (\(SQL.joined(columns.map(SQL.identifier)))) \
            SELECT \(SQL.joined(values)) FROM \(.identifier(replacedName(copy.sourceTable))) \
            WHERE Z_ENT IN (\(list(copy.sourceNumbers))) ORDER BY Z_PK
            """
    }

    /// `INSERT … SELECT` of a join table's rows from one source, keys shifted where objects got
    /// new ones, without the rows of links dropped (``TableMigrationPlan/JoinExclusion``).
    private static func insertion(
        into join: JoinTableLayout, from source: TableMigrationPlan.JoinSource, orders: [TableMigrationPlan.JoinOrder],
        shift: TableMigrationPlan.JoinShift?, exclusions: [TableMigrationPlan.JoinExclusion]
    ) -> SQL {
        let kept = exclusions.map { exclusion -> SQL in
            """
             AND \(.identifier(exclusion.column)) NOT IN \
            (SELECT Z_PK FROM \(.identifier(replacedName(exclusion.table))) WHERE Z_ENT IN (\(list(exclusion.numbers))))
            """
        }
        func keys(_ first: String, _ second: String) -> [SQL] {
            guard let shift else { return [.identifier(first), .identifier(second)] }
            return [shift.first.sql(of: .identifier(first)), shift.second.sql(of: .identifier(second))]
        }
        let columns = (join.columns + orders.map(\.column)).map(SQL.identifier)
        let target: SQL = "INSERT OR IGNORE INTO \(.identifier(join.name)) (\(SQL.joined(columns)))"
        switch source {
        case .joinTable(let table, let first, let second):
            let positions = orders.map { order -> SQL in
                let ordering = (order.order.map { [SQL.identifier($0)] } ?? []) + [SQL.identifier(order.item)]
                return
                    "ROW_NUMBER() OVER (PARTITION BY \(.identifier(order.partition)) ORDER BY \(SQL.joined(ordering))) * 1024"
            }
            let values = keys(first, second) + positions
            let filter: SQL = kept.isEmpty ? "" : " WHERE 1" + SQL.joined(kept, separator: "")
            return target + " SELECT \(SQL.joined(values)) FROM \(.identifier(replacedName(table)))" + filter
        case .foreignKey(let table, let numbers, let first, let second):
            return target + """
                 SELECT \(SQL.joined(keys(first, second))) FROM \(.identifier(replacedName(table))) \
                WHERE Z_ENT IN (\(list(numbers))) AND \(.identifier(first)) IS NOT NULL AND \(.identifier(second)) IS NOT NULL
                """ + SQL.joined(kept, separator: "")
        }
    }

    /// A constant as SQLite takes it: bound, or NULL.
    static func constant(_ value: DatabaseValue) -> SQL {
        value == .null ? "NULL" : "\(value)"
    }

    /// A comma-separated list of bound integers.
    static func list(_ numbers: [Int]) -> SQL {
        SQL.joined(numbers.sorted().map { "\(Int64($0))" as SQL })
    }
}
