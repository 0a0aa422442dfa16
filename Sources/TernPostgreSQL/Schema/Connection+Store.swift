import Foundation
import TernCore
import TernFormats
import TernRelational

extension Connection {
    // MARK: - The store's tables

    /// Whether the connection's schema holds `Z_METADATA` and `Z_PRIMARYKEY`.
    func hasCoreDataLayout() throws(PostgreSQLError) -> Bool {
        let tables = try storeTables()
        return tables.contains("Z_METADATA") && tables.contains("Z_PRIMARYKEY")
    }

    /// The tables of the connection's current schema.
    func storeTables() throws(PostgreSQLError) -> [String] {
        try fetchAll(
            """
            SELECT table_name::text FROM information_schema.tables \
            WHERE table_schema = current_schema() AND table_type = 'BASE TABLE' ORDER BY 1
            """
        ).compactMap { $0.first?.string }
    }

    /// The store's own tables in the connection's schema: `Z_PRIMARYKEY`, `Z_METADATA`,
    /// `Z_MODELCACHE` and the tables of the entities and many-to-many relationships
    /// `Z_PRIMARYKEY` lists, nothing else; empty when the schema holds no store.
    func ownedStoreTables() throws -> [String] {
        let tables = Set(try storeTables())
        guard tables.contains("Z_PRIMARYKEY") else { return [] }
        var owned: Set<String> = ["Z_PRIMARYKEY", "Z_METADATA", "Z_MODELCACHE"]
        for row in try fetchAll(#"SELECT "Z_ENT", "Z_NAME" FROM "Z_PRIMARYKEY""#) {
            guard let number = row[0].int64, let name = row[1].string else { continue }
            owned.insert("Z" + name.uppercased())
            // Join tables are named Z_<entity number><RELATIONSHIP>.
            for table in tables
            where table.hasPrefix("Z_\(number)") && table.dropFirst(2 + String(number).count).first?.isLetter == true {
                owned.insert(table)
            }
        }
        return owned.intersection(tables).sorted()
    }

    /// Creates a new store's tables, indexes and fixed rows in one transaction, unless another
    /// process created them first (a transaction-level advisory lock on the schema decides).
    ///
    /// - Parameter model: The model of the new store.
    /// - Throws: ``PostgreSQLError`` when a statement fails; nothing is left half-created.
    func createStoreOnce(model: ManagedObjectModel) throws {
        let schema = try StoreSchema(model: model, numbers: StoreSchema.assignedNumbers(for: model))
        try inTransaction {
            try execute(
                "SELECT pg_advisory_xact_lock(CAST(\(Self.creationLockClass) AS integer), hashtext(current_schema()))")
            guard try !hasCoreDataLayout() else { return }
            for statement in Self.creationStatements(for: schema) { try executeScript(statement) }
            try installDerivedCountTriggers(for: schema)
            try writePrimaryKeyRows(of: schema)
            let metadata = StoreMetadata(newStoreOf: StoreKind.postgreSQL, uuid: UUID().uuidString, model: model)
            try writeMetadata(metadata)
            try writeModelCache(model)
        }
    }

    /// Writes one `Z_PRIMARYKEY` row per entity of a layout, with `Z_MAX` 0; the table must be empty.
    func writePrimaryKeyRows(of schema: StoreSchema) throws(PostgreSQLError) {
        for entity in schema.entities.values.sorted(by: { $0.number < $1.number }) {
            try execute(
                """
                INSERT INTO "Z_PRIMARYKEY" ("Z_ENT", "Z_NAME", "Z_SUPER", "Z_MAX") \
                VALUES (\(entity.number), \(entity.name), \(entity.superNumber), 0)
                """)
        }
    }

    /// Replaces the model recorded in `Z_MODELCACHE`; a model the cache format cannot hold leaves it empty.
    func writeModelCache(_ model: ManagedObjectModel) throws(PostgreSQLError) {
        try execute(#"DELETE FROM "Z_MODELCACHE""#)
        if let cache = try? ModelCache.encode(model) {
            try execute("INSERT INTO \"Z_MODELCACHE\" (\"Z_CONTENT\") VALUES (\(cache))")
        }
    }

    /// The statements creating a store's tables and indexes, in PostgreSQL's types.
    ///
    /// - Complexity: O(*n*) in the number of tables, columns and indexes.
    static func creationStatements(for schema: StoreSchema) -> [String] {
        creationStatements(for: schema, deferring: []).statements
    }

    /// ``creationStatements(for:)`` without the indexes named in `deferred` (shortened names),
    /// which are handed back to be created once the rows are in.
    ///
    /// - Complexity: O(*n*) in the number of tables, columns and indexes.
    static func creationStatements(
        for schema: StoreSchema, deferring deferred: Set<String>
    ) -> (statements: [String], deferred: [IndexDefinition]) {
        var later: [IndexDefinition] = []
        var statements = [
            #"CREATE TABLE "Z_PRIMARYKEY" ("Z_ENT" bigint PRIMARY KEY, "Z_NAME" text, "Z_SUPER" bigint, "Z_MAX" bigint)"#,
            #"CREATE TABLE "Z_METADATA" ("Z_VERSION" bigint PRIMARY KEY, "Z_UUID" text, "Z_PLIST" bytea)"#,
            #"CREATE TABLE "Z_MODELCACHE" ("Z_CONTENT" bytea)"#,
        ]
        for table in schema.tables.values.sorted(by: { $0.name < $1.name }) {
            statements.append(tableStatement(table, schema: schema))
            for index in indexes(of: table) {
                if deferred.contains(index.name) { later.append(index) } else { statements.append(index.statement) }
            }
        }
        for join in schema.joinTables.values.sorted(by: { $0.name < $1.name }) {
            statements.append(joinTableStatement(join))
            statements.append(joinIndex(join).statement)
        }
        return (statements, later)
    }

    /// The `CREATE TABLE` statement of one root table, in PostgreSQL's types.
    static func tableStatement(_ table: TableLayout, schema: StoreSchema) -> String {
        let types = columnTypes(of: table.name, in: schema)
        let columns =
            [#""Z_PK" bigint PRIMARY KEY"#, #""Z_ENT" bigint NOT NULL"#, #""Z_OPT" bigint"#]
            + table.columns.map { SQL.quoted($0.name) + " " + (types[$0.name] ?? "bigint") }
        return "CREATE TABLE \(SQL.quoted(table.name)) (\(columns.joined(separator: ", ")))"
    }

    /// The PostgreSQL type of each attribute column of a root table; other columns are `bigint`.
    static func columnTypes(of table: String, in schema: StoreSchema) -> [String: String] {
        var types: [String: String] = [:]
        for layout in schema.entities.values where layout.table == table {
            for attribute in layout.attributes { types[attribute.column] = columnType(of: attribute.type) }
        }
        return types
    }

    /// One index as PostgreSQL keeps it: its (possibly shortened) name, whether it is unique, its
    /// column list as `pg_get_indexdef` prints it, and the statement creating it.
    struct IndexDefinition {
        /// The index name, shortened to 63 bytes.
        var name: String
        /// The table it indexes.
        var table: String
        /// Whether it is unique.
        var isUnique: Bool
        /// `("ZA", "ZB" DESC)`.
        var columns: String
        /// The `CREATE INDEX` statement.
        var statement: String {
            "CREATE \(isUnique ? "UNIQUE " : "")INDEX \(SQL.quoted(name)) ON \(SQL.quoted(table)) \(columns)"
        }
    }

    /// The indexes of one root table.
    static func indexes(of table: TableLayout) -> [IndexDefinition] {
        table.indexes.map { index in
            let list = index.columns.map { SQL.quoted($0.name) + ($0.suffix.hasSuffix("DESC") ? " DESC" : "") }
            return IndexDefinition(
                name: indexName(index.name), table: table.name, isUnique: index.isUnique,
                columns: "(\(list.joined(separator: ", ")))")
        }
    }

    /// The `CREATE TABLE` statement of a many-to-many join table.
    static func joinTableStatement(_ join: JoinTableLayout) -> String {
        let columns = (join.columns + join.orderColumns).map { SQL.quoted($0) + " bigint" }
        let key = join.columns.map(SQL.quoted).joined(separator: ", ")
        return "CREATE TABLE \(SQL.quoted(join.name)) (\(columns.joined(separator: ", ")), PRIMARY KEY (\(key)))"
    }

    /// The index of a join table on its columns in reverse order.
    static func joinIndex(_ join: JoinTableLayout) -> IndexDefinition {
        IndexDefinition(
            name: indexName("\(join.name)_\(join.columns[1])_INDEX"), table: join.name, isUnique: false,
            columns: "(\(join.columns.reversed().map(SQL.quoted).joined(separator: ", ")))")
    }

    /// The PostgreSQL type of an attribute's column.
    static func columnType(of type: AttributeType) -> String {
        switch type {
        case .integer16, .integer32, .integer64, .boolean: "bigint"
        case .date, .double, .float: "double precision"
        case .decimal: "numeric"
        case .string, .uri: "text"
        case .uuid: "uuid"
        default: "bytea"
        }
    }

    /// An index name PostgreSQL keeps whole: names longer than its 63 bytes are shortened with
    /// a hash of the full name, so that two long names never collide after truncation.
    static func indexName(_ name: String) -> String {
        guard name.utf8.count > 63 else { return name }
        var hash: UInt64 = 0xcbf2_9ce4_8422_2325
        for byte in name.utf8 { hash = (hash ^ UInt64(byte)) &* 0x100_0000_01b3 }
        let suffix = "_" + String(hash, radix: 16)
        var prefix = ""
        for character in name where prefix.utf8.count + character.utf8.count + suffix.utf8.count <= 63 {
            prefix.append(character)
        }
        return prefix + suffix
    }

    /// The advisory lock class that serializes store creation.
    static let creationLockClass: Int64 = 0x7465_726E

    // MARK: - Metadata and model cache

    /// Reads the store's metadata from `Z_METADATA`.
    ///
    /// - Throws: ``/TernCore/TernError`` `notACoreDataStore` or `invalidMetadata` when the table is
    ///   missing, empty or holds a malformed plist; ``PostgreSQLError`` when the server fails.
    func readMetadata() throws -> StoreMetadata {
        guard try hasCoreDataLayout() else {
            throw TernError(
                .notACoreDataStore,
                "\(location) holds no Core Data store (no Z_METADATA or Z_PRIMARYKEY table); check the schema parameter."
            )
        }
        let sql: SQL = #"SELECT "Z_UUID", "Z_PLIST" FROM "Z_METADATA" ORDER BY "Z_VERSION" LIMIT 1"#
        guard let row = try fetchOne(sql) else {
            throw TernError(
                .notACoreDataStore, "Z_METADATA has no row; the store was never finished.", sql: sql.text)
        }
        var dictionary: [String: PropertyListValue] = [:]
        if let plist = row[1].data, !plist.isEmpty {
            guard let decoded = try? BinaryPropertyList.decode(plist),
                case .dictionary(let top)? = PropertyListValue(decoded)
            else {
                throw TernError(
                    .invalidMetadata, "Z_METADATA.Z_PLIST is not a binary property list dictionary.", sql: sql.text)
            }
            dictionary = top
        }
        guard let metadata = StoreMetadata(propertyList: dictionary, uuid: row[0].string ?? "") else {
            throw TernError(
                .invalidMetadata, "A key of Z_METADATA.Z_PLIST holds a value of the wrong type.", sql: sql.text)
        }
        return metadata
    }

    /// Replaces the store's metadata (row `Z_VERSION = 1`).
    func writeMetadata(_ metadata: StoreMetadata) throws {
        let plist = BinaryPropertyList.encode(
            PropertyListValue.dictionary(metadata.propertyList).binaryPropertyListValue)
        try inTransaction {
            try execute(#"DELETE FROM "Z_METADATA""#)
            try execute(
                """
                INSERT INTO "Z_METADATA" ("Z_VERSION", "Z_UUID", "Z_PLIST") VALUES (1, \(metadata.uuid), \(plist))
                """)
        }
    }

    /// The model recorded in `Z_MODELCACHE`.
    func readModelCache() throws -> ManagedObjectModel {
        let content = try fetchValue(#"SELECT "Z_CONTENT" FROM "Z_MODELCACHE" LIMIT 1"#)?.data
        guard let content, !content.isEmpty else {
            throw TernError(.schemaMismatch, "The store has no model cache (Z_MODELCACHE); open it with its model.")
        }
        do {
            return try ModelCache.decode(content)
        } catch {
            throw TernError(
                .schemaMismatch, "The store's model cache cannot be decoded (\(error)); open it with its model.",
                underlyingError: error)
        }
    }

    // MARK: - Reading a store's layout

    /// Builds the schema of an existing store: entity numbers from `Z_PRIMARYKEY` (by name, else
    /// by renaming identifier), columns from the catalog.
    ///
    /// - Throws: `TernError` with code `schemaMismatch` when a table or column is missing.
    func readSchema(model: ManagedObjectModel) throws -> StoreSchema {
        var rows: [StoreSchema.PrimaryKeyRow] = []
        try forEachRow(#"SELECT "Z_ENT", "Z_NAME", "Z_SUPER" FROM "Z_PRIMARYKEY" ORDER BY "Z_ENT""#) { row in
            rows.append(
                StoreSchema.PrimaryKeyRow(
                    number: Int(row[0].int64 ?? 0), name: row[1].string ?? "", superNumber: Int(row[2].int64 ?? 0)))
        }
        var columns: [String: Set<String>] = [:]
        try forEachRow(
            """
            SELECT table_name::text, column_name::text FROM information_schema.columns WHERE table_schema = current_schema()
            """
        ) { row in
            columns[row[0].string ?? "", default: []].insert(row[1].string ?? "")
        }
        do {
            return try StoreSchema(model: model, primaryKeyRows: rows, actualColumns: columns)
        } catch {
            throw TernError(.schemaMismatch, error.message, underlyingError: error)
        }
    }
}
