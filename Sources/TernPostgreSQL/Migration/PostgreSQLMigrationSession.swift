import Foundation
package import TernCore
package import TernMigration
package import TernRelational

/// One process's migration of a PostgreSQL store: a connection of its own holding the store's
/// session-level migration lock (`pg_advisory_lock`, keyed on the store's schema) from creation
/// until it is released or the connection closes, however the process ends.
///
/// Through it a migrator reads the store's metadata, runs inferred steps in place (DDL in one
/// transaction) or, for a plan built beside the store, blocks writers (`LOCK TABLE … IN
/// EXCLUSIVE MODE`, reads go on) until the migrated tables, built in a scratch schema, replace the
/// store's in one transaction. Used by `PostgreSQLMigrator` (TernStores).
package final class PostgreSQLMigrationSession {
    /// The store's location.
    package let location: PostgreSQLLocation
    /// The schema holding the store's tables.
    package let schema: String
    /// The connection holding the lock; closing it (its `deinit`) releases the lock and rolls
    /// back any open transaction, so no explicit unlock is needed.
    let connection: Connection
    /// Whether the writers' lock transaction is open.
    private var isHoldingWriters = false

    /// The advisory lock class of migrations (the key's first half; the second is the schema's hash).
    static let lockClass: Int64 = 0x7465_726D

    /// Connects and takes the store's migration lock, waiting while another process holds it.
    ///
    /// - Parameters:
    ///   - location: The store's location.
    ///   - timeout: How long to wait for the lock; nil waits as long as it takes.
    ///   - onWait: Called once, with a description of the holder, when the lock is taken.
    /// - Throws: ``PostgreSQLError`` with code `locked`, naming the holder, when the timeout
    ///   passes; `connectionFailed` when the server cannot be reached; `CancellationError` when
    ///   the task is cancelled while waiting.
    package init(
        location: PostgreSQLLocation, timeout: Duration?, onWait: (String) -> Void
    ) async throws {
        self.location = location
        connection = try Connection(location)
        schema = try connection.fetchValue("SELECT current_schema()::text")?.string ?? "public"
        // gethostname, not ProcessInfo.hostName, which may wait for a DNS lookup.
        var name = [CChar](repeating: 0, count: 256)
        let host =
            gethostname(&name, name.count - 1) == 0
            ? String(decoding: name.prefix { $0 != 0 }.map { UInt8(bitPattern: $0) }, as: UTF8.self) : "an unknown host"
        try connection.execute(
            """
            SELECT set_config('application_name', \("tern migrate (pid \(getpid()) on \(host))"), false)
            """)
        let start = ContinuousClock.now
        var warned = false
        while try !tryLock() {
            let holder = try lockHolder()
            if !warned {
                onWait(holder)
                warned = true
            }
            if let timeout, ContinuousClock.now - start >= timeout {
                throw TernError(
                    .storeBusy,
                    "Another process is migrating the store at \(location.description) (\(holder)); "
                        + "wait for it to finish, or give a longer lock timeout.")
            }
            try await Task.sleep(for: .milliseconds(50))
        }
    }

    // MARK: - Reading

    /// The store's metadata.
    ///
    /// - Throws: ``PostgreSQLError`` with code `notACoreDataStore` when the schema holds no store.
    package func metadata() throws -> StoreMetadata {
        try connection.readMetadata()
    }

    /// The connection string of a scratch schema beside the store's, for a plan built beside it.
    package var scratchURL: String { location.connectionString(schema: scratchSchema) }

    /// The scratch schema's name: where the migrated store is built.
    package var scratchSchema: String { Connection.indexName(schema + "_tern_migrating") }

    /// The second scratch schema of a plan built beside in several steps: steps write the two
    /// scratch schemas in turn, each reading the one the step before wrote, the last writing
    /// ``scratchSchema``.
    var stepScratchSchema: String { Connection.indexName(schema + "_tern_migrating_step") }

    /// Drops the scratch schema an interrupted migration left; returns its name when there was one.
    ///
    /// - Throws: ``PostgreSQLError`` when the server refuses.
    package func removeLeftovers() throws -> String? {
        var removed: [String] = []
        for name in [scratchSchema, stepScratchSchema] {
            guard try connection.fetchValue("SELECT 1 FROM pg_namespace WHERE nspname = \(name)") != nil else {
                continue
            }
            try connection.execute("DROP SCHEMA \(.identifier(name)) CASCADE")
            removed.append("schema \(name)")
        }
        return removed.isEmpty ? nil : removed.joined(separator: ", ")
    }

    /// Refuses, before anything is written, a store with rows no entity of its `Z_PRIMARYKEY` owns
    /// (``TernSQLite/EntityNumberCheck``): a migration would leave them out or relabel them.
    ///
    /// - Parameter model: The model of the store's current version.
    /// - Throws: ``TernMigration/MigrationError`` with code `storeFailure` naming each table with
    ///   stray rows; ``PostgreSQLError`` when the server refuses.
    /// - Complexity: One scan of each root table.
    package func checkEntityNumbers(model: ManagedObjectModel) throws {
        let layout = try connection.readSchema(model: model)
        try EntityNumberCheck.requireNoStrayRows(in: layout) { try connection.fetchValue($0)?.int64 ?? 0 }
    }

    // MARK: - In place

    /// Runs inferred steps on the store's tables, with DDL in one transaction, without loading
    /// objects; returns the number of objects each step migrated.
    ///
    /// Every step is planned first (``TernSQLite/TableMigrationPlan``) against the layout the
    /// previous one leaves, so that nothing is written unless all can run in place. Then one
    /// transaction rewrites, step after step, the tables, `Z_PRIMARYKEY`, `Z_METADATA` (version
    /// hashes, the journal with each step; other application keys kept) and `Z_MODELCACHE`.
    ///
    /// - Parameters:
    ///   - steps: The plan's steps, each with its source and destination models.
    ///   - journal: The store's journal before the migration.
    ///   - checkpoint: Called between statements; throws to stop (everything is rolled back).
    ///   - onStep: Called as each step starts (`index`) and with its object counts per entity mapping.
    /// - Throws: ``TernSQLite/InPlaceUnsupported`` before anything is written when a step has a
    ///   mapping model or cannot run in place; ``PostgreSQLError`` after a rollback.
    package func runInPlace(
        _ steps: [(step: MigrationPlan.Step, from: ManagedObjectModel, to: ManagedObjectModel)],
        journal: MigrationJournal, checkpoint: () throws -> Void,
        onStep: (_ index: Int, _ counts: [(mapping: String, objects: Int)]) -> Void
    ) throws -> [Int] {
        var mappings: [MappingModel] = []
        for (step, _, _) in steps {
            guard step.kind == .inferred, step.mappings.count == 1, let mapping = step.mappings.first else {
                throw InPlaceUnsupported("step \(step.from) → \(step.to) has a mapping model")
            }
            mappings.append(mapping)
        }
        guard let first = steps.first else { return [] }
        let firstLayout = try connection.readSchema(model: first.from)
        var layout = firstLayout
        var readByNumber: Set<String> = []
        for (index, (_, _, to)) in steps.enumerated() {
            let next = try StoreSchema(model: to, numbers: StoreSchema.assignedNumbers(for: to))
            let plan = try TableMigrationPlan(
                source: layout, destination: next, mapping: mappings[index], largestKeys: [:])
            readByNumber.formUnion(
                plan.tablesReadByEntityNumber { alteration, column, values in
                    Connection.fillsWithoutUpdate(alteration, column, values, in: next)
                })
            layout = next
        }
        var metadata = try connection.readMetadata()
        var journal = journal
        return try connection.inTransaction {
            try connection.execute("SET LOCAL lock_timeout TO '60s'")
            // Rows of a table that is one entity's alone are that entity's whatever their Z_ENT:
            // given its number first, the steps that read or rewrite them by it find them all. A
            // table only altered by statements that touch no row is not scanned.
            for statement in firstLayout.relabellingStatements(of: readByNumber) {
                try connection.execute(statement)
            }
            var counts: [Int] = []
            for (index, (step, from, to)) in steps.enumerated() {
                try checkpoint()
                let source = try connection.readSchema(model: from)
                let destination = try StoreSchema(model: to, numbers: StoreSchema.assignedNumbers(for: to))
                var largestKeys: [Int: Int64] = [:]
                try connection.forEachRow(#"SELECT "Z_ENT", "Z_MAX" FROM "Z_PRIMARYKEY""#) { row in
                    largestKeys[Int(row[0].int64 ?? 0)] = row[1].int64 ?? 0
                }
                let plan = try TableMigrationPlan(
                    source: source, destination: destination, mapping: mappings[index], largestKeys: largestKeys)
                var objects: [(mapping: String, objects: Int)] = []
                for entityMapping in mappings[index].entityMappings
                where entityMapping.kind == .copy || entityMapping.kind == .transform {
                    guard let name = entityMapping.sourceEntityName, let entity = source.entities[name] else {
                        continue
                    }
                    let count =
                        try connection.fetchValue(
                            """
                            SELECT COUNT(*) FROM \(.identifier(entity.table)) WHERE \(entity.rowFilter(includingSubentities: false))
                            """)?.int64 ?? 0
                    objects.append((entityMapping.name, Int(count)))
                }
                // Attributes that become required without a default must have values (as on SQLite).
                _ = try StepDataCheck.require(
                    mappings[index], source: source, destination: to, step: (step.from, step.to)
                ) {
                    try connection.fetchValue($0)?.int64 ?? 0
                }
                onStep(index, objects)
                try connection.apply(plan, versionName: step.to, checkpoint: checkpoint)
                journal.entries.append(
                    MigrationJournal.Entry(
                        from: step.from, to: step.to, kind: step.kind.rawValue, checksum: step.mappingChecksum,
                        date: Date()))
                metadata = Self.migratedMetadata(metadata, model: to, journal: journal)
                try connection.writeMetadata(metadata)
                try connection.writeModelCache(to)
                counts.append(objects.reduce(0) { $0 + $1.objects })
            }
            try checkpoint()
            return counts
        }
    }

    /// The metadata of a store migrated to a model: the new version hashes and identifiers, the
    /// journal, the UUID and the other application keys kept.
    package static func migratedMetadata(
        _ old: StoreMetadata, model: ManagedObjectModel, journal: MigrationJournal
    ) -> StoreMetadata {
        var metadata = StoreMetadata(newStoreOf: .postgreSQL, uuid: old.uuid, model: model)
        for (key, value) in old.applicationKeys where metadata.applicationKeys[key] == nil {
            metadata.applicationKeys[key] = value
        }
        metadata.applicationKeys[MigrationJournal.journalKey] = journal.propertyListValue
        return metadata
    }

    // MARK: - Built beside

    /// Opens the transaction that keeps writers out of the store's tables (`EXCLUSIVE` mode:
    /// reads go on) until ``replaceStore(keys:)`` or ``rollback()``.
    ///
    /// - Throws: ``PostgreSQLError`` when the tables cannot be locked.
    package func holdWriters() throws {
        let tables = try ownedTables()
        try connection.execute("BEGIN")
        isHoldingWriters = true
        guard !tables.isEmpty else { return }
        try connection.execute(
            "LOCK TABLE \(SQL.joined(tables.map { SQL.identifier($0) })) IN EXCLUSIVE MODE")
    }

    /// Replaces the store's tables with the complete store built in the scratch schema, in the
    /// transaction ``holdWriters()`` opened: the old tables are dropped, the new ones moved into the
    /// store's schema, the scratch schema dropped, then everything commits at once.
    ///
    /// - Parameter keys: The `Z_MAX` of each entity by name, at least (keys given before stay used).
    /// - Throws: ``PostgreSQLError`` when the server refuses; nothing has changed then.
    package func replaceStore(keys: [String: Int64]) throws {
        precondition(isHoldingWriters, "holdWriters() opens the transaction replaceStore commits")
        do {
            for table in try ownedTables() { try connection.execute("DROP TABLE \(.identifier(table))") }
            // The derived-count triggers of the new tables call the scratch schema's function: it moves with them.
            try connection.execute("DROP FUNCTION IF EXISTS \(.identifier(schema)).\"Z_DA_COUNT\"()")
            let function: SQL = """
                SELECT 1 FROM pg_proc p JOIN pg_namespace n ON n.oid = p.pronamespace \
                WHERE p.proname = 'Z_DA_COUNT' AND n.nspname = \(scratchSchema)
                """
            if try connection.fetchValue(function) != nil {
                try connection.execute(
                    "ALTER FUNCTION \(.identifier(scratchSchema)).\"Z_DA_COUNT\"() SET SCHEMA \(.identifier(schema))")
            }
            let moved = try connection.fetchAll(
                """
                SELECT table_name::text FROM information_schema.tables WHERE table_schema = \(scratchSchema) \
                AND table_type = 'BASE TABLE' ORDER BY 1
                """
            ).compactMap { $0.first?.string }
            for table in moved {
                try connection.execute(
                    """
                    ALTER TABLE \(.identifier(scratchSchema)).\(.identifier(table)) SET SCHEMA \(.identifier(schema))
                    """)
            }
            for (name, key) in keys.sorted(by: { $0.key < $1.key }) {
                try connection.execute(
                    """
                    UPDATE "Z_PRIMARYKEY" SET "Z_MAX" = GREATEST("Z_MAX", \(key)) WHERE "Z_NAME" = \(name)
                    """)
            }
            try connection.execute("DROP SCHEMA \(.identifier(scratchSchema))")
            try connection.execute("DROP SCHEMA IF EXISTS \(.identifier(stepScratchSchema)) CASCADE")
            try connection.execute("COMMIT")
            isHoldingWriters = false
        } catch {
            rollback()
            throw error
        }
    }

    /// Ends the writers' lock transaction without changing anything, and drops the scratch schema.
    package func rollback() {
        if isHoldingWriters { try? connection.execute("ROLLBACK") }
        isHoldingWriters = false
        _ = try? removeLeftovers()
    }

    // MARK: - Non public

    /// Tries to take the lock without waiting.
    private func tryLock() throws(PostgreSQLError) -> Bool {
        try connection.fetchValue(
            """
            SELECT pg_try_advisory_lock(CAST(\(Self.lockClass) AS integer), hashtext(\(schema)))
            """)?.int64 == 1
    }

    /// Who holds the lock, as far as the server says: the process, its program and host, and since when.
    private func lockHolder() throws(PostgreSQLError) -> String {
        let row = try connection.fetchOne(
            """
            SELECT a.pid, COALESCE(NULLIF(a.application_name, ''), 'a client'), COALESCE(a.client_addr::text, 'local'), \
            a.usename::text, to_char(a.backend_start, 'YYYY-MM-DD HH24:MI:SS TZ') \
            FROM pg_locks l JOIN pg_stat_activity a ON a.pid = l.pid \
            WHERE l.locktype = 'advisory' AND l.granted AND l.database = (SELECT oid FROM pg_database WHERE datname = current_database()) \
            AND l.classid = CAST(CAST(\(Self.lockClass) AS integer) AS oid) AND l.objid = CAST(hashtext(\(schema)) AS oid) \
            AND l.objsubid = 2 LIMIT 1
            """)
        guard let row else { return "held by a server process that has just ended" }
        return
            "held by \(row[1].string ?? "a client"), server process \(row[0].int64 ?? 0), user \(row[3].string ?? "?"), "
            + "from \(row[2].string ?? "?"), connected since \(row[4].string ?? "?")"
    }

    /// The store's own tables, as ``PostgreSQLStore/destroy(at:)`` finds them.
    private func ownedTables() throws -> [String] {
        try connection.ownedStoreTables()
    }
}
