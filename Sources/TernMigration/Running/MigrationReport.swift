public import Foundation

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
    /// as the plan's (``MigrationPlan/Step/warnings``).
    public var warnings: [MigrationWarning] = []
    /// The links dropped because the object they led to can no longer be held by the
    /// relationship: its destination entity changed, or the object's entity left its
    /// inheritance tree. The objects themselves stay.
    public var droppedLinks: Int = 0
}

extension MigrationReport {
    /// Creates a report, for the other store types' migrators.
    ///
    /// - Parameters:
    ///   - plan: The plan followed.
    ///   - url: Where the migrated store is.
    ///   - objectsPerStep: The number of source objects each step read.
    ///   - editedMappings: Applied steps whose mapping has changed since, as `from → to`.
    ///   - cleanedUpFiles: The leftover temporary files removed.
    package init(
        following plan: MigrationPlan, at url: URL, objectsPerStep: [Int], editedMappings: [String],
        cleanedUpFiles: [String]
    ) {
        self.init(
            plan: plan, url: url, objectsPerStep: objectsPerStep, editedMappings: editedMappings,
            cleanedUpFiles: cleanedUpFiles)
    }
}
