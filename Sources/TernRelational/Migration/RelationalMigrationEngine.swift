package import TernCore
package import TernMigration

/// A migration engine that writes a destination in Core Data's layout through a
/// ``RelationalConnection`` and keeps its associations in an ``AssociationTable`` there: the
/// parts of a step both SQL stores' engines run the same way, written once. Each engine keeps
/// what its database does its own way: reading source pages, and gathering and inserting
/// destination rows (one prepared `INSERT` per row on SQLite, `COPY` per batch on PostgreSQL).
///
/// The engine is used by one migration task at a time.
package protocol RelationalMigrationEngine: AssociatingMigrationEngine
where Associations == AssociationTable {
    /// The destination's connection type.
    associatedtype Destination: RelationalConnection
    /// The connection writing the destination.
    var destination: Destination { get }
    /// The destination layout.
    var schema: StoreSchema { get }
    /// The smallest `Z_MAX` of each destination root table (keys given out before a step, which
    /// new keys must stay above).
    var carriedKeys: [String: Int64] { get }
    /// The links dropped because their object's entity left the relationship's inheritance tree.
    var droppedLinks: Int { get set }
    /// A failure inside a non-throwing method, thrown at the next throwing one.
    var pendingFailure: MigrationError? { get set }
    /// How many objects a page of the step's reads and writes holds.
    var batchSize: Int { get }

    /// Writes the destination rows still gathered in memory.
    ///
    /// - Throws: ``TernMigration/MigrationError`` when the database refuses them.
    func flush() throws(MigrationError)

    /// The file a database error of the store's own type names, if any.
    static func path(of error: any Error) -> String?

    /// Called after each page of ``forEachDestinationInstance(of:_:)``, to let go of what the
    /// engine kept for it.
    func finishDestinationPage()
}

extension RelationalMigrationEngine {
    /// Runs database work, turning its errors into ``TernMigration/MigrationError`` `storeFailure`
    /// (``storeFailure(_:)``); migration errors pass as they are.
    ///
    /// - Throws: ``TernMigration/MigrationError``.
    package static func storeWork<Result>(_ body: () throws -> Result) throws(MigrationError) -> Result {
        do {
            return try body()
        } catch let error as MigrationError {
            throw error
        } catch {
            throw storeFailure(error)
        }
    }

    /// A store's failure during a migration: ``TernMigration/MigrationError`` `storeFailure`, with
    /// the original as the underlying error and the file it names.
    package static func storeFailure(_ error: any Error) -> MigrationError {
        var failure = MigrationError(
            .storeFailure, "The store failed while migrating: \(error)", underlyingError: error)
        failure.path = (error as? TernError)?.path ?? path(of: error)
        return failure
    }

    /// Runs the statements of a mapping's SQL form in the savepoint `tern_bulk`, so that a row
    /// the SQL cannot map as Swift does leaves no trace: the mapping then runs in Swift.
    ///
    /// - Parameters:
    ///   - cleanup: A statement run after a rollback (a temporary table the statements made).
    ///   - isFallback: Whether a statement's error is the SQL form's fallback (a row for Swift).
    ///   - body: Runs the statements on ``destination``.
    /// - Returns: Whether the statements ran; false when one fell back and all were rolled back.
    /// - Throws: ``TernMigration/MigrationError`` `storeFailure` for any other error, after the
    ///   rollback.
    package func inBulkSavepoint(
        cleanup: SQL? = nil, isFallback: (any Error) -> Bool, _ body: () throws -> Void
    ) throws(MigrationError) -> Bool {
        try Self.storeWork { try destination.execute("SAVEPOINT tern_bulk") }
        do {
            try body()
        } catch {
            try Self.storeWork {
                try destination.execute("ROLLBACK TO SAVEPOINT tern_bulk")
                try destination.execute("RELEASE SAVEPOINT tern_bulk")
                if let cleanup { try destination.execute(cleanup) }
            }
            if isFallback(error) { return false }
            throw (error as? MigrationError) ?? Self.storeFailure(error)
        }
        try Self.storeWork { try destination.execute("RELEASE SAVEPOINT tern_bulk") }
        return true
    }

    /// Keeps the first failure of a call that cannot throw, to throw it at the next one that can.
    package func deferFailure(_ error: any Error) {
        guard pendingFailure == nil else { return }
        pendingFailure = (error as? MigrationError) ?? Self.storeFailure(error)
    }

    /// Throws the failure a non-throwing call kept, if any.
    ///
    /// - Throws: That failure.
    package func throwPending() throws(MigrationError) {
        if let pendingFailure { throw pendingFailure }
    }

    /// Calls `body` for each source object of one entity mapping: the engine's walk
    /// (``forEachSourceInstance(of:readingAttributes:_:)`` with several mappings) for one.
    ///
    /// - Throws: ``TernMigration/MigrationError`` from the engine or from `body`.
    package func forEachSourceInstance(
        of mapping: EntityMapping, _ body: (RowReference) throws(MigrationError) -> Void
    ) throws(MigrationError) {
        try forEachSourceInstance(of: mapping, readingAttributes: nil, body)
    }

    /// Calls `body` for each source object of one entity mapping, reading the attributes named
    /// (the engine may read fewer columns).
    ///
    /// - Throws: ``TernMigration/MigrationError`` from the engine or from `body`.
    package func forEachSourceInstance(
        of mapping: EntityMapping, readingAttributes attributes: Set<String>?,
        _ body: (RowReference) throws(MigrationError) -> Void
    ) throws(MigrationError) {
        try forEachSourceInstance(of: [mapping], readingAttributes: attributes) { _, source throws(MigrationError) in
            try body(source)
        }
    }

    /// Calls `body` with each destination object a mapping made, once, in creation order, a page
    /// of ``batchSize`` objects at a time (stage 2 of a pass). Cancelling the task stops the walk
    /// after the page being handled.
    ///
    /// - Throws: What `body` throws, a failure a non-throwing call kept, a database failure, or
    ///   ``TernMigration/MigrationError`` `cancelled`.
    /// - Complexity: O(*n*) in the mapping's objects; memory bounded by the page.
    package func forEachDestinationInstance(
        of mapping: EntityMapping, _ body: (RowReference) throws(MigrationError) -> Void
    ) throws(MigrationError) {
        try flush()
        try Self.storeWork {
            try associations.forEachDestination(mapping: mapping.name, pageSize: batchSize) {
                (references: [RowReference]) in
                for reference in references {
                    try body(reference)
                    try throwPending()
                }
                finishDestinationPage()
                if Task.isCancelled {
                    throw MigrationError(.cancelled, "The migration was cancelled; the store is unchanged")
                }
            }
        }
        try throwPending()
    }

    /// Lets go of nothing: an engine that keeps nothing per page.
    package func finishDestinationPage() {}

    /// Sets a destination object's relationship with bound `UPDATE`s and join-table writes,
    /// dropping the objects whose entity left the relationship's inheritance tree.
    ///
    /// - Throws: ``TernMigration/MigrationError`` for an unknown relationship, a to-one given
    ///   several objects, or a database failure.
    package func setDestinationRelationship(
        _ relationship: String, of destination: RowReference, to objects: [RowReference]
    ) throws(MigrationError) {
        let description = try destinationRelationship(relationship, of: destination, count: objects.count)
        let held = self.objects(heldBy: description, among: objects)
        droppedLinks += objects.count - held.count
        try flush()
        try Self.storeWork {
            let statements = try RelationshipWrites.statements(
                setting: relationship, inverse: description.inverseName, of: destination, to: held, in: schema)
            for statement in statements { try self.destination.execute(statement) }
        }
    }

    /// Checks the destination objects of a mapping against the destination model's rules
    /// (required values), reading at most 100 offending keys per entity and attribute.
    ///
    /// - Throws: ``TernMigration/MigrationError`` `validationFailed` naming them.
    package func validateDestinationInstances(of mapping: EntityMapping) throws(MigrationError) {
        try flush()
        try Self.storeWork {
            try associations.flush()
            try DestinationValidation.validate(mapping, schema: schema) { layout, column in
                try destination.fetchAll(
                    """
                    SELECT DISTINCT d."Z_PK" FROM "TERN_ASSOCIATION" AS a JOIN \(.identifier(layout.table)) AS d \
                    ON \(Associations.joinCondition(mapping: mapping.name, entity: layout.name)) \
                    WHERE d."Z_ENT" = \(layout.number) AND d.\(.identifier(column)) IS NULL ORDER BY 1 LIMIT 100
                    """
                ).map { $0.first?.int64 ?? 0 }
            }
        }
    }

    /// Ends the step: writes what is gathered, drops the association table and records each
    /// root's largest key in `Z_PRIMARYKEY` (never below its carried key).
    ///
    /// - Throws: ``TernMigration/MigrationError`` when a write fails or a failure was kept.
    package func finish() throws(MigrationError) {
        try flush()
        try throwPending()
        try Self.storeWork {
            try associations.drop()
            for layout in schema.entities.values where layout.superNumber == 0 {
                let largest =
                    try destination.fetchValue(#"SELECT MAX("Z_PK") FROM \#(.identifier(layout.table))"#)?.int64
                    ?? 0
                let carried = carriedKeys[layout.table] ?? 0
                try destination.execute(
                    #"UPDATE "Z_PRIMARYKEY" SET "Z_MAX" = \#(max(largest, carried)) WHERE "Z_ENT" = \#(layout.number)"#)
            }
        }
    }
}
