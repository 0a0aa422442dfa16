public import Foundation

/// What a store migration reports as it goes, in order: each store type's migrator yields these
/// from its `events(…)` stream.
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
    /// Stage 1 of an entity mapping of a step ran as one `INSERT … SELECT` in the store, not
    /// object by object (see ``MigrationOptions/compilesMappingsToSQL``).
    case entityMappingRanAsSQL(step: Int, mapping: String)
    /// Stage 2 of an entity mapping of a step set its relationships with one statement each in
    /// the store, not object by object (see ``MigrationOptions/compilesMappingsToSQL``).
    case relationshipsSetAsSQL(step: Int, mapping: String)
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

extension MigrationEvent {
    /// The events of a migration run in a task of its own, as an asynchronous stream that ends
    /// with the migration, or with its error; cancelling the iterating task cancels the migration.
    ///
    /// - Parameter migration: Runs the migration, calling its argument with each event.
    /// - Returns: The stream, for the migrators' `events(migratingStoreAt:…)`.
    package static func stream(
        of migration: @escaping @Sendable (_ onEvent: @escaping @Sendable (MigrationEvent) -> Void) async throws -> Void
    ) -> AsyncThrowingStream<MigrationEvent, any Error> {
        AsyncThrowingStream { continuation in
            let task = Task {
                do {
                    try await migration { continuation.yield($0) }
                    continuation.finish()
                } catch {
                    continuation.finish(throwing: error)
                }
            }
            continuation.onTermination = { _ in task.cancel() }
        }
    }
}
