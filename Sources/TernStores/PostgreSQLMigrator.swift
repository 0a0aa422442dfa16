package import Foundation
package import TernCore
package import TernMigration
import TernPostgreSQL
import TernRelational
import TernSQLite

/// Migrates PostgreSQL stores from the model version that wrote them to a later one: the
/// PostgreSQL counterpart of ``TernSQLite/SQLiteStoreMigrator``, following the same plan
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
/// - **Built beside, on the server.** Otherwise (a mapping step, ``MigrationStrategy/rebuild``, a
///   change the planner cannot express) writers are kept out (`LOCK TABLE … IN EXCLUSIVE MODE`;
///   reads go on), each step streams table to table inside the database, in keyset pages of the
///   batch size, into a scratch schema beside the store's (rows loaded with `COPY`, associations in
///   a table there; no local file), and one transaction drops the old tables and moves the new
///   ones in. Until that commit the store is untouched; a failure drops the scratch schemas, and
///   leftover ones from a killed process are dropped by the next run.
///
/// ```swift
/// let report = try await PostgreSQLMigrator().migrateStore(
///     at: "postgres://app@db.example.com/recipes?schema=kitchen", model: versions)
/// print(report.plan.steps.count, "steps,", report.inPlaceSteps.count, "in place")
/// ```
package struct PostgreSQLMigrator: Sendable {
    /// Creates a migrator.
    package init() {}

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
    package func plan(
        forStoreAt url: String, model: VersionedModel, to target: String? = nil, mappings: [StepMapping] = []
    ) throws -> MigrationPlan {
        let plan = try MigrationPlanner(model: model, mappings: mappings).plan(
            for: try PostgreSQLStore.metadata(at: url), to: target)
        return try PostgreSQLStore.checkingData(of: plan, at: url, model: model)
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
    package func migrateStore(
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
        let plan = try PostgreSQLStore.checkingData(
            of: try MigrationPlanner(model: model, mappings: mappings).plan(for: metadata, to: target), at: url,
            model: model)
        try plan.requireExecutable()
        emit(.planned(plan))
        let journal = MigrationJournal(metadata: metadata)
        let edited = journal.editedSteps(of: plan)
        for step in edited { emit(.editedMapping(from: step.from, to: step.to)) }
        var report = MigrationReport(
            following: plan, at: reportURL, objectsPerStep: [], editedMappings: edited.map { "\($0.from) → \($0.to)" },
            cleanedUpFiles: cleaned)
        // The first step's warnings, counted before anything is written (later steps are checked
        // as they run, on the data the steps before them wrote).
        report.warnings = plan.steps.first?.warnings ?? []
        report.droppedLinks = report.warnings.filter { $0.kind == .droppedLinks }.reduce(0) { $0 + $1.count }
        guard !plan.isEmpty else {
            emit(.finished(report))
            return report
        }
        progress?.totalUnitCount = Int64(plan.steps.count)
        var steps: [(step: MigrationPlan.Step, from: ManagedObjectModel, to: ManagedObjectModel)] = []
        for step in plan.steps {
            guard let from = model.version(named: step.from)?.model, let to = model.version(named: step.to)?.model
            else {
                throw MigrationError(.unknownVersion, "The model has no version \(step.from) or \(step.to)")
            }
            steps.append((step, from, to))
        }
        try session.checkEntityNumbers(model: steps[0].from)
        if options.strategy != .rebuild,
            let counts = try runInPlace(
                steps, session: session, journal: journal, options: options, progress: progress, emit: emit)
        {
            report.objectsPerStep = counts
            report.inPlaceSteps = Array(plan.steps.indices)
            emit(.replaced(reportURL))
            emit(.finished(report))
            return report
        }
        report.objectsPerStep = try rebuild(
            steps, session: session, journal: journal, options: options, progress: progress, emit: emit)
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
        emit: @escaping @Sendable (MigrationEvent) -> Void
    ) throws -> [Int]? {
        let events = StepEvents(steps: steps.map(\.step), progress: progress, emit: emit)
        do {
            let counts = try session.runInPlace(steps, journal: journal, checkpoint: { try Self.checkCancellation() }) {
                events.start($0, counts: $1)
            }
            events.finishLast()
            return counts
        } catch let unsupported as InPlaceUnsupported {
            guard options.strategy == .inPlace else { return nil }
            throw MigrationError(
                .notInferable,
                "The migration cannot run in place: \(unsupported.reason); "
                    + "use the automatic or rebuild strategy to build it beside the store")
        }
    }

    /// Builds the plan beside the store, table to table on the server in scratch schemas, and
    /// swaps it in; returns the number of objects each step read.
    private func rebuild(
        _ steps: [(step: MigrationPlan.Step, from: ManagedObjectModel, to: ManagedObjectModel)],
        session: PostgreSQLMigrationSession, journal: MigrationJournal, options: MigrationOptions, progress: Progress?,
        emit: @escaping @Sendable (MigrationEvent) -> Void
    ) throws -> [Int] {
        let events = StepEvents(steps: steps.map(\.step), progress: progress, emit: emit)
        do {
            try session.holdWriters()
            let counts = try session.buildBeside(
                steps, journal: journal, options: options, onStep: { events.start($0, counts: $1) },
                onMappingRanAsSQL: {
                    emit(
                        $2
                            ? .relationshipsSetAsSQL(step: $0, mapping: $1)
                            : .entityMappingRanAsSQL(step: $0, mapping: $1))
                }
            ) { count throws(MigrationError) in
                events.advance(by: count)
                try Self.checkCancellation()
            }
            events.finishLast()
            try Self.checkCancellation()
            try session.replaceStore(keys: [:])
            return counts
        } catch {
            session.rollback()
            throw error
        }
    }

    /// Throws the migration's cancellation error when the current task is cancelled.
    private static func checkCancellation() throws(MigrationError) {
        if Task.isCancelled {
            throw MigrationError(.cancelled, "The migration was cancelled; the store is unchanged")
        }
    }
}

/// The events and progress of the steps of a PostgreSQL migration: each step's start with its
/// object counts per entity mapping, its batches, and its end when the next starts or the last ends.
private final class StepEvents {
    private let steps: [MigrationPlan.Step]
    private let progress: Progress?
    private let emit: @Sendable (MigrationEvent) -> Void
    private var current: (index: Int, progress: Progress)?

    init(steps: [MigrationPlan.Step], progress: Progress?, emit: @escaping @Sendable (MigrationEvent) -> Void) {
        (self.steps, self.progress, self.emit) = (steps, progress, emit)
    }

    /// A step starts, with the number of objects of each of its entity mappings.
    func start(_ index: Int, counts: [(mapping: String, objects: Int)]) {
        finishLast()
        let step = steps[index]
        emit(.stepStarted(index: index, from: step.from, to: step.to, kind: step.kind))
        for (mapping, objects) in counts {
            emit(.entityMappingStarted(step: index, mapping: mapping, objects: objects))
        }
        let child = Progress(totalUnitCount: Int64(counts.reduce(0) { $0 + $1.objects }))
        progress?.addChild(child, withPendingUnitCount: 1)
        current = (index, child)
    }

    /// The current step has read `count` more objects.
    func advance(by count: Int) {
        guard let progress = current?.progress else { return }
        progress.completedUnitCount = min(progress.totalUnitCount, progress.completedUnitCount + Int64(count))
    }

    /// The current step, if any, has ended.
    func finishLast() {
        guard let (index, progress) = current else { return }
        progress.completedUnitCount = progress.totalUnitCount
        emit(.stepFinished(index: index))
        current = nil
    }
}
