import Foundation
import TernCore
import TernMigration

extension StoreMigrator {
    // MARK: - Inferred steps in place

    /// Runs an inferred step on the store itself, with SQL in one transaction, without loading
    /// objects; returns the number of objects migrated.
    ///
    /// The transaction rewrites the tables (``TableMigrationPlan``), `Z_PRIMARYKEY`, `Z_METADATA`
    /// (version hashes, identifiers, the journal with this step) and `Z_MODELCACHE`. A crash or a
    /// cancellation before the commit leaves the store as it was, after it the migrated store:
    /// SQLite's rollback journal or write-ahead log makes the commit atomic and durable
    /// (`synchronous=FULL`).
    ///
    /// - Throws: ``InPlaceUnsupported`` before anything is written when the step cannot run in
    ///   place; ``SQLiteError`` or ``TernMigration/MigrationError`` (`cancelled`) after a rollback.
    static func runInPlace(
        _ step: MigrationPlan.Step, index: Int, fromModel: ManagedObjectModel, toModel: ManagedObjectModel, at url: URL,
        journal: MigrationJournal, progress: ProgressBox, emit: @Sendable (MigrationEvent) -> Void
    ) throws -> Int {
        guard step.kind == .inferred, step.mappings.count == 1, let mapping = step.mappings.first else {
            throw InPlaceUnsupported("the step has a mapping model")
        }
        let mode = try SQLiteStore.journalMode(ofStoreAt: url)
        var configuration = SQLiteConfiguration(journalMode: mode)
        configuration.synchronous = .full
        let connection = try SQLiteStore.openExisting(url, configuration: configuration)
        let source = try connection.readSchema(model: fromModel)
        let destination = try StoreSchema(model: toModel, numbers: StoreSchema.assignedNumbers(for: toModel))
        var largestKeys: [Int: Int64] = [:]
        try connection.forEachRow("SELECT Z_ENT, Z_MAX FROM Z_PRIMARYKEY") { row in
            largestKeys[Int(row[0].int64 ?? 0)] = row[1].int64 ?? 0
        }
        let plan = try TableMigrationPlan(
            source: source, destination: destination, mapping: mapping, largestKeys: largestKeys)
        var total = 0
        for entityMapping in mapping.entityMappings where entityMapping.kind == .copy || entityMapping.kind == .transform {
            guard let name = entityMapping.sourceEntityName, let layout = source.entities[name] else { continue }
            let sql: SQL = "SELECT COUNT(*) FROM \(.identifier(layout.table)) WHERE Z_ENT = \(layout.number)"
            let count = Int(try connection.fetchValue(sql)?.int64 ?? 0)
            emit(.entityMappingStarted(step: index, mapping: entityMapping.name, objects: count))
            total += count
        }
        progress.progress.totalUnitCount = Int64(total)
        var metadata = StoreSchema.newMetadata(for: toModel, autoVacuum: .none)
        metadata.uuid = try connection.readMetadata().uuid
        metadata.applicationKeys[MigrationJournal.journalKey] = journal.propertyListValue
        let cache = SQLiteStore.encodedModelCache(toModel)
        try connection.inTransaction(.immediate) { () throws in
            try connection.apply(plan) { try Task.checkCancellationAsMigration() }
            try connection.writeMetadata(metadata)
            try connection.execute("DELETE FROM Z_MODELCACHE")
            if let cache { try connection.execute("INSERT INTO Z_MODELCACHE (Z_CONTENT) VALUES (\(cache))") }
            try Task.checkCancellationAsMigration()
        }
        progress.progress.completedUnitCount = Int64(total)
        return total
    }

    // MARK: - External data

    /// Removes the external binary data files of a store that no row references: files of
    /// values a migration removed, or wrote again under new names, and files a crash left
    /// half-written (`.<UUID>.tmp`).
    ///
    /// Runs after a migration finished, while no other writer may use the store: a file written
    /// by a save that has not committed yet would look unreferenced.
    ///
    /// - Parameters:
    ///   - url: The store file.
    ///   - model: The model the store now has.
    /// - Returns: The number of files removed.
    /// - Complexity: O(*n*) in the number of rows with external values; memory holds their file names.
    @discardableResult
    static func removeUnreferencedExternalData(of url: URL, model: ManagedObjectModel) throws -> Int {
        let folder = ExternalDataStore(storeURL: url, threshold: 0, isDurable: false).folder
        guard let names = try? FileManager.default.contentsOfDirectory(atPath: folder.path), !names.isEmpty else { return 0 }
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
                    if let bytes = row[0].data, let name = ExternalDataStore.fileName(in: bytes) { referenced.insert(name) }
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
