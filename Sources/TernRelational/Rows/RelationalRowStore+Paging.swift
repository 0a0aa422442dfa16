package import TernCore

extension RelationalRowStore {
    /// One page of a request's rows after a position, read with keyset pagination so that memory
    /// stays that of one page however many rows match: what both SQL stores answer to
    /// ``/TernCore/PersistentStore/fetchPage(_:after:size:)``.
    ///
    /// - When the predicate and the sorts translate to SQL (``FetchQuery``), one statement
    ///   (``fetchPackedPage(_:after:size:)``): the position is a condition on the sort columns and
    ///   `Z_PK` with bound values, so the database seeks to it.
    /// - Without sorts, when the predicate must run in Swift: rows are read in key order after
    ///   the position's `Z_PK`, ``fetchBatchSize`` at a time, until the page is full.
    /// - When a sort cannot be expressed in SQL: every match is read and sorted for each page.
    ///
    /// - Parameters:
    ///   - request: What to fetch; its offset applies to the first page, its limit to all.
    ///   - position: Where the previous page ended, or nil for the first page.
    ///   - size: The most rows to return; at least 1.
    /// - Returns: The page.
    /// - Throws: What reading the rows or evaluating the predicate throws.
    /// - Complexity: O(`size` · log *n*) when the database can seek to the position; otherwise
    ///   O(*n*) rows read per page.
    package func page(
        of request: StoreFetchRequest, after position: StoreFetchPosition?, size: Int
    ) throws -> StoreFetchPage {
        if let page = try fetchPackedPage(request, after: position, size: size) {
            return StoreFetchPage(rows: page.rows.map(StoreRow.init), next: page.next)
        }
        if FetchQuery(request, schema: schema, dialect: dialect) == nil, request.sortDescriptors.isEmpty {
            return try request.pageByKey(
                after: position, wanted: request.pageLimit(after: position, size: size), batchSize: Self.fetchBatchSize,
                batch: { last in
                    try rows(
                        of: request.entityName, includingSubentities: request.includesSubentities, after: last,
                        limit: Self.fetchBatchSize)
                },
                matches: { row in try request.predicate?.evaluate(with: StoreRowValues(row: row, store: self)) ?? true }
            )
        }
        var all = request
        all.offset = 0
        all.limit = nil
        let sorted = try fetch(all).map { StoreRowValues(row: $0, store: self) }
        return try request.page(of: sorted, after: position, size: size, row: \.row)
    }
}
