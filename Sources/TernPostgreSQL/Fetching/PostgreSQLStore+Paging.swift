public import TernCore
import TernRelational

extension PostgreSQLStore: PackedRowReading {
    // MARK: - Paging

    /// One page of a request's rows after a position, read with keyset pagination so that memory
    /// stays that of one page however many rows match.
    ///
    /// - When the predicate and the sorts translate to SQL (`PostgreSQLQuery`), one `SELECT …
    ///   WHERE <predicate> AND <after the position> ORDER BY <sorts>, "Z_PK" LIMIT <size>`: the
    ///   position is a condition on the sort columns and `Z_PK` with bound values, so the server
    ///   seeks to it (through the primary key without sorts).
    /// - Without sorts, when the predicate must run in Swift: rows are read in key order after
    ///   the position's `Z_PK`, a batch at a time, until the page is full.
    /// - When a sort cannot be expressed in SQL (strings): every match is read and sorted for
    ///   each page.
    ///
    /// Rows saved between pages are seen as ``/TernCore/PersistentStore/fetchPage(_:after:size:)`` describes.
    ///
    /// - Parameters:
    ///   - request: What to fetch; its offset applies to the first page, its limit to all.
    ///   - position: Where the previous page ended, or nil for the first page.
    ///   - size: The most rows to return; at least 1.
    /// - Returns: The page.
    /// - Throws: ``/TernCore/TernError`` with code `objectNotFound` for an unknown entity,
    ///   `invalidPredicate` for an unknown key path; ``PostgreSQLError`` when reading fails.
    /// - Complexity: O(`size` · log *n*) when the server can seek to the position; otherwise
    ///   O(*n*) rows read per page.
    public func fetchPage(
        _ request: StoreFetchRequest, after position: StoreFetchPosition?, size: Int
    ) async throws -> StoreFetchPage {
        // `async` although it never suspends: a synchronous method loses to the protocol's
        // default when called on the concrete type with `await`.
        try page(of: request, after: position, size: size)
    }

    /// ``fetchPage(_:after:size:)`` with the rows packed, when the predicate and the sorts
    /// translate to SQL; nil otherwise.
    ///
    /// - Parameters:
    ///   - request: What to fetch.
    ///   - position: Where the previous page ended, or nil for the first page.
    ///   - size: The most rows of the page; at least 1.
    /// - Throws: As ``fetchPage(_:after:size:)``.
    package func fetchPackedPage(
        _ request: StoreFetchRequest, after position: StoreFetchPosition?, size: Int
    ) throws -> PackedFetchPage? {
        precondition(size > 0, "a page holds at least one row")
        let layout = try knownEntity(request.entityName)
        let wanted = request.pageLimit(after: position, size: size)
        guard wanted > 0 else { return PackedFetchPage(rows: [], next: nil) }
        guard let query = PostgreSQLQuery(request, schema: schema), let keys = query.sortKeys, let order = query.order
        else {
            return nil
        }
        let columns = try selectList(of: layout)
        var condition = query.condition
        if let position {
            guard let after = query.condition(after: position) else { return nil }
            condition = condition + " AND " + after
        }
        let offset = position == nil ? Int64(request.offset) : 0
        let sql: SQL = """
            SELECT \(SQL.joined(columns + keys.map(\.column))) FROM \(query.from) WHERE \(condition) \
            ORDER BY \(order) LIMIT \(Int64(wanted)) OFFSET \(offset)
            """
        var lastValues: [DatabaseValue] = []
        let rows = try packedRows(sql, using: connection) { values in lastValues = Array(values[columns.count...]) }
        guard rows.count == wanted, let last = rows.last else { return PackedFetchPage(rows: rows, next: nil) }
        var sortValues: [AttributeValue?] = []
        for (key, value) in zip(keys, lastValues) {
            sortValues.append(try AttributeValue(postgreSQLValue: value, type: key.type))
        }
        return PackedFetchPage(
            rows: rows,
            next: StoreFetchPosition(after: last.reference, position, count: rows.count, sortValues: sortValues))
    }

    /// ``fetch(_:)`` with the rows packed, when the predicate and the sorts translate to SQL;
    /// nil otherwise.
    ///
    /// - Parameter request: What to fetch.
    /// - Throws: As ``fetch(_:)``.
    package func fetchPacked(_ request: StoreFetchRequest) throws -> [PackedRow]? {
        _ = try knownEntity(request.entityName)
        guard let statement = try translatedFetch(request), statement.isOrdered else { return nil }
        return try packedRows(statement.sql, using: connection)
    }

    /// The chosen attribute values of the rows ``fetch(_:)`` returns, one dictionary per row.
    ///
    /// When the request names its ``/TernCore/StoreFetchRequest/propertiesToFetch`` and its predicate and
    /// sorts translate to SQL, only those columns are read, straight into dictionaries;
    /// otherwise the values come from ``fetch(_:)``.
    ///
    /// - Parameter request: What to fetch.
    /// - Returns: One dictionary per row, in the requested order.
    /// - Throws: As ``fetch(_:)``.
    /// - Complexity: As ``fetch(_:)``.
    public func fetchValues(_ request: StoreFetchRequest) async throws -> [[String: AttributeValue]] {
        let layout = try knownEntity(request.entityName)
        if let properties = request.propertiesToFetch, let query = PostgreSQLQuery(request, schema: schema),
            let order = query.order
        {
            let columns = properties.compactMap { layout.attribute(named: $0)?.column }
            guard !columns.isEmpty else { return try fetchReferences(request).map { _ in [:] } }
            let positions = Dictionary(columns.enumerated().map { ($1, $0) }) { first, _ in first }
            let plan = RowPlan(
                layout: layout, keys: attributeKeys(of: layout), positions: positions, relationships: false)
            let list = SQL.joined(columns.map { "t0." + SQL.identifier($0) })
            let sql: SQL =
                "SELECT \(list) FROM \(query.from) WHERE \(query.condition) ORDER BY \(order)\(PostgreSQLQuery.window(request))"
            var dictionaries: [[String: AttributeValue]] = []
            try connection.forEachRow(sql) { (values) throws in
                dictionaries.append(try decodeAttributes(values, plan: plan))
            }
            return dictionaries
        }
        let rows = try fetch(request)
        guard let wanted = request.propertiesToFetch.map(Set.init) else { return rows.map(\.attributes) }
        return rows.map { AttributeValue.projecting($0.attributes, onto: wanted) }
    }

    // MARK: - Non public

    /// The statement that fetches a request's rows when its predicate translates, every column
    /// of ``selectList(of:)`` selected, and whether it also sorts, skips and limits (when the
    /// sorts translate too); nil when the predicate must be evaluated in Swift.
    func translatedFetch(_ request: StoreFetchRequest) throws -> (sql: SQL, isOrdered: Bool)? {
        guard let query = PostgreSQLQuery(request, schema: schema) else { return nil }
        let list = SQL.joined(try selectList(of: try schema.entity(named: request.entityName)))
        var sql: SQL = "SELECT \(list) FROM \(query.from) WHERE \(query.condition) ORDER BY "
        if let order = query.order {
            sql.append(order + PostgreSQLQuery.window(request))
        } else {
            sql.append(#"t0."Z_PK""#)
        }
        return (sql, query.order != nil)
    }
}
