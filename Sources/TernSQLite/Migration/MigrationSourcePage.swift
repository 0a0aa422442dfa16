import Foundation
import TernCore

/// One page of source rows of one entity, read with one keyset query into a flat buffer of
/// column values: what the migration engine migrates between two queries.
///
/// Values are decoded into attribute values only when a mapping reads them, one column at a
/// time; a whole ``TernCore/StoreRow`` (with its to-many relationships) is made only for key
/// paths that go through relationships.
///
/// ```swift
/// var page = MigrationSourcePage(plan: plan)
/// try page.read(from: store, after: 0, limit: 1000)
/// for index in page.indices { … page.value(ofAttribute: "timeStamp", at: index, in: store) … }
/// ```
struct MigrationSourcePage {
    /// How the entity's rows are read: columns, types, positions.
    let plan: RowPlan
    /// The attributes of the plan by name.
    private let attributes: [String: RowPlan.Attribute]
    /// The number of columns per row.
    private let width: Int
    /// The primary key of each row, ascending.
    private(set) var keys: [Int64] = []
    /// The column values, row after row.
    private var values: [DatabaseValue] = []

    /// Creates an empty page for the rows of one concrete entity.
    ///
    /// - Parameters:
    ///   - plan: The plan for reading every column of the entity's rows.
    ///   - width: The number of columns the page's query selects.
    init(plan: RowPlan, width: Int) {
        self.plan = plan
        self.width = width
        self.attributes = Dictionary(plan.attributes.map { ($0.name, $0) }, uniquingKeysWith: { first, _ in first })
    }

    /// The entity's name.
    var entityName: String { plan.layout.name }

    /// The row positions of the page.
    var indices: Range<Int> { keys.indices }

    // MARK: - Reading

    /// Replaces the page with the next rows of the entity after a primary key.
    ///
    /// - Parameters:
    ///   - store: The source store (on its executor).
    ///   - key: Only rows with a larger `Z_PK` are read.
    ///   - limit: The most rows to read.
    /// - Throws: ``SQLiteError`` when the query fails.
    /// - Complexity: O(`limit` · log *n*); memory bounded by `limit` rows.
    mutating func read(from store: isolated SQLiteStore, after key: Int64, limit: Int) throws(SQLiteError) {
        keys.removeAll(keepingCapacity: true)
        values.removeAll(keepingCapacity: true)
        let layout = plan.layout
        let sql: SQL = """
            \(try store.selection(for: layout)) WHERE Z_ENT = \(layout.number) AND Z_PK > \(key) \
            ORDER BY Z_PK LIMIT \(limit)
            """
        let width = width
        try store.connection.forEachStatementRow(sql) { statement in
            keys.append(statement.integer(at: 0) ?? 0)
            for position in 0..<width { values.append(statement.value(at: position)) }
        }
    }

    // MARK: - Finding rows

    /// The position of a source object in the page, or nil when it is not there.
    ///
    /// - Complexity: O(log *n*) in the size of the page.
    func index(of reference: RowReference) -> Int? {
        guard reference.entityName == plan.layout.name else { return nil }
        var low = 0
        var high = keys.count
        while low < high {
            let middle = (low + high) / 2
            if keys[middle] < reference.primaryKey { low = middle + 1 } else { high = middle }
        }
        return low < keys.count && keys[low] == reference.primaryKey ? low : nil
    }

    /// The optimistic-locking version (`Z_OPT`) of the row at a position.
    func version(at index: Int) -> Int64 { values[index * width + 2].int64 ?? 0 }

    // MARK: - Decoding values

    /// The value of an attribute of the row at a position, decoded as the store decodes it.
    ///
    /// - Parameters:
    ///   - name: An attribute name.
    ///   - index: The row's position.
    ///   - store: The source store, which resolves external data and names the file in errors.
    /// - Returns: nil when the entity has no stored attribute of that name; otherwise the value,
    ///   nil for NULL.
    /// - Throws: ``SQLiteError`` with code `invalidValue` when the column holds something the type cannot read.
    func value(ofAttribute name: String, at index: Int, in store: SQLiteStore) throws(SQLiteError) -> AttributeValue?? {
        guard let attribute = attribute(named: name) else { return nil }
        var value = values[index * width + attribute.position]
        if attribute.allowsExternalStorage, case .blob(let bytes) = value {
            value = .blob(try store.externalData.resolve(bytes))
        }
        do {
            return .some(try AttributeValue(databaseValue: value, type: attribute.type))
        } catch {
            throw SQLiteError(
                .invalidValue,
                "\(plan.layout.name).\(attribute.name) of row \(keys[index]) holds a value a "
                    + "\(attribute.type.xcodeName) attribute cannot read.", path: store.url.path)
        }
    }

    /// The plan's attribute of that name: a look through a short list, a hash of the name for long ones.
    private func attribute(named name: String) -> RowPlan.Attribute? {
        guard plan.attributes.count > 12 else { return plan.attributes.first { $0.name == name } }
        return attributes[name]
    }

    /// The whole row at a position, with its relationships, read again from the store.
    ///
    /// - Throws: ``SQLiteError`` when a value cannot be read.
    func row(at index: Int, in store: isolated SQLiteStore) throws(SQLiteError) -> StoreRow? {
        try store.row(of: entityName, primaryKey: keys[index])
    }
}
