public import Foundation
public import TernCore
public import TernMigration
import TernPostgreSQL
public import TernSQLite

/// Migrates PostgreSQL stores from the model version that wrote them to a later one: the
/// PostgreSQL counterpart of ``TernSQLite/StoreMigrator``, following the same plan
/// (``TernMigration/MigrationPlanner``: inferred steps, mapping models, progressive chains) and
/// recording the same journal in `Z_METADATA`.
///
/// - **One migrator at a time.** The migration holds a session-level advisory lock keyed on the
///   store's schema (`pg_advisory_lock`) from start to end. Another process migrating the same
///   store waits for it (``MigrationOptions/lockTimeout``, nil to wait as long as it takes,
///   ``MigrationEvent/waitingForMigrationLock(holder:)`` when it starts waiting), then finds the
///   store migrated and leaves it as it is; after the timeout it fails with
///   ``TernPostgreSQL/PostgreSQLError`` code `locked`, naming the process that holds the lock.
/// - **Inferred steps in place.** When every step is inferred and the in-place planner can
///   express it (``TernSQLite/TableMigrationPlan``, as on SQLite), the whole plan runs as DDL and
///   `UPDATE`/`INSERT … SELECT` in **one** transaction: PostgreSQL's DDL is transactional, so a
///   failure or a killed process leaves the old store.
/// - **Built beside.** Otherwise (a mapping step, ``MigrationStrategy/rebuild``, a change the
///   planner cannot express) writers are kept out (`LOCK TABLE … IN EXCLUSIVE MODE`; reads go on),
///   the rows stream in keyset pages into a local SQLite staging file, the SQLite engine
///   (``TernSQLite/StoreMigrator``) runs the steps there in batches, the result streams back with
///   `COPY` into a scratch schema beside the store's, and one transaction drops the old tables and
///   moves the new ones in. Until that commit the store is untouched; a failure drops the scratch
///   schema, and a leftover one from a killed process is dropped by the next run.
///
/// ```swift
/// let report = try await PostgreSQLMigrator().migrateStore(
///     at: "postgres://app@db.example.com/recipes?schema=kitchen", model: versions)
/// print(report.plan.steps.count, "steps,", report.inPlaceSteps.count, "in place")
/// ```
public struct PostgreSQLMigrator: Sendable {
    /// Creates a migrator.
    public init() {}

    /// The migration forecast for a PostgreSQL store, without touching it.
    ///
    /// - Parameters:
    ///   - url: The store's connection string (`postgres://…?schema=…`).
    ///   - model: The app's versioned model.
    ///   - target: The version to migrate to; the model's current version when nil.
    ///   - mappings: Explicit mappings for some steps; the others are inferred.
    /// - Returns: The plan; its steps carry problems when they cannot run.
    /// - Throws: ``TernPostgreSQL/PostgreSQLError`` when the store's metadata cannot be read,
    ///   ``TernMigration/MigrationError`` when no version wrote the store or it would be a downgrade.
    public func plan(
        forStoreAt url: String, model: VersionedModel, to target: String? = nil, mappings: [StepMapping] = []
    ) throws -> MigrationPlan {
        try MigrationPlanner(model: model, mappings: mappings).plan(for: try PostgreSQLStore.metadata(at: url), to: target)
    }

    /// Migrates a PostgreSQL store to a version of its model, in its own schema.
    ///
    /// - Parameters:
    ///   - url: The store's connection string.
    ///   - model: The app's versioned model.
    ///   - target: The version to migrate to; the model's current version when nil.
    ///   - mappings: Explicit mappings for some steps; the others are inferred.
    ///   - options: Strategy, batch size, policies, lock timeout; a `destination` is refused (copy
    ///     the store first: ``StoreFiles/copy(_:toPostgreSQL:batchSize:)``).
    ///   - progress: Updated with one child per step, counting source objects.
    ///   - onEvent: Called with each event, in order.
    /// - Returns: What was done; its `url` is the connection string without its password.
    /// - Throws: ``TernMigration/MigrationError`` (code `cancelled` when the task is cancelled: the
    ///   store is unchanged), ``TernPostgreSQL/PostgreSQLError`` (code `locked` after the lock
    ///   timeout), or any error of reading or writing, after which the store is as it was.
    /// - Complexity: O(*n*) in the objects per step built beside, memory bounded by the batch
    ///   size; in place, O(*n* log *n*) in the rows of rebuilt tables and nothing per row for
    ///   renamed or added columns.
    @discardableResult
    public func migrateStore(
        at url: String, model: VersionedModel, to target: String? = nil, mappings: [StepMapping] = [],
        options: MigrationOptions = MigrationOptions(), progress: Progress? = nil,
        onEvent: (@Sendable (MigrationEvent) -> Void)? = nil
    ) async throws -> MigrationReport {
        let emit = onEvent ?? { _ in }
        let location = try PostgreSQLLocation(url)
        let reportURL = URL(string: location.description) ?? URL(fileURLWithPath: "/")
        guard options.destination == nil else {
            throw TernError(
                .unsupported, "a PostgreSQL store migrates in its own schema; copy it to the destination first")
        }
        let session = try await PostgreSQLMigrationSession(location: location, timeout: options.lockTimeout) { holder in
            emit(.waitingForMigrationLock(holder: holder))
        }
        let cleaned = try session.removeLeftovers().map { [$0] } ?? []
        if !cleaned.isEmpty { emit(.cleanedUp(files: cleaned)) }
        let metadata = try session.metadata()
        let plan = try MigrationPlanner(model: model, mappings: mappings).plan(for: metadata, to: target)
        try plan.requireExecutable()
        emit(.planned(plan))
        let journal = MigrationJournal(metadata: metadata)
        let edited = journal.editedSteps(of: plan)
        for step in edited { emit(.editedMapping(from: step.from, to: step.to)) }
        var report = MigrationReport(
            following: plan, at: reportURL, objectsPerStep: [], editedMappings: edited.map { "\($0.from) → \($0.to)" },
            cleanedUpFiles: cleaned)
        guard !plan.isEmpty else {
            emit(.finished(report))
            return report
        }
        progress?.totalUnitCount = Int64(plan.steps.count)
        var steps: [(step: MigrationPlan.Step, from: ManagedObjectModel, to: ManagedObjectModel)] = []
        for step in plan.steps {
            guard let from = model.version(named: step.from)?.model, let to = model.version(named: step.to)?.model else {
                throw MigrationError(.unknownVersion, "The model has no version \(step.from) or \(step.to)")
            }
            steps.append((step, from, to))
        }
        if options.strategy != .rebuild, let counts = try runInPlace(steps, session: session, journal: journal, options: options, progress: progress, emit: emit) {
            report.objectsPerStep = counts
            report.inPlaceSteps = Array(plan.steps.indices)
            emit(.replaced(reportURL))
            emit(.finished(report))
            return report
        }
        report.objectsPerStep = try await rebuild(
            plan, model: model, sourceModel: steps[0].from, mappings: mappings, session: session, options: options,
            progress: progress, emit: emit)
        emit(.replaced(reportURL))
        emit(.finished(report))
        return report
    }

    // MARK: - Non public

    /// Runs every step in place in one transaction; nil when a step cannot and the strategy lets
    /// the plan be built beside instead.
    private func runInPlace(
        _ steps: [(step: MigrationPlan.Step, from: ManagedObjectModel, to: ManagedObjectModel)],
        session: PostgreSQLMigrationSession, journal: MigrationJournal, options: MigrationOptions, progress: Progress?,
        emit: @Sendable (MigrationEvent) -> Void
    ) throws -> [Int]? {
        var stepProgress: Progress?
        func finishStep(_ index: Int) {
            stepProgress?.completedUnitCount = stepProgress?.totalUnitCount ?? 0
            emit(.stepFinished(index: index))
        }
        do {
            let counts = try session.runInPlace(steps, journal: journal, checkpoint: { try Self.checkCancellation() }) { index, counts in
                if index > 0 { finishStep(index - 1) }
                let step = steps[index].step
                emit(.stepStarted(index: index, from: step.from, to: step.to, kind: step.kind))
                for (mapping, objects) in counts { emit(.entityMappingStarted(step: index, mapping: mapping, objects: objects)) }
                let child = Progress(totalUnitCount: Int64(counts.reduce(0) { $0 + $1.objects }))
                progress?.addChild(child, withPendingUnitCount: 1)
                stepProgress = child
            }
            finishStep(steps.count - 1)
            return counts
        } catch let unsupported as InPlaceUnsupported {
            guard options.strategy == .inPlace else { return nil }
            throw MigrationError(
                .notInferable,
                "The migration cannot run in place: \(unsupported.reason); "
                    + "use the automatic or rebuild strategy to build it beside the store")
        }
    }

    /// Builds the plan beside the store (through a SQLite staging file and a scratch schema) and
    /// swaps it in; returns the number of objects each step read.
    private func rebuild(
        _ plan: MigrationPlan, model: VersionedModel, sourceModel: ManagedObjectModel, mappings: [StepMapping],
        session: PostgreSQLMigrationSession, options: MigrationOptions, progress: Progress?,
        emit: @escaping @Sendable (MigrationEvent) -> Void
    ) async throws -> [Int] {
        let folder = FileManager.default.temporaryDirectory.appendingPathComponent("tern-pg-migration-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: folder, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(at: folder) }
        let staging = folder.appendingPathComponent("staging.sqlite")
        do {
            try session.holdWriters()
            let source = try PostgreSQLStore(location: session.location, model: sourceModel, readOnly: true)
            _ = try await StoreMigration.copy(
                source, to: staging, kind: .sqlite, isReadOnly: true, batchSize: max(1, options.batchSize))
            try Self.checkCancellation()
            var stagingOptions = options
            stagingOptions.destination = nil
            let stepReport = try await StoreMigrator().migrateStore(
                at: staging, model: model, to: plan.destination, mappings: mappings, options: stagingOptions,
                progress: progress
            ) { event in
                switch event {
                case .stepStarted, .entityMappingStarted, .stepFinished: emit(event)
                default: break
                }
            }
            try Self.checkCancellation()
            let migrated = try StoreFiles.open(
                at: staging, kind: .sqlite, model: model.version(named: plan.destination)?.model, isReadOnly: true)
            _ = try await StoreFiles.copy(migrated, toPostgreSQL: session.scratchURL, batchSize: max(1, options.batchSize))
            try Self.checkCancellation()
            try session.replaceStore(keys: try Self.largestKeys(of: staging))
            return stepReport.objectsPerStep
        } catch {
            session.rollback()
            throw error
        }
    }

    /// Each entity's `Z_MAX` in a SQLite store, by name.
    private static func largestKeys(of url: URL) throws -> [String: Int64] {
        let connection = try Connection(path: url.path, configuration: .readOnly)
        var keys: [String: Int64] = [:]
        try connection.forEachRow("SELECT Z_NAME, Z_MAX FROM Z_PRIMARYKEY WHERE Z_ENT < 16000") { row in
            if let name = row[0].string { keys[name] = row[1].int64 ?? 0 }
        }
        return keys
    }

    /// Throws the migration's cancellation error when the current task is cancelled.
    private static func checkCancellation() throws(MigrationError) {
        if Task.isCancelled {
            throw MigrationError(.cancelled, "The migration was cancelled; the store is unchanged")
        }
    }
}
