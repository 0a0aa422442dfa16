package import Foundation
package import TernMigration

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
