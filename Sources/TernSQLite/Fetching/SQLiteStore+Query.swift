import Foundation
import TernCore

extension SQLiteStore {
    // MARK: - Fetching in SQL

    /// The SQL statement that fetches a request's rows when its predicate translates, and
    /// whether the statement also sorts, skips and limits.
    ///
    /// Every column of ``columnNames(of:)`` is selected, unless the request names its
    /// ``StoreFetchRequest/propertiesToFetch`` and SQLite sorts: then `Z_PK`, `Z_ENT`, `Z_OPT`
    /// and those attributes' columns only, with their positions in `projection`.
    ///
    /// - Parameter request: What to fetch.
    /// - Returns: The statement, or nil when the predicate must be evaluated in Swift.
    /// - Throws: ``SQLiteError`` for an unknown entity or table.
    func translatedFetch(
        _ request: StoreFetchRequest
    ) throws(SQLiteError) -> (sql: SQL, isOrdered: Bool, projection: [String: Int]?)? {
        guard let query = PredicateSQL(request, schema: schema) else { return nil }
        let layout = try schema.entity(named: request.entityName)
        var names = try columnNames(of: layout)
        var projection: [String: Int]?
        if let properties = request.propertiesToFetch, query.order != nil {
            names = ["Z_PK", "Z_ENT", "Z_OPT"] + properties.compactMap { layout.attribute(named: $0)?.column }
            projection = Dictionary(names.enumerated().map { ($1, $0) }) { first, _ in first }
        }
        let list = SQL.joined(names.map { "t0." + SQL.identifier($0) })
        var sql: SQL = "SELECT \(list) FROM \(query.from) WHERE \(query.condition) ORDER BY "
        if let order = query.order {
            sql.append(order + Self.window(request))
        } else {
            sql.append("t0.Z_PK")
        }
        return (sql, query.order != nil, projection)
    }

    /// ``fetch(_:)`` when the predicate translates to SQL: filtered (and sorted, when the sorts
    /// translate too) by SQLite.
    ///
    /// - Returns: The rows, or nil when the predicate must be evaluated in Swift.
    func fetchInSQL(_ request: StoreFetchRequest) throws -> [StoreRow]? {
        guard let statement = try translatedFetch(request) else { return nil }
        var rows: [StoreRow] = []
        if let projection = statement.projection {
            var plans: [Int: RowPlan] = [:]
            try connection.forEachStatementRow(statement.sql) { (statement) throws(SQLiteError) in
                let number = Int(statement.integer(at: 1) ?? 0)
                if let plan = plans[number] {
                    rows.append(try decode(statement, plan: plan))
                } else {
                    let plan = RowPlan(layout: try schema.entity(number: number), positions: projection, relationships: false)
                    plans[number] = plan
                    rows.append(try decode(statement, plan: plan))
                }
            }
            return rows
        }
        try connection.forEachStatementRow(statement.sql) { (statement) throws(SQLiteError) in
            rows.append(try decode(statement))
        }
        if statement.isOrdered { return rows }
        return try request.ordered(rows.map { RowValues(row: $0, store: self) }).map(\.row)
    }

    /// ``fetchReferences(_:)`` when the predicate and sorts translate: only `Z_PK` and `Z_ENT` are read.
    ///
    /// - Returns: The references, or nil when the request needs rows to be sorted or filtered in Swift.
    func fetchReferencesInSQL(_ request: StoreFetchRequest) throws -> [RowReference]? {
        guard let query = PredicateSQL(request, schema: schema), let order = query.order else { return nil }
        let sql: SQL = "SELECT t0.Z_PK, t0.Z_ENT FROM \(query.from) WHERE \(query.condition) ORDER BY \(order)"
        var references: [RowReference] = []
        try connection.forEachRow(sql + Self.window(request)) { (values) throws(SQLiteError) in
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
