import Foundation
import TernCore
import TernRelational

extension Connection {
    // MARK: - Derived counts

    /// Creates the triggers that keep a store's `<to-many>.@count` derived attributes, as the
    /// SQLite store's triggers do, replacing any the schema had.
    ///
    /// The triggers are statement-level (`REFERENCING NEW TABLE`/`OLD TABLE`) and recount instead
    /// of adding and subtracting: after rows of the counted destination are inserted, re-parented
    /// or deleted, and after rows of the source are inserted or updated, each affected source row's
    /// count is set to the number of destination rows pointing at it. So a count stays right
    /// whatever order rows are written in (COPY, conversions, migrations) and whatever value a
    /// save writes into the column. One function, `Z_DA_COUNT`, serves every trigger; it names
    /// tables through `TG_TABLE_SCHEMA`, so it keeps working when the tables move to another schema.
    ///
    /// - Parameter schema: The store's layout.
    /// - Throws: ``PostgreSQLError`` when a statement fails.
    /// - Complexity: O(*d*) statements for *d* derived counts.
    func installDerivedCountTriggers(for schema: StoreSchema) throws(PostgreSQLError) {
        try dropDerivedCountTriggers()
        let counts = Self.derivedCounts(of: schema)
        guard !counts.isEmpty else { return }
        try executeScript(Self.derivedCountFunction)
        for count in counts {
            // Trigger arguments are string constants in the DDL; the names are Tern's own (`Z…`), quotes doubled all the same.
            let literal = { (text: String) in "'" + text.replacingOccurrences(of: "'", with: "''") + "'" }
            let arguments = [count.source, count.column, count.destination, count.foreignKey].map(literal)
            func trigger(_ name: String, _ event: String, on table: String, _ tables: String, role: String) -> String {
                "CREATE TRIGGER \(SQL.quoted(Self.indexName("Z_DA_" + name))) AFTER \(event) ON \(SQL.quoted(table)) "
                    + "REFERENCING \(tables) FOR EACH STATEMENT EXECUTE FUNCTION \"Z_DA_COUNT\"("
                    + (arguments + [literal(role)]).joined(separator: ", ") + ")"
            }
            let name = "\(count.source)_\(count.column)"
            try executeScript(
                trigger(name + "_SOURCE_INSERT", "INSERT", on: count.source, "NEW TABLE AS n", role: "source"))
            try executeScript(
                trigger(name + "_SOURCE_UPDATE", "UPDATE", on: count.source, "NEW TABLE AS n", role: "source"))
            try executeScript(
                trigger(name + "_INSERT", "INSERT", on: count.destination, "NEW TABLE AS n", role: "destination"))
            try executeScript(
                trigger(
                    name + "_UPDATE", "UPDATE", on: count.destination, "OLD TABLE AS o NEW TABLE AS n",
                    role: "destination"))
            try executeScript(
                trigger(name + "_DELETE", "DELETE", on: count.destination, "OLD TABLE AS o", role: "destination"))
        }
    }

    /// Drops the derived-count triggers of the connection's schema (those named `Z_DA_…`).
    ///
    /// - Throws: ``PostgreSQLError`` when a statement fails.
    func dropDerivedCountTriggers() throws(PostgreSQLError) {
        let triggers = try fetchAll(
            """
            SELECT t.tgname::text, c.relname::text FROM pg_trigger t JOIN pg_class c ON c.oid = t.tgrelid \
            WHERE c.relnamespace = CAST(current_schema() AS regnamespace) AND NOT t.tgisinternal \
            AND t.tgname LIKE 'Z\\_DA\\_%' ORDER BY 1
            """)
        for row in triggers {
            guard let name = row[0].string, let table = row[1].string else { continue }
            try execute("DROP TRIGGER \(.identifier(name)) ON \(.identifier(table))")
        }
    }

    /// One `@count` derived attribute: the source table and column, and the destination table
    /// and foreign-key column it counts.
    struct DerivedCount: Hashable {
        var source: String
        var column: String
        var destination: String
        var foreignKey: String
    }

    /// The `@count` derived attributes of a layout whose relationship has a foreign key in the
    /// destination (the ones the SQLite store keeps with triggers too).
    static func derivedCounts(of schema: StoreSchema) -> [DerivedCount] {
        var counts: Set<DerivedCount> = []
        for layout in schema.entities.values {
            for attribute in layout.attributes {
                guard let counted = StoreSchema.countedRelationship(attribute.derivation),
                    let relationship = layout.toMany(named: counted),
                    case .inverseForeignKey(let destination, let key, _) = relationship.storage
                else { continue }
                counts.insert(
                    DerivedCount(
                        source: layout.table, column: attribute.column, destination: destination, foreignKey: key))
            }
        }
        return counts.sorted { ($0.source, $0.column) < ($1.source, $1.column) }
    }

    /// The trigger function: its arguments are the source table, the count column, the
    /// destination table, the foreign-key column and the trigger's role (`source` or
    /// `destination`). Updates the triggers themselves make (depth > 1) never change a foreign
    /// key, so they are not followed.
    static let derivedCountFunction = #"""
        CREATE OR REPLACE FUNCTION "Z_DA_COUNT"() RETURNS trigger LANGUAGE plpgsql AS $tern$
        DECLARE
            keys text;
        BEGIN
            IF pg_trigger_depth() > 1 THEN RETURN NULL; END IF;
            IF TG_ARGV[4] = 'source' THEN
                keys := 'SELECT "Z_PK" FROM n';
            ELSIF TG_OP = 'INSERT' THEN
                keys := format('SELECT %I FROM n', TG_ARGV[3]);
            ELSIF TG_OP = 'DELETE' THEN
                keys := format('SELECT %I FROM o', TG_ARGV[3]);
            ELSE
                keys := format('SELECT o.%1$I FROM o JOIN n USING ("Z_PK") WHERE o.%1$I IS DISTINCT FROM n.%1$I '
                    'UNION SELECT n.%1$I FROM o JOIN n USING ("Z_PK") WHERE o.%1$I IS DISTINCT FROM n.%1$I', TG_ARGV[3]);
            END IF;
            EXECUTE format('UPDATE %1$I.%2$I AS s SET %3$I = (SELECT COUNT(*) FROM %1$I.%4$I AS d WHERE d.%5$I = s."Z_PK") '
                'WHERE s."Z_PK" IN (%6$s)', TG_TABLE_SCHEMA, TG_ARGV[0], TG_ARGV[1], TG_ARGV[2], TG_ARGV[3], keys);
            RETURN NULL;
        END
        $tern$
        """#
}
