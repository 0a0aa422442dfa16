import Foundation
package import TernCore
package import TernMigration
package import TernRelational

extension PostgreSQLMigrationSession {
    // MARK: - Built beside, on the server

    /// Runs a plan's steps table to table on the server, each from the tables the previous step
    /// left into a scratch schema of the same database, without a local file; returns the number
    /// of source objects each step read. ``replaceStore(keys:)`` then swaps the result in.
    ///
    /// Each step runs in one transaction of a connection of its own: it creates the destination
    /// model's tables (indexes, derived-count triggers, `Z_PRIMARYKEY`, `Z_METADATA` with the
    /// journal, `Z_MODELCACHE`), streams the source rows in keyset pages through
    /// ``TernMigration/MappingRunner`` into them (``PostgreSQLMigrationEngine``: rows loaded with
    /// `COPY`, associations in a table of the scratch schema), records `Z_MAX`, counts the
    /// duplicates of each uniqueness constraint before creating its index, and commits. Inferred
    /// steps keep primary keys and `Z_OPT`, and refuse attributes that become required with
    /// empty values, as on SQLite. The store's own tables are only read.
    ///
    /// - Parameters:
    ///   - steps: The plan's steps, each with its source and destination models.
    ///   - journal: The store's journal before the migration.
    ///   - options: Batch size, policies and the expression environment.
    ///   - onStep: Called as each step starts (`index`) and with its object counts per entity mapping.
    ///   - onMappingRanAsSQL: Called after a step with each of its entity mappings whose stage 1
    ///     ran as one `INSERT … SELECT`, then with each whose stage 2 ran as SQL (`relationships`
    ///     true) (``MigrationOptions/compilesMappingsToSQL``).
    ///   - onBatch: Called after each batch of source objects with its count; throws to stop.
    /// - Throws: ``TernMigration/MigrationError`` from a mapping, a policy, a check or the server
    ///   (`storeFailure`); the store is unchanged, the scratch schemas are left for
    ///   ``rollback()`` or the next run to drop.
    /// - Complexity: O(*n*) in the objects of each step; memory bounded by the batch size.
    package func buildBeside(
        _ steps: [(step: MigrationPlan.Step, from: ManagedObjectModel, to: ManagedObjectModel)],
        journal: MigrationJournal, options: MigrationOptions,
        onStep: (_ index: Int, _ counts: [(mapping: String, objects: Int)]) -> Void,
        onMappingRanAsSQL: (_ index: Int, _ mapping: String, _ relationships: Bool) -> Void = { _, _, _ in },
        onBatch: @escaping (Int) throws(MigrationError) -> Void
    ) throws -> [Int] {
        let old = try metadata()
        var journal = journal
        var totals: [Int] = []
        var sourceSchema = schema
        for (index, (step, from, to)) in steps.enumerated() {
            let destinationSchema = (steps.count - 1 - index) % 2 == 0 ? scratchSchema : stepScratchSchema
            journal.entries.append(
                MigrationJournal.Entry(
                    from: step.from, to: step.to, kind: step.kind.rawValue, checksum: step.mappingChecksum, date: Date()
                ))
            let metadata = Self.migratedMetadata(old, model: to, journal: journal)
            totals.append(
                try runStep(
                    step, index: index, from: (sourceSchema, from), to: (destinationSchema, to), metadata: metadata,
                    options: options, onStep: onStep, onMappingRanAsSQL: onMappingRanAsSQL, onBatch: onBatch))
            sourceSchema = destinationSchema
        }
        return totals
    }

    /// Runs one step from the tables of one schema into a new store in another; returns the
    /// number of source objects.
    private func runStep(
        _ step: MigrationPlan.Step, index: Int, from source: (schema: String, model: ManagedObjectModel),
        to destination: (schema: String, model: ManagedObjectModel), metadata: StoreMetadata, options: MigrationOptions,
        onStep: (_ index: Int, _ counts: [(mapping: String, objects: Int)]) -> Void,
        onMappingRanAsSQL: (_ index: Int, _ mapping: String, _ relationships: Bool) -> Void,
        onBatch: @escaping (Int) throws(MigrationError) -> Void
    ) throws -> Int {
        let sourceLocation = try PostgreSQLLocation(location.connectionString(schema: source.schema))
        let store = try PostgreSQLStore(location: sourceLocation, model: source.model, readOnly: true)
        let reader = try Connection(sourceLocation)
        let writer = try Connection(try PostgreSQLLocation(location.connectionString(schema: destination.schema)))
        let layout = try StoreSchema(
            model: destination.model, numbers: StoreSchema.assignedNumbers(for: destination.model))
        var constraints: [String: UniquenessCheck] = [:]
        for (name, check) in UniquenessCheck.checks(of: layout) { constraints[Connection.indexName(name)] = check }
        if step.kind == .inferred, let mapping = step.mappings.first {
            _ = try StepDataCheck.require(
                mapping, source: store.schema, destination: destination.model, step: (step.from, step.to)
            ) {
                try reader.fetchValue($0)?.int64 ?? 0
            }
        }
        return try writer.inTransaction {
            try writer.execute("DROP SCHEMA \(.identifier(destination.schema)) CASCADE")
            try writer.execute("CREATE SCHEMA \(.identifier(destination.schema))")
            let (statements, uniqueIndexes) = Connection.creationStatements(
                for: layout, deferring: Set(constraints.keys))
            for statement in statements { try writer.executeScript(statement) }
            try writer.installDerivedCountTriggers(for: layout)
            try writer.writePrimaryKeyRows(of: layout)
            try writer.writeMetadata(metadata)
            try writer.writeModelCache(destination.model)
            let keepsKeys = step.kind == .inferred
            var largest: [Int: Int64] = [:]
            try reader.forEachRow(#"SELECT "Z_ENT", "Z_MAX" FROM "Z_PRIMARYKEY""#) { row in
                largest[Int(row[0].int64 ?? 0)] = row[1].int64 ?? 0
            }
            let engine = try PostgreSQLMigrationEngine(
                source: store, reader: reader, destination: writer, schema: layout, environment: options.environment,
                batchSize: options.batchSize, keepsKeys: keepsKeys,
                carriedKeys: keepsKeys
                    ? store.schema.carriedKeys(of: step.mappings, largestKeys: largest, into: layout) : [:],
                bulkSourceSchema: options.compilesMappingsToSQL ? source.schema : nil, onBatch: onBatch)
            var counts: [(mapping: String, objects: Int)] = []
            for pass in step.mappings {
                for mapping in pass.ordering(in: destination.model).entityMappings
                where mapping.kind != .add && mapping.kind != .remove {
                    guard let entity = mapping.sourceEntityName else { continue }
                    counts.append((mapping.name, try engine.sourceCount(of: entity)))
                }
            }
            onStep(index, counts)
            try MappingRunner(policies: options.policies).run(step.mappings, manager: engine)
            try engine.finish()
            for mapping in engine.mappingsRunAsSQL { onMappingRanAsSQL(index, mapping, false) }
            for mapping in engine.relationshipsSetAsSQL { onMappingRanAsSQL(index, mapping, true) }
            for index in uniqueIndexes {
                if let check = constraints[index.name] {
                    // PostgreSQL's SUM of counts is numeric: cast back to bigint.
                    let row = try writer.fetchOne(
                        "SELECT groups, CAST(objects AS bigint) FROM (" + check.countQuery
                            + ") AS counted (groups, objects)")
                    if let failure = check.failure(
                        groups: row?[0].int64 ?? 0, objects: row?[1].int64 ?? 0, version: step.to)
                    {
                        throw failure
                    }
                }
                try writer.executeScript(index.statement)
            }
            return counts.reduce(0) { $0 + $1.objects }
        }
    }
}
