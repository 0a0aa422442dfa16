public import Foundation
public import TernCore
public import TernMigration
public import TernSQLite

extension StoreFiles {
    // MARK: - Migrating between model versions

    /// The migration forecast for a store of any type, without touching it; a SQLite store's
    /// first step is checked against its data, as ``TernSQLite/StoreMigrator`` checks it.
    ///
    /// - Parameters:
    ///   - url: The store file.
    ///   - model: The app's versioned model.
    ///   - target: The version to migrate to; the model's current version when nil.
    ///   - mappings: Explicit mappings for some steps; the others are inferred.
    /// - Returns: The plan; its steps carry problems when they cannot run.
    /// - Throws: ``TernCore/TernError`` when the store's metadata cannot be read,
    ///   ``TernMigration/MigrationError`` when no version wrote the store or it would be a downgrade.
    public static func migrationPlan(
        forStoreAt url: URL, model: VersionedModel, to target: String? = nil, mappings: [StepMapping] = []
    ) throws -> MigrationPlan {
        // A SQLite store's first step is also checked against its data (counts and warnings).
        if try kind(ofStoreAt: url) == .sqlite {
            return try StoreMigrator().plan(forStoreAt: url, model: model, to: target, mappings: mappings)
        }
        return try MigrationPlanner(model: model, mappings: mappings).plan(for: try metadata(at: url), to: target)
    }

    /// Migrates a store of any type to a version of its model, in place (atomically) or to a
    /// destination, optionally into another store type.
    ///
    /// A SQLite store that stays SQLite goes through ``TernSQLite/StoreMigrator`` (streamed in
    /// batches); binary and XML stores, and changes of type, through ``AtomicStoreMigrator``
    /// (loaded whole). Either way the source is never written, and an interrupted migration
    /// leaves the old store or the complete new one.
    ///
    /// ```swift
    /// try await StoreFiles.migrateStore(at: url, model: versions, progress: progress)
    /// ```
    ///
    /// - Parameters:
    ///   - url: The store file.
    ///   - model: The app's versioned model.
    ///   - target: The version to migrate to; the model's current version when nil.
    ///   - mappings: Explicit mappings for some steps; the others are inferred.
    ///   - kind: The migrated store's type; the source's when nil.
    ///   - options: Destination, batch size, policies.
    ///   - progress: Updated with one child per step, counting source objects.
    ///   - onEvent: Called with each event, in order.
    /// - Returns: What was done.
    /// - Throws: ``TernMigration/MigrationError`` (code `cancelled` when cancelled: the source is
    ///   unchanged), or the store layer's error when a store cannot be read or written.
    /// - Complexity: O(*n*) in the number of objects per step.
    @discardableResult
    public static func migrateStore(
        at url: URL, model: VersionedModel, to target: String? = nil, mappings: [StepMapping] = [],
        kind: StoreKind? = nil, options: MigrationOptions = MigrationOptions(), progress: Progress? = nil,
        onEvent: (@Sendable (MigrationEvent) -> Void)? = nil
    ) async throws -> MigrationReport {
        let sourceKind = try self.kind(ofStoreAt: url)
        if sourceKind == .sqlite, kind ?? .sqlite == .sqlite {
            return try await StoreMigrator().migrateStore(
                at: url, model: model, to: target, mappings: mappings, options: options, progress: progress,
                onEvent: onEvent)
        }
        return try await AtomicStoreMigrator().migrateStore(
            at: url, model: model, to: target, mappings: mappings, kind: kind, options: options, progress: progress,
            onEvent: onEvent)
    }
}
