import Foundation
import Synchronization
package import TernCore
import TernRelational

extension PostgreSQLStore {
    // MARK: - Reading rows

    /// The next batch of an entity's rows, in primary-key order (keyset pagination).
    ///
    /// - Parameters:
    ///   - entity: The entity.
    ///   - includingSubentities: Whether rows of its subentities are included.
    ///   - primaryKey: Only rows with a larger `Z_PK` are returned; 0 to start.
    ///   - limit: The most rows to return.
    /// - Returns: Up to `limit` rows; fewer means the scan is done.
    /// - Throws: ``PostgreSQLError`` when the entity is unknown or a value cannot be read.
    /// - Complexity: O(`limit` · log *n*); memory is bounded by `limit`.
    package func rows(
        of entity: String, includingSubentities: Bool = true, after primaryKey: Int64 = 0, limit: Int
    ) throws -> [StoreRow] {
        precondition(limit > 0, "a batch holds at least one row")
        let layout = try schema.entity(named: entity)
        let filter = layout.rowFilter(includingSubentities: includingSubentities, alias: "t0")
        let sql: SQL = """
            \(try selection(for: layout)) WHERE \(filter) AND t0."Z_PK" > \(primaryKey) \
            ORDER BY t0."Z_PK" LIMIT \(limit)
            """
        return try packedRows(sql, using: connection).map(StoreRow.init)
    }

    // MARK: - Non public

    /// Every column of an entity's root table, `Z_PK`, `Z_ENT` and `Z_OPT` first: what
    /// ``packedRows(_:using:alongside:)`` reads.
    nonisolated func columnNames(of layout: EntityLayout) throws(TernError) -> [String] {
        guard let table = schema.tables[layout.table] else {
            throw TernError(.schemaMismatch, "The schema has no table \(layout.table).")
        }
        return ["Z_PK", "Z_ENT", "Z_OPT"] + table.columns.map(\.name)
    }

    /// The columns of ``columnNames(of:)`` qualified with the alias `t0`, for a select list, with
    /// each row's entity number in place of `Z_ENT` (``EntityLayout/rowEntityNumber(alias:)``:
    /// the entity's own number for a table that is its alone).
    nonisolated func selectList(of layout: EntityLayout) throws(TernError) -> [SQL] {
        try columnNames(of: layout).map {
            $0 == "Z_ENT" ? layout.rowEntityNumber(alias: "t0") : "t0." + SQL.identifier($0)
        }
    }

    /// The SELECT of every column of an entity's root table, aliased `t0`.
    nonisolated func selection(for layout: EntityLayout) throws(TernError) -> SQL {
        "SELECT \(SQL.joined(try selectList(of: layout))) FROM \(.identifier(layout.table)) AS t0"
    }

    /// The attribute keys of an entity's packed values: the model's attribute names, with any
    /// the store's layout adds, sorted by name (the order a context keeps them in).
    nonisolated func attributeKeys(of layout: EntityLayout) -> AttributeKeys {
        var names = model.allAttributes(of: layout.name).map(\.name)
        let missing = layout.attributes.map(\.name).filter { !names.contains($0) }
        if !missing.isEmpty { names = (names + missing).sorted() }
        return AttributeKeys.shared(names: names)
    }

    /// The cached plan for reading every column of a concrete entity's rows.
    ///
    /// - Parameter number: The entity's number (`Z_ENT`).
    /// - Throws: `TernError` with code `schemaMismatch` for an unknown number.
    nonisolated func rowPlan(number: Int) throws(TernError) -> RowPlan {
        if let plan = rowPlans.withLock({ $0[number] }) { return plan }
        let layout = try schema.entity(number: number)
        var positions: [String: Int] = [:]
        for (index, name) in try columnNames(of: layout).enumerated() { positions[name] = index }
        let plan = RowPlan(layout: layout, keys: attributeKeys(of: layout), positions: positions)
        rowPlans.withLock { $0[number] = plan }
        return plan
    }

    /// The rows of a query that selects every column of a root table (``selectList(of:)``,
    /// `Z_PK`, `Z_ENT` and `Z_OPT` first), each read with its entity's cached plan, with their
    /// to-many relationships.
    ///
    /// - Parameters:
    ///   - sql: The query.
    ///   - connection: The store's connection, or the one of synchronous reads.
    ///   - alongside: Called with each row's values after it is decoded, to read more columns.
    nonisolated func packedRows(
        _ sql: SQL, using connection: Connection,
        alongside: ([DatabaseValue]) throws(PostgreSQLError) -> Void = { _ in }
    ) throws -> [PackedRow] {
        var rows: [PackedRow] = []
        var plans: [RowPlan] = []
        var last: RowPlan?
        try connection.forEachRow(sql) { (values) throws in
            let number = Int(values[1].int64 ?? 0)
            let plan: RowPlan
            if let last, last.layout.number == number { plan = last } else { plan = try rowPlan(number: number) }
            last = plan
            rows.append(try decodePacked(values, plan: plan))
            plans.append(plan)
            try alongside(values)
        }
        try loadToMany(of: &rows, plans: plans, using: connection)
        return rows
    }

    /// A row from selected values, read with a plan: `Z_PK`, `Z_ENT` and `Z_OPT` first; its
    /// to-many relationships are left for ``loadToMany(of:plans:using:)``.
    nonisolated func decodePacked(_ values: [DatabaseValue], plan: RowPlan) throws -> PackedRow {
        let primaryKey = values[0].int64 ?? 0
        var attributes = [AttributeValue?](repeating: nil, count: plan.keys.names.count)
        for attribute in plan.attributes {
            attributes[attribute.slot] = try Self.decodeValue(
                values[attribute.position], attribute, entity: plan.layout.name, primaryKey: primaryKey)
        }
        var row = PackedRow(
            reference: RowReference(entityName: plan.layout.name, primaryKey: primaryKey),
            version: values[2].int64 ?? 0, attributes: PackedAttributes(keys: plan.keys, values: attributes))
        for relationship in plan.toOne {
            guard let key = values[relationship.position].int64 else { continue }
            var destination = relationship.destination
            if let position = relationship.entityPosition, let number = values[position].int64 {
                destination = try rowPlan(number: Int(number)).layout.name
            }
            row.toOne[relationship.name] = RowReference(entityName: destination, primaryKey: key)
        }
        return row
    }

    /// The non-nil values of a plan's attributes read from selected values.
    ///
    /// - Parameters:
    ///   - values: The selected values.
    ///   - plan: Where each attribute's column is among them.
    nonisolated func decodeAttributes(
        _ values: [DatabaseValue], plan: RowPlan
    ) throws(TernError) -> [String: AttributeValue] {
        var attributes = [String: AttributeValue](minimumCapacity: plan.attributes.count)
        for attribute in plan.attributes {
            if let value = try Self.decodeValue(
                values[attribute.position], attribute, entity: plan.layout.name, primaryKey: nil)
            {
                attributes[attribute.name] = value
            }
        }
        return attributes
    }

    /// The value of one attribute, with an error naming the attribute and row (never the value).
    private static func decodeValue(
        _ value: DatabaseValue, _ attribute: RowPlan.Attribute, entity: String, primaryKey: Int64?
    ) throws(TernError) -> AttributeValue? {
        do {
            return try AttributeValue(postgreSQLValue: value, type: attribute.type)
        } catch {
            throw TernError(
                .invalidValue,
                "\(entity).\(attribute.name) of row \(primaryKey.map(String.init) ?? "?") holds a value a "
                    + "\(attribute.type.xcodeName) attribute cannot read.", underlyingError: error)
        }
    }

    /// Reads the to-many relationships of decoded rows: one query per relationship for the
    /// whole batch, not one per row.
    nonisolated func loadToMany(
        of rows: inout [PackedRow], plans: [RowPlan], using connection: Connection
    ) throws {
        try RowPlan.loadToMany(of: &rows, plans: plans, chunkSize: Int.max) { relationship, keys in
            try references(of: relationship, from: keys, using: connection)
        }
    }

    /// The objects a to-many relationship holds for each of several source rows, in order for an
    /// ordered one.
    nonisolated func references(
        of relationship: ToManyMapping, from keys: [Int64], using connection: Connection
    ) throws -> [Int64: [RowReference]] {
        let destination = try schema.entity(named: relationship.destination)
        let sql: SQL
        switch relationship.storage {
        case .inverseForeignKey(let table, let column, let orderColumn):
            let order = SQL(unsafeSQL: orderColumn.map { SQL.quoted($0) + ", " } ?? "")
            sql = """
                SELECT \(.identifier(column)), \(destination.rowEntityNumber()), "Z_PK" FROM \(.identifier(table)) \
                WHERE \(.identifier(column)) = ANY(\(Self.keyArray(keys))::bigint[]) \
                AND \(destination.rowFilter()) ORDER BY \(.identifier(column)), \(order)"Z_PK"
                """
        case .joinTable(let table, let source, let target, let orderColumn):
            let order = SQL(unsafeSQL: orderColumn.map { "j." + SQL.quoted($0) + ", " } ?? "")
            sql = """
                SELECT j.\(.identifier(source)), \(destination.rowEntityNumber(alias: "d")), d."Z_PK" FROM \(.identifier(table)) AS j \
                JOIN \(.identifier(destination.table)) AS d ON d."Z_PK" = j.\(.identifier(target)) \
                WHERE j.\(.identifier(source)) = ANY(\(Self.keyArray(keys))::bigint[]) \
                ORDER BY j.\(.identifier(source)), \(order)d."Z_PK"
                """
        }
        var found: [Int64: [RowReference]] = [:]
        var entity: (number: Int, name: String)?
        try connection.forEachRow(sql) { (values) throws in
            let number = Int(values[1].int64 ?? 0)
            if entity?.number != number { entity = (number, try rowPlan(number: number).layout.name) }
            found[values[0].int64 ?? 0, default: []].append(
                RowReference(entityName: entity?.name ?? "", primaryKey: values[2].int64 ?? 0))
        }
        return found
    }

    /// Keys bound as one PostgreSQL array literal (`{1,2,3}`): one parameter for any number of keys.
    static func keyArray(_ keys: [Int64]) -> SQL {
        "\("{" + keys.map(String.init).joined(separator: ",") + "}")"
    }
}
