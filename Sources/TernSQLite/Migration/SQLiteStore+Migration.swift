import Foundation
import TernCore
import TernMigration
import TernRelational

/// One migration step as the source store runs it.
struct StepJob: Sendable {
    /// The mapping models, in order.
    var passes: [MappingModel]
    /// The destination model.
    var destinationModel: ManagedObjectModel
    /// The destination file, which must not exist yet.
    var path: String
    /// The store URL whose support folder receives external binary data; nil keeps values inline.
    var externalDataStore: URL?
    /// The destination's metadata.
    var metadata: StoreMetadata
    /// The journal mode the destination is left in.
    var journalMode: SQLiteConfiguration.JournalMode
    /// Batch size, policies and expression environment.
    var options: MigrationOptions
    /// The step's index, for events.
    var step: Int
    /// The destination version's name, for messages.
    var versionName: String
    /// Whether objects keep their primary keys and `Z_OPT` (inferred steps, as in place).
    var keepsKeys: Bool
}

extension SQLiteStore {
    // MARK: - Running a migration step

    /// Runs a migration step from this store (opened read-only) into a new destination file, on
    /// this store's executor, in one destination transaction; returns the number of source objects
    /// and the number of links dropped because their object no longer fits the relationship.
    ///
    /// The destination is written with `synchronous=OFF`: it is not the store until it has been
    /// fsynced and renamed, so a crash before that only leaves a temporary file to remove.
    func runMigrationStep(
        _ job: StepJob, progress: ProgressBox, emit: @Sendable (MigrationEvent) -> Void
    ) throws -> (objects: Int, droppedLinks: Int) {
        let model = job.destinationModel
        let schema = try StoreSchema(model: model, numbers: StoreSchema.assignedNumbers(for: model))
        var configuration = SQLiteConfiguration(journalMode: .delete)
        configuration.synchronous = .off
        configuration.fullSync = false
        let connection = try Connection(path: job.path, configuration: configuration)
        try connection.createStore(schema: schema, metadata: job.metadata, modelCache: Self.encodedModelCache(model))
        if recordsHistory { try connection.continueHistory(after: try lastHistoryToken(), for: model) }
        let finalURL = job.externalDataStore ?? URL(fileURLWithPath: job.path)
        let step = job.step
        // ATTACH cannot run inside the step's transaction; the source is read only, never written.
        var attached = false
        if job.options.compilesMappingsToSQL, !job.keepsKeys { attached = connection.attachForBulkMigration(url) }
        defer { if attached { connection.detachBulkMigrationSource() } }
        let engine = try SQLiteMigrationEngine(
            source: self, destination: connection, schema: schema, finalURL: finalURL,
            externalStorage: job.externalDataStore != nil, environment: job.options.environment,
            batchSize: job.options.batchSize, keepsKeys: job.keepsKeys,
            carriedKeys: job.keepsKeys ? try carriedKeys(of: job.passes, into: schema) : [:],
            attachedSource: attached ? Connection.bulkSourceSchema : nil
        ) { count throws(MigrationError) in
            progress.progress.completedUnitCount += Int64(count)
            try Task.checkCancellationAsMigration()
        }
        var total = 0
        var counts: [(String, Int)] = []
        // Each source entity counted once, however many mappings read it.
        var entityCounts: [String: Int] = [:]
        for pass in job.passes {
            for mapping in pass.ordering(in: model).entityMappings where mapping.kind != .add && mapping.kind != .remove
            {
                guard let entity = mapping.sourceEntityName else { continue }
                let count = try entityCounts[entity] ?? engine.sourceCount(of: entity)
                entityCounts[entity] = count
                counts.append((mapping.name, count))
                total += count
            }
        }
        progress.progress.totalUnitCount = Int64(total)
        for (name, count) in counts { emit(.entityMappingStarted(step: step, mapping: name, objects: count)) }
        let (sourceConnection, sourceSchema) = (self.connection, self.schema)
        // Uniqueness constraints are checked once the rows are in: a duplicate then gets the same
        // refusal as in place (entity, properties, counts) rather than SQLite's constraint error.
        let constraints = UniquenessCheck.checks(of: schema).sorted { $0.key < $1.key }
        let indexStatements = Connection.indexStatements(of: schema)
        try connection.inTransaction(.immediate) {
            for (name, _) in constraints { try connection.executeOnce("DROP INDEX \(.identifier(name))") }
            try MappingRunner(policies: job.options.policies).run(job.passes, manager: engine)
            try Self.carryGlobalIdentities(
                from: sourceConnection, schema: sourceSchema, into: connection, schema: schema, passes: job.passes,
                manager: engine)
            try engine.finish()
            for (name, check) in constraints {
                try connection.checkUnique(check, version: job.versionName)
                if let statement = indexStatements[name] { try connection.executeOnce(SQL(unsafeSQL: statement)) }
            }
        }
        // Detached before the journal mode changes: the pragma would apply to the source too.
        if attached {
            connection.detachBulkMigrationSource()
            attached = false
        }
        for mapping in engine.mappingsRunAsSQL { emit(.entityMappingRanAsSQL(step: step, mapping: mapping)) }
        for mapping in engine.relationshipsSetAsSQL { emit(.relationshipsSetAsSQL(step: step, mapping: mapping)) }
        if job.journalMode == .wal { try connection.executeOnce("PRAGMA journal_mode=WAL") }
        return (total, engine.droppedLinks)
    }

    /// The largest key each destination root table's source roots ever gave (their `Z_MAX`),
    /// so that keys of deleted objects are not given again after a migration that keeps keys.
    private func carriedKeys(of passes: [MappingModel], into destination: StoreSchema) throws(SQLiteError) -> [String:
        Int64]
    {
        var largest: [Int: Int64] = [:]
        try connection.forEachRow("SELECT Z_ENT, Z_MAX FROM Z_PRIMARYKEY") { row in
            largest[Int(row[0].int64 ?? 0)] = row[1].int64 ?? 0
        }
        return schema.carriedKeys(of: passes, largestKeys: largest, into: destination)
    }
}
