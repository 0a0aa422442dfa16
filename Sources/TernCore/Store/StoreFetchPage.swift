import Foundation

/// Where a paged fetch stands: the last row it delivered, with that row's values of the request's
/// sort keys, and how many rows it delivered so far.
///
/// Stores page with *keyset pagination*: the next page holds the rows that come after this
/// position in the request's order (sort keys, then primary key), as the store is when the page
/// is read. So no store keeps anything between pages, and memory stays that of one page.
///
/// ```swift
/// var position: StoreFetchPosition? = nil
/// repeat {
///     let page = try await store.fetchPage(request, after: position, size: 500)
///     for row in page.rows { … }
///     position = page.next
/// } while position != nil
/// ```
public struct StoreFetchPosition: Hashable, Sendable {
    /// The last row delivered.
    public var reference: RowReference
    /// That row's value of each of the request's sort descriptors, in order (nil for nil).
    public var sortValues: [AttributeValue?]
    /// How many rows were delivered so far, to apply the request's limit.
    public var delivered: Int

    /// Creates a position.
    ///
    /// - Parameters:
    ///   - reference: The last row delivered.
    ///   - sortValues: Its values of the request's sort keys.
    ///   - delivered: How many rows were delivered so far, that row included.
    public init(reference: RowReference, sortValues: [AttributeValue?], delivered: Int) {
        self.reference = reference
        self.sortValues = sortValues
        self.delivered = delivered
    }
}

extension StoreFetchPosition {
    /// The position after a full page.
    ///
    /// - Parameters:
    ///   - last: The page's last row.
    ///   - previous: Where the page started, nil for the first page.
    ///   - count: How many rows the page holds.
    ///   - sortValues: The last row's values of the request's sort keys.
    package init(after last: RowReference, _ previous: StoreFetchPosition?, count: Int, sortValues: [AttributeValue?]) {
        self.init(reference: last, sortValues: sortValues, delivered: (previous?.delivered ?? 0) + count)
    }
}

/// One page of a paged fetch (``PersistentStore/fetchPage(_:after:size:)``): its rows, and where
/// the next page starts.
public struct StoreFetchPage: Sendable {
    /// The rows, in the request's order.
    public var rows: [StoreRow]
    /// The position after the last row, or nil when no row follows.
    public var next: StoreFetchPosition?

    /// Creates a page.
    ///
    /// - Parameters:
    ///   - rows: The rows, in order.
    ///   - next: Where the next page starts, or nil after the last page.
    public init(rows: [StoreRow], next: StoreFetchPosition?) {
        self.rows = rows
        self.next = next
    }
}

extension PersistentStore {
    /// The next page of a request's rows: the default for stores that hold their rows in memory.
    ///
    /// It reads every matching row (``fetch(_:)`` without offset nor limit) and returns the rows
    /// after the position. The position is found by its row's reference; when that row is gone
    /// (deleted between pages), by the number of rows delivered. Stores that do not hold their
    /// rows in memory implement this requirement with keyset pagination instead.
    ///
    /// - Parameters:
    ///   - request: What to fetch; its offset applies to the first page, its limit to all pages.
    ///   - position: Where the previous page ended, or nil for the first page.
    ///   - size: The most rows to return; at least 1.
    /// - Returns: The page.
    /// - Throws: What ``fetch(_:)`` throws.
    /// - Complexity: That of ``fetch(_:)`` for every page.
    public func fetchPage(
        _ request: StoreFetchRequest, after position: StoreFetchPosition?, size: Int
    ) async throws -> StoreFetchPage {
        var all = request
        all.offset = 0
        all.limit = nil
        let rows = try await fetch(all)
        var start = min(request.offset, rows.count)
        if let position {
            let found = rows.firstIndex { $0.reference == position.reference }
            start = min(found.map { $0 + 1 } ?? (request.offset + position.delivered), rows.count)
        }
        guard let window = request.window(count: rows.count, from: start, after: position, size: size) else {
            return StoreFetchPage(rows: [], next: nil)
        }
        let slice = Array(rows[window.rows])
        let next = window.next.map { delivered in
            StoreFetchPosition(
                reference: rows[window.rows.upperBound - 1].reference,
                sortValues: request.sortDescriptors.map { rows[window.rows.upperBound - 1].attributes[$0.key] },
                delivered: delivered)
        }
        return StoreFetchPage(rows: slice, next: next)
    }
}

extension StoreFetchRequest {
    /// The page of sorted matches that comes after a position: the shared part of every store's
    /// in-memory paging.
    ///
    /// - Parameters:
    ///   - sorted: Every match, in the request's order (offset and limit not applied).
    ///   - position: Where the previous page ended, or nil for the first page.
    ///   - size: The most rows to return.
    ///   - row: The row of a match.
    /// - Returns: The page.
    /// - Throws: Errors of the matches for unknown sort key paths.
    /// - Complexity: O(log *n*) comparisons to find the position, O(`size`) to copy the page.
    package func page<Row: PredicateEvaluable>(
        of sorted: [Row], after position: StoreFetchPosition?, size: Int, row: (Row) -> StoreRow
    ) throws(TernError) -> StoreFetchPage {
        var start = min(offset, sorted.count)
        if let position {
            // The first match that comes after the position (binary search: matches are sorted).
            var low = 0
            var high = sorted.count
            while low < high {
                let middle = (low + high) / 2
                if try comes(
                    row(sorted[middle]).reference.primaryKey, withValues: sortValues(of: sorted[middle]),
                    after: position)
                {
                    high = middle
                } else {
                    low = middle + 1
                }
            }
            start = low
        }
        guard let window = window(count: sorted.count, from: start, after: position, size: size) else {
            return StoreFetchPage(rows: [], next: nil)
        }
        let rows = sorted[window.rows].map(row)
        guard let delivered = window.next, let last = rows.last else { return StoreFetchPage(rows: rows, next: nil) }
        let next = StoreFetchPosition(
            reference: last.reference, sortValues: try sortValues(of: sorted[window.rows.upperBound - 1]),
            delivered: delivered)
        return StoreFetchPage(rows: rows, next: next)
    }

    /// How many rows the page after a position holds at most: `size`, within the limit.
    ///
    /// - Parameters:
    ///   - position: Where the previous page ended, or nil for the first page.
    ///   - size: The page size.
    package func pageLimit(after position: StoreFetchPosition?, size: Int) -> Int {
        let delivered = position?.delivered ?? 0
        return limit.map { min(size, max(0, $0 - delivered)) } ?? size
    }

    /// A page of a request without sorts whose predicate a store evaluates itself: rows in key
    /// order after the position's primary key, read a batch at a time, until the page is full.
    ///
    /// - Parameters:
    ///   - position: Where the previous page ended, or nil for the first page (the offset applies).
    ///   - wanted: The most rows of the page (``pageLimit(after:size:)``); at least 1.
    ///   - batchSize: How many rows `batch` reads at a time.
    ///   - batch: The next rows of the request's entity in key order after a primary key, at most
    ///     `batchSize`; fewer means the scan is done.
    ///   - matches: Whether a row matches the predicate.
    /// - Returns: The page.
    /// - Throws: What `batch` or `matches` throws.
    /// - Complexity: O(*n*) rows read at most; memory of one batch and the page.
    package func pageByKey(
        after position: StoreFetchPosition?, wanted: Int, batchSize: Int,
        batch: (Int64) throws -> [StoreRow], matches: (StoreRow) throws -> Bool
    ) throws -> StoreFetchPage {
        var last = position?.reference.primaryKey ?? 0
        var skip = position == nil ? offset : 0
        var rows: [StoreRow] = []
        scan: while true {
            let next = try batch(last)
            for row in next {
                last = row.reference.primaryKey
                guard try matches(row) else { continue }
                if skip > 0 {
                    skip -= 1
                    continue
                }
                rows.append(row)
                if rows.count == wanted { break scan }
            }
            if next.count < batchSize { return StoreFetchPage(rows: rows, next: nil) }
        }
        guard let final = rows.last else { return StoreFetchPage(rows: rows, next: nil) }
        return StoreFetchPage(
            rows: rows, next: StoreFetchPosition(after: final.reference, position, count: rows.count, sortValues: []))
    }

    /// The values of the request's sort keys for one match.
    package func sortValues(of match: some PredicateEvaluable) throws(TernError) -> [AttributeValue?] {
        var values: [AttributeValue?] = []
        for descriptor in sortDescriptors { values.append(try descriptor.value(of: match)) }
        return values
    }

    /// The rows of a page among `count` sorted matches starting at `start`: at most `size`, no
    /// more than the limit leaves, with the count delivered after them when more may follow.
    ///
    /// - Returns: nil when the page is empty.
    package func window(
        count: Int, from start: Int, after position: StoreFetchPosition?, size: Int
    ) -> (rows: Range<Int>, next: Int?)? {
        precondition(size > 0, "a page holds at least one row")
        let delivered = position?.delivered ?? 0
        let wanted = limit.map { min(size, max(0, $0 - delivered)) } ?? size
        let end = min(start + wanted, count)
        guard start < end else { return nil }
        let total = delivered + end - start
        let more = end < count && (limit.map { total < $0 } ?? true)
        return (start..<end, more ? total : nil)
    }

    /// Whether a row with this primary key and these sort key values comes after a position in
    /// the request's order (sort keys, then primary key).
    package func comes(
        _ primaryKey: Int64, withValues values: [AttributeValue?], after position: StoreFetchPosition
    ) -> Bool {
        for (index, descriptor) in sortDescriptors.enumerated() where index < position.sortValues.count {
            switch descriptor.compare(values[index], position.sortValues[index]) {
            case .orderedDescending: return true
            case .orderedAscending: return false
            case .orderedSame: continue
            }
        }
        return primaryKey > position.reference.primaryKey
    }
}
