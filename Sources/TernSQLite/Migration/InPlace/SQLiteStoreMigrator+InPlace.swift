import Foundation
import TernCore
import TernMigration
import TernRelational

extension SQLiteStoreMigrator {
    // MARK: - Inferred steps in place

    /// Runs inferred steps on the store itself, with SQL in one transaction, without loading
    /// objects; returns what each step did (its objects, warnings and dropped links).
    ///
    /// Every step is planned first (``TableMigrationPlan``), against the layout the previous one
    /// leaves, so that nothing is written unless all can run in place. Then one transaction
    /// rewrites, step after step, the tables, `Z_PRIMARYKEY`, `Z_METADATA` (version hashes,
    /// identifiers, the journal with each step) and `Z_MODELCACHE`. A crash or a cancellation
    /// before the commit leaves the store as it was, after it the migrated store: SQLite's
    /// rollback journal or write-ahead log makes the commit atomic and durable (`synchronous=FULL`).
    ///
    /// - Throws: ``InPlaceUnsupported`` before anything is written when a step has a mapping
    ///   model or cannot run in place; ``SQLiteError`` or ``TernMigration/MigrationError``
    ///   (`cancelled`) after a rollback.
    static func runInPlace(
        _ steps: [MigrationPlan.Step], of model: VersionedModel, at url: URL, journal: MigrationJournal,
        progress: Progress?, emit: @Sendable (MigrationEvent) -> Void
    ) throws -> [StepOutcome] {
        var models: [(from: ManagedObjectModel, to: ManagedObjectModel, mapping: MappingModel)] = []
        for step in steps {
            guard step.kind == .inferred, step.mappings.count == 1, let mapping = step.mappings.first else {
                throw InPlaceUnsupported("step \(step.from) → \(step.to) has a mapping model")
            }
            guard let from = model.version(named: step.from)?.model, let to = model.version(named: step.to)?.model
            else {
                throw MigrationError(.unknownVersion, "The model has no version \(step.from) or \(step.to)")
            }
            models.append((from, to, mapping))
        }
        let mode = try SQLiteStore.journalMode(ofStoreAt: url)
        var configuration = SQLiteConfiguration(journalMode: mode)
        configuration.synchronous = .full
        let connection = try SQLiteStore.openExisting(url, configuration: configuration)
        try connection.registerExternalValueFunction(storeURL: url)
        // Plan every step before writing anything: each against the layout the previous one leaves.
        let first = try connection.readSchema(model: models[0].from)
        var layout = first
        var readByNumber: Set<String> = []
        for (_, to, mapping) in models {
            let next = try StoreSchema(model: to, numbers: StoreSchema.assignedNumbers(for: to))
            let plan = try TableMigrationPlan(
                source: layout, destination: next, mapping: mapping, largestKeys: [:], rekeysMovedEntities: true,
                changesExternalStorage: true, dropsLinks: true)
            readByNumber.formUnion(
                plan.tablesReadByEntityNumber { alteration, _, values in
                    Connection.defaultFill(of: alteration, values) != nil
                })
            layout = next
        }
        let uuid = try connection.readMetadata().uuid
        var journal = journal
        var outcomes: [StepOutcome] = []
        try connection.inTransaction(.immediate) { () throws in
            // Rows of a table that is one entity's alone are that entity's whatever their Z_ENT:
            // given its number first, the steps that read or rewrite them by it find them all. A
            // table only altered by statements that touch no row is not scanned.
            try connection.relabelRowsOfUnsharedTables(of: first, among: readByNumber)
            for (index, step) in steps.enumerated() {
                try Task.checkCancellationAsMigration()
                emit(.stepStarted(index: index, from: step.from, to: step.to, kind: step.kind))
                let stepProgress = Progress(totalUnitCount: 0)
                progress?.addChild(stepProgress, withPendingUnitCount: 1)
                journal.entries.append(
                    MigrationJournal.Entry(
                        from: step.from, to: step.to, kind: step.kind.rawValue, checksum: step.mappingChecksum,
                        date: Date()))
                let outcome = try runStepInPlace(
                    models[index].mapping, index: index, step: step, from: models[index].from, to: models[index].to,
                    uuid: uuid, journal: journal, on: connection, emit: emit)
                stepProgress.totalUnitCount = Int64(outcome.objects)
                stepProgress.completedUnitCount = Int64(outcome.objects)
                outcomes.append(outcome)
                emit(.stepFinished(index: index))
            }
            try Task.checkCancellationAsMigration()
        }
        return outcomes
    }

    /// Runs one planned step inside the caller's transaction; returns what it did. The first
    /// step's data was checked with the plan; a later one's is checked here, on the data the
    /// steps before it wrote. Its dropped links are those its checks counted.
    private static func runStepInPlace(
        _ mapping: MappingModel, index: Int, step: MigrationPlan.Step, from fromModel: ManagedObjectModel,
        to toModel: ManagedObjectModel, uuid: String, journal: MigrationJournal, on connection: Connection,
        emit: @Sendable (MigrationEvent) -> Void
    ) throws -> StepOutcome {
        let source = try connection.readSchema(model: fromModel)
        // Before this step writes (the first step was checked before anything was written).
        let warnings =
            index == 0
            ? step.warnings
            : try connection.checkData(of: mapping, source: source, destination: toModel, step: (step.from, step.to))
        let destination = try StoreSchema(model: toModel, numbers: StoreSchema.assignedNumbers(for: toModel))
        var largestKeys: [Int: Int64] = [:]
        try connection.forEachRow("SELECT Z_ENT, Z_MAX FROM Z_PRIMARYKEY") { row in
            largestKeys[Int(row[0].int64 ?? 0)] = row[1].int64 ?? 0
        }
        // A root's largest key is its Z_MAX, or a larger key a row has (from the table's b-tree, O(log n)).
        for layout in source.entities.values where layout.superNumber == 0 {
            let largest = try connection.fetchValue("SELECT MAX(Z_PK) FROM \(.identifier(layout.table))")?.int64 ?? 0
            largestKeys[layout.number] = max(largestKeys[layout.number] ?? 0, largest)
        }
        let plan = try TableMigrationPlan(
            source: source, destination: destination, mapping: mapping, largestKeys: largestKeys,
            rekeysMovedEntities: true,
            changesExternalStorage: true, dropsLinks: true)
        var total = 0
        for entityMapping in mapping.entityMappings
        where entityMapping.kind == .copy || entityMapping.kind == .transform {
            guard let name = entityMapping.sourceEntityName, let layout = source.entities[name] else { continue }
            // A table holding one entity's rows is counted from its smallest index, without reading rows.
            let isAlone =
                !layout.isAbstract
                && !source.entities.values.contains { $0.table == layout.table && $0.name != name && !$0.isAbstract }
            let sql: SQL =
                isAlone
                ? "SELECT COUNT(*) FROM \(.identifier(layout.table))"
                : "SELECT COUNT(*) FROM \(.identifier(layout.table)) WHERE Z_ENT = \(layout.number)"
            let count = Int(try connection.fetchValue(sql)?.int64 ?? 0)
            emit(.entityMappingStarted(step: index, mapping: entityMapping.name, objects: count))
            total += count
        }
        var metadata = StoreSchema.newMetadata(for: toModel, autoVacuum: .none)
        metadata.uuid = uuid
        metadata.applicationKeys[MigrationJournal.journalKey] = journal.propertyListValue
        // As a rebuild does: history stays on, its old transactions (which describe the old layout)
        // go, and transaction numbers continue after the last one.
        var lastTransaction: Int64?
        if try connection.hasHistoryTables() {
            let counter =
                try connection.fetchValue(
                    "SELECT Z_MAX FROM Z_PRIMARYKEY WHERE Z_ENT = \(HistoryTables.transactionEntity)")?.int64 ?? 0
            let largest = try connection.fetchValue("SELECT MAX(Z_PK) FROM ATRANSACTION")?.int64 ?? 0
            lastTransaction = max(counter, largest)
        }
        try connection.apply(plan, versionName: step.to) { try Task.checkCancellationAsMigration() }
        try connection.renumberGlobalIdentities(
            from: source, to: destination, mapping: mapping, keyOffsets: plan.keyOffsets)
        if let lastTransaction {
            for table in ["ACHANGE", "ATRANSACTION", "ATRANSACTIONSTRING"] {
                try connection.executeOnce("DROP TABLE \(.identifier(table))")
            }
            let token =
                lastTransaction > 0 ? HistoryToken(storeIdentifier: uuid, transactionNumber: lastTransaction) : nil
            try connection.continueHistory(after: token, for: toModel)
        }
        try connection.writeMetadata(metadata)
        // Stores written before Core Data kept a model cache (framework 637) have no table for it.
        try connection.execute("CREATE TABLE IF NOT EXISTS Z_MODELCACHE (Z_CONTENT BLOB)")
        try connection.execute("DELETE FROM Z_MODELCACHE")
        if let cache = SQLiteStore.encodedModelCache(toModel) {
            try connection.execute("INSERT INTO Z_MODELCACHE (Z_CONTENT) VALUES (\(cache))")
        }
        connection.clearStatementCache()
        let droppedLinks = warnings.filter { $0.kind == .droppedLinks }.reduce(0) { $0 + $1.count }
        return StepOutcome(objects: total, warnings: warnings, droppedLinks: droppedLinks)
    }

    // MARK: - External data

    /// Removes the external binary data files of a store that no row references: files of
    /// values a migration removed, or wrote again under new names, and files a crash left
    /// half-written (`.<UUID>.tmp`).
    ///
    /// Runs after a migration finished, while no other writer may use the store: a file written
    /// by a save that has not committed yet would look unreferenced.
    ///
    /// A leftover file costs only disk space, so a failure here does not fail the migration: it
    /// removes nothing and returns 0.
    ///
    /// - Parameters:
    ///   - url: The store file.
    ///   - version: The version the store now has.
    ///   - model: The versioned model.
    /// - Returns: The number of files removed.
    /// - Complexity: O(*n*) in the number of rows with external values; memory holds their file names.
    static func removeUnreferencedExternalData(of url: URL, version: String, in model: VersionedModel) -> Int {
        guard let target = model.version(named: version)?.model else { return 0 }
        return (try? removeUnreferencedExternalData(of: url, model: target)) ?? 0
    }

    /// Removes the external data files of a store that no row references; see
    /// ``removeUnreferencedExternalData(of:version:in:)``.
    private static func removeUnreferencedExternalData(of url: URL, model: ManagedObjectModel) throws -> Int {
        let folder = ExternalDataStore(storeURL: url, threshold: 0, isDurable: false).folder
        guard let names = try? FileManager.default.contentsOfDirectory(atPath: folder.path), !names.isEmpty else {
            return 0
        }
        let connection = try SQLiteStore.openExisting(url, configuration: .readOnly)
        let schema = try connection.readSchema(model: model)
        var referenced: Set<String> = []
        var seen: Set<String> = []
        for layout in schema.entities.values {
            for column in layout.attributes where column.allowsExternalStorage {
                guard seen.insert(layout.table + "." + column.column).inserted else { continue }
                let sql: SQL = """
                    SELECT \(.identifier(column.column)) FROM \(.identifier(layout.table)) \
                    WHERE substr(\(.identifier(column.column)), 1, 1) = \(Data([ExternalDataStore.externalMarker]))
                    """
                try connection.forEachRow(sql) { row in
                    if let bytes = row[0].data, let name = ExternalDataStore.fileName(in: bytes) {
                        referenced.insert(name)
                    }
                }
            }
        }
        let orphans = names.filter { name in
            let isValue = UUID(uuidString: name) != nil && name == name.uppercased()
            let isPartial = name.hasPrefix(".") && name.hasSuffix(".tmp")
            return (isValue && !referenced.contains(name)) || isPartial
        }
        ExternalDataStore(storeURL: url, threshold: 0, isDurable: false).removeFiles(named: orphans)
        return orphans.count
    }
}
