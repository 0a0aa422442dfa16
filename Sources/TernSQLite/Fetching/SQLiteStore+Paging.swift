public import TernCore
import TernRelational

extension SQLiteStore {
    // MARK: - Paging

    /// One page of a request's rows after a position, read with keyset pagination so that memory
    /// stays that of one page however many rows match.
    ///
    /// - When the predicate and the sorts translate to SQL (`PredicateSQL`), one `SELECT … WHERE
    ///   <predicate> AND <after the position> ORDER BY <sorts>, Z_PK LIMIT <size>`: the position is
    ///   a condition on the sort columns and `Z_PK` with bound values, so SQLite seeks to it
    ///   (through the primary key without sorts, or an index on the sort column).
    /// - Without sorts, when the predicate must run in Swift: rows are read in key order after
    ///   the position's `Z_PK`, a batch at a time, until the page is full.
    /// - When a sort cannot be expressed in SQL: every match is read and sorted for each page.
    ///
    /// Rows saved between pages are seen as ``/TernCore/PersistentStore/fetchPage(_:after:size:)`` describes.
    ///
    /// - Parameters:
    ///   - request: What to fetch; its offset applies to the first page, its limit to all.
    ///   - position: Where the previous page ended, or nil for the first page.
    ///   - size: The most rows to return; at least 1.
    /// - Returns: The page.
    /// - Throws: ``/TernCore/TernError`` with code `objectNotFound` for an unknown entity,
    ///   `invalidPredicate` for an unknown key path; ``SQLiteError`` when reading fails.
    /// - Complexity: O(`size` · log *n*) when SQLite can seek to the position; otherwise O(*n*)
    ///   rows read per page.
    public func fetchPage(
        _ request: StoreFetchRequest, after position: StoreFetchPosition?, size: Int
    ) async throws -> StoreFetchPage {
        // `async` although it never suspends: a synchronous method loses to the protocol's
        // default when called on the concrete type with `await` (ProtocolDefaultShadowingTests).
        try page(of: request, after: position, size: size)
    }

    /// ``fetchPage(_:after:size:)`` with the rows packed, when the predicate and the sorts
    /// translate to SQL; nil otherwise.
    package func fetchPackedPage(
        _ request: StoreFetchRequest, after position: StoreFetchPosition?, size: Int
    ) throws -> PackedFetchPage? {
        precondition(size > 0, "a page holds at least one row")
        try checkEntity(of: request)
        let wanted = request.pageLimit(after: position, size: size)
        guard wanted > 0 else { return PackedFetchPage(rows: [], next: nil) }
        guard let query = PredicateSQL(request, schema: schema), let keys = query.sortKeys else { return nil }
        return try pageInSQL(request, query: query, keys: keys, after: position, wanted: wanted)
    }

    // MARK: - Non public

    /// A page read by one SQL statement, or nil when a position value cannot be bound.
    private func pageInSQL(
        _ request: StoreFetchRequest, query: PredicateSQL, keys: [PredicateSQL.SortKey],
        after position: StoreFetchPosition?, wanted: Int
    ) throws -> PackedFetchPage? {
        let layout = try schema.entity(named: request.entityName)
        let names = try columnNames(of: layout)
        let list = SQL.joined([try selectList(for: layout, alias: "t0")] + keys.map(\.column))
        var condition = query.condition
        if let position {
            guard let after = query.condition(after: position) else { return nil }
            condition = condition + " AND " + after
        }
        let offset = position == nil ? Int64(request.offset) : 0
        let sql: SQL = """
            SELECT \(list) FROM \(query.from) WHERE \(condition) ORDER BY \(query.order ?? "t0.Z_PK") \
            LIMIT \(Int64(wanted)) OFFSET \(offset)
            """
        var lastValues: [AttributeValue?] = []
        let rows = try packedRows(sql, expectedCount: wanted) { (statement) throws in
            lastValues = []
            for (index, key) in keys.enumerated() {
                lastValues.append(
                    try AttributeValue(databaseValue: statement.value(at: names.count + index), type: key.type))
            }
        }
        guard rows.count == wanted, let last = rows.last else { return PackedFetchPage(rows: rows, next: nil) }
        return PackedFetchPage(
            rows: rows,
            next: StoreFetchPosition(after: last.reference, position, count: rows.count, sortValues: lastValues))
    }
}
