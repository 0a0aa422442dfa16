import Foundation
public import TernCore
import TernRelational

extension PostgreSQLStore {
    // MARK: - Writing rows

    /// Inserts, updates and deletes rows in one transaction: all or nothing.
    ///
    /// Updated and deleted rows are locked (`SELECT … FOR UPDATE`) and must still have the
    /// version they were read at, so that two processes saving the same row never both succeed;
    /// updates bump `Z_OPT`. Inserted rows get `Z_OPT = 1`; an entity's inserts are loaded with
    /// `COPY` once there are ``copyThreshold`` of them. Every to-many relationship of an inserted
    /// or updated row is written as the row states it.
    ///
    /// - Parameter changes: The rows to write.
    /// - Returns: The new version of every inserted and updated row.
    /// - Throws: ``/TernCore/TernError`` with code `mergeConflict` (one failure per row) when rows changed
    ///   or vanished since they were read, `constraintConflict` when a uniqueness constraint
    ///   would break; ``PostgreSQLError`` with code `invalidValue` when a value does not fit its
    ///   attribute, `readOnly` for a read-only store. Nothing is written when it throws.
    /// - Complexity: O(*k* log *n*) for *k* changed rows and references.
    @discardableResult
    public func save(_ changes: StoreChangeSet) throws -> StoreSaveResult {
        try save(changes, resolver: nil)
    }

    /// ``save(_:)``, resolving version conflicts inside the same transaction: the updated and
    /// deleted rows are locked (`SELECT … FOR UPDATE`), the conflicting ones are read in that
    /// transaction, `resolver` makes the change set to write from them, and that is written, so
    /// that no other writer can change those rows between the check and the write.
    ///
    /// - Parameters:
    ///   - changes: The rows to write.
    ///   - resolver: Makes the change set to write from the conflicting rows' stored state.
    /// - Returns: The new version of every inserted and updated row.
    /// - Throws: What ``save(_:)`` throws, `mergeConflict` when the resolved change set still
    ///   conflicts, or what `resolver` throws. Nothing is written when it throws.
    /// - Complexity: O(*k* log *n*) for *k* changed rows and references.
    @discardableResult
    public func save(_ changes: StoreChangeSet, resolvingConflictsWith resolver: StoreConflictResolver) async throws
        -> StoreSaveResult
    {
        try save(changes, resolver: resolver)
    }

    /// How many inserted rows of one entity make the save load them with `COPY`.
    public static let copyThreshold = 64

    // MARK: - Non public

    private func save(_ changes: StoreChangeSet, resolver: StoreConflictResolver?) throws -> StoreSaveResult {
        try requireWritable()
        do {
            return try save(changes, copying: true, resolver: resolver)
        } catch let error as TernError where error.code == .constraintConflict && error.failures.isEmpty {
            // COPY cannot say which row broke the constraint: insert row by row to name it.
            return try save(changes, copying: false, resolver: resolver)
        }
    }

    private func save(_ proposed: StoreChangeSet, copying: Bool, resolver: StoreConflictResolver?) throws
        -> StoreSaveResult
    {
        try connection.inTransaction {
            let changes = try checkVersions(proposed, resolvingWith: resolver)
            var result = StoreSaveResult()
            for (entity, rows) in Dictionary(grouping: changes.inserted, by: \.reference.entityName).sorted(by: {
                $0.key < $1.key
            }) {
                if copying, rows.count >= Self.copyThreshold {
                    try copyRows(rows, entity: entity)
                } else {
                    for row in rows { try insertColumns(row) }
                }
                for row in rows { result.newVersions[row.reference] = 1 }
            }
            try raisePrimaryKeyCounters(to: changes.inserted)
            for row in changes.updated {
                try updateColumns(row)
                result.newVersions[row.reference] = row.version + 1
            }
            for row in changes.inserted { try schema.writeToMany(of: row, isNew: true, path: nil, on: connection) }
            for row in changes.updated { try schema.writeToMany(of: row, isNew: false, path: nil, on: connection) }
            for (reference, version) in changes.deleted.sorted(by: { $0.key < $1.key }) {
                try deleteRow(reference, version: version)
            }
            return result
        }
    }

    /// Raises each inheritance root's `Z_MAX` to the largest key inserted under it, so that rows
    /// inserted with keys of their own (copies, conversions) never leave the counter behind the
    /// table, where new objects would be handed their keys again (`tern verify` reports it).
    func raisePrimaryKeyCounters(to inserted: [StoreRow]) throws {
        var largest: [String: Int64] = [:]
        for row in inserted {
            let root = try schema.entity(named: row.reference.entityName).rootName
            largest[root] = max(largest[root] ?? 0, row.reference.primaryKey)
        }
        for (name, key) in largest.sorted(by: { $0.key < $1.key }) {
            let root = try schema.entity(named: name)
            try connection.execute(
                """
                UPDATE "Z_PRIMARYKEY" SET "Z_MAX" = \(key) WHERE "Z_ENT" = \(root.number) AND "Z_MAX" < \(key)
                """)
        }
    }

    /// Locks every updated or deleted row and returns the change set to write: `changes` when
    /// no row's version moved on; otherwise what `resolver` makes of the conflicting rows, read
    /// under the lock. Throws a merge conflict naming each conflicting row when there is no
    /// resolver or the resolved change set still conflicts.
    func checkVersions(_ changes: StoreChangeSet, resolvingWith resolver: StoreConflictResolver? = nil) throws
        -> StoreChangeSet
    {
        try VersionCheck.changesToWrite(
            changes, resolver: resolver, conflicts: { try conflictingRows($0) }, rows: { try rows(for: $0) })
    }

    /// Locks every updated or deleted row and lists each one whose version moved on.
    private func conflictingRows(_ changes: StoreChangeSet) throws -> [VersionCheck.Conflict] {
        var expected: [RowReference: Int64] = changes.deleted
        for row in changes.updated { expected[row.reference] = row.version }
        guard !expected.isEmpty else { return [] }
        var current: [RowReference: Int64] = [:]
        for (entity, references) in Dictionary(grouping: expected.keys, by: \.entityName).sorted(by: { $0.key < $1.key }
        ) {
            let layout = try schema.entity(named: entity)
            let keys = references.map(\.primaryKey).sorted()
            let sql: SQL = """
                SELECT "Z_PK", "Z_OPT" FROM \(.identifier(layout.table)) WHERE "Z_PK" = ANY(\(Self.keyArray(keys))::bigint[]) \
                AND \(layout.rowFilter()) ORDER BY "Z_PK" FOR UPDATE
                """
            for values in try connection.fetchAll(sql) {
                current[RowReference(entityName: entity, primaryKey: values[0].int64 ?? 0)] = values[1].int64 ?? 0
            }
        }
        var conflicts: [VersionCheck.Conflict] = []
        for (reference, version) in expected.sorted(by: { $0.key < $1.key }) where current[reference] != version {
            let what =
                current[reference].map { "changed (version \(version) was read, the store has \($0))" } ?? "was deleted"
            var failure = TernError(
                .mergeConflict, "\(reference) \(what) since it was read", entity: reference.entityName)
            failure.objectID = objectID(reference)
            conflicts.append((reference, failure))
        }
        return conflicts
    }

    /// Loads new rows of one entity with `COPY`.
    func copyRows(_ rows: [StoreRow], entity: String) throws {
        let layout = try schema.entity(named: entity)
        try requireConcrete(layout)
        var columns: [String] = []
        var data: [[DatabaseValue]] = []
        data.reserveCapacity(rows.count)
        for row in rows {
            let values = try columnValues(of: row, layout: layout)
            if columns.isEmpty { columns = ["Z_PK", "Z_ENT", "Z_OPT"] + values.map(\.column) }
            data.append(
                [.integer(row.reference.primaryKey), .integer(Int64(layout.number)), .integer(1)] + values.map(\.value))
        }
        try copy(data, into: layout, columns: columns)
    }

    /// Loads rows into an entity's table with `COPY`.
    ///
    /// - Throws: ``/TernCore/TernError`` with code `constraintConflict` (naming no row: `COPY`
    ///   cannot say which) when a uniqueness constraint would break; ``PostgreSQLError`` otherwise.
    func copy(_ rows: [[DatabaseValue]], into layout: EntityLayout, columns: [String]) throws {
        try loadingRows { () throws(PostgreSQLError) in
            try connection.copy(into: layout.table, columns: columns, rows: rows)
        }
    }

    /// Runs a `COPY` into an entity's table, a unique violation becoming the error a save gives.
    ///
    /// - Parameter body: Runs the `COPY`.
    /// - Returns: What `body` returns.
    ///
    /// - Throws: ``/TernCore/TernError`` with code `constraintConflict` (naming no row: `COPY`
    ///   cannot say which) when a uniqueness constraint would break; ``PostgreSQLError`` otherwise.
    func loadingRows<Result>(_ body: () throws(PostgreSQLError) -> Result) throws -> Result {
        do {
            return try body()
        } catch {
            guard error.sqlState == "23505" else { throw error }
            throw TernError(.constraintConflict, "the save would break a uniqueness constraint", underlyingError: error)
        }
    }

    func insertColumns(_ row: StoreRow) throws {
        let layout = try schema.entity(named: row.reference.entityName)
        try requireConcrete(layout)
        let values = try columnValues(of: row, layout: layout)
        let arguments: [DatabaseValue] =
            [.integer(row.reference.primaryKey), .integer(Int64(layout.number)), .integer(1)]
            + values.map(\.value)
        // The columns are the layout's, in its order, for every row: the text is made once.
        let text: String
        if let cached = insertTexts[layout.name] {
            text = cached
        } else {
            let names = SQL.joined((["Z_PK", "Z_ENT", "Z_OPT"] + values.map(\.column)).map { SQL.identifier($0) })
            let placeholders = SQL(unsafeSQL: Array(repeating: "?", count: arguments.count).joined(separator: ", "))
            let insert: SQL = "INSERT INTO \(.identifier(layout.table)) (\(names)) VALUES (\(placeholders))"
            text = insert.text
            insertTexts[layout.name] = text
        }
        try execute(SQL(unsafeSQL: text, arguments: arguments), constraintsOf: row.reference)
    }

    func updateColumns(_ row: StoreRow) throws {
        let layout = try schema.entity(named: row.reference.entityName)
        let values = try columnValues(of: row, layout: layout)
        var assignments = values.map { SQL.identifier($0.column) + SQL(unsafeSQL: " = ?", arguments: [$0.value]) }
        assignments.append(#""Z_OPT" = "Z_OPT" + 1"#)
        try execute(
            """
            UPDATE \(.identifier(layout.table)) SET \(SQL.joined(assignments)) \
            WHERE "Z_PK" = \(row.reference.primaryKey) AND "Z_OPT" = \(row.version)
            """, constraintsOf: row.reference)
    }

    func deleteRow(_ reference: RowReference, version: Int64) throws {
        let layout = try schema.entity(named: reference.entityName)
        for statement in layout.deletion(ofRow: reference.primaryKey, version: version) {
            try connection.execute(statement)
        }
    }

    /// Runs a write, turning a unique violation (SQLSTATE 23505) into a constraint conflict about the row.
    func execute(_ sql: SQL, constraintsOf reference: RowReference) throws {
        do {
            try connection.execute(sql)
        } catch {
            guard error.sqlState == "23505" else { throw error }
            throw constraintConflict(of: reference, reported: error, message: error.message, path: nil)
        }
    }

    /// Throws for an abstract entity, which has no rows of its own.
    func requireConcrete(_ layout: EntityLayout) throws {
        if layout.isAbstract {
            throw TernError(
                .invalidValue, "Entity \(SQL.quoted(layout.name)) is abstract; insert one of its subentities.")
        }
    }
}
