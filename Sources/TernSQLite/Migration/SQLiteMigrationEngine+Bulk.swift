internal import CSQLite
import Foundation
package import TernCore
import TernMigration
import TernRelational

extension Connection {
    // MARK: - The source of a bulk migration

    /// The schema name the source store is attached under.
    static let bulkSourceSchema = "tern_source"
    /// The SQL function a bulk statement calls for a row it cannot handle as Swift does: it fails
    /// the statement, which is rolled back so that the mapping runs in Swift.
    static let bulkFallbackFunction = "tern_bulk_fallback"
    /// The message of that failure.
    static let bulkFallbackMessage = "tern: this row needs the Swift path"
    /// The SQL function that gives a random UUID's 16 bytes, as `UUID()` makes it, for `uuid()`.
    static let bulkUUIDFunction = "tern_uuid"

    /// Attaches a source store read-only and registers ``bulkFallbackFunction``.
    ///
    /// The source is never written: it is opened as the store's own read-only connection opens it.
    ///
    /// - Parameter url: The source store file.
    /// - Returns: Whether the source is attached; false (nothing attached) when SQLite refuses,
    ///   and every mapping then runs in Swift.
    func attachForBulkMigration(_ url: URL) -> Bool {
        let code = sqlite3_create_function_v2(
            handle, Self.bulkFallbackFunction, 0, SQLITE_UTF8, nil,
            { context, _, _ in sqlite3_result_error(context, Connection.bulkFallbackMessage, -1) }, nil, nil, nil)
        guard code == SQLITE_OK else { return false }
        // Not deterministic: SQLite calls it once per row.
        let uuidCode = sqlite3_create_function_v2(
            handle, Self.bulkUUIDFunction, 0, SQLITE_UTF8, nil,
            { context, _, _ in
                var bytes = UUID().uuid
                withUnsafeBytes(of: &bytes) { buffer in
                    sqlite3_result_blob(context, buffer.baseAddress, 16, sqliteTransient)
                }
            }, nil, nil, nil)
        guard uuidCode == SQLITE_OK else { return false }
        var uri = Self.uri(forPath: url.path) + "?mode=ro"
        // As the store's own read-only connection: a closed write-ahead-log store is read as
        // immutable, so that SQLite creates no `-wal` or `-shm` file beside it.
        if Self.isWriteAheadLogFile(atPath: url.path), !FileManager.default.fileExists(atPath: url.path + "-wal") {
            uri += "&immutable=1"
        }
        do {
            try execute("ATTACH DATABASE \(uri) AS \(.identifier(Self.bulkSourceSchema))")
            return true
        } catch {
            return false
        }
    }

    /// Detaches the source attached by ``attachForBulkMigration(_:)``.
    func detachBulkMigrationSource() {
        clearStatementCache()
        try? execute("DETACH DATABASE \(.identifier(Self.bulkSourceSchema))")
    }
}

extension SQLiteMigrationEngine: BulkMappingEngine {
    /// Runs stage 1 of a mapping as one `INSERT … SELECT` from the attached source, then records
    /// its associations from the source keys, in a savepoint: a row the statement cannot handle
    /// as Swift does rolls it back, and the mapping runs in Swift (see `docs/MappingsAsSQL.md`).
    ///
    /// - Complexity: One statement over the source rows, and one read of their keys.
    func createDestinationInstancesInBulk(_ bulk: BulkMapping) throws(MigrationError) -> Bool {
        guard let schemaName = attachedSource, !keepsKeys else { return false }
        // uuid() of a migration's own generator (a test's) stays in Swift.
        guard !bulk.makesUUIDs || environment.generatesRandomUUIDs else { return false }
        try flush()
        try throwPending()
        let plan = try insertPlan(of: bulk.destinationEntity)
        let destination = self.destination
        guard plan.perRowDefaults.isEmpty else { return false }
        let store = source
        let (table, filter, sourceColumns) = try Self.storeWork {
            try store.assumeIsolated { store in
                let layout = try store.schema.entity(named: bulk.sourceEntity)
                var filter: SQL? = layout.rowFilter(includingSubentities: false, alias: "s")
                if let predicate = bulk.filter {
                    filter = BulkSourceColumns.filterCondition(
                        predicate, entity: bulk.sourceEntity, schema: store.schema, dialect: SQLiteDialect(),
                        tableSchema: schemaName
                    ).map { (filter ?? "") + " AND " + $0 }
                }
                let columns = BulkSourceColumns(
                    layout: layout, schema: store.schema, values: bulk.attributes.map(\.value))
                return (layout.table, filter, columns)
            }
        }
        // A filter SQL cannot express exactly runs in Swift.
        guard let filter else { return false }
        guard let joins = sourceColumns.joinClause(schema: schemaName) else {
            return false
        }
        var values: [SQL] = []
        for slot in plan.columns.indices.dropFirst(3) {
            guard let column = plan.columns[slot] else { return false }
            if let value = bulk.attributes.first(where: { $0.name == column.name })?.value.replacingNow(
                with: environment.now)
            {
                guard let sql = BulkSQL.render(value, columns: sourceColumns) else { return false }
                values.append(sql)
            } else {
                values.append("\(plan.defaults[slot])")
            }
        }
        let base = plan.lastKey.value
        // Keys as the Swift path gives them, `base + 1, base + 2, …` in source key order: when the
        // table's largest key is `base` (every key given so far is in it), SQLite gives exactly
        // those to NULL keys inserted in the SELECT's order. A window function
        // (`base + ROW_NUMBER() OVER (ORDER BY Z_PK)`) would buffer every row: 1.51 s against
        // 0.85 s for one split mapping of 1,000,000 rows in the sqlite3 shell.
        let largest = try Self.storeWork {
            try destination.fetchValue("SELECT MAX(Z_PK) FROM \(.identifier(plan.layout.table))")?.int64 ?? 0
        }
        guard largest == base else { return false }
        let names = ["Z_PK", "Z_ENT", "Z_OPT"] + plan.columns.dropFirst(3).compactMap { $0?.column }
        let sourceTable: SQL = "\(.identifier(schemaName)).\(.identifier(table))"
        var insert = SQL(unsafeSQL: "INSERT INTO \(SQL.quoted(plan.layout.table)) (")
        insert.append(SQL(unsafeSQL: names.map(SQL.quoted).joined(separator: ", ") + ") SELECT "))
        insert.append("NULL, \(plan.defaults[1]), 1")
        for value in values { insert.append(", " + value) }
        insert.append(" FROM \(sourceTable) AS s" + joins + " WHERE \(filter) ORDER BY s.Z_PK")
        try Task.checkCancellationAsMigration()
        var count = 0
        let ran = try inBulkSavepoint(isFallback: Self.calledFallback(_:)) {
            try destination.execute(insert)
            count = destination.changedRowCount
        }
        guard ran else { return false }
        plan.lastKey.value = base + Int64(count)
        // The associations the Swift path would make, source key after source key: each island
        // of consecutive source keys is one range of them.
        let associations = self.associations
        let (sourceEntity, destinationEntity, mapping) = (bulk.sourceEntity, bulk.destinationEntity, bulk.mapping.name)
        var island: (start: Int64, count: Int64, destination: Int64)?
        func record(_ island: (start: Int64, count: Int64, destination: Int64)) throws {
            try associations.associateRange(
                sourceEntity: sourceEntity, sourceStart: island.start, destinationEntity: destinationEntity,
                destinationStart: island.destination, count: island.count, mapping: mapping)
        }
        try Self.storeWork {
            try destination.forEachStatementRow(
                "SELECT s.Z_PK FROM \(sourceTable) AS s WHERE \(filter) ORDER BY s.Z_PK"
            ) { row in
                let key = row.integer(at: 0) ?? 0
                if let current = island, current.start &+ current.count == key {
                    island?.count += 1
                    return
                }
                let next = island.map { $0.destination + $0.count } ?? base + 1
                if let island { try record(island) }
                island = (key, 1, next)
            }
            if let island { try record(island) }
        }
        mappingsRunAsSQL.append(mapping)
        try onBatch(count)
        return true
    }
}

extension SQLiteMigrationEngine: BulkRelationshipEngine {
    /// Runs stage 2 of a mapping as one statement per relationship over the attached source and
    /// the association table (``BulkRelationshipSQL``), in a savepoint: a related object the
    /// statements cannot handle as Swift does rolls them back, and the mapping runs in Swift.
    ///
    /// - Complexity: A few statements per relationship, each over the mapping's objects.
    func setRelationshipsInBulk(_ bulk: BulkRelationships) throws(MigrationError) -> Bool {
        guard let schemaName = attachedSource else { return false }
        try flush()
        try throwPending()
        let (store, destination, schema, associations) = (source, self.destination, self.schema, self.associations)
        let statements = try Self.storeWork {
            let sourceSchema = store.assumeIsolated { $0.schema }
            try associations.flush()
            return try BulkRelationshipSQL(
                source: sourceSchema, sourceTables: schemaName, destination: schema,
                fallback: SQL(unsafeSQL: Connection.bulkFallbackFunction + "()")
            ).statements(bulk)
        }
        guard let statements else { return false }
        try Task.checkCancellationAsMigration()
        let ran = try inBulkSavepoint(
            cleanup: "DROP TABLE IF EXISTS \(.identifier(BulkRelationshipSQL.pairTable))",
            isFallback: Self.calledFallback(_:)
        ) {
            for statement in statements { try destination.execute(statement) }
        }
        guard ran else { return false }
        relationshipsSetAsSQL.append(bulk.mapping.name)
        return true
    }

    /// Whether an error is a statement's call of the fallback function (a row for Swift).
    private static func calledFallback(_ error: any Error) -> Bool {
        (error as? SQLiteError)?.message.contains(Connection.bulkFallbackMessage) == true
    }
}

extension SQLiteStoreMigrator {
    /// Whether a mapping's filter has an SQL form on a SQLite store of a model, as the engine
    /// translates it when the mapping runs: what `tern plan` forecasts (#24).
    ///
    /// - Parameters:
    ///   - filter: The mapping's filter.
    ///   - entity: The source entity.
    ///   - model: The source model.
    /// - Complexity: O(*n*) in the size of the model, to lay out its tables.
    package static func runsMigrationFilterAsSQL(
        _ filter: FetchPredicate, of entity: String, in model: ManagedObjectModel
    ) -> Bool {
        BulkSourceColumns.translates(filter, of: entity, in: model, dialect: SQLiteDialect())
    }
}
