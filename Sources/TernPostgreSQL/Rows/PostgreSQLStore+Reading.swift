import Foundation
package import TernCore
import TernSQLite

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
        let select = try selection(for: layout, alias: "t0")
        let numbers = includingSubentities ? layout.hierarchyNumbers : [layout.number]
        let sql: SQL = """
            \(select.sql) WHERE t0."Z_ENT" IN (\(Self.list(numbers))) AND t0."Z_PK" > \(primaryKey) \
            ORDER BY t0."Z_PK" LIMIT \(limit)
            """
        return try decodeAll(sql, columns: select.columns)
    }

    // MARK: - Non public

    /// The SELECT of every column of an entity's root table (alias `alias`), with the position of
    /// each column.
    nonisolated func selection(for layout: EntityLayout, alias: String) throws(SQLiteError) -> (sql: SQL, columns: [String: Int]) {
        guard let table = schema.tables[layout.table] else {
            throw SQLiteError(.schemaMismatch, "The schema has no table \(layout.table).")
        }
        let names = ["Z_PK", "Z_ENT", "Z_OPT"] + table.columns.map(\.name)
        var positions: [String: Int] = [:]
        for (index, name) in names.enumerated() { positions[name] = index }
        let list = SQL.joined(names.map { SQL(unsafeSQL: alias + ".") + .identifier($0) })
        return ("SELECT \(list) FROM \(.identifier(layout.table)) AS \(SQL(unsafeSQL: alias))", positions)
    }

    /// The rows a SELECT of ``selection(for:alias:)`` returns, with their to-many relationships.
    func decodeAll(_ sql: SQL, columns: [String: Int]) throws -> [StoreRow] {
        try decodeAll(sql, columns: columns, using: connection)
    }

    /// The rows a SELECT of ``selection(for:alias:)`` returns through `connection` (the store's
    /// own, or the one of synchronous reads), with their to-many relationships.
    nonisolated func decodeAll(_ sql: SQL, columns: [String: Int], using connection: Connection) throws -> [StoreRow] {
        var rows: [StoreRow] = []
        try connection.forEachRow(sql) { values throws(PostgreSQLError) in rows.append(try decode(values, columns: columns)) }
        try fillToMany(&rows, using: connection)
        return rows
    }

    /// A row's attributes and to-one references from the values of a ``selection(for:alias:)``.
    nonisolated func decode(_ values: [DatabaseValue], columns: [String: Int]) throws(PostgreSQLError) -> StoreRow {
        let primaryKey = values[0].int64 ?? 0
        do {
            let layout = try schema.entity(number: Int(values[1].int64 ?? 0))
            var row = StoreRow(reference: RowReference(entityName: layout.name, primaryKey: primaryKey), version: values[2].int64 ?? 0)
            for attribute in layout.attributes {
                guard let index = columns[attribute.column] else { continue }
                do {
                    row.attributes[attribute.name] = try AttributeValue(postgreSQLValue: values[index], type: attribute.type)
                } catch {
                    throw PostgreSQLError(
                        .invalidValue,
                        "\(layout.name).\(attribute.name) of row \(primaryKey) holds a value a \(attribute.type.xcodeName) "
                            + "attribute cannot read.")
                }
            }
            for relationship in layout.toOneRelationships {
                guard let index = columns[relationship.column], let key = values[index].int64 else { continue }
                var destination = relationship.destination
                if let entityColumn = relationship.entityColumn, let position = columns[entityColumn],
                    let number = values[position].int64
                {
                    destination = try schema.entity(number: Int(number)).name
                }
                row.toOne[relationship.name] = RowReference(entityName: destination, primaryKey: key)
            }
            return row
        } catch let error as PostgreSQLError {
            throw error
        } catch {
            throw PostgreSQLError(.schemaMismatch, (error as? SQLiteError)?.message ?? "\(error)")
        }
    }

    /// Reads the to-many relationships of rows: one query per relationship and entity for the
    /// whole batch, not one per row.
    nonisolated func fillToMany(_ rows: inout [StoreRow], using connection: Connection) throws {
        let positions = Dictionary(grouping: rows.indices, by: { rows[$0].reference.entityName })
        for (entity, indices) in positions {
            let layout = try schema.entity(named: entity)
            guard !layout.toManyRelationships.isEmpty else { continue }
            var index: [Int64: Int] = [:]
            for position in indices { index[rows[position].reference.primaryKey] = position }
            let keys = Array(index.keys)
            for relationship in layout.toManyRelationships {
                let found = try references(of: relationship, from: keys, using: connection)
                for (key, references) in found {
                    if let position = index[key], !references.isEmpty { rows[position].toMany[relationship.name] = references }
                }
            }
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
                SELECT \(.identifier(column)), "Z_ENT", "Z_PK" FROM \(.identifier(table)) \
                WHERE \(.identifier(column)) = ANY(\(Self.keyArray(keys))::bigint[]) \
                AND "Z_ENT" IN (\(Self.list(destination.hierarchyNumbers))) ORDER BY \(.identifier(column)), \(order)"Z_PK"
                """
        case .joinTable(let table, let source, let target, let orderColumn):
            let order = SQL(unsafeSQL: orderColumn.map { "j." + SQL.quoted($0) + ", " } ?? "")
            sql = """
                SELECT j.\(.identifier(source)), d."Z_ENT", d."Z_PK" FROM \(.identifier(table)) AS j \
                JOIN \(.identifier(destination.table)) AS d ON d."Z_PK" = j.\(.identifier(target)) \
                WHERE j.\(.identifier(source)) = ANY(\(Self.keyArray(keys))::bigint[]) \
                ORDER BY j.\(.identifier(source)), \(order)d."Z_PK"
                """
        }
        var found: [Int64: [RowReference]] = [:]
        var failure: (any Error)?
        try connection.forEachRow(sql) { values in
            do {
                let entity = try schema.entity(number: Int(values[1].int64 ?? 0)).name
                found[values[0].int64 ?? 0, default: []].append(RowReference(entityName: entity, primaryKey: values[2].int64 ?? 0))
            } catch {
                failure = error
            }
        }
        if let failure { throw failure }
        return found
    }

    /// Keys bound as one PostgreSQL array literal (`{1,2,3}`): one parameter for any number of keys.
    static func keyArray(_ keys: [Int64]) -> SQL {
        "\("{" + keys.map(String.init).joined(separator: ",") + "}")"
    }
}
