/// New rows of one entity with their values in column order: the attribute names once, then
/// each row's values in that order, row after row in one array.
///
/// What ``ObjectContext/batchInsert(entityName:rows:options:)`` and imports hand to a store: a
/// store on disk binds each value straight to its column through one prepared statement, with
/// no dictionary per row and no lookup by name. A nil value is stored as nil; attributes no
/// column names take their default values.
///
/// ```swift
/// var rows = RowBatch(columns: ["title", "servings"])
/// rows.append(row: [.string("Soup"), .integer(4)])
/// rows.append(.string("Salad"))   // or value by value: a row is complete after one per column
/// rows.append(nil)
/// let ids = try await context.batchInsert(entityName: "Recipe", rows: rows)
/// ```
public struct RowBatch: Sendable, Hashable {
    /// The attribute of each column, in order.
    public let columns: [String]
    /// The values of the rows, row after row, one per column; the last row may be incomplete
    /// while it is filled.
    public private(set) var values: [AttributeValue?]
    /// The number of complete rows.
    public private(set) var count = 0

    /// An empty batch.
    ///
    /// - Parameters:
    ///   - columns: Distinct attribute names, in the order of each row's values.
    ///   - capacity: How many rows to reserve room for.
    public init(columns: [String], reservingCapacity capacity: Int = 0) {
        precondition(Set(columns).count == columns.count, "a column is named twice in \(columns)")
        self.columns = columns
        self.values = []
        values.reserveCapacity(capacity * columns.count)
    }

    // MARK: - Adding rows

    /// Adds the next value of the row being filled; the row is complete after one value per column.
    ///
    /// - Parameter value: The value of the next column; nil for no value.
    public mutating func append(_ value: AttributeValue?) {
        precondition(!columns.isEmpty, "a batch without columns takes whole rows: append(row: [])")
        values.append(value)
        if values.count % columns.count == 0 { count += 1 }
    }

    /// Adds one row.
    ///
    /// - Parameter row: One value per column, in column order.
    /// - Complexity: O(*c*) in the number of columns.
    public mutating func append(row: some Sequence<AttributeValue?>) {
        precondition(isComplete, "the last row is incomplete; give its remaining values first")
        let before = values.count
        values.append(contentsOf: row)
        precondition(values.count - before == columns.count, "a row needs \(columns.count) values, one per column")
        count += 1
    }

    // MARK: - Reading rows

    /// Whether the batch has no complete row.
    public var isEmpty: Bool { count == 0 }

    /// Whether every row has one value per column (no row is being filled).
    public var isComplete: Bool { columns.isEmpty || values.count == count * columns.count }

    /// The value of a row at a column.
    ///
    /// - Parameters:
    ///   - row: A row, from 0 to ``count`` - 1.
    ///   - column: A column, from 0 to the number of ``columns`` - 1.
    public subscript(row: Int, column: Int) -> AttributeValue? {
        values[row * columns.count + column]
    }

    /// The non-nil values of each row by attribute name, in row order.
    ///
    /// - Complexity: O(*n* · *c*) for *n* rows of *c* columns.
    public var dictionaries: [[String: AttributeValue]] {
        (0..<count).map { row in
            var dictionary = [String: AttributeValue](minimumCapacity: columns.count)
            for (column, name) in columns.enumerated() {
                if let value = self[row, column] { dictionary[name] = value }
            }
            return dictionary
        }
    }

    /// The same rows with more columns, each holding one value in every row.
    ///
    /// - Parameter constants: The new columns' names (not among ``columns``) and values.
    /// - Complexity: O(*n* · *c*) for *n* rows of *c* columns.
    package func adding(_ constants: [(name: String, value: AttributeValue)]) -> RowBatch {
        guard !constants.isEmpty else { return self }
        var wider = RowBatch(columns: columns + constants.map(\.name), reservingCapacity: count)
        for row in 0..<count {
            let start = row * columns.count
            wider.values.append(contentsOf: values[start..<start + columns.count])
            for constant in constants { wider.values.append(constant.value) }
        }
        wider.count = count
        return wider
    }
}
