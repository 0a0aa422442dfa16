import Foundation
import TernCore
import TernFormats
package import TernRelational

extension StoreSchema {
    /// The fixed tables of every Core Data store, in Core Data's exact text.
    static let fixedTableStatements: [SQL] = [
        "CREATE TABLE Z_PRIMARYKEY (Z_ENT INTEGER PRIMARY KEY, Z_NAME VARCHAR, Z_SUPER INTEGER, Z_MAX INTEGER)",
        "CREATE TABLE Z_METADATA (Z_VERSION INTEGER PRIMARY KEY, Z_UUID VARCHAR(255), Z_PLIST BLOB)",
        "CREATE TABLE Z_MODELCACHE (Z_CONTENT BLOB)",
    ]

    /// The statements that create the store's entity tables, join tables and indexes, written as
    /// Core Data writes them (names that are plain identifiers are not quoted).
    ///
    /// - Complexity: O(*n*) in the number of tables, columns and indexes.
    package var creationStatements: [SQL] {
        var statements: [SQL] = []
        var indexes: [SQL] = []
        for table in tables.values.sorted(by: { $0.name < $1.name }) {
            statements.append(Self.tableStatement(table))
            indexes += Self.indexStatements(of: table)
        }
        for join in joinTables.values.sorted(by: { $0.name < $1.name }) {
            statements.append(Self.tableStatement(join))
            indexes.append(Self.indexStatement(of: join))
        }
        return statements + indexes + derivedAttributeTriggers + Self.fixedTableStatements
    }

    /// The `CREATE TABLE` statement of an entity table, in Core Data's text.
    static func tableStatement(_ table: TableLayout) -> SQL {
        let columns =
            ["Z_PK INTEGER PRIMARY KEY", "Z_ENT INTEGER", "Z_OPT INTEGER"]
            + table.columns.map { "\(schemaName($0.name)) \($0.type)" }
        return SQL(unsafeSQL: "CREATE TABLE \(schemaName(table.name)) ( \(columns.joined(separator: ", ")) )")
    }

    /// The `CREATE INDEX` statements of an entity table, in Core Data's text.
    static func indexStatements(of table: TableLayout) -> [SQL] {
        table.indexes.map { index in
            let list = index.columns.map { schemaName($0.name) + $0.suffix }.joined(separator: ", ")
            let unique = index.isUnique ? "UNIQUE " : ""
            return SQL(
                unsafeSQL: "CREATE \(unique)INDEX \(schemaName(index.name)) ON \(schemaName(table.name)) (\(list))")
        }
    }

    /// The `CREATE TABLE` statement of a many-to-many join table, in Core Data's text.
    static func tableStatement(_ join: JoinTableLayout) -> SQL {
        let (first, second) = (schemaName(join.columns[0]), schemaName(join.columns[1]))
        let columns = (join.columns + join.orderColumns).map { "\(schemaName($0)) INTEGER" }
        return SQL(
            unsafeSQL:
                "CREATE TABLE \(schemaName(join.name)) ( \(columns.joined(separator: ", ")), PRIMARY KEY (\(first), \(second)) )"
        )
    }

    /// The index of a join table on its second column, in Core Data's text.
    static func indexStatement(of join: JoinTableLayout) -> SQL {
        let (first, second) = (schemaName(join.columns[0]), schemaName(join.columns[1]))
        let indexName = schemaName("\(join.name)_\(join.columns[1])_INDEX")
        return SQL(unsafeSQL: "CREATE INDEX \(indexName) ON \(schemaName(join.name)) (\(second), \(first))")
    }

    /// The triggers that keep `<to-many>.@count` derived attributes, as Core Data writes them:
    /// four on the destination table (insert, re-parenting both ways, delete) and one on the
    /// source table for new rows. Other derivations get no trigger.
    var derivedAttributeTriggers: [SQL] {
        var triggers: [SQL] = []
        for layout in entities.values.sorted(by: { $0.number < $1.number }) {
            guard let entity = model.entity(named: layout.name) else { continue }
            for attribute in entity.attributes {
                guard let counted = Self.countedRelationship(attribute.derivationExpression),
                    let column = layout.attribute(named: attribute.name)?.column,
                    let relationship = layout.toMany(named: counted),
                    case .inverseForeignKey(let destination, let key, _) = relationship.storage
                else { continue }
                let source = Self.schemaName(layout.table)
                let (target, fk, value) = (Self.schemaName(destination), Self.schemaName(key), Self.schemaName(column))
                let literal = { (text: String) in "'" + text.replacingOccurrences(of: "'", with: "''") + "'" }
                let notify = { (function: String, row: String) in
                    "SELECT \(function)(\(literal(layout.table)), Z_ENT, Z_PK, \(literal(attribute.name)), \(value)) FROM \(source) WHERE Z_PK = \(row); END"
                }
                let updated = "NSCoreDataDATriggerUpdatedAffectedObjectValue"
                let prefix = "Z_DA_\(destination)_\(layout.name)_\(attribute.name)_PARAMETER_"
                let parameter: [(String, String, String, String)] = [
                    ("INSERT", "INSERT", "NEW", "IFNULL(\(value), 0) + 1"),
                    ("UPDATE_INCREMENT", "UPDATE OF \(fk)", "NEW", "\(value) + 1"),
                    ("UPDATE_DECREMENT", "UPDATE OF \(fk)", "OLD", "\(value) - 1"),
                    ("DELETE", "DELETE", "OLD", "\(value) - 1"),
                ]
                for (suffix, event, side, change) in parameter {
                    triggers.append(
                        SQL(
                            unsafeSQL: """
                                CREATE TRIGGER \(Self.schemaName(prefix + suffix)) AFTER \(event) ON \(target) FOR EACH ROW \
                                WHEN (\(side).\(fk) NOT NULL) BEGIN UPDATE \(source) SET \(value) = \(change) \
                                WHERE Z_PK = \(side).\(fk); \(notify(updated, "\(side).\(fk)"))
                                """))
                }
                let name = Self.schemaName("Z_DA_\(layout.table)_\(layout.name)_\(attribute.name)_SOURCE_INSERT")
                triggers.append(
                    SQL(
                        unsafeSQL: """
                            CREATE TRIGGER \(name) AFTER INSERT ON \(source) FOR EACH ROW BEGIN UPDATE \(source) \
                            SET \(value) = (SELECT IFNULL(COUNT(\(fk)), 0) FROM \(target) WHERE \(fk) = NEW.Z_PK) \
                            WHERE Z_PK = NEW.Z_PK; \(notify("NSCoreDataDATriggerInsertUpdatedAffectedObjectValue", "NEW.Z_PK"))
                            """))
            }
        }
        return triggers
    }

    /// The rows of `Z_PRIMARYKEY` for a new store, with `Z_MAX` 0.
    package var primaryKeyRows: [SQL] {
        entities.values.sorted { $0.number < $1.number }.map { entity in
            "INSERT INTO Z_PRIMARYKEY (Z_ENT, Z_NAME, Z_SUPER, Z_MAX) VALUES (\(entity.number), \(entity.name), \(entity.superNumber), 0)"
        }
    }

    /// A name as it appears in schema text: bare when it is a plain upper-case `Z…` identifier
    /// (no SQLite keyword starts with Z), quoted otherwise.
    static func schemaName(_ name: String) -> String {
        let plain =
            name.first == "Z"
            && name.utf8.allSatisfy { byte in
                (byte >= 0x30 && byte <= 0x39) || (byte >= 0x41 && byte <= 0x5A) || (byte >= 0x61 && byte <= 0x7A)
                    || byte == 0x5F
            }
        return plain ? name : SQL.quoted(name)
    }

    /// Metadata for a new store written with a model.
    ///
    /// - Parameters:
    ///   - model: The model.
    ///   - autoVacuum: The store's auto-vacuum level, recorded as `_NSAutoVacuumLevel`.
    /// - Returns: Metadata with a fresh UUID, the model's hashes, checksum and digest.
    static func newMetadata(for model: ManagedObjectModel, autoVacuum: SQLiteConfiguration.AutoVacuum) -> StoreMetadata
    {
        var metadata = StoreMetadata(
            storeType: "SQLite", uuid: UUID().uuidString, versionHashes: model.entityVersionHashes)
        metadata.versionIdentifiers = model.versionIdentifiers
        metadata.modelChecksum = model.versionChecksum
        metadata.hashesDigest = model.versionHashesDigest
        metadata.applicationKeys[StoreMetadata.Key.autoVacuumLevel] = .string(String(autoVacuum.rawValue))
        return metadata
    }
}

extension Connection {
    // MARK: - Reading a store's layout

    /// Builds the schema of an existing store for a model: entity numbers from `Z_PRIMARYKEY`
    /// (matching an entity by name, else by its renaming identifier), columns from the tables.
    ///
    /// - Parameter model: The model the store was written with.
    /// - Throws: `TernError` with code `schemaMismatch` when the store lacks an entity,
    ///   table or column the model needs.
    func readSchema(model: ManagedObjectModel) throws -> StoreSchema {
        var rows: [StoreSchema.PrimaryKeyRow] = []
        try forEachRow("SELECT Z_ENT, Z_NAME, Z_SUPER FROM Z_PRIMARYKEY ORDER BY Z_ENT") { row in
            rows.append(
                StoreSchema.PrimaryKeyRow(
                    number: Int(row[0].int64 ?? 0), name: row[1].string ?? "", superNumber: Int(row[2].int64 ?? 0)))
        }
        var columns: [String: Set<String>] = [:]
        let tables = try fetchAll("SELECT name FROM sqlite_master WHERE type = 'table'").compactMap { $0.first?.string }
        for table in tables {
            columns[table] = Set(
                try fetchAll("SELECT name FROM pragma_table_info(\(table))").compactMap { $0.first?.string })
        }
        do {
            return try StoreSchema(model: model, primaryKeyRows: rows, actualColumns: columns)
        } catch {
            var located = error
            located.path = path
            throw located
        }
    }
}
