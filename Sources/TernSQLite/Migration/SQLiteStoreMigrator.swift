package import Foundation
package import TernCore
import TernFormats
package import TernMigration
import TernRelational

/// The SQLite half of TernStores' `StoreMigrator`, the public entry point: migrates SQLite stores
/// from the model version that wrote them to a later one, in the steps
/// ``TernMigration/MigrationPlanner`` plans (one inferred step straight to the target unless
/// mappings or an explicit version order call for a chain), without ever writing to the source
/// store.
///
/// Each step builds its destination in a temporary file beside the store (`.<name>.migrating-…`),
/// streaming source objects in batches through ``TernMigration/MappingRunner``, with associations
/// kept on disk. The last destination is made durable (fsync of the file and the folder), the
/// source's write-ahead log is checkpointed, and the destination replaces the store with an atomic
/// `rename(2)`. A migration interrupted at any point leaves the old store or the new one; the next
/// run removes leftover temporary files and starts again. The store's metadata records each applied
/// step with a checksum of its mapping (``MigrationJournal``).
///
/// ```swift
/// let migrator = SQLiteStoreMigrator()
/// let progress = Progress(totalUnitCount: 100)
/// let report = try await migrator.migrateStore(at: url, model: versions, mappings: [eventSplit], progress: progress)
/// print(report.plan)
/// ```
package struct SQLiteStoreMigrator: Sendable {
    /// The prefix of the temporary files of a store's migration.
    static func temporaryPrefix(for store: URL) -> String { ".\(store.lastPathComponent).migrating-" }

    /// Creates a migrator.
    package init() {}

    // MARK: - Planning

    /// The migration forecast for a store, without touching it.
    ///
    /// - Parameters:
    ///   - url: The store file.
    ///   - model: The app's versioned model.
    ///   - target: The version to migrate to; the model's current version when nil.
    ///   - mappings: Explicit mappings for some steps; the others are inferred.
    /// - Returns: The plan; its steps carry problems when they cannot run.
    /// - Throws: ``SQLiteError`` when the store's metadata cannot be read, ``TernMigration/MigrationError``
    ///   when no version wrote the store or it would be a downgrade.
    package func plan(
        forStoreAt url: URL, model: VersionedModel, to target: String? = nil, mappings: [StepMapping] = []
    ) throws -> MigrationPlan {
        let metadata = try SQLiteStore.metadata(at: url)
        let plan = try MigrationPlanner(model: model, mappings: mappings).plan(for: metadata, to: target)
        return try Self.checkingData(of: plan, at: url, model: model)
    }

    /// A plan with its first step checked against the store's data (``StepDataCheck``): the
    /// step's refusals join its problems and its warnings are set.
    ///
    /// - Throws: ``SQLiteError`` when the store cannot be read.
    /// - Complexity: One `COUNT(*)` per check of the first step.
    package static func checkingData(of plan: MigrationPlan, at url: URL, model: VersionedModel) throws -> MigrationPlan
    {
        try plan.checkingFirstStep(in: model) { step, mapping, from, to in
            let connection = try SQLiteStore.openExisting(url, configuration: .readOnly)
            try connection.registerExternalValueFunction(storeURL: url)
            return try connection.dataFindings(
                of: mapping, source: try connection.readSchema(model: from), destination: to, step: (step.from, step.to)
            )
        }
    }

    // MARK: - Migrating

    /// Migrates a store to a version of its model, in place or to a destination.
    ///
    /// - Parameters:
    ///   - url: The store file.
    ///   - model: The app's versioned model.
    ///   - target: The version to migrate to; the model's current version when nil.
    ///   - mappings: Explicit mappings for some steps; the others are inferred.
    ///   - options: Destination, batch size, policies.
    ///   - progress: Updated with one child per step, counting source objects.
    ///   - onEvent: Called with each event, in order.
    ///   - recoveredMetadata: The store's metadata, when the caller has already rolled back
    ///     what a crashed writer left and read it; read here when nil.
    /// - Returns: What was done.
    /// - Throws: ``TernMigration/MigrationError`` (code `cancelled` when the task is cancelled: the
    ///   source is unchanged), or ``SQLiteError`` when a store cannot be read or written.
    /// - Complexity: O(*n*) in the number of objects per step; memory bounded by the batch size.
    @discardableResult
    package func migrateStore(
        at url: URL, model: VersionedModel, to target: String? = nil, mappings: [StepMapping] = [],
        options: MigrationOptions = MigrationOptions(), progress: Progress? = nil,
        onEvent: (@Sendable (MigrationEvent) -> Void)? = nil, recoveredMetadata: StoreMetadata? = nil
    ) async throws -> MigrationReport {
        let emit = onEvent ?? { _ in }
        let cleaned = try Self.removeLeftovers(of: url)
        if !cleaned.isEmpty { emit(.cleanedUp(files: cleaned)) }
        // Migrating in place writes the store: roll back what a crashed writer left first. A
        // migration to a destination leaves the source as it is, so such a source is refused.
        // A caller that did both already hands the metadata it read.
        let metadata =
            try recoveredMetadata
            ?? (options.destinationURL == nil
                ? SQLiteStore.metadataRecoveringInterruptedWrite(at: url) : SQLiteStore.metadata(at: url))
        let plan = try Self.checkingData(
            of: try MigrationPlanner(model: model, mappings: mappings).plan(for: metadata, to: target), at: url,
            model: model)
        try plan.requireExecutable()
        emit(.planned(plan))
        var journal = MigrationJournal(metadata: metadata)
        // Steps that already ran appear again only when the store went back to an older version.
        let editedSteps = journal.editedSteps(of: plan)
        for step in editedSteps { emit(.editedMapping(from: step.from, to: step.to)) }
        let edited = editedSteps.map { "\($0.from) → \($0.to)" }
        let finalURL = options.destinationURL ?? url
        var report = MigrationReport(
            following: plan, at: finalURL, objectsPerStep: [], editedMappings: edited, cleanedUpFiles: cleaned)
        guard !plan.isEmpty else {
            if let destination = options.destinationURL { try Self.copyStore(url, to: destination) }
            emit(.finished(report))
            return report
        }
        try Self.checkEntityNumbers(of: url, version: plan.steps[0].from, in: model)
        progress?.totalUnitCount = Int64(plan.steps.count)
        if options.destinationURL == nil, options.strategy != .rebuild,
            let outcomes = try runInPlaceIfPossible(
                plan, of: model, at: url, journal: journal, strategy: options.strategy, progress: progress, emit: emit)
        {
            report.objectsPerStep = outcomes.map(\.objects)
            report.record(outcomes)
            report.inPlaceSteps = Array(plan.steps.indices)
            report.removedExternalFiles = Self.removeUnreferencedExternalData(
                of: url, version: plan.destination, in: model)
            emit(.finished(report))
            return report
        }
        let sourceMode = try SQLiteStore.journalMode(ofStoreAt: url)
        var current = url
        var temporaries: [URL] = []
        do {
            for (index, step) in plan.steps.enumerated() {
                try Task.checkCancellationAsMigration()
                emit(.stepStarted(index: index, from: step.from, to: step.to, kind: step.kind))
                journal.entries.append(
                    MigrationJournal.Entry(
                        from: step.from, to: step.to, kind: step.kind.rawValue, checksum: step.mappingChecksum,
                        date: Date()))
                let stepProgress = Progress(totalUnitCount: 0)
                progress?.addChild(stepProgress, withPendingUnitCount: 1)
                let next = url.deletingLastPathComponent().appendingPathComponent(
                    Self.temporaryPrefix(for: url) + "\(index)-\(UUID().uuidString).sqlite")
                temporaries.append(next)
                let isLast = index == plan.steps.count - 1
                let outcome = try await runStep(
                    step, index: index, of: model, from: current, to: next, externalDataStore: isLast ? finalURL : nil,
                    journal: journal, journalMode: isLast ? sourceMode : .delete, options: options,
                    progress: ProgressBox(stepProgress), emit: emit)
                report.objectsPerStep.append(outcome.objects)
                report.record([outcome])
                emit(.stepFinished(index: index))
                current = next
            }
            try Task.checkCancellationAsMigration()
            try Self.replace(url, with: current, destination: options.destinationURL)
        } catch {
            for temporary in temporaries { Self.removeStoreFiles(temporary) }
            throw error
        }
        for temporary in temporaries.dropLast() { Self.removeStoreFiles(temporary) }
        emit(.replaced(finalURL))
        report.removedExternalFiles = Self.removeUnreferencedExternalData(
            of: finalURL, version: plan.destination, in: model)
        emit(.finished(report))
        return report
    }

    /// The events of a migration as an asynchronous sequence, ending with
    /// ``MigrationEvent/finished(_:)`` or the migration's error.
    ///
    /// - Parameters:
    ///   - url: The store file.
    ///   - model: The app's versioned model.
    ///   - target: The version to migrate to; the model's current version when nil.
    ///   - mappings: Explicit mappings for some steps.
    ///   - options: Destination, batch size, policies.
    /// - Returns: The events; cancelling the iterating task cancels the migration.
    package func events(
        migratingStoreAt url: URL, model: VersionedModel, to target: String? = nil, mappings: [StepMapping] = [],
        options: MigrationOptions = MigrationOptions()
    ) -> AsyncThrowingStream<MigrationEvent, any Error> {
        MigrationEvent.stream { onEvent in
            try await migrateStore(
                at: url, model: model, to: target, mappings: mappings, options: options, onEvent: onEvent)
        }
    }

    // MARK: - Non public

    /// Runs every step of a plan in place, in one transaction, when the strategy allows and the
    /// planner can express each step; nil when the plan must be built beside the store instead.
    private func runInPlaceIfPossible(
        _ plan: MigrationPlan, of model: VersionedModel, at url: URL, journal: MigrationJournal,
        strategy: MigrationStrategy, progress: Progress?, emit: @Sendable (MigrationEvent) -> Void
    ) throws -> [StepOutcome]? {
        do {
            return try Self.runInPlace(plan.steps, of: model, at: url, journal: journal, progress: progress, emit: emit)
        } catch let unsupported as InPlaceUnsupported {
            guard strategy == .inPlace else { return nil }
            throw MigrationError(
                .notInferable,
                "The migration cannot run in place: \(unsupported.reason); "
                    + "use the automatic or rebuild strategy to build it beside the store")
        }
    }

    /// Refuses, before anything is written, a store with rows no entity of its `Z_PRIMARYKEY` owns
    /// (``EntityNumberCheck``): a migration would leave them out or relabel them.
    private static func checkEntityNumbers(of url: URL, version: String, in model: VersionedModel) throws {
        guard let sourceModel = model.version(named: version)?.model else {
            throw MigrationError(.unknownVersion, "The model has no version \(version)")
        }
        let connection = try SQLiteStore.openExisting(url, configuration: .readOnly)
        try connection.checkEntityNumbers(of: try connection.readSchema(model: sourceModel))
    }

    /// Runs one step from a store file into a new file; returns the number of source objects read,
    /// the step's warnings and its dropped links. Only the last step writes external binary data,
    /// into the support folder of the store it becomes. The first step's data was checked with the
    /// plan; a later one's is checked here, on the data the steps before it wrote.
    private func runStep(
        _ step: MigrationPlan.Step, index: Int, of model: VersionedModel, from source: URL, to destination: URL,
        externalDataStore: URL?, journal: MigrationJournal, journalMode: SQLiteConfiguration.JournalMode,
        options: MigrationOptions, progress: ProgressBox, emit: @escaping @Sendable (MigrationEvent) -> Void
    ) async throws -> StepOutcome {
        guard let fromModel = model.version(named: step.from)?.model, let toModel = model.version(named: step.to)?.model
        else {
            throw MigrationError(.unknownVersion, "The model has no version \(step.from) or \(step.to)")
        }
        var warnings = step.warnings
        if step.kind == .inferred, let mapping = step.mappings.first {
            // What the in-place path checks, before anything is written: attributes that become
            // required must have values, and new uniqueness constraints unique values (when the
            // step's rows can be expressed in SQL; the new file is checked before the swap anyway).
            let connection = try SQLiteStore.openExisting(source, configuration: .readOnly)
            let layout = try connection.readSchema(model: fromModel)
            if index > 0 {
                warnings = try connection.checkData(
                    of: mapping, source: layout, destination: toModel, step: (step.from, step.to))
            }
            let destination = try StoreSchema(model: toModel, numbers: StoreSchema.assignedNumbers(for: toModel))
            if let plan = try? TableMigrationPlan(
                source: layout, destination: destination, mapping: mapping, largestKeys: [:], rekeysMovedEntities: true,
                changesExternalStorage: true, dropsLinks: true)
            {
                try connection.registerExternalValueFunction(storeURL: source)
                try connection.checkUnique(before: plan, version: step.to)
            }
        }
        let store = try SQLiteStore(at: source, model: fromModel, configuration: .readOnly)
        var metadata = StoreSchema.newMetadata(for: toModel, autoVacuum: .none)
        metadata.uuid = await store.metadata().uuid
        metadata.applicationKeys[MigrationJournal.journalKey] = journal.propertyListValue
        let job = StepJob(
            passes: step.mappings, destinationModel: toModel, path: destination.path,
            externalDataStore: externalDataStore,
            metadata: metadata, journalMode: journalMode, options: options, step: index, versionName: step.to,
            keepsKeys: step.kind == .inferred)
        let (objects, droppedLinks) = try await store.runMigrationStep(job, progress: progress, emit: emit)
        try FileSystem.synchronizeFile(atPath: destination.path)
        try FileSystem.synchronizeDirectory(atPath: destination.deletingLastPathComponent().path)
        return StepOutcome(objects: objects, warnings: warnings, droppedLinks: droppedLinks)
    }
}

/// What one step of a migration did: the source objects it read, its warnings and the links it dropped.
struct StepOutcome: Sendable {
    /// The number of source objects read.
    var objects: Int
    /// What the step relaxed or dropped, with counts.
    var warnings: [MigrationWarning]
    /// The links dropped because their object no longer fits the relationship.
    var droppedLinks: Int
}

extension MigrationReport {
    /// Adds the warnings and dropped links of steps that ran.
    mutating func record(_ outcomes: [StepOutcome]) {
        for outcome in outcomes {
            warnings += outcome.warnings
            droppedLinks += outcome.droppedLinks
        }
    }
}

/// A `Progress` handed across isolation domains.
struct ProgressBox: @unchecked Sendable {
    // Foundation's Progress locks its own state, so updating it from any thread is safe.
    let progress: Progress

    init(_ progress: Progress) { self.progress = progress }
}

extension Task where Success == Never, Failure == Never {
    /// Throws the migration's cancellation error when the current task is cancelled.
    static func checkCancellationAsMigration() throws(MigrationError) {
        if isCancelled {
            throw MigrationError(.cancelled, "The migration was cancelled; the source store is unchanged")
        }
    }
}
