public import Foundation
public import TernCore
public import TernMigration
import TernPostgreSQL
import TernSQLite

/// Migrates a store of any type from the model version that wrote it to a later one: the one
/// entry point of Tern's migrations.
///
/// The store's type is read once, here, and the work goes to the migrator of that type, which
/// follows the plan ``/TernMigration/MigrationPlanner`` makes (inferred steps, mapping models,
/// progressive chains) and records the same journal in the store's metadata:
///
/// - **SQLite stores** stream through their tables in batches: inferred steps in place (SQL in
///   one transaction), other steps built beside the store and swapped in with an atomic rename.
/// - **Binary and XML stores**, and changes of a file's type, are loaded whole, migrated, and
///   written beside the store before they replace it.
/// - **PostgreSQL stores** migrate in their own schema, under a lock that keeps other migrators
///   out, in place or built in a scratch schema and swapped in.
/// - **Into another place or type** (``/TernMigration/MigrationOptions/destination``, or `kind`): a file goes
///   to its new file through its type's migrator; a store moving to or from PostgreSQL is copied
///   first, at its own version, and the copy is migrated (and removed if that fails).
///
/// Whatever the type, the source is never left half-migrated: an interrupted migration leaves
/// the old store or the new one.
///
/// ```swift
/// let migrator = StoreMigrator()
/// let progress = Progress(totalUnitCount: 100)
/// let report = try await migrator.migrateStore(at: .file(url), model: versions, mappings: [eventSplit], progress: progress)
/// print(report.plan)
/// ```
public struct StoreMigrator: Sendable {
    /// Creates a migrator.
    public init() {}

    // MARK: - Planning

    /// The migration forecast for a store, without touching it; the first step is checked against
    /// the data of SQLite and PostgreSQL stores (counts and warnings).
    ///
    /// - Parameters:
    ///   - location: The store.
    ///   - model: The app's versioned model.
    ///   - target: The version to migrate to; the model's current version when nil.
    ///   - mappings: Explicit mappings for some steps; the others are inferred.
    /// - Returns: The plan; its steps carry problems when they cannot run.
    /// - Throws: ``/TernCore/TernError``, ``/TernSQLite/SQLiteError`` or
    ///   ``/TernPostgreSQL/PostgreSQLError`` when the store's metadata cannot be read;
    ///   ``/TernMigration/MigrationError`` when no version wrote the store or it would be a downgrade.
    /// - Complexity: One `COUNT(*)` per data check of the first step.
    public func plan(
        forStoreAt location: StoreLocation, model: VersionedModel, to target: String? = nil,
        mappings: [StepMapping] = []
    ) throws -> MigrationPlan {
        switch location {
        case .postgreSQL(let connection):
            return try PostgreSQLMigrator().plan(forStoreAt: connection, model: model, to: target, mappings: mappings)
        case .file(let url):
            if try StoreFiles.kind(ofStoreAt: url) == .sqlite {
                return try SQLiteStoreMigrator().plan(forStoreAt: url, model: model, to: target, mappings: mappings)
            }
            return try MigrationPlanner(model: model, mappings: mappings).plan(
                for: try StoreFiles.metadata(at: url), to: target)
        }
    }

    // MARK: - Migrating

    /// Migrates a store to a version of its model, in place or to a destination, optionally
    /// into another store type.
    ///
    /// - Parameters:
    ///   - location: The store.
    ///   - model: The app's versioned model.
    ///   - target: The version to migrate to; the model's current version when nil.
    ///   - mappings: Explicit mappings for some steps; the others are inferred.
    ///   - kind: The migrated store's type: the source's when nil, or SQLite when a PostgreSQL
    ///     store goes to a file. A store changes type only with a destination, except that a
    ///     binary or XML file may be rewritten in place as the other.
    ///   - options: Destination, strategy, batch size, policies, lock timeout.
    ///   - progress: Updated with one child per step, counting source objects.
    ///   - onEvent: Called with each event, in order.
    /// - Returns: What was done.
    /// - Throws: ``/TernMigration/MigrationError`` (code `cancelled` when the task is cancelled:
    ///   the source is unchanged); ``/TernCore/TernError`` code `unsupported` for a destination
    ///   that already holds a store or a type the destination cannot have; the store layer's
    ///   error when a store cannot be read or written.
    /// - Complexity: O(*n*) in the number of objects per step; memory bounded by the batch size
    ///   for SQLite and PostgreSQL stores, O(*n*) for binary and XML ones.
    @discardableResult
    public func migrateStore(
        at location: StoreLocation, model: VersionedModel, to target: String? = nil, mappings: [StepMapping] = [],
        kind: StoreKind? = nil, options: MigrationOptions = MigrationOptions(), progress: Progress? = nil,
        onEvent: (@Sendable (MigrationEvent) -> Void)? = nil
    ) async throws -> MigrationReport {
        switch (location, options.destination) {
        case (.file(let url), nil), (.file(let url), .file?):
            guard kind != .postgreSQL else {
                throw TernError(
                    .unsupported, "a migration into a PostgreSQL store needs a postgres:// destination", path: url.path)
            }
            // The type is read once here and handed down.
            let sourceKind = try StoreFiles.kind(ofStoreAt: url)
            if sourceKind == .sqlite, kind ?? .sqlite == .sqlite {
                return try await SQLiteStoreMigrator().migrateStore(
                    at: url, model: model, to: target, mappings: mappings, options: options, progress: progress,
                    onEvent: onEvent)
            }
            return try await AtomicStoreMigrator().migrateStore(
                at: url, sourceKind: sourceKind, model: model, to: target, mappings: mappings, kind: kind,
                options: options, progress: progress, onEvent: onEvent)
        case (.postgreSQL(let connection), nil):
            guard kind == nil || kind == .postgreSQL else {
                throw TernError(
                    .unsupported, "a PostgreSQL store migrates in its own schema; give a destination for another type")
            }
            return try await PostgreSQLMigrator().migrateStore(
                at: connection, model: model, to: target, mappings: mappings, options: options, progress: progress,
                onEvent: onEvent)
        case (_, let destination?):
            return try await migrateCopy(
                of: location, to: destination, model: model, target: target, mappings: mappings, kind: kind,
                options: options, progress: progress, onEvent: onEvent)
        }
    }

    /// The events of a migration, as an asynchronous stream: ``migrateStore(at:model:to:mappings:kind:options:progress:onEvent:)``
    /// run in a task of its own.
    ///
    /// - Parameters:
    ///   - location: The store.
    ///   - model: The app's versioned model.
    ///   - target: The version to migrate to; the model's current version when nil.
    ///   - mappings: Explicit mappings for some steps.
    ///   - kind: The migrated store's type; the source's when nil.
    ///   - options: Destination, strategy, batch size, policies, lock timeout.
    /// - Returns: The events, ending with ``/TernMigration/MigrationEvent/finished(_:)`` or the migration's
    ///   error; cancelling the iterating task cancels the migration.
    public func events(
        migratingStoreAt location: StoreLocation, model: VersionedModel, to target: String? = nil,
        mappings: [StepMapping] = [], kind: StoreKind? = nil, options: MigrationOptions = MigrationOptions()
    ) -> AsyncThrowingStream<MigrationEvent, any Error> {
        MigrationEvent.stream { onEvent in
            try await migrateStore(
                at: location, model: model, to: target, mappings: mappings, kind: kind, options: options,
                onEvent: onEvent)
        }
    }

    /// Migrates a store file whose type the caller has read, and whose metadata it has read
    /// after rolling back what a crashed writer left: the container's way in, so that the file is
    /// neither detected nor opened again for what is already known.
    ///
    /// - Parameters:
    ///   - url: The store file.
    ///   - kind: Its type: SQLite, binary or XML.
    ///   - metadata: Its metadata, read after recovery.
    ///   - model: The app's versioned model.
    ///   - mappings: Explicit mappings for some steps; the others are inferred.
    ///   - options: Strategy, batch size, policies; no destination.
    ///   - progress: Updated with one child per step, counting source objects.
    /// - Returns: What was done.
    /// - Throws: As ``migrateStore(at:model:to:mappings:kind:options:progress:onEvent:)``.
    package func migrateStore(
        resolvedAt url: URL, kind: StoreKind, metadata: StoreMetadata, model: VersionedModel, mappings: [StepMapping],
        options: MigrationOptions, progress: Progress?
    ) async throws -> MigrationReport {
        if kind == .sqlite {
            return try await SQLiteStoreMigrator().migrateStore(
                at: url, model: model, mappings: mappings, options: options, progress: progress,
                recoveredMetadata: metadata)
        }
        return try await AtomicStoreMigrator().migrateStore(
            at: url, sourceKind: kind, model: model, mappings: mappings, options: options, progress: progress,
            recoveredMetadata: metadata)
    }

    // MARK: - Non public

    /// Copies a store at its own version into a destination where one end is PostgreSQL, then
    /// migrates the copy where it is; a copy whose migration fails is removed.
    private func migrateCopy(
        of location: StoreLocation, to destination: StoreLocation, model: VersionedModel, target: String?,
        mappings: [StepMapping], kind: StoreKind?, options: MigrationOptions, progress: Progress?,
        onEvent: (@Sendable (MigrationEvent) -> Void)?
    ) async throws -> MigrationReport {
        let destinationKind: StoreKind
        switch destination {
        case .postgreSQL:
            guard kind == nil || kind == .postgreSQL else {
                throw TernError(
                    .unsupported, "a postgres:// destination holds a PostgreSQL store, not \(kind ?? .sqlite)")
            }
            destinationKind = .postgreSQL
        case .file(let url):
            destinationKind = kind ?? .sqlite
            guard destinationKind != .postgreSQL else {
                throw TernError(
                    .unsupported, "a PostgreSQL destination is a postgres:// URL, not a file", path: url.path)
            }
        }
        let plan = try self.plan(forStoreAt: location, model: model, to: target, mappings: mappings)
        try plan.requireExecutable()
        let sourceModel = model.version(named: plan.source)?.model
        let source: any PersistentStore =
            switch location {
            case .postgreSQL(let connection):
                try StoreFiles.openPostgreSQL(connection, model: sourceModel, isReadOnly: true)
            case .file(let url): try StoreFiles.open(at: url, model: sourceModel, isReadOnly: true)
            }
        var inPlace = options
        inPlace.destination = nil
        switch destination {
        case .postgreSQL(let connection):
            _ = try await StoreFiles.copy(source, toPostgreSQL: connection, batchSize: max(1, options.batchSize))
        case .file(let url):
            _ = try await StoreFiles.copy(source, to: url, kind: destinationKind, batchSize: max(1, options.batchSize))
        }
        do {
            return try await migrateStore(
                at: destination, model: model, to: target, mappings: mappings, options: inPlace, progress: progress,
                onEvent: onEvent)
        } catch {
            switch destination {
            case .postgreSQL(let connection): try? PostgreSQLStore.destroy(at: connection)
            case .file(let url): try? StoreFiles.destroy(at: url)
            }
            throw error
        }
    }
}
