/// A store row with its attribute values packed in the order of the entity's ``AttributeKeys``:
/// what a store that reads columns straight into that layout hands a context, so that no
/// dictionary is built per row.
package struct PackedRow: Sendable {
    /// The row's identity.
    package var reference: RowReference
    /// The optimistic-locking version (`Z_OPT`).
    package var version: Int64
    /// The attribute values, nil ones included.
    package var attributes: PackedAttributes
    /// The destination of each non-empty to-one relationship, by relationship name.
    package var toOne: [String: RowReference]
    /// The destinations of each non-empty to-many relationship, by relationship name.
    package var toMany: [String: [RowReference]]

    /// Creates a packed row.
    ///
    /// - Parameters:
    ///   - reference: The row's identity.
    ///   - version: Its version.
    ///   - attributes: Its attribute values.
    ///   - toOne: Its to-one destinations.
    ///   - toMany: Its non-empty to-many destinations.
    package init(
        reference: RowReference, version: Int64, attributes: PackedAttributes,
        toOne: [String: RowReference] = [:], toMany: [String: [RowReference]] = [:]
    ) {
        self.reference = reference
        self.version = version
        self.attributes = attributes
        self.toOne = toOne
        self.toMany = toMany
    }
}

/// A page of packed rows and where the next one starts: ``StoreFetchPage`` for ``PackedRow``.
package struct PackedFetchPage: Sendable {
    /// The rows, in order.
    package var rows: [PackedRow]
    /// Where the next page starts, or nil after the last one.
    package var next: StoreFetchPosition?

    /// Creates a page.
    package init(rows: [PackedRow], next: StoreFetchPosition?) {
        self.rows = rows
        self.next = next
    }
}

/// A store that can read rows straight into packed attribute values (the SQLite store): the
/// fast path of a context's fetches. Each method answers nil when the request needs the store's
/// general path (a predicate or sort the store evaluates in Swift); the context then uses the
/// ``PersistentStore`` method of the same name.
package protocol PackedRowReading: PersistentStore {
    /// The rows ``PersistentStore/fetch(_:)`` returns, packed, or nil.
    ///
    /// - Parameter request: What to fetch.
    /// - Throws: As ``PersistentStore/fetch(_:)``.
    func fetchPacked(_ request: StoreFetchRequest) async throws -> [PackedRow]?

    /// The page ``PersistentStore/fetchPage(_:after:size:)`` returns, packed, or nil.
    ///
    /// - Parameters:
    ///   - request: What to fetch.
    ///   - position: Where the previous page ended, or nil for the first page.
    ///   - size: The most rows of the page.
    /// - Throws: As ``PersistentStore/fetchPage(_:after:size:)``.
    func fetchPackedPage(_ request: StoreFetchRequest, after position: StoreFetchPosition?, size: Int) async throws
        -> PackedFetchPage?
}

extension StoreRow {
    /// The row of a packed row, its attribute values in a dictionary.
    ///
    /// - Parameter row: The packed row.
    package init(_ row: PackedRow) {
        self.init(
            reference: row.reference, version: row.version, attributes: row.attributes.dictionary,
            toOne: row.toOne, toMany: row.toMany)
    }
}
