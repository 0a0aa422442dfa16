public import Foundation
public import TernMigration

/// What a store migration reports as it goes, in order: see ``StoreMigrator/events(migratingStoreAt:model:to:mappings:options:)``.
public enum MigrationEvent: Sendable, Hashable {
    /// Leftover temporary files of an interrupted migration were removed.
    case cleanedUp(files: [String])
    /// The plan the migration follows.
    case planned(MigrationPlan)
    /// A step that already ran on this store has a different mapping now.
    case editedMapping(from: String, to: String)
    /// A step starts; `index` counts from 0.
    case stepStarted(index: Int, from: String, to: String, kind: MigrationPlan.StepKind)
    /// An entity mapping of a step starts over `objects` source objects.
    case entityMappingStarted(step: Int, mapping: String, objects: Int)
    /// A step's destination is complete and durable.
    case stepFinished(index: Int)
    /// The migrated store replaced the source (or was moved to its destination).
    case replaced(URL)
    /// The migration is complete.
    case finished(MigrationReport)
    /// Another process holds the store's migration lock (a PostgreSQL store); the migration waits
    /// for it, up to ``MigrationOptions/lockTimeout``. `holder` describes that process.
    case waitingForMigrationLock(holder: String)
}

/// How the steps of a store migration are carried out.
///
/// By default (``automatic``) a migration whose steps are all inferred runs in place: SQL inside
/// one transaction for all its steps (`ALTER TABLE` where it can, SQLite's table rebuild
/// otherwise), without loading objects. A plan with a mapping model, a migration to a
/// destination, and an inferred step the in-place planner cannot express (see
/// `docs/Migration.md`) are built beside the store, step by step, and swapped in. Either way an
/// interrupted migration leaves the old store or the new one, never a version in between.
public enum MigrationStrategy: String, Sendable, Hashable, CaseIterable {
    /// In place when every step is inferred and can run in place, else built beside the store.
    case automatic
    /// In place, failing with ``TernMigration/MigrationError/Code/notInferable`` before anything
    /// is written when a step has a mapping model or cannot run in place.
    case inPlace
    /// Every step built beside the store and swapped in, as before in-place steps existed.
    case rebuild
}

/// How a store migration runs.
public struct MigrationOptions: Sendable {
    /// Where the migrated store goes; nil migrates in place (atomically).
    public var destination: URL?
    /// Whether inferred steps run in place or are built beside the store; ``MigrationStrategy/automatic`` by default.
    public var strategy: MigrationStrategy = .automatic
    /// How many source objects are read per query.
    public var batchSize: Int
    /// The custom policies the mappings name.
    public var policies: MigrationPolicyRegistry
    /// The clock and UUID source of value expressions.
    public var environment: ExpressionEnvironment
    /// How long a migration of a PostgreSQL store waits for another process's migration of it to
    /// finish before failing; nil (the default) waits as long as it takes.
    public var lockTimeout: Duration?

    /// Creates options.
    ///
    /// - Parameters:
    ///   - destination: Where the migrated store goes; nil migrates in place.
    ///   - batchSize: How many source objects are read per query.
    ///   - policies: The custom policies the mappings name.
    ///   - environment: The clock and UUID source of value expressions.
    ///   - strategy: Whether inferred steps run in place or are built beside the store.
    public init(
        destination: URL? = nil, batchSize: Int = 1000, policies: MigrationPolicyRegistry = MigrationPolicyRegistry(),
        environment: ExpressionEnvironment = ExpressionEnvironment(), strategy: MigrationStrategy = .automatic
    ) {
        (self.destination, self.batchSize, self.policies, self.environment) = (destination, batchSize, policies, environment)
        self.strategy = strategy
    }
}

/// What a store migration did.
public struct MigrationReport: Sendable, Hashable {
    /// The plan it followed; empty when the store was already at the target version.
    public var plan: MigrationPlan
    /// Where the migrated store is.
    public var url: URL
    /// The number of source objects each step read, by step index.
    public var objectsPerStep: [Int]
    /// Steps already applied to the store whose mapping has changed since, as `from → to`.
    public var editedMappings: [String]
    /// The leftover temporary files of an earlier interrupted run that were removed.
    public var cleanedUpFiles: [String]
    /// The indexes of the steps that ran in place, with SQL in one transaction (all or none).
    public var inPlaceSteps: [Int] = []
    /// The external binary data files no row references any more, removed after the migration.
    public var removedExternalFiles: Int = 0
    /// What the inferred steps relaxed or dropped, with counts, in step order: the same warnings
    /// as the plan's (``TernMigration/MigrationPlan/Step/warnings``).
    public var warnings: [MigrationWarning] = []
    /// The links dropped because the object they led to can no longer be held by the
    /// relationship: its destination entity changed, or the object's entity left its
    /// inheritance tree. The objects themselves stay.
    public var droppedLinks: Int = 0
}
