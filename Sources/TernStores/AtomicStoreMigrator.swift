package import Foundation
import TernBinaryStore
package import TernCore
import TernFormats
package import TernMigration
import TernRelational
import TernSQLite
import TernXMLStore

/// Migrates binary and XML stores (atomic, whole-file stores) from the model version that wrote
/// them to a later one, and migrates any store into a store of another type on the way.
///
/// The engine is the one SQLite stores use: the ``TernMigration/MigrationPlanner`` plan (inferred
/// steps, registered mappings, progressive chains), each step run by
/// ``TernMigration/MappingRunner`` over an ``TernMigration/InMemoryMigrationManager``.
///
/// **Memory.** An atomic store is loaded whole by design: its file is one archive that is read and
/// written in one piece. A migration from a binary or XML store therefore holds the source rows,
/// one step's destination rows and that step's associations in memory at once, about three times
/// the store's rows. A migration from a SQLite store into a binary or XML one streams the steps
/// through ``TernSQLite/SQLiteStoreMigrator`` into a temporary SQLite store beside the destination
/// (batches of `batchSize`), then reads that in keyset pages into the destination's rows and
/// writes the file once: its peak is the destination's rows plus the encoded file, whatever the
/// source's size. Keep large data sets in SQLite stores, whose migrations stream in batches.
///
/// **Crash safety.** The source file is never written. The migrated store is written under a
/// temporary name beside its final place, flushed to disk, and renamed over the store (or to the
/// destination) with `rename(2)`, then the folder is flushed (``TernCore`` `DurableFile`, through
/// the `FileOperations` seam). A crash or a failure at any point leaves the old store byte for
/// byte, or the complete new one; the next run removes the temporary files a crash left.
///
/// ```swift
/// let progress = Progress(totalUnitCount: 1)
/// let report = try await AtomicStoreMigrator().migrateStore(at: recipesURL, model: versions, progress: progress)
/// print(report.plan.steps.count, "steps")
/// ```
package struct AtomicStoreMigrator: Sendable {
    /// Creates a migrator.
    package init() {}

    /// Migrates a store to a version of its model, in place or to a destination, optionally
    /// changing its type.
    ///
    /// - Parameters:
    ///   - url: The store file (binary, XML or SQLite).
    ///   - sourceKind: The store's type, when the caller has read it already; read here when nil.
    ///   - model: The app's versioned model.
    ///   - target: The version to migrate to; the model's current version when nil.
    ///   - mappings: Explicit mappings for some steps; the others are inferred.
    ///   - kind: The migrated store's type; the source's when nil. A SQLite source changes type
    ///     only with a destination.
    ///   - options: Destination, batch size (for progress and cancellation checks), policies.
    ///   - progress: Updated with one child per step, counting source objects.
    ///   - onEvent: Called with each event, in order.
    ///   - recoveredMetadata: The store's metadata, when the caller has already rolled back
    ///     what a crashed writer left and read it; read here when nil.
    /// - Returns: What was done.
    /// - Throws: ``TernMigration/MigrationError`` (code `cancelled` when the task is cancelled: the
    ///   source is unchanged), ``TernCore/TernError`` when a store cannot be read or written, or a
    ///   file exists at the destination.
    /// - Complexity: O(*n*) in the number of objects per step; memory O(*n*) (see above).
    @discardableResult
    package func migrateStore(
        at url: URL, sourceKind: StoreKind? = nil, model: VersionedModel, to target: String? = nil,
        mappings: [StepMapping] = [], kind: StoreKind? = nil, options: MigrationOptions = MigrationOptions(),
        progress: Progress? = nil, onEvent: (@Sendable (MigrationEvent) -> Void)? = nil,
        recoveredMetadata: StoreMetadata? = nil
    ) async throws -> MigrationReport {
        let emit = onEvent ?? { _ in }
        let sourceKind = try sourceKind ?? StoreFiles.kind(ofStoreAt: url)
        let kind = kind ?? sourceKind
        let finalURL = options.destinationURL ?? url
        guard kind == .binary || kind == .xml || kind == .sqlite else {
            throw TernError(
                .unsupported, "a migration writes SQLite, Binary or XML stores, not \(kind)", path: finalURL.path)
        }
        guard options.destinationURL != nil || kind == sourceKind || sourceKind != .sqlite else {
            throw TernError(
                .unsupported, "a SQLite store changes type only into a new file; give a destination", path: url.path)
        }
        let cleaned = Self.removeLeftovers(of: finalURL)
        if !cleaned.isEmpty { emit(.cleanedUp(files: cleaned)) }
        if let destination = options.destinationURL, FileManager.default.fileExists(atPath: destination.path) {
            throw TernError(
                .unsupported, "a file already exists at the destination; choose a new path or remove it",
                path: destination.path)
        }
        // Migrating in place writes the store: roll back what a crashed writer left first (unless
        // the caller did, and hands the metadata it read).
        let metadata: StoreMetadata
        if let recoveredMetadata {
            metadata = recoveredMetadata
        } else if sourceKind == .sqlite, options.destinationURL == nil {
            metadata = try SQLiteStore.metadataRecoveringInterruptedWrite(at: url)
        } else {
            metadata = try StoreFiles.metadata(at: url, kind: sourceKind)
        }
        let plan = try MigrationPlanner(model: model, mappings: mappings).plan(for: metadata, to: target)
        try plan.requireExecutable()
        emit(.planned(plan))
        var journal = MigrationJournal(metadata: metadata)
        let editedSteps = journal.editedSteps(of: plan)
        for step in editedSteps { emit(.editedMapping(from: step.from, to: step.to)) }
        let edited = editedSteps.map { "\($0.from) → \($0.to)" }
        var report = MigrationReport(
            following: plan, at: finalURL, objectsPerStep: [], editedMappings: edited, cleanedUpFiles: cleaned)
        if plan.isEmpty, kind == sourceKind, options.destinationURL == nil {
            emit(.finished(report))
            return report
        }
        guard let sourceModel = model.version(named: plan.source)?.model else {
            throw MigrationError(.unknownVersion, "The model has no version \(plan.source)")
        }
        try Task.checkCancellationAsMigration()
        if sourceKind == .sqlite, kind != .sqlite, !plan.isEmpty {
            guard let destinationModel = model.version(named: plan.destination)?.model else {
                throw MigrationError(.unknownVersion, "The model has no version \(plan.destination)")
            }
            try await migrateThroughSQLite(
                at: url, to: finalURL, kind: kind, model: model, destinationModel: destinationModel, target: target,
                mappings: mappings, options: options, progress: progress, emit: emit)
            emit(.replaced(finalURL))
            emit(.finished(report))
            return report
        }
        var rows = try await Self.readRows(of: url, kind: sourceKind, model: sourceModel, batchSize: options.batchSize)
        var current = sourceModel
        progress?.totalUnitCount = Int64(max(1, plan.steps.count))
        for (index, step) in plan.steps.enumerated() {
            try Task.checkCancellationAsMigration()
            emit(.stepStarted(index: index, from: step.from, to: step.to, kind: step.kind))
            guard let destinationModel = model.version(named: step.to)?.model else {
                throw MigrationError(.unknownVersion, "The model has no version \(step.to)")
            }
            let stepProgress = Progress(totalUnitCount: 0)
            progress?.addChild(stepProgress, withPendingUnitCount: 1)
            let (migrated, objects) = try runStep(
                step, index: index, rows: rows, from: current, to: destinationModel, options: options,
                progress: stepProgress, emit: emit)
            journal.entries.append(
                MigrationJournal.Entry(
                    from: step.from, to: step.to, kind: step.kind.rawValue, checksum: step.mappingChecksum, date: Date()
                ))
            rows = migrated
            current = destinationModel
            report.objectsPerStep.append(objects)
            emit(.stepFinished(index: index))
        }
        if plan.steps.isEmpty { progress?.completedUnitCount = progress?.totalUnitCount ?? 0 }
        var newMetadata = StoreMetadata(newStoreOf: kind, uuid: metadata.uuid, model: current)
        for (key, value) in metadata.applicationKeys where newMetadata.applicationKeys[key] == nil {
            newMetadata.applicationKeys[key] = value
        }
        newMetadata.applicationKeys[MigrationJournal.journalKey] =
            plan.isEmpty ? metadata.applicationKeys[MigrationJournal.journalKey] : journal.propertyListValue
        newMetadata.applicationKeys[StoreFiles.modelCacheKey] =
            kind == .sqlite ? nil : .data(try ModelCache.encode(current))
        try Task.checkCancellationAsMigration()
        try await Self.write(rows, metadata: newMetadata, model: current, kind: kind, to: finalURL)
        emit(.replaced(finalURL))
        emit(.finished(report))
        return report
    }

    // MARK: - Non public

    /// Migrates a SQLite store into a binary or XML one with bounded memory: the steps stream
    /// through ``TernSQLite/SQLiteStoreMigrator`` into a temporary SQLite store beside the destination
    /// (reading the source in batches), which is then read in keyset pages into the destination's
    /// rows and written once. Peak memory is the destination's rows plus its encoded file, not
    /// the source's rows, every step's rows and the file at once.
    private func migrateThroughSQLite(
        at url: URL, to destination: URL, kind: StoreKind, model: VersionedModel, destinationModel: ManagedObjectModel,
        target: String?,
        mappings: [StepMapping], options: MigrationOptions, progress: Progress?,
        emit: @escaping @Sendable (MigrationEvent) -> Void
    ) async throws {
        let temporary = destination.deletingLastPathComponent()
            .appendingPathComponent(DurableFile.temporaryPrefix(for: destination) + UUID().uuidString + ".sqlite")
        defer { try? StoreFiles.destroy(at: temporary) }
        var stepOptions = options
        stepOptions.destination = .file(temporary)
        // The events of the steps are this migration's; its own start and end are reported by the caller.
        try await SQLiteStoreMigrator().migrateStore(
            at: url, model: model, to: target, mappings: mappings, options: stepOptions, progress: progress,
            onEvent: { event in
                switch event {
                case .planned, .finished, .replaced, .cleanedUp: break
                default: emit(event)
                }
            })
        try Task.checkCancellationAsMigration()
        let migrated = try StoreFiles.open(at: temporary, kind: .sqlite, model: destinationModel, isReadOnly: true)
        _ = try await StoreMigration.copy(
            migrated, to: destination, kind: kind, isReadOnly: true, batchSize: max(1, options.batchSize))
    }

    /// Runs one step over rows in memory; returns the destination rows and the number of source objects.
    private func runStep(
        _ step: MigrationPlan.Step, index: Int, rows: [StoreRow], from source: ManagedObjectModel,
        to destination: ManagedObjectModel, options: MigrationOptions, progress: Progress,
        emit: @Sendable (MigrationEvent) -> Void
    ) throws -> ([StoreRow], Int) {
        let manager = InMemoryMigrationManager(
            source: source, rows: rows, destination: destination, environment: options.environment)
        manager.batchSize = options.batchSize
        manager.onSourceBatch = { count throws(MigrationError) in
            progress.completedUnitCount += Int64(count)
            try Task.checkCancellationAsMigration()
        }
        var total = 0
        for pass in step.mappings {
            for mapping in pass.ordering(in: destination).entityMappings
            where mapping.kind != .add && mapping.kind != .remove {
                guard let entity = mapping.sourceEntityName else { continue }
                let count = manager.sourceCount(ofEntity: entity)
                emit(.entityMappingStarted(step: index, mapping: mapping.name, objects: count))
                total += count
            }
        }
        progress.totalUnitCount = Int64(total)
        try MappingRunner(policies: options.policies).run(step.mappings, manager: manager)
        return (manager.destinationRows, total)
    }

    /// Reads every row of a store, opened read-only with the model that wrote it.
    private static func readRows(
        of url: URL, kind: StoreKind, model: ManagedObjectModel, batchSize: Int
    ) async throws -> [StoreRow] {
        let store = try StoreFiles.open(at: url, kind: kind, model: model, isReadOnly: true)
        var rows: [StoreRow] = []
        try await StoreMigration.forEachBatch(of: store, size: max(1, batchSize)) { rows += $0 }
        return rows
    }

    /// Writes the migrated store under a temporary name beside `url` and renames it over `url`.
    private static func write(
        _ rows: [StoreRow], metadata: StoreMetadata, model: ManagedObjectModel, kind: StoreKind, to url: URL
    ) async throws {
        switch kind {
        case .sqlite:
            let memory = InMemoryStore(model: model, identifier: metadata.uuid)
            _ = try await memory.save(StoreChangeSet(inserted: rows))
            try await memory.setMetadata(metadata)
            let temporary = url.deletingLastPathComponent()
                .appendingPathComponent(DurableFile.temporaryPrefix(for: url) + UUID().uuidString + ".sqlite")
            do {
                _ = try await StoreMigration.copy(
                    memory, to: temporary, kind: .sqlite, isReadOnly: true, batchSize: 1000)
                try SQLiteStore.moveFinishedStore(at: temporary, to: url)
            } catch {
                try? StoreFiles.destroy(at: temporary)
                throw error
            }
        default:
            let contents = AtomicStoreContents(metadata: metadata, rows: rows.sorted { $0.reference < $1.reference })
            let data =
                try kind == .binary ? BinaryStoreFormat.encode(contents) : XMLStoreFormat.encode(contents, model: model)
            try DurableFile.write(data, to: url)
        }
    }

    /// Removes the temporary files an interrupted migration left beside `url`; returns their names.
    static func removeLeftovers(of url: URL) -> [String] {
        let prefix = DurableFile.temporaryPrefix(for: url)
        let names = (try? FileManager.default.contentsOfDirectory(atPath: url.deletingLastPathComponent().path)) ?? []
        let leftovers = names.filter { $0.hasPrefix(prefix) }.sorted()
        guard !leftovers.isEmpty else { return [] }
        DurableFile.removeTemporaryFiles(for: url)
        return leftovers
    }
}

extension Task where Success == Never, Failure == Never {
    /// Throws the migration's cancellation error when the current task is cancelled.
    fileprivate static func checkCancellationAsMigration() throws(MigrationError) {
        if isCancelled {
            throw MigrationError(.cancelled, "The migration was cancelled; the source store is unchanged")
        }
    }
}
