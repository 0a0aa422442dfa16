import Foundation
import TernCore

extension SQLiteStore {
    // MARK: - Writing rows

    /// Inserts, updates and deletes rows in one IMMEDIATE transaction: all or nothing.
    ///
    /// Inserted rows get `Z_OPT = 1` and, without a primary key, one allocated from `Z_MAX`.
    /// Updated and deleted rows must still have the version they were read at
    /// (`UPDATE … WHERE Z_PK = ? AND Z_OPT = ?`); updates bump it. For each to-many relationship
    /// present in a row, the destination rows' foreign keys and order keys (`Z_FOK_…`) or the
    /// join-table rows are replaced.
    ///
    /// - Parameter changes: The rows to write.
    /// - Returns: The inserted and updated rows with their primary keys and new versions.
    /// - Throws: ``SQLiteError`` with code `optimisticLockingConflict` when a row changed since
    ///   it was read, `rowNotFound` when it is gone, `invalidValue` when a value does not fit
    ///   its attribute, `readOnly` for a read-only store.
    /// - Complexity: O(*k* log *n*) for *k* changed rows and references.
    @discardableResult
    package func save(_ changes: RowChanges) throws(SQLiteError) -> (inserted: [StoredRow], updated: [StoredRow]) {
        try requireWritable()
        return try connection.inTransaction(.immediate) { () throws(SQLiteError) in
            var inserted: [StoredRow] = []
            for row in changes.inserted { inserted.append(try insertColumns(row)) }
            var updated: [StoredRow] = []
            for row in changes.updated { updated.append(try updateColumns(row)) }
            for row in inserted + updated { try writeToMany(row) }
            for row in changes.deleted { try deleteRow(row) }
            return (inserted, updated)
        }
    }

    /// Inserts one row. See ``save(_:)``.
    package func insert(_ row: StoredRow) throws(SQLiteError) -> StoredRow {
        try save(RowChanges(inserted: [row])).inserted[0]
    }

    /// Updates one row, checking and bumping its version. See ``save(_:)``.
    package func update(_ row: StoredRow) throws(SQLiteError) -> StoredRow {
        try save(RowChanges(updated: [row])).updated[0]
    }

    /// Deletes one row and its join-table rows, checking its version. See ``save(_:)``.
    package func delete(_ row: StoredRow) throws(SQLiteError) {
        try save(RowChanges(deleted: [row]))
    }

    // MARK: - Non public

    func insertColumns(_ row: StoredRow) throws(SQLiteError) -> StoredRow {
        let layout = try schema.entity(named: row.entity)
        if layout.isAbstract {
            throw SQLiteError(.invalidValue, "Entity \(SQL.quoted(layout.name)) is abstract; insert one of its subentities.")
        }
        var stored = row
        var primaryKey = row.primaryKey ?? 0
        if row.primaryKey == nil { primaryKey = try reservePrimaryKeys(for: layout, count: 1).lowerBound }
        stored.primaryKey = primaryKey
        stored.version = 1
        let values = try columnValues(of: row, layout: layout)
        let names = SQL.joined((["Z_PK", "Z_ENT", "Z_OPT"] + values.map(\.column)).map { SQL.identifier($0) })
        let arguments: [DatabaseValue] = [.integer(primaryKey), .integer(Int64(layout.number)), .integer(1)] + values.map(\.value)
        let placeholders = SQL(unsafeSQL: Array(repeating: "?", count: arguments.count).joined(separator: ", "), arguments: arguments)
        try connection.execute("INSERT INTO \(.identifier(layout.table)) (\(names)) VALUES (\(placeholders))")
        return stored
    }

    func updateColumns(_ row: StoredRow) throws(SQLiteError) -> StoredRow {
        let layout = try schema.entity(named: row.entity)
        let primaryKey = try requirePrimaryKey(row)
        let values = try columnValues(of: row, layout: layout)
        var assignments = values.map { SQL.identifier($0.column) + SQL(unsafeSQL: " = ?", arguments: [$0.value]) }
        assignments.append("Z_OPT = Z_OPT + 1")
        try connection.execute("""
            UPDATE \(.identifier(layout.table)) SET \(SQL.joined(assignments)) \
            WHERE Z_PK = \(primaryKey) AND Z_OPT = \(row.version)
            """)
        try checkChanged(row, layout: layout)
        var stored = row
        stored.version = row.version + 1
        return stored
    }

    func deleteRow(_ row: StoredRow) throws(SQLiteError) {
        let layout = try schema.entity(named: row.entity)
        let primaryKey = try requirePrimaryKey(row)
        try connection.execute("""
            DELETE FROM \(.identifier(layout.table)) WHERE Z_PK = \(primaryKey) AND Z_OPT = \(row.version) \
            AND Z_ENT IN (\(Self.list(layout.hierarchyNumbers)))
            """)
        try checkChanged(row, layout: layout)
        for relationship in layout.toManyRelationships {
            if case .joinTable(let table, let source, _, _) = relationship.storage {
                try connection.execute("DELETE FROM \(.identifier(table)) WHERE \(.identifier(source)) = \(primaryKey)")
            }
        }
    }

    /// Replaces the to-many relationships present in a row.
    func writeToMany(_ row: StoredRow) throws(SQLiteError) {
        let layout = try schema.entity(named: row.entity)
        let primaryKey = try requirePrimaryKey(row)
        for (name, references) in row.toMany.sorted(by: { $0.key < $1.key }) {
            guard let relationship = layout.toMany(named: name) else {
                throw SQLiteError(.invalidValue, "Entity \(SQL.quoted(layout.name)) has no to-many relationship \(SQL.quoted(name)).")
            }
            let destination = try schema.entity(named: relationship.destination)
            var seen: Set<Int64> = []
            let unique = references.filter { seen.insert($0.primaryKey).inserted }
            for reference in unique { try checkReference(reference, destination: destination, relationship: name) }
            switch relationship.storage {
            case .inverseForeignKey(let table, let column, let orderColumn):
                let entityColumn = destination.toOneRelationships.first { $0.column == column }?.entityColumn
                var cleared = [SQL.identifier(column) + " = NULL"]
                if let entityColumn { cleared.append(SQL.identifier(entityColumn) + " = NULL") }
                if let orderColumn { cleared.append(SQL.identifier(orderColumn) + " = NULL") }
                try connection.execute("""
                    UPDATE \(.identifier(table)) SET \(SQL.joined(cleared)) WHERE \(.identifier(column)) = \(primaryKey) \
                    AND Z_ENT IN (\(Self.list(destination.hierarchyNumbers)))
                    """)
                for (index, reference) in unique.enumerated() {
                    var set = [SQL.identifier(column) + " = \(primaryKey)"]
                    if let entityColumn { set.append(SQL.identifier(entityColumn) + " = \(layout.number)") }
                    if let orderColumn { set.append(SQL.identifier(orderColumn) + " = \(Int64(index + 1) * 1024)") }
                    try connection.execute(
                        "UPDATE \(.identifier(table)) SET \(SQL.joined(set)) WHERE Z_PK = \(reference.primaryKey)")
                    if connection.changedRowCount == 0 {
                        throw SQLiteError(
                            .rowNotFound, "\(layout.name).\(name) references a \(reference.entity) row that does not exist.",
                            path: url.path)
                    }
                }
            case .joinTable(let table, let source, let target, let orderColumn):
                try connection.execute("DELETE FROM \(.identifier(table)) WHERE \(.identifier(source)) = \(primaryKey)")
                for (index, reference) in unique.enumerated() {
                    var columns = [SQL.identifier(source), SQL.identifier(target)]
                    var values: [SQL] = ["\(primaryKey)", "\(reference.primaryKey)"]
                    if let orderColumn {
                        columns.append(SQL.identifier(orderColumn))
                        values.append("\(Int64(index + 1) * 1024)")
                    }
                    try connection.execute(
                        "INSERT INTO \(.identifier(table)) (\(SQL.joined(columns))) VALUES (\(SQL.joined(values)))")
                }
            }
        }
    }

    /// The value of each attribute and to-one column of an entity for a row (NULL when absent).
    func columnValues(of row: StoredRow, layout: EntityLayout) throws(SQLiteError) -> [(column: String, value: DatabaseValue)] {
        for name in row.attributes.keys where layout.attribute(named: name) == nil {
            throw SQLiteError(.invalidValue, "Entity \(SQL.quoted(layout.name)) has no stored attribute \(SQL.quoted(name)).")
        }
        for name in row.toOne.keys where layout.toOne(named: name) == nil {
            throw SQLiteError(.invalidValue, "Entity \(SQL.quoted(layout.name)) has no to-one relationship \(SQL.quoted(name)).")
        }
        var values: [(column: String, value: DatabaseValue)] = []
        for attribute in layout.attributes {
            var value = DatabaseValue.null
            if let attributeValue = row.attributes[attribute.name] {
                guard let converted = attributeValue.databaseValue(for: attribute.type) else {
                    throw SQLiteError(
                        .invalidValue,
                        "\(layout.name).\(attribute.name) is a \(attribute.type.xcodeName) attribute; the value has another type.")
                }
                value = converted
                if attribute.allowsExternalStorage, case .blob(let bytes) = converted {
                    value = .blob(try externalData.store(bytes))
                }
            }
            values.append((attribute.column, value))
        }
        for relationship in layout.toOneRelationships {
            let reference = row.toOne[relationship.name]
            if let reference {
                try checkReference(reference, destination: try schema.entity(named: relationship.destination), relationship: relationship.name)
            }
            values.append((relationship.column, reference.map { .integer($0.primaryKey) } ?? .null))
            if let entityColumn = relationship.entityColumn {
                let number = try reference.map { reference throws(SQLiteError) in try schema.entity(named: reference.entity).number }
                values.append((entityColumn, number.map { .integer(Int64($0)) } ?? .null))
            }
        }
        return values
    }

    /// Throws unless a reference names the destination entity or one of its subentities.
    func checkReference(_ reference: ObjectReference, destination: EntityLayout, relationship: String) throws(SQLiteError) {
        let target = try schema.entity(named: reference.entity)
        guard destination.hierarchyNumbers.contains(target.number) else {
            throw SQLiteError(
                .invalidValue,
                "Relationship \(SQL.quoted(relationship)) leads to \(SQL.quoted(destination.name)), not to \(SQL.quoted(target.name)).")
        }
    }

    func requirePrimaryKey(_ row: StoredRow) throws(SQLiteError) -> Int64 {
        guard let primaryKey = row.primaryKey else {
            throw SQLiteError(.invalidValue, "A row of \(SQL.quoted(row.entity)) has no primary key; insert it first.")
        }
        return primaryKey
    }

    /// After an UPDATE or DELETE guarded by `Z_OPT`, tells a conflict from a missing row.
    func checkChanged(_ row: StoredRow, layout: EntityLayout) throws(SQLiteError) {
        guard connection.changedRowCount == 0 else { return }
        let primaryKey = row.primaryKey ?? 0
        let current = try connection.fetchValue("SELECT Z_OPT FROM \(.identifier(layout.table)) WHERE Z_PK = \(primaryKey)")
        if let current {
            throw SQLiteError(
                .optimisticLockingConflict,
                "\(layout.name) row \(primaryKey) changed since it was read (version \(row.version), now "
                    + "\(current.int64 ?? 0)); fetch it again and retry.", path: url.path)
        }
        throw SQLiteError(.rowNotFound, "\(layout.name) row \(primaryKey) no longer exists.", path: url.path)
    }
}
