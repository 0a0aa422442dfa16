import Foundation
import Synchronization
package import TernCore
import TernRelational

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
    package func row(of entity: String, primaryKey: Int64) throws -> StoreRow? {
        let layout = try schema.entity(named: entity)
        let select = try selection(for: layout)
        let sql: SQL = "\(select) WHERE Z_PK = \(primaryKey) AND \(layout.rowFilter())"
        return try packedRows(sql).first.map(StoreRow.init)
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
    ) throws -> [StoreRow] {
        try packedRows(of: entity, includingSubentities: includingSubentities, after: primaryKey, limit: limit)
            .map(StoreRow.init)
    }

    /// ``rows(of:includingSubentities:after:limit:)`` with their values packed in the order of
    /// each entity's attribute keys: no dictionary is made per row.
    ///
    /// - Parameters:
    ///   - entity: The entity.
    ///   - includingSubentities: Whether rows of its subentities are included.
    ///   - primaryKey: Only rows with a larger `Z_PK` are returned; 0 to start.
    ///   - limit: The most rows to return.
    /// - Returns: Up to `limit` rows; fewer means the scan is done.
    /// - Throws: ``SQLiteError`` when the entity is unknown or a value cannot be read.
    /// - Complexity: O(`limit` · log *n*); memory is bounded by `limit`.
    package func packedRows(
        of entity: String, includingSubentities: Bool = true, after primaryKey: Int64 = 0, limit: Int
    ) throws -> [PackedRow] {
        precondition(limit > 0, "a batch holds at least one row")
        let layout = try schema.entity(named: entity)
        let select = try selection(for: layout)
        let sql: SQL = """
            \(select) WHERE \(layout.rowFilter(includingSubentities: includingSubentities)) AND Z_PK > \(primaryKey) \
            ORDER BY Z_PK LIMIT \(limit)
            """
        return try packedRows(sql, expectedCount: limit)
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
    package nonisolated func batches(of entity: String, includingSubentities: Bool = true, size: Int = 500)
        -> RowBatches
    {
        RowBatches(store: self, entity: entity, includingSubentities: includingSubentities, size: size)
    }

    /// The number of rows of exactly this entity (subentities excluded).
    ///
    /// - Complexity: O(*n*) in the rows of the entity's table.
    package func count(of entity: String) throws -> Int {
        let layout = try schema.entity(named: entity)
        let sql: SQL =
            "SELECT COUNT(*) FROM \(.identifier(layout.table)) WHERE \(layout.rowFilter(includingSubentities: false))"
        return Int(try connection.fetchValue(sql)?.int64 ?? 0)
    }

    // MARK: - Non public

    /// The SELECT of every column of an entity's root table, in the order of ``columnNames(of:)``.
    nonisolated func selection(for layout: EntityLayout) throws -> SQL {
        "SELECT \(try selectList(for: layout)) FROM \(.identifier(layout.table))"
    }

    /// The select list of ``columnNames(of:)``, qualified with an alias if one is given, with
    /// each row's entity number in place of `Z_ENT`: the entity's own number for a table that is
    /// its alone (``EntityLayout/rowEntityNumber(alias:)``), so such a table's every row is read
    /// as its object.
    nonisolated func selectList(for layout: EntityLayout, alias: String? = nil) throws -> SQL {
        let prefix = SQL(unsafeSQL: alias.map { $0 + "." } ?? "")
        return SQL.joined(
            try columnNames(of: layout).map { name in
                name == "Z_ENT" ? layout.rowEntityNumber(alias: alias) : prefix + SQL.identifier(name)
            })
    }

    /// Every column of an entity's root table, `Z_PK`, `Z_ENT` and `Z_OPT` first: what
    /// ``packedRows(_:alongside:)`` reads.
    nonisolated func columnNames(of layout: EntityLayout) throws -> [String] {
        guard let table = schema.tables[layout.table] else {
            throw TernError(.schemaMismatch, "The schema has no table \(layout.table).")
        }
        return ["Z_PK", "Z_ENT", "Z_OPT"] + table.columns.map(\.name)
    }

    /// The attribute keys of an entity's packed values: the model's attribute names, with any
    /// the store's layout adds, sorted by name.
    nonisolated func attributeKeys(of layout: EntityLayout) -> AttributeKeys {
        var names = model.allAttributes(of: layout.name).map(\.name)
        let missing = layout.attributes.map(\.name).filter { !names.contains($0) }
        if !missing.isEmpty { names = (names + missing).sorted() }
        return AttributeKeys.shared(names: names)
    }

    /// The cached plan for reading every column of an entity's rows.
    ///
    /// - Parameter number: The concrete entity's number (`Z_ENT`).
    /// - Throws: `TernError` with code `schemaMismatch` for an unknown number.
    func rowPlan(number: Int) throws -> RowPlan {
        if let plan = rowPlans[number] { return plan }
        let plan = try makeRowPlan(number: number)
        rowPlans[number] = plan
        return plan
    }

    /// A new plan for reading every column of an entity's rows.
    nonisolated func makeRowPlan(number: Int) throws -> RowPlan {
        let layout = try schema.entity(number: number)
        var positions: [String: Int] = [:]
        for (index, name) in try columnNames(of: layout).enumerated() { positions[name] = index }
        return RowPlan(layout: layout, keys: attributeKeys(of: layout), positions: positions)
    }

    /// The rows of a query that selects every column of a root table (``columnNames(of:)``,
    /// `Z_PK`, `Z_ENT` and `Z_OPT` first), each read with its entity's cached plan, with their
    /// to-many relationships.
    ///
    /// - Parameters:
    ///   - sql: The query.
    ///   - expectedCount: How many rows the query gives at most, when known (its `LIMIT`): room
    ///     is made for them at once instead of growing as rows come.
    ///   - alongside: Called with each row of the statement after it is decoded, to read more columns.
    func packedRows(
        _ sql: SQL, expectedCount: Int = 0, alongside: (Statement) throws -> Void = { _ in }
    ) throws -> [PackedRow] {
        try packedRows(
            sql, using: connection, plan: { (number) throws in try rowPlan(number: number) },
            expectedCount: expectedCount, alongside: alongside)
    }

    /// ``packedRows(_:expectedCount:alongside:)`` through a connection, with the plans `plan`
    /// gives by entity number.
    nonisolated func packedRows(
        _ sql: SQL, using connection: Connection, plan: (Int) throws -> RowPlan, expectedCount: Int = 0,
        alongside: (Statement) throws -> Void = { _ in }
    ) throws -> [PackedRow] {
        // Room for at most 10,000 rows at once: a larger expected count grows as rows come.
        let expectedCount = min(max(expectedCount, 0), 10_000)
        // The rows are made once the statement is done: while it steps, each row leaves its key
        // and version, its values in one buffer for every row (one allocation per page instead
        // of one per row, shared by the rows as slices), and its to-one destinations if any.
        var heads: [(primaryKey: Int64, version: Int64)] = []
        heads.reserveCapacity(expectedCount)
        var buffer: [AttributeValue?] = []
        var toOne: [Int: [String: RowReference]] = [:]
        // Where each run of rows of one entity starts, with its plan.
        var runs: [(start: Int, plan: RowPlan)] = []
        var last: RowPlan?
        try connection.forEachStatementRow(sql) { (statement) throws in
            let number = Int(statement.integer(at: 1) ?? 0)
            let found: RowPlan
            if let last, last.layout.number == number {
                found = last
            } else {
                found = try plan(number)
                last = found
                runs.append((heads.count, found))
                if buffer.isEmpty { buffer.reserveCapacity(max(expectedCount, 1) * found.keys.names.count) }
            }
            let primaryKey = statement.integer(at: 0) ?? 0
            heads.append((primaryKey, statement.integer(at: 2) ?? 0))
            try decodePacked(statement, plan: found, primaryKey: primaryKey, into: &buffer)
            if !found.toOne.isEmpty {
                let destinations = try decodeToOne(statement, plan: found)
                if !destinations.isEmpty { toOne[heads.count - 1] = destinations }
            }
            try alongside(statement)
        }
        // To-many relationships are read afterwards, with the plan of each row.
        let readsToMany = runs.contains { !$0.plan.toMany.isEmpty }
        var rows: [PackedRow] = []
        rows.reserveCapacity(heads.count)
        var plans: [RowPlan] = []
        var start = buffer.startIndex
        for (run, (first, plan)) in runs.enumerated() {
            let end = run + 1 < runs.count ? runs[run + 1].start : heads.count
            let width = plan.keys.names.count
            let name = plan.layout.name
            let keys = plan.keys
            for index in first..<end {
                rows.append(
                    PackedRow(
                        reference: RowReference(entityName: name, primaryKey: heads[index].primaryKey),
                        version: heads[index].version,
                        attributes: PackedAttributes(keys: keys, slice: buffer[start..<start + width]),
                        toOne: toOne.isEmpty ? [:] : toOne[index] ?? [:]))
                start += width
            }
            if readsToMany { plans += repeatElement(plan, count: end - first) }
        }
        if readsToMany { try loadToMany(of: &rows, plans: plans, using: connection) }
        return rows
    }

    /// Appends the attribute values of a row read with a plan to `buffer`, one slot per key of
    /// the plan.
    nonisolated func decodePacked(
        _ values: some ColumnValues, plan: RowPlan, primaryKey: Int64, into buffer: inout [AttributeValue?]
    ) throws {
        // Slot after slot, those no column fills left nil: every slot is written once.
        var slot = 0
        for column in plan.columns {
            while slot < column.slot {
                buffer.append(nil)
                slot += 1
            }
            buffer.append(try decodeValue(values, column: column, plan: plan, primaryKey: primaryKey))
            slot += 1
        }
        while slot < plan.keys.names.count {
            buffer.append(nil)
            slot += 1
        }
    }

    /// The non-nil to-one destinations of a row read with a plan, by relationship name.
    nonisolated func decodeToOne(_ values: some ColumnValues, plan: RowPlan) throws -> [String: RowReference] {
        var destinations: [String: RowReference] = [:]
        for relationship in plan.toOne {
            guard let key = values.integer(at: relationship.position) else { continue }
            var destination = relationship.destination
            if let position = relationship.entityPosition, let number = values.integer(at: position) {
                destination = try schema.entity(number: Int(number)).name
            }
            destinations[relationship.name] = RowReference(entityName: destination, primaryKey: key)
        }
        return destinations
    }

    /// The non-nil attribute values of a plan read from selected values.
    ///
    /// - Parameter primaryKey: The row's key, for the message of a value that cannot be read.
    nonisolated func decodeAttributes(
        _ values: some ColumnValues, plan: RowPlan, primaryKey: Int64?
    ) throws -> [String: AttributeValue] {
        var attributes = [String: AttributeValue](minimumCapacity: plan.attributes.count)
        for column in plan.columns {
            if let decoded = try decodeValue(values, column: column, plan: plan, primaryKey: primaryKey) {
                attributes[plan.attributes[column.attribute].name] = decoded
            }
        }
        return attributes
    }

    /// The values this store read as nil since it was opened, when it is opened with
    /// ``SQLiteConfiguration/UnreadableValues/readAsNil``: their count and the first few.
    ///
    /// Reads on any thread add to it; take it once they are done (after an export, say).
    public nonisolated var unreadableValueLog: UnreadableValueLog {
        unreadableValues.withLock { $0 }
    }

    /// The value of one attribute read from selected values: nil for a value that cannot be read
    /// when the store reads such values as nil (it is then logged).
    private nonisolated func decodeValue(
        _ values: some ColumnValues, column: RowPlan.Column, plan: RowPlan, primaryKey: Int64?
    ) throws -> AttributeValue? {
        // External references are blobs, which the common path never reads.
        switch values.commonAttributeValue(at: column.position, type: column.type) {
        case .null?: return nil
        case .value(let value)?: return value
        case nil: break
        }
        var value = values.value(at: column.position)
        if column.allowsExternalStorage, case .blob(let bytes) = value {
            do throws(TernError) {
                value = .blob(try externalData.resolve(bytes))
            } catch {
                let failure = TernError(
                    .invalidExternalData,
                    "The \(plan.attributes[column.attribute].name) of row \(primaryKey.map(String.init) ?? "?") of \(plan.layout.name) "
                        + "cannot be read: \(error.message.prefix(1).lowercased() + error.message.dropFirst())",
                    path: error.path)
                try skipUnreadable(
                    .missingExternalData, column: column, plan: plan, primaryKey: primaryKey, failure: failure)
                return nil
            }
        }
        do throws {
            return try AttributeValue(databaseValue: value, type: column.type)
        } catch {
            let failure = TernError(
                .invalidValue,
                "Row \(primaryKey.map(String.init) ?? "?") of \(plan.layout.name) holds a value its \(column.type.xcodeName) attribute "
                    + "\(plan.attributes[column.attribute].name) cannot read; correct the column, or open the store with "
                    + "unreadableValues set to readAsNil to read it as nil.", path: url.path)
            try skipUnreadable(.invalidValue, column: column, plan: plan, primaryKey: primaryKey, failure: failure)
            return nil
        }
    }

    /// Logs a value that cannot be read when the store reads such values as nil; else throws
    /// `failure`.
    private nonisolated func skipUnreadable(
        _ kind: UnreadableValue.Kind, column: RowPlan.Column, plan: RowPlan, primaryKey: Int64?, failure: TernError
    ) throws {
        guard configuration.unreadableValues == .readAsNil else { throw failure }
        let value = UnreadableValue(
            kind, entityName: plan.layout.name, primaryKey: primaryKey,
            propertyName: plan.attributes[column.attribute].name,
            path: kind == .missingExternalData ? failure.path : nil)
        unreadableValues.withLock { $0.add(value) }
    }

    /// Reads the to-many relationships of decoded rows: one query per relationship per batch
    /// of up to ``fetchBatchSize`` rows, not one per row.
    ///
    /// - Parameters:
    ///   - rows: Rows of one root table, their to-many relationships not read yet.
    ///   - plans: The plan each row was read with.
    ///   - connection: The connection to read with (the store's own, or the one of synchronous reads).
    nonisolated func loadToMany(
        of rows: inout [PackedRow], plans: [RowPlan], using connection: Connection
    ) throws {
        try RowPlan.loadToMany(of: &rows, plans: plans, chunkSize: Self.fetchBatchSize) { relationship, keys in
            try references(of: relationship, from: keys, using: connection)
        }
    }

    /// The objects a to-many relationship of some objects holds, by source key, in order for an
    /// ordered one; sources without destinations are left out.
    nonisolated func references(
        of relationship: ToManyMapping, from primaryKeys: [Int64], using connection: Connection
    ) throws -> [Int64: [RowReference]] {
        let destination = try schema.entity(named: relationship.destination)
        let keys = Self.boundList(primaryKeys)
        let sql: SQL
        switch relationship.storage {
        case .inverseForeignKey(let table, let column, let orderColumn):
            let order = SQL(unsafeSQL: orderColumn.map { SQL.quoted($0) + ", " } ?? "")
            sql = """
                SELECT \(.identifier(column)), \(destination.rowEntityNumber()), Z_PK FROM \(.identifier(table)) \
                WHERE \(.identifier(column)) IN (\(keys)) AND \(destination.rowFilter()) ORDER BY \(order)Z_PK
                """
        case .joinTable(let table, let source, let target, let orderColumn):
            let order = SQL(unsafeSQL: orderColumn.map { "j." + SQL.quoted($0) + ", " } ?? "")
            sql = """
                SELECT j.\(.identifier(source)), \(destination.rowEntityNumber(alias: "d")), d.Z_PK FROM \(.identifier(table)) AS j \
                JOIN \(.identifier(destination.table)) AS d ON d.Z_PK = j.\(.identifier(target)) \
                WHERE j.\(.identifier(source)) IN (\(keys)) ORDER BY \(order)d.Z_PK
                """
        }
        var found: [Int64: [RowReference]] = [:]
        var entity: (number: Int, name: String)?
        try connection.forEachStatementRow(sql) { (statement) throws in
            let number = Int(statement.integer(at: 1) ?? 0)
            if entity?.number != number { entity = (number, try schema.entity(number: number).name) }
            let reference = RowReference(entityName: entity?.name ?? "", primaryKey: statement.integer(at: 2) ?? 0)
            found[statement.integer(at: 0) ?? 0, default: []].append(reference)
        }
        return found
    }

    /// A comma-separated list of placeholders with the keys bound to them.
    static func boundList(_ keys: [Int64]) -> SQL {
        SQL(
            unsafeSQL: Array(repeating: "?", count: keys.count).joined(separator: ", "),
            arguments: keys.map { DatabaseValue.integer($0) })
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
