import Foundation
import TernCore
import TernMigration
import TernRelational

extension Connection {
    // MARK: - Running a table migration plan

    /// Applies a table migration plan with PostgreSQL DDL and DML; the caller holds the transaction.
    ///
    /// PostgreSQL's DDL is transactional, so the whole plan commits or rolls back as one. Indexes
    /// of tables that are rebuilt are renamed with their table out of the way; indexes of tables
    /// kept in place that the destination does not want as they are are dropped. Kept tables get
    /// `DROP COLUMN`, `RENAME COLUMN`, `ADD COLUMN` (in the column's PostgreSQL type; one constant filling
    /// every row is its `DEFAULT`, dropped again, which writes no row) and `UPDATE`s; rebuilt
    /// tables are created anew and filled with `INSERT … SELECT` from the renamed source, which is
    /// dropped at the end; ordered many-to-many join tables get their positions with
    /// `ROW_NUMBER()`, new derived counts are counted. Missing indexes are created last, and `Z_PRIMARYKEY` is rewritten with
    /// the destination's entity numbers and each root's largest key.
    ///
    /// - Parameters:
    ///   - plan: The plan (``TernSQLite/TableMigrationPlan``).
    ///   - versionName: The destination version's name, for messages.
    ///   - checkpoint: Called between statements; throws to stop (the caller rolls back).
    /// - Throws: ``TernMigration/MigrationError`` with code `constraintViolated` when a new
    ///   uniqueness constraint has duplicates (counted before its index is created, naming the
    ///   entity, the properties and the counts); ``PostgreSQLError`` when a statement fails, or
    ///   what `checkpoint` throws.
    /// - Complexity: O(*n* log *n*) in the rows of rebuilt tables; altered tables cost O(*n*) per
    ///   `UPDATE`, nothing for a renamed column or an added column filled with one constant or none.
    func apply(_ plan: TableMigrationPlan, versionName: String, checkpoint: () throws -> Void) throws {
        let destination = plan.destination
        try dropDerivedCountTriggers()
        var wanted: [String: IndexDefinition] = [:]
        for table in destination.tables.values { for index in Self.indexes(of: table) { wanted[index.name] = index } }
        for join in destination.joinTables.values { wanted[Self.joinIndex(join).name] = Self.joinIndex(join) }
        let kept = Set(plan.alterations.map(\.table.name)).union(plan.keptJoinTables)
        let replaced = plan.replacedTables
        for row in try fetchAll(
            """
            SELECT i.relname::text, t.relname::text, pg_get_indexdef(x.indexrelid), x.indisprimary \
            FROM pg_index x JOIN pg_class i ON i.oid = x.indexrelid JOIN pg_class t ON t.oid = x.indrelid \
            WHERE t.relnamespace = CAST(current_schema() AS regnamespace) ORDER BY 1
            """)
        {
            guard let name = row[0].string, let table = row[1].string, let definition = row[2].string else { continue }
            if replaced.contains(table) {
                try execute("ALTER INDEX \(.identifier(name)) RENAME TO \(.identifier(Self.replacedName(name)))")
            } else if kept.contains(table), row[3].int64 != 1, !Self.matches(definition, wanted[name], table: table) {
                try execute("DROP INDEX \(.identifier(name))")
            }
        }
        for table in replaced.sorted() {
            try execute("ALTER TABLE \(.identifier(table)) RENAME TO \(.identifier(Self.replacedName(table)))")
        }
        for alteration in plan.alterations {
            try alter(alteration, types: Self.columnTypes(of: alteration.table.name, in: destination), in: destination)
            try checkpoint()
        }
        for rebuild in plan.rebuilds {
            try executeScript(Self.tableStatement(rebuild.table, schema: destination))
            if let copy = rebuild.copy { try execute(insertion(into: rebuild.table, from: copy, in: destination)) }
            try checkpoint()
        }
        for rebuild in plan.joinRebuilds {
            try executeScript(Self.joinTableStatement(rebuild.table))
            for source in rebuild.sources {
                try execute(Self.insertion(into: rebuild.table, from: source, orders: rebuild.orders))
            }
            try checkpoint()
        }
        for derived in plan.derivedCounts {
            let table = SQL.identifier(derived.table)
            try execute(
                """
                UPDATE \(table) SET \(.identifier(derived.column)) = (SELECT COUNT(*) FROM \(.identifier(derived.countedTable)) \
                AS counted WHERE counted.\(.identifier(derived.foreignKey)) = \(table)."Z_PK") \
                WHERE "Z_ENT" IN (\(Self.list(derived.numbers)))
                """)
            try checkpoint()
        }
        for table in replaced.sorted() { try execute("DROP TABLE \(.identifier(Self.replacedName(table)))") }
        let existing = Set(
            try fetchAll(
                """
                SELECT i.relname::text FROM pg_index x JOIN pg_class i ON i.oid = x.indexrelid \
                WHERE i.relnamespace = CAST(current_schema() AS regnamespace)
                """
            ).compactMap { $0.first?.string })
        var checks: [String: UniquenessCheck] = [:]
        for (name, check) in UniquenessCheck.checks(of: destination) { checks[Self.indexName(name)] = check }
        for (name, index) in wanted.sorted(by: { $0.key < $1.key }) where !existing.contains(name) {
            if let check = checks[name] {
                // Counted first, so that the refusal names the constraint and its duplicates
                // (PostgreSQL's SUM of counts is numeric: cast back to bigint).
                let row = try fetchOne(
                    "SELECT groups, CAST(objects AS bigint) FROM (" + check.countQuery
                        + ") AS counted (groups, objects)")
                if let failure = check.failure(
                    groups: row?[0].int64 ?? 0, objects: row?[1].int64 ?? 0, version: versionName)
                {
                    throw failure
                }
            }
            try executeScript(index.statement)
        }
        try installDerivedCountTriggers(for: destination)
        try execute(#"DELETE FROM "Z_PRIMARYKEY""#)
        try writePrimaryKeyRows(of: destination)
        for layout in destination.entities.values where layout.superNumber == 0 {
            let largest = try fetchValue("SELECT MAX(\"Z_PK\") FROM \(.identifier(layout.table))")?.int64 ?? 0
            let carried = plan.carriedKeys[layout.table] ?? 0
            try execute(
                """
                UPDATE "Z_PRIMARYKEY" SET "Z_MAX" = \(max(largest, carried)) WHERE "Z_ENT" = \(layout.number)
                """)
        }
    }

    // MARK: - Non public

    /// The name a replaced table or index has until it is dropped (at most 63 bytes).
    static func replacedName(_ name: String) -> String { indexName("TERN_REPLACED_" + name) }

    /// Whether an index as `pg_get_indexdef` prints it is the one the destination wants.
    private static func matches(_ definition: String, _ wanted: IndexDefinition?, table: String) -> Bool {
        guard let wanted, wanted.table == table, definition.hasPrefix("CREATE UNIQUE") == wanted.isUnique else {
            return false
        }
        return definition.hasSuffix("USING btree " + wanted.columns)
    }

    /// Renames, adds and rewrites the columns of a table kept in place.
    private func alter(
        _ alteration: TableMigrationPlan.TableAlteration, types: [String: String], in destination: StoreSchema
    ) throws(PostgreSQLError) {
        let table = SQL.identifier(alteration.table.name)
        let attributeTypes = Self.attributeTypes(of: alteration.table.name, in: destination)
        for column in alteration.droppedColumns {
            try execute("ALTER TABLE \(table) DROP COLUMN \(.identifier(column))")
        }
        for (from, to) in alteration.renamedColumns {
            try execute("ALTER TABLE \(table) RENAME COLUMN \(.identifier(from)) TO \(.identifier(to))")
        }
        for (column, values) in alteration.addedColumns {
            let type = types[column.name] ?? "bigint"
            if let literal = Self.defaultFill(of: alteration, values, type: attributeTypes[column.name]) {
                // PostgreSQL 11+ keeps a constant default in the catalog and reads it for the rows
                // already there, even once the default is dropped: no row is rewritten.
                try execute(
                    """
                    ALTER TABLE \(table) ADD COLUMN \(.identifier(column.name)) \(SQL(unsafeSQL: type)) \
                    DEFAULT \(SQL(unsafeSQL: literal))
                    """)
                try execute("ALTER TABLE \(table) ALTER COLUMN \(.identifier(column.name)) DROP DEFAULT")
                continue
            }
            try execute("ALTER TABLE \(table) ADD COLUMN \(.identifier(column.name)) \(SQL(unsafeSQL: type))")
            var numbersByValue: [DatabaseValue: [Int]] = [:]
            for (number, value) in values { numbersByValue[value, default: []].append(number) }
            for (value, numbers) in numbersByValue.sorted(by: { $0.value.min() ?? 0 < $1.value.min() ?? 0 }) {
                let constant = Self.constant(value, type: attributeTypes[column.name])
                try execute(
                    """
                    UPDATE \(table) SET \(.identifier(column.name)) = \(constant) WHERE "Z_ENT" IN (\(Self.list(numbers)))
                    """)
            }
        }
        for (column, value, numbers) in alteration.rewrittenColumns {
            let expression = value.sql { Self.constant($0, type: attributeTypes[column]) }
            try execute(
                """
                UPDATE \(table) SET \(.identifier(column)) = \(expression) WHERE "Z_ENT" IN (\(Self.list(numbers)))
                """)
        }
    }

    /// `INSERT … SELECT` of a rebuilt table's rows from the renamed source table.
    private func insertion(
        into table: TableLayout, from copy: TableMigrationPlan.TableCopy, in destination: StoreSchema
    ) -> SQL {
        let attributeTypes = Self.attributeTypes(of: table.name, in: destination)
        let columns = ["Z_PK", "Z_ENT", "Z_OPT"] + table.columns.map(\.name)
        let values = columns.map { column -> SQL in
            switch column {
            case "Z_PK", "Z_OPT": return .identifier(column)
            default: return copy.sql(of: column) { Self.constant($0, type: attributeTypes[column]) }
            }
        }
        return """
            INSERT INTO \(.identifier(table.name)) (\(SQL.joined(columns.map(SQL.identifier)))) \
            SELECT \(SQL.joined(values)) FROM \(.identifier(Self.replacedName(copy.sourceTable))) \
            WHERE "Z_ENT" IN (\(Self.list(copy.sourceNumbers))) ORDER BY "Z_PK"
            """
    }

    /// `INSERT … SELECT` of a join table's rows from one source; duplicates are skipped.
    private static func insertion(
        into join: JoinTableLayout, from source: TableMigrationPlan.JoinSource, orders: [TableMigrationPlan.JoinOrder]
    ) -> SQL {
        let columns = (join.columns + orders.map(\.column)).map(SQL.identifier)
        let target: SQL = "INSERT INTO \(.identifier(join.name)) (\(SQL.joined(columns)))"
        let select: SQL
        switch source {
        case .joinTable(let table, let first, let second):
            // An ordered many-to-many: positions among the owner's objects, in the source order.
            let positions = orders.map { order -> SQL in
                let ordering = (order.order.map { [SQL.identifier($0)] } ?? []) + [SQL.identifier(order.item)]
                return
                    "ROW_NUMBER() OVER (PARTITION BY \(.identifier(order.partition)) ORDER BY \(SQL.joined(ordering))) * 1024"
            }
            let values = [SQL.identifier(first), SQL.identifier(second)] + positions
            select = " SELECT \(SQL.joined(values)) FROM \(.identifier(replacedName(table)))"
        case .foreignKey(let table, let numbers, let first, let second):
            select = """
                 SELECT \(.identifier(first)), \(.identifier(second)) FROM \(.identifier(replacedName(table))) \
                WHERE "Z_ENT" IN (\(list(numbers))) AND \(.identifier(first)) IS NOT NULL AND \(.identifier(second)) IS NOT NULL
                """
        }
        return target + select + " ON CONFLICT DO NOTHING"
    }

    /// A bound constant, cast to its column's PostgreSQL type. The plan holds values as the SQLite
    /// store keeps them (see ``converted(_:type:)``).
    static func constant(_ value: DatabaseValue, type: AttributeType?) -> SQL {
        guard value != .null else { return "NULL" }
        let columnType = type.map(columnType(of:)) ?? "bigint"
        return "CAST(\(converted(value, type: type)) AS \(SQL(unsafeSQL: columnType)))"
    }

    /// The declared default that fills a column added to an altered table with its values per
    /// source entity number, without an `UPDATE` of the rows (``literal(_:type:)``); nil when
    /// the rows must be updated.
    static func defaultFill(
        of alteration: TableMigrationPlan.TableAlteration, _ values: [Int: DatabaseValue], type: AttributeType?
    ) -> String? {
        alteration.uniformFill(values).flatMap { literal($0, type: type) }
    }

    /// Whether a column added to an altered table is filled without an `UPDATE` of its rows
    /// (``defaultFill(of:_:type:)``), its type read from the destination layout.
    static func fillsWithoutUpdate(
        _ alteration: TableMigrationPlan.TableAlteration, _ column: ColumnLayout, _ values: [Int: DatabaseValue],
        in destination: StoreSchema
    ) -> Bool {
        defaultFill(
            of: alteration, values, type: attributeTypes(of: alteration.table.name, in: destination)[column.name])
            != nil
    }

    /// A constant as literal SQL text cast to its column's PostgreSQL type, for DDL, which cannot
    /// bind values (an added column's `DEFAULT`); nil for NULL and for text with a NUL character.
    ///
    /// Integers and finite reals are written as numeric constants (Swift's shortest text that
    /// reads back as the same double); infinities and NaN as the quoted words PostgreSQL reads;
    /// text as an escape string (`E'…'`, each backslash and quote doubled), which reads the
    /// same whatever `standard_conforming_strings` says; bytes as `E'\\x…'` cast to `bytea`.
    /// Values go through the conversions of ``constant(_:type:)`` first (UUIDs and decimals).
    static func literal(_ value: DatabaseValue, type: AttributeType?) -> String? {
        let text: String
        switch converted(value, type: type) {
        case .null: return nil
        case .integer(let number): text = String(number)
        case .real(let number) where number.isFinite: text = "\(number)"
        case .real(let number):
            text = "CAST('\(number.isNaN ? "NaN" : number < 0 ? "-Infinity" : "Infinity")' AS double precision)"
        case .text(let string):
            guard !string.unicodeScalars.contains("\0") else { return nil }
            var escaped = ""
            for character in string.unicodeScalars {
                switch character {
                case "\\": escaped += "\\\\"
                case "'": escaped += "''"
                default: escaped.unicodeScalars.append(character)
                }
            }
            text = "E'" + escaped + "'"
        case .blob(let bytes):
            let digits = Array("0123456789abcdef")
            var hex = ""
            hex.reserveCapacity(bytes.count * 2)
            for byte in bytes {
                hex.append(digits[Int(byte >> 4)])
                hex.append(digits[Int(byte & 0x0f)])
            }
            text = "CAST(E'\\\\x" + hex + "' AS bytea)"
        }
        return "CAST(" + text + " AS " + (type.map(columnType(of:)) ?? "bigint") + ")"
    }

    /// A value as the SQLite store keeps it, turned into what PostgreSQL's column reads: UUIDs
    /// (16 bytes there) and decimals (reals there) become the text `uuid` and `numeric` read.
    private static func converted(_ value: DatabaseValue, type: AttributeType?) -> DatabaseValue {
        switch (type, value) {
        case (.uuid?, .blob(let bytes)) where bytes.count == 16:
            let tuple = bytes.withUnsafeBytes { $0.loadUnaligned(as: uuid_t.self) }
            return .text(UUID(uuid: tuple).uuidString)
        case (.decimal?, .real(let number)):
            return .text(Decimal(string: String(number))?.description ?? String(number))
        case (.decimal?, .integer(let number)): return .text(String(number))
        default: return value
        }
    }

    /// A comma-separated list of bound integers.
    private static func list(_ numbers: [Int]) -> SQL {
        SQL.joined(numbers.sorted().map { "\(Int64($0))" as SQL })
    }

    /// The attribute type of each attribute column of a root table.
    private static func attributeTypes(of table: String, in schema: StoreSchema) -> [String: AttributeType] {
        var types: [String: AttributeType] = [:]
        for layout in schema.entities.values where layout.table == table {
            for attribute in layout.attributes { types[attribute.column] = attribute.type }
        }
        return types
    }
}
