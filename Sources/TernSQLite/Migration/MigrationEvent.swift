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
}

/// How a store migration runs.
public struct MigrationOptions: Sendable {
    /// Where the migrated store goes; nil migrates in place (atomically).
    public var destination: URL?
    /// How many source objects are read per query.
    public var batchSize: Int
    /// The custom policies the mappings name.
    public var policies: MigrationPolicyRegistry
    /// The clock and UUID source of value expressions.
    public var environment: ExpressionEnvironment

    /// Creates options.
    ///
    /// - Parameters:
    ///   - destination: Where the migrated store goes; nil migrates in place.
    ///   - batchSize: How many source objects are read per query.
    ///   - policies: The custom policies the mappings name.
    ///   - environment: The clock and UUID source of value expressions.
    public init(
        destination: URL? = nil, batchSize: Int = 1000, policies: MigrationPolicyRegistry = MigrationPolicyRegistry(),
        environment: ExpressionEnvironment = ExpressionEnvironment()
    ) {
        (self.destination, self.batchSize, self.policies, self.environment) = (destination, batchSize, policies, environment)
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
}
