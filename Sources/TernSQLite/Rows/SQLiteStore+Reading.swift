import Foundation
package import TernCore

extension SQLiteStore {
    // MARK: - Reading rows

    /// The row of an object, if it exists.
    ///
    /// - Parameters:
    ///   - entity: The entity; rows of its subentities are found too.
    ///   - primaryKey: The object's `Z_PK`.
    /// - Returns: The row with its exact entity, values, references and version, or nil.
    /// - Throws: ``SQLiteError`` when the entity is unknown or a value cannot be read.
    /// - Complexity: O(log *n*) plus the size of the object's to-many relationships.
    package func row(of entity: String, primaryKey: Int64) throws(SQLiteError) -> StoreRow? {
        let layout = try schema.entity(named: entity)
        let select = try selection(for: layout)
        let sql: SQL = "\(select) WHERE Z_PK = \(primaryKey) AND Z_ENT IN (\(Self.list(layout.hierarchyNumbers)))"
        guard let values = try connection.fetchOne(sql) else { return nil }
        return try decode(values)
    }

    /// The next batch of an entity's rows, in primary-key order (keyset pagination).
    ///
    /// - Parameters:
    ///   - entity: The entity.
    ///   - includingSubentities: Whether rows of its subentities are included.
    ///   - primaryKey: Only rows with a larger `Z_PK` are returned; 0 to start.
    ///   - limit: The most rows to return.
    /// - Returns: Up to `limit` rows; fewer means the scan is done.
    /// - Throws: ``SQLiteError`` when the entity is unknown or a value cannot be read.
    /// - Complexity: O(`limit` · log *n*); memory is bounded by `limit`.
    package func rows(
        of entity: String, includingSubentities: Bool = true, after primaryKey: Int64 = 0, limit: Int
    ) throws(SQLiteError) -> [StoreRow] {
        precondition(limit > 0, "a batch holds at least one row")
        let layout = try schema.entity(named: entity)
        let numbers = includingSubentities ? layout.hierarchyNumbers : [layout.number]
        let select = try selection(for: layout)
        let sql: SQL = """
            \(select) WHERE Z_ENT IN (\(Self.list(numbers))) AND Z_PK > \(primaryKey) \
            ORDER BY Z_PK LIMIT \(limit)
            """
        var rows: [StoreRow] = []
        try connection.forEachStatementRow(sql) { (statement) throws(SQLiteError) in rows.append(try decode(statement)) }
        return rows
    }

    /// An entity's rows in batches: an asynchronous sequence that reads one batch at a time.
    ///
    /// ```swift
    /// for try await batch in store.batches(of: "Car", size: 500) {
    ///     for row in batch { … }
    /// }
    /// ```
    ///
    /// - Parameters:
    ///   - entity: The entity.
    ///   - includingSubentities: Whether rows of its subentities are included.
    ///   - size: The most rows per batch.
    /// - Complexity: Memory is bounded by `size`.
    package nonisolated func batches(of entity: String, includingSubentities: Bool = true, size: Int = 500) -> RowBatches {
        RowBatches(store: self, entity: entity, includingSubentities: includingSubentities, size: size)
    }

    /// The number of rows of exactly this entity (subentities excluded).
    ///
    /// - Complexity: O(*n*) in the rows of the entity's table.
    package func count(of entity: String) throws(SQLiteError) -> Int {
        let layout = try schema.entity(named: entity)
        let sql: SQL = "SELECT COUNT(*) FROM \(.identifier(layout.table)) WHERE Z_ENT = \(layout.number)"
        return Int(try connection.fetchValue(sql)?.int64 ?? 0)
    }

    // MARK: - Non public

    /// The SELECT of every column of an entity's root table, in the order of ``columnNames(of:)``.
    nonisolated func selection(for layout: EntityLayout) throws(SQLiteError) -> SQL {
        let list = SQL.joined(try columnNames(of: layout).map { SQL.identifier($0) })
        return "SELECT \(list) FROM \(.identifier(layout.table))"
    }

    /// Every column of an entity's root table, `Z_PK`, `Z_ENT` and `Z_OPT` first: what
    /// ``decode(_:)`` reads.
    nonisolated func columnNames(of layout: EntityLayout) throws(SQLiteError) -> [String] {
        guard let table = schema.tables[layout.table] else {
            throw SQLiteError(.schemaMismatch, "The schema has no table \(layout.table).")
        }
        return ["Z_PK", "Z_ENT", "Z_OPT"] + table.columns.map(\.name)
    }

    /// A row from the values of a selection that starts with every column of the root table
    /// (``columnNames(of:)``), read with its entity's cached ``RowPlan``.
    ///
    func decode(_ values: some ColumnValues) throws(SQLiteError) -> StoreRow {
        try decode(values, plan: rowPlan(number: Int(values.integer(at: 1) ?? 0)))
    }

    /// The cached plan for reading every column of an entity's rows.
    ///
    /// - Parameter number: The concrete entity's number (`Z_ENT`).
    /// - Throws: ``SQLiteError`` with code `schemaMismatch` for an unknown number.
    func rowPlan(number: Int) throws(SQLiteError) -> RowPlan {
        if let plan = rowPlans[number] { return plan }
        let plan = try makeRowPlan(number: number)
        rowPlans[number] = plan
        return plan
    }

    /// A new plan for reading every column of an entity's rows.
    nonisolated func makeRowPlan(number: Int) throws(SQLiteError) -> RowPlan {
        let layout = try schema.entity(number: number)
        var positions: [String: Int] = [:]
        for (index, name) in try columnNames(of: layout).enumerated() { positions[name] = index }
        return RowPlan(layout: layout, positions: positions)
    }

    /// A row from selected values, read with a plan: `Z_PK`, `Z_ENT` and `Z_OPT` first.
    func decode(_ values: some ColumnValues, plan: RowPlan) throws(SQLiteError) -> StoreRow {
        try decode(values, plan: plan, using: connection)
    }

    /// A row from selected values, read with a plan, its to-many relationships read through
    /// `connection` (the store's own, or the one of synchronous reads).
    nonisolated func decode(
        _ values: some ColumnValues, plan: RowPlan, using connection: Connection
    ) throws(SQLiteError) -> StoreRow {
        let primaryKey = values.integer(at: 0) ?? 0
        var row = StoreRow(
            reference: RowReference(entityName: plan.layout.name, primaryKey: primaryKey),
            version: values.integer(at: 2) ?? 0, attributes: try decodeAttributes(values, plan: plan, primaryKey: primaryKey))
        for relationship in plan.toOne {
            guard let key = values.integer(at: relationship.position) else { continue }
            var destination = relationship.destination
            if let position = relationship.entityPosition, let number = values.integer(at: position) {
                destination = try schema.entity(number: Int(number)).name
            }
            row.toOne[relationship.name] = RowReference(entityName: destination, primaryKey: key)
        }
        for relationship in plan.toMany {
            // An absent key is an empty relationship.
            let references = try references(of: relationship, from: primaryKey, using: connection)
            if !references.isEmpty { row.toMany[relationship.name] = references }
        }
        return row
    }

    /// The non-nil attribute values of a plan read from selected values.
    ///
    /// - Parameter primaryKey: The row's key, for the message of a value that cannot be read.
    nonisolated func decodeAttributes(
        _ values: some ColumnValues, plan: RowPlan, primaryKey: Int64?
    ) throws(SQLiteError) -> [String: AttributeValue] {
        var attributes = [String: AttributeValue](minimumCapacity: plan.attributes.count)
        for attribute in plan.attributes {
            var value = values.value(at: attribute.position)
            if attribute.allowsExternalStorage, case .blob(let bytes) = value {
                value = .blob(try externalData.resolve(bytes))
            }
            do {
                if let decoded = try AttributeValue(databaseValue: value, type: attribute.type) {
                    attributes[attribute.name] = decoded
                }
            } catch {
                throw SQLiteError(
                    .invalidValue,
                    "\(plan.layout.name).\(attribute.name) of row \(primaryKey.map(String.init) ?? "?") holds a value a "
                        + "\(attribute.type.xcodeName) attribute cannot read.", path: url.path)
            }
        }
        return attributes
    }

    /// The objects a to-many relationship of an object holds, in order for an ordered one.
    nonisolated func references(
        of relationship: ToManyMapping, from primaryKey: Int64, using connection: Connection
    ) throws(SQLiteError) -> [RowReference] {
        let destination = try schema.entity(named: relationship.destination)
        let sql: SQL
        switch relationship.storage {
        case .inverseForeignKey(let table, let column, let orderColumn):
            let order = SQL(unsafeSQL: orderColumn.map { SQL.quoted($0) + ", " } ?? "")
            sql = """
                SELECT Z_ENT, Z_PK FROM \(.identifier(table)) WHERE \(.identifier(column)) = \(primaryKey) \
                AND Z_ENT IN (\(Self.list(destination.hierarchyNumbers))) ORDER BY \(order)Z_PK
                """
        case .joinTable(let table, let source, let target, let orderColumn):
            let order = SQL(unsafeSQL: orderColumn.map { "j." + SQL.quoted($0) + ", " } ?? "")
            sql = """
                SELECT d.Z_ENT, d.Z_PK FROM \(.identifier(table)) AS j JOIN \(.identifier(destination.table)) AS d \
                ON d.Z_PK = j.\(.identifier(target)) WHERE j.\(.identifier(source)) = \(primaryKey) \
                ORDER BY \(order)d.Z_PK
                """
        }
        var references: [RowReference] = []
        for values in try connection.fetchAll(sql) {
            let entity = try schema.entity(number: Int(values[0].int64 ?? 0)).name
            references.append(RowReference(entityName: entity, primaryKey: values[1].int64 ?? 0))
        }
        return references
    }

    /// A comma-separated list of bound integers.
    static func list(_ numbers: [Int]) -> SQL {
        SQL.joined(numbers.map { "\($0)" })
    }
}

/// An entity's rows, one batch at a time, read with keyset pagination (`Z_PK > last`).
package struct RowBatches: AsyncSequence, Sendable {
    /// The store.
    let store: SQLiteStore
    /// The entity.
    let entity: String
    /// Whether rows of subentities are included.
    let includingSubentities: Bool
    /// The most rows per batch.
    let size: Int

    package func makeAsyncIterator() -> Iterator {
        Iterator(batches: self)
    }

    /// Reads the next batch after the last primary key seen.
    package struct Iterator: AsyncIteratorProtocol {
        let batches: RowBatches
        var lastPrimaryKey: Int64 = 0
        var isFinished = false

        package mutating func next() async throws -> [StoreRow]? {
            guard !isFinished else { return nil }
            let batch = try await batches.store.rows(
                of: batches.entity, includingSubentities: batches.includingSubentities, after: lastPrimaryKey,
                limit: batches.size)
            if batch.count < batches.size { isFinished = true }
            guard let last = batch.last?.reference.primaryKey else { return nil }
            lastPrimaryKey = last
            return batch
        }
    }
}
