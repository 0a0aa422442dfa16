import Foundation
public import TernCore
import TernRelational

/// How the rows of one entity are inserted: the INSERT's text and where each of its values
/// comes from, made once per entity, so that a row is bound straight from its attribute values
/// into the prepared statement, without an intermediate array of column values or new SQL text.
struct InsertPlan {
    /// The entity's layout.
    let layout: EntityLayout
    /// `INSERT INTO table (Z_PK, Z_ENT, Z_OPT, columns…) VALUES (?, …)`.
    let text: String
    /// Every stored attribute in the layout's order; derived ones are skipped when binding.
    let attributes: [AttributeColumn]

    /// Makes the plan of an entity.
    init(layout: EntityLayout) {
        self.layout = layout
        attributes = layout.attributes
        let names = SQL.joined(
            (["Z_PK", "Z_ENT", "Z_OPT"] + SQLiteStore.columnNames(of: layout)).map { SQL.identifier($0) })
        let count =
            3 + layout.attributes.filter { $0.derivation == nil }.count
            + layout.toOneRelationships.reduce(0) { $0 + ($1.entityColumn == nil ? 1 : 2) }
        let placeholders = SQL(unsafeSQL: Array(repeating: "?", count: count).joined(separator: ", "))
        let insert: SQL = "INSERT INTO \(.identifier(layout.table)) (\(names)) VALUES (\(placeholders))"
        text = insert.text
    }
}

extension SQLiteStore {
    // MARK: - Inserting rows

    /// Inserts new rows of one entity batch by batch in one IMMEDIATE transaction: each batch
    /// gets a block of keys and is written through the entity's prepared INSERT before the next
    /// is asked for, so memory stays bounded by one batch. With ``recordsHistory`` each batch is
    /// recorded as one history transaction; with global identifiers each row gets one.
    ///
    /// - Parameters:
    ///   - entityName: A concrete entity.
    ///   - author: Who saved, for the history.
    ///   - contextName: The saving context's name, for the history.
    ///   - source: The next batch of attribute values, nil at the end.
    /// - Returns: The keys of the new rows as ranges of consecutive keys.
    /// - Throws: What `source` throws; ``SQLiteError`` with code `invalidValue` when a value does
    ///   not fit its attribute, `readOnly` for a read-only store; ``/TernCore/TernError`` with code
    ///   `constraintConflict`. Nothing is written then.
    /// - Complexity: O(*n*) in the number of rows.
    public func insertRows(
        entityName: String, author: String?, contextName: String?,
        from source: sending @escaping () throws -> [[String: AttributeValue]]?
    ) async throws -> [ClosedRange<Int64>] {
        // `async` although it never suspends: a synchronous method loses to the protocol's
        // default when called on the concrete type with `await` (ProtocolDefaultShadowingTests).
        try requireWritable()
        let layout = try insertPlan(forEntity: entityName).layout
        return try insertingInOneTransaction { ranges in
            guard let batch = try source() else { return false }
            guard !batch.isEmpty else { return true }
            let keys = try reservePrimaryKeys(for: layout, count: batch.count)
            var changes = StoreChangeSet(author: author, contextName: contextName)
            changes.inserted = zip(keys, batch).map { key, values in
                StoreRow(reference: RowReference(entityName: entityName, primaryKey: key), attributes: values)
            }
            // New keys were never handed out, so no row points at them: there are no
            // to-many relationships to clear, and no earlier state for the history.
            try insertRows(changes.inserted)
            if recordsHistory { try recordHistory(of: changes, previous: [:]) }
            if tracksGlobalIdentifiers { try recordGlobalIdentifiers(of: changes, given: [:]) }
            ranges.append(keys: keys)
            return true
        }
    }

    /// Runs `writeNextBatch` in one IMMEDIATE transaction until it returns false, each call
    /// adding the keys it used to the ranges; the external data files of a failed insert are removed.
    func insertingInOneTransaction(
        _ writeNextBatch: (inout [ClosedRange<Int64>]) throws -> Bool
    ) throws -> [ClosedRange<Int64>] {
        var ranges: [ClosedRange<Int64>] = []
        filesOfPendingSave = []
        defer { filesOfPendingSave = [] }
        do {
            try connection.inTransaction(
                .immediate,
                throwing: {
                    while try writeNextBatch(&ranges) {}
                })
        } catch {
            externalData.removeFiles(named: filesOfPendingSave)
            throw error
        }
        return ranges
    }

    /// The insert plan of an entity, made on first use.
    func insertPlan(forEntity name: String) throws -> InsertPlan {
        if let plan = insertPlans[name] { return plan }
        let layout = try schema.entity(named: name)
        if layout.isAbstract {
            throw TernError(
                .invalidValue, "Entity \(SQL.quoted(layout.name)) is abstract; insert one of its subentities.")
        }
        let plan = InsertPlan(layout: layout)
        insertPlans[name] = plan
        return plan
    }

    /// Inserts rows with `Z_OPT = 1`, one prepared statement per entity, each value bound as it
    /// is read from the row. The caller holds the transaction.
    ///
    /// - Parameter rows: The rows; their keys are already reserved.
    /// - Throws: ``SQLiteError`` with code `invalidValue` when a value does not fit its attribute
    ///   or a key names no property; ``TernError`` with code `constraintConflict` for a broken
    ///   uniqueness constraint.
    /// - Complexity: O(*n* · *c*) for *n* rows of *c* columns.
    func insertRows(_ rows: some Collection<StoreRow>) throws {
        // Rows of one entity usually come together; the plans of the others wait here.
        var prepared: [String: (InsertPlan, Statement)] = [:]
        var current: (plan: InsertPlan, statement: Statement)?
        for row in rows {
            if current?.plan.layout.name != row.reference.entityName {
                if let known = prepared[row.reference.entityName] {
                    current = known
                } else {
                    let plan = try insertPlan(forEntity: row.reference.entityName)
                    let next = (plan, try connection.preparedStatement(plan.text))
                    prepared[row.reference.entityName] = next
                    current = next
                }
            }
            guard let (plan, statement) = current else { continue }
            try insert(row, plan: plan, statement: statement)
        }
    }

    /// Binds one row's values into an entity's INSERT and runs it.
    private func insert(_ row: StoreRow, plan: InsertPlan, statement: Statement) throws {
        let layout = plan.layout
        try statement.bind(row.reference.primaryKey, at: 1)
        try statement.bind(Int64(layout.number), at: 2)
        try statement.bind(Int64(1), at: 3)
        var index: Int32 = 4
        var found = 0
        for attribute in plan.attributes {
            guard let value = row.attributes[attribute.name] else {
                if attribute.derivation == nil {
                    try statement.bindNull(at: index)
                    index += 1
                }
                continue
            }
            found += 1
            // Derived attributes are read-only: the store's triggers keep them.
            guard attribute.derivation == nil else { continue }
            if attribute.allowsExternalStorage, case .data(let bytes) = value,
                attribute.type == .binary || attribute.type == .transformable
            {
                let column = try externalData.store(bytes)
                if let name = ExternalDataStore.fileName(in: column) { filesOfPendingSave.append(name) }
                try statement.bind(blob: column, at: index)
            } else if !(try statement.bind(value, for: attribute.type, at: index)) {
                throw TernError(
                    .invalidValue,
                    "\(layout.name).\(attribute.name) is a \(attribute.type.xcodeName) attribute; the value has another type."
                )
            }
            index += 1
        }
        try layout.checkKeys(of: row, matchedAttributes: found)
        for relationship in layout.toOneRelationships {
            let reference = row.toOne[relationship.name]
            if let reference {
                try schema.checkReference(
                    reference, destination: try schema.entity(named: relationship.destination),
                    relationship: relationship.name)
                try statement.bind(reference.primaryKey, at: index)
            } else {
                try statement.bindNull(at: index)
            }
            index += 1
            if relationship.entityColumn != nil {
                if let reference {
                    try statement.bind(Int64(try schema.entity(named: reference.entityName).number), at: index)
                } else {
                    try statement.bindNull(at: index)
                }
                index += 1
            }
        }
        do {
            defer { statement.reset() }
            while try statement.step() {}
        } catch {
            throw constraintConflict(error, of: row.reference)
        }
    }

    /// A broken unique index as a constraint conflict about a row; other errors as they are.
    func constraintConflict(_ error: SQLiteError, of reference: RowReference) -> any Error {
        // SQLITE_CONSTRAINT_UNIQUE and SQLITE_CONSTRAINT_PRIMARYKEY.
        guard error.extendedResultCode == 2067 || error.extendedResultCode == 1555 else { return error }
        return constraintConflict(of: reference, reported: error, message: error.message, path: url.path)
    }
}

extension Statement {
    /// Binds an attribute value as Core Data's SQLite store keeps it (see
    /// ``TernCore/AttributeValue/databaseValue(for:)``), without making a ``DatabaseValue``.
    ///
    /// - Returns: False, binding nothing, when the value does not fit the attribute's type.
    /// - Throws: ``SQLiteError`` when SQLite refuses the value.
    func bind(_ value: AttributeValue, for type: AttributeType, at index: Int32) throws -> Bool {
        switch (value, type) {
        case (.integer(let number), .integer16), (.integer(let number), .integer32), (.integer(let number), .integer64):
            try bind(number, at: index)
        case (.bool(let flag), .boolean): try bind(Int64(flag ? 1 : 0), at: index)
        case (.double(let number), .double), (.double(let number), .float): try bind(number, at: index)
        case (.string(let text), .string): try bind(text: text, at: index)
        case (.date(let date), .date): try bind(date.timeIntervalSinceReferenceDate, at: index)
        case (.data(let bytes), .binary), (.data(let bytes), .transformable): try bind(blob: bytes, at: index)
        default:
            guard let converted = value.databaseValue(for: type) else { return false }
            try bind(converted, at: index)
        }
        return true
    }
}
