import Foundation
package import TernCore
import TernRelational

extension SQLiteStore: PackedRowReading {
    // MARK: - Fetching in SQL

    /// The SQL statement that fetches a request's rows when its predicate translates, every
    /// column of ``columnNames(of:)`` selected, and whether the statement also sorts, skips and limits.
    ///
    /// - Parameter request: What to fetch.
    /// - Returns: The statement, or nil when the predicate must be evaluated in Swift.
    /// - Throws: ``SQLiteError`` for an unknown entity or table.
    func translatedFetch(
        _ request: StoreFetchRequest
    ) throws -> (sql: SQL, isOrdered: Bool)? {
        guard let query = PredicateSQL(request, schema: schema) else { return nil }
        let list = try selectList(for: schema.entity(named: request.entityName), alias: "t0")
        var sql: SQL = "SELECT \(list) FROM \(query.from) WHERE \(query.condition) ORDER BY "
        if let order = query.order {
            sql.append(order + Self.window(request))
        } else {
            sql.append("t0.Z_PK")
        }
        return (sql, query.order != nil)
    }

    /// ``fetch(_:)`` when the predicate translates to SQL: filtered (and sorted, when the sorts
    /// translate too) by SQLite.
    ///
    /// - Returns: The rows, or nil when the predicate must be evaluated in Swift.
    func fetchInSQL(_ request: StoreFetchRequest) throws -> [StoreRow]? {
        guard let statement = try translatedFetch(request) else { return nil }
        let rows = try packedRows(statement.sql).map(StoreRow.init)
        if statement.isOrdered { return rows }
        return try request.ordered(rows.map { StoreRowValues(row: $0, store: self) }).map(\.row)
    }

    /// ``fetch(_:)`` with the rows packed, when the predicate and the sorts translate to SQL;
    /// nil otherwise.
    package func fetchPacked(_ request: StoreFetchRequest) throws -> [PackedRow]? {
        try checkEntity(of: request)
        guard let statement = try translatedFetch(request), statement.isOrdered else { return nil }
        return try packedRows(statement.sql)
    }

    /// ``fetchValues(_:)`` when the request names its attributes and its predicate and sorts
    /// translate: only those attributes' columns are selected, straight into dictionaries.
    ///
    /// - Returns: The dictionaries, or nil when the request needs rows.
    func fetchValuesInSQL(_ request: StoreFetchRequest) throws -> [[String: AttributeValue]]? {
        guard let properties = request.propertiesToFetch, let query = PredicateSQL(request, schema: schema),
            let order = query.order
        else { return nil }
        let layout = try schema.entity(named: request.entityName)
        let columns = properties.compactMap { layout.attribute(named: $0)?.column }
        guard !columns.isEmpty else { return try fetchInSQL(request)?.map { _ in [:] } }
        let positions = Dictionary(columns.enumerated().map { ($1, $0) }) { first, _ in first }
        let plan = RowPlan(layout: layout, keys: attributeKeys(of: layout), positions: positions, relationships: false)
        let list = SQL.joined(columns.map { "t0." + SQL.identifier($0) })
        let sql: SQL =
            "SELECT \(list) FROM \(query.from) WHERE \(query.condition) ORDER BY \(order)\(Self.window(request))"
        var dictionaries: [[String: AttributeValue]] = []
        try connection.forEachStatementRow(sql) { (statement) throws in
            dictionaries.append(try decodeAttributes(statement, plan: plan, primaryKey: nil))
        }
        return dictionaries
    }

    /// ``fetchReferences(_:)`` when the predicate and sorts translate: only `Z_PK` and `Z_ENT` are read.
    ///
    /// - Returns: The references, or nil when the request needs rows to be sorted or filtered in Swift.
    func fetchReferencesInSQL(_ request: StoreFetchRequest) throws -> [RowReference]? {
        guard let query = PredicateSQL(request, schema: schema), let order = query.order else { return nil }
        let layout = try schema.entity(named: request.entityName)
        let sql: SQL = """
            SELECT t0.Z_PK, \(layout.rowEntityNumber(alias: "t0")) FROM \(query.from) WHERE \(query.condition) \
            ORDER BY \(order)
            """
        var references: [RowReference] = []
        try connection.forEachRow(sql + Self.window(request)) { (values) throws in
            let entity = try schema.entity(number: Int(values[1].int64 ?? 0)).name
            references.append(RowReference(entityName: entity, primaryKey: values[0].int64 ?? 0))
        }
        return references
    }

    /// The SQL of ``count(_:)`` when the predicate translates: one `SELECT COUNT(*)`.
    ///
    /// - Returns: The statement, or nil when the predicate must be evaluated in Swift.
    func translatedCount(_ request: StoreFetchRequest) -> SQL? {
        var unsorted = request
        unsorted.sortDescriptors = []
        guard let query = PredicateSQL(unsorted, schema: schema) else { return nil }
        guard request.offset > 0 || request.limit != nil else {
            return "SELECT COUNT(*) FROM \(query.from) WHERE \(query.condition)"
        }
        return "SELECT COUNT(*) FROM (SELECT 1 FROM \(query.from) WHERE \(query.condition)\(Self.window(request)))"
    }

    // MARK: - Non public

    /// ` LIMIT … OFFSET …` for a request's limit and offset, empty when it has neither.
    private static func window(_ request: StoreFetchRequest) -> SQL {
        guard request.offset > 0 || request.limit != nil else { return "" }
        return " LIMIT \(Int64(request.limit ?? -1)) OFFSET \(Int64(request.offset))"
    }
}
