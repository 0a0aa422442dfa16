import Foundation
public import TernCore
import TernRelational

extension SQLiteStore {
    // MARK: - Writing rows

    /// Inserts, updates and deletes rows in one IMMEDIATE transaction: all or nothing. When the
    /// store ``recordsHistory``, the same transaction records the save in the history tables.
    ///
    /// Inserted rows get `Z_OPT = 1`; their keys come from ``newPrimaryKeys(forEntity:count:)``.
    /// Updated and deleted rows must still have the version they were read at
    /// (`UPDATE … WHERE Z_PK = ? AND Z_OPT = ?`); updates bump it. Every to-many relationship of
    /// an inserted or updated row is written as the row states it (an absent key is empty): the
    /// destinations' foreign keys and order keys (`Z_FOK_…`), or the join-table rows. Deleting a
    /// row deletes its join-table rows.
    ///
    /// - Parameter changes: The rows to write.
    /// - Returns: The new version of every inserted and updated row.
    /// - Throws: ``/TernCore/TernError`` with code `mergeConflict` (one failure per row) when rows changed
    ///   or vanished since they were read, `constraintConflict` when a uniqueness constraint
    ///   would break; ``SQLiteError`` with code `invalidValue` when a value does not fit its
    ///   attribute, `readOnly` for a read-only store. Nothing is written when it throws.
    /// - Complexity: O(*k* log *n*) for *k* changed rows and references.
    @discardableResult
    public func save(_ changes: StoreChangeSet) throws -> StoreSaveResult {
        try save(changes, identifiers: [:], inside: nil)
    }

    /// ``save(_:)``, resolving version conflicts inside the same IMMEDIATE transaction: the
    /// rows whose version moved on are read while the store's write lock is held, `resolver`
    /// makes the change set to write from them, and that is written, so that no other writer
    /// (connection or process) can change those rows between the check and the write.
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
        try save(changes, identifiers: [:], inside: nil, resolver: resolver)
    }

    /// ``save(_:)`` with the global identifiers of inserted rows given (rows absent from
    /// `identifiers` get new ones) and more work run inside the same transaction.
    func save(
        _ proposed: StoreChangeSet, identifiers: [RowReference: UUID], inside extra: (() throws -> Void)?,
        resolver: StoreConflictResolver? = nil
    ) throws -> StoreSaveResult {
        try requireWritable()
        filesOfPendingSave = []
        var replacedFiles: [String] = []
        defer { filesOfPendingSave = [] }
        do {
            let result = try connection.inTransaction(
                .immediate,
                throwing: {
                    let changes = try checkVersions(proposed, resolvingWith: resolver)
                    let previous = recordsHistory ? try rowsBeforeSave(changes) : [:]
                    replacedFiles = try externalFiles(of: changes.updated.map(\.reference) + changes.deleted.keys)
                    var result = StoreSaveResult()
                    try insertRows(changes.inserted)
                    result.newVersions.reserveCapacity(changes.inserted.count + changes.updated.count)
                    for row in changes.inserted { result.newVersions[row.reference] = 1 }
                    try raisePrimaryKeyCounters(to: changes.inserted)
                    for row in changes.updated {
                        try updateColumns(row)
                        result.newVersions[row.reference] = row.version + 1
                    }
                    for row in changes.inserted {
                        try schema.writeToMany(of: row, isNew: false, path: url.path, on: connection)
                    }
                    for row in changes.updated {
                        try schema.writeToMany(of: row, isNew: false, path: url.path, on: connection)
                    }
                    for (reference, version) in changes.deleted.sorted(by: { $0.key < $1.key }) {
                        try deleteRow(reference, version: version)
                    }
                    if recordsHistory { try recordHistory(of: changes, previous: previous) }
                    if tracksGlobalIdentifiers { try recordGlobalIdentifiers(of: changes, given: identifiers) }
                    try extra?()
                    return result
                })
            // Updated rows got new files; the old ones are only removed once the commit is durable
            // (inside a sync transaction: once it commits).
            if filesOfSyncTransaction != nil {
                filesOfSyncTransaction?.replaced += replacedFiles
                filesOfSyncTransaction?.written += filesOfPendingSave
            } else {
                externalData.removeFiles(named: replacedFiles)
            }
            return result
        } catch {
            externalData.removeFiles(named: filesOfPendingSave)
            throw error
        }
    }

    // MARK: - Non public

    /// Raises each inheritance root's `Z_MAX` to the largest key inserted under it, so that rows
    /// inserted with keys of their own (copies, conversions) never leave the counter behind
    /// the table, where Core Data would hand out their keys again.
    func raisePrimaryKeyCounters(to inserted: [StoreRow]) throws {
        var largest: [String: Int64] = [:]
        var entity = ""
        var root = ""
        for row in inserted {
            // Rows come grouped by entity: look the root up once per group.
            if row.reference.entityName != entity {
                entity = row.reference.entityName
                root = try schema.entity(named: entity).rootName
            }
            if row.reference.primaryKey > largest[root] ?? 0 { largest[root] = row.reference.primaryKey }
        }
        for (name, key) in largest { try raisePrimaryKeyCounter(of: try schema.entity(named: name), to: key) }
    }

    /// Raises the `Z_MAX` of an entity's inheritance root to `key`, if it is lower. The caller
    /// holds the transaction.
    func raisePrimaryKeyCounter(of entity: EntityLayout, to key: Int64) throws {
        let root = try schema.entity(named: entity.rootName)
        try connection.execute(
            "UPDATE Z_PRIMARYKEY SET Z_MAX = \(key) WHERE Z_ENT = \(root.number) AND Z_MAX < \(key)")
    }

    /// The change set to write: `changes` when no updated or deleted row's version moved on;
    /// otherwise what `resolver` makes of the conflicting rows, read in the current transaction.
    /// Throws a merge conflict naming every conflicting row when there is no resolver or the
    /// resolved change set still conflicts.
    func checkVersions(_ changes: StoreChangeSet, resolvingWith resolver: StoreConflictResolver? = nil) throws
        -> StoreChangeSet
    {
        try VersionCheck.changesToWrite(
            changes, resolver: resolver, conflicts: { try conflictingRows($0) }, rows: { try rows(for: $0) })
    }

    /// Every updated or deleted row whose version moved on, with what happened to it.
    private func conflictingRows(_ changes: StoreChangeSet) throws -> [VersionCheck.Conflict] {
        var conflicts: [VersionCheck.Conflict] = []
        let expected =
            changes.updated.map { ($0.reference, $0.version) }
            + changes.deleted.sorted { $0.key < $1.key }.map { ($0.key, $0.value) }
        for (reference, version) in expected {
            let layout = try schema.entity(named: reference.entityName)
            let current = try connection.fetchValue(
                """
                SELECT Z_OPT FROM \(.identifier(layout.table)) WHERE Z_PK = \(reference.primaryKey) \
                AND \(layout.rowFilter())
                """)
            guard current?.int64 != version else { continue }
            let what =
                current == nil
                ? "was deleted" : "changed (version \(version) was read, the store has \(current?.int64 ?? 0))"
            var failure = TernError(
                .mergeConflict, "\(reference) \(what) since it was read", entity: reference.entityName, path: url.path)
            failure.objectID = objectID(reference)
            conflicts.append((reference, failure))
        }
        return conflicts
    }

    /// The external data files the rows reference now.
    func externalFiles(of references: [RowReference]) throws -> [String] {
        var names: [String] = []
        for reference in references {
            let layout = try schema.entity(named: reference.entityName)
            let columns = layout.attributes.filter(\.allowsExternalStorage).map { SQL.identifier($0.column) }
            guard !columns.isEmpty else { continue }
            let sql: SQL =
                "SELECT \(SQL.joined(columns)) FROM \(.identifier(layout.table)) WHERE Z_PK = \(reference.primaryKey)"
            for value in try connection.fetchOne(sql) ?? [] {
                if let bytes = value.data, let name = ExternalDataStore.fileName(in: bytes) { names.append(name) }
            }
        }
        return names
    }

    func updateColumns(_ row: StoreRow) throws {
        let layout = try schema.entity(named: row.reference.entityName)
        var values: [DatabaseValue] = []
        try appendColumnValues(of: row, layout: layout, to: &values)
        var assignments = zip(Self.columnNames(of: layout), values).map {
            SQL.identifier($0) + SQL(unsafeSQL: " = ?", arguments: [$1])
        }
        assignments.append("Z_OPT = Z_OPT + 1")
        try execute(
            """
            UPDATE \(.identifier(layout.table)) SET \(SQL.joined(assignments)) \
            WHERE Z_PK = \(row.reference.primaryKey) AND Z_OPT = \(row.version)
            """, constraintsOf: row.reference)
    }

    func deleteRow(_ reference: RowReference, version: Int64) throws {
        let layout = try schema.entity(named: reference.entityName)
        for statement in layout.deletion(ofRow: reference.primaryKey, version: version) {
            try connection.execute(statement)
        }
    }

    /// Runs a write, turning a broken unique index into a constraint conflict about the row.
    func execute(_ sql: SQL, constraintsOf reference: RowReference) throws {
        do {
            try connection.execute(sql)
        } catch {
            throw constraintConflict(error, of: reference)
        }
    }

    /// The columns ``appendColumnValues(of:layout:to:)`` writes, in its order: each written
    /// attribute, then each to-one relationship (its key, and its entity when it has a column).
    static func columnNames(of layout: EntityLayout) -> [String] {
        layout.attributes.filter { $0.derivation == nil }.map(\.column)
            + layout.toOneRelationships.flatMap { [$0.column] + ($0.entityColumn.map { [$0] } ?? []) }
    }

    /// Appends the value of each column of ``columnNames(of:)`` for a row (NULL when absent).
    ///
    /// - Complexity: O(*k*) for *k* columns: one lookup per attribute of the entity.
    func appendColumnValues(
        of row: StoreRow, layout: EntityLayout, to values: inout [DatabaseValue]
    ) throws {
        values.reserveCapacity(values.count + layout.attributes.count + 2 * layout.toOneRelationships.count)
        var found = 0
        // Derived attributes are read-only: the store's triggers keep them.
        for attribute in layout.attributes {
            guard let attributeValue = row.attributes[attribute.name] else {
                if attribute.derivation == nil { values.append(.null) }
                continue
            }
            found += 1
            guard attribute.derivation == nil else { continue }
            guard var value = attributeValue.databaseValue(for: attribute.type) else {
                throw TernError(
                    .invalidValue,
                    "\(layout.name).\(attribute.name) is a \(attribute.type.xcodeName) attribute; the value has another type."
                )
            }
            if attribute.allowsExternalStorage, case .blob(let bytes) = value {
                let column = try externalData.store(bytes)
                if let name = ExternalDataStore.fileName(in: column) { filesOfPendingSave.append(name) }
                value = .blob(column)
            }
            values.append(value)
        }
        try layout.checkKeys(of: row, matchedAttributes: found)
        try schema.forEachToOneValue(of: row, layout: layout) { _, value in values.append(value) }
    }
}
