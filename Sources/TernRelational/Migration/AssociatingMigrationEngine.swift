package import TernCore
package import TernMigration

/// Where a migration engine keeps the associations of a step (a table of the destination, on
/// SQLite as runs, on PostgreSQL as rows).
package protocol MigrationAssociationStorage {
    /// Records that a source object became a destination object under a mapping.
    func associate(source: RowReference, withDestination destination: RowReference, mapping: String) throws
    /// The destination objects of a source object under a mapping (any mapping when nil), in order.
    func destinations(of source: RowReference, mapping: String?) throws -> [RowReference]
    /// The source objects of a destination object under a mapping, in order.
    func sources(of destination: RowReference, mapping: String) throws -> [RowReference]
}

/// A migration engine that keeps its associations in a ``MigrationAssociationStorage``: the
/// association calls of ``TernMigration/MigrationManager``, which cannot throw, written once
/// for every such engine. A failure of the storage is kept for the engine's next throwing call.
///
/// ```swift
/// extension MyEngine: AssociatingMigrationEngine {
///     func deferFailure(_ error: any Error) { pendingFailure = pendingFailure ?? MigrationError(.storeFailure, "\(error)") }
/// }
/// ```
package protocol AssociatingMigrationEngine: MigrationManager {
    /// The storage type.
    associatedtype Associations: MigrationAssociationStorage
    /// The step's associations.
    var associations: Associations { get }
    /// Keeps the first failure of a call that cannot throw, to throw it at the next one that can.
    func deferFailure(_ error: any Error)
}

extension AssociatingMigrationEngine {
    /// Records an association; a failure waits for the next throwing call.
    package func associate(source: RowReference, withDestination destination: RowReference, mapping: EntityMapping) {
        do {
            try associations.associate(source: source, withDestination: destination, mapping: mapping.name)
        } catch {
            deferFailure(error)
        }
    }

    /// The destination objects of source objects, in the order of `sources`; a failure waits for
    /// the next throwing call.
    package func destinationInstances(forMapping mappingName: String?, sourceInstances sources: [RowReference])
        -> [RowReference]
    {
        var result: [RowReference] = []
        do {
            for source in sources { result += try associations.destinations(of: source, mapping: mappingName) }
        } catch {
            deferFailure(error)
        }
        return result
    }

    /// The source objects of a destination object; a failure waits for the next throwing call.
    package func sourceInstances(forMapping mappingName: String, destinationInstance destination: RowReference)
        -> [RowReference]
    {
        do {
            return try associations.sources(of: destination, mapping: mappingName)
        } catch {
            deferFailure(error)
            return []
        }
    }
}
