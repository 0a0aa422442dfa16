import Foundation
import TernCore
import TernRelational

/// One page of source rows of one entity, read with one keyset query into a flat buffer of
/// column values, reused from page to page: what the migration engine migrates between two
/// queries. A class, so that the engine reaches it without copying it.
///
/// The page selects only the columns of the attributes that mappings say they read (every
/// column when they do not say). Values are decoded into attribute values only when a mapping
/// reads them, one column at a time; a whole ``TernCore/StoreRow`` (with its to-many relationships) is made only for key
/// paths that go through relationships.
///
/// ```swift
/// let page = try MigrationSourcePage(entity: "Event", attributes: ["timeStamp"], in: store)
/// try page.read(from: store, after: 0, limit: 1000)
/// for index in page.indices { … page.value(ofAttribute: "timeStamp", at: index, in: store) … }
/// ```
// Unchecked: the engine reads and fills a page only on the source store's executor (each use
// inside `assumeIsolated`), one page per `forEachSourceInstance` call, never concurrently.
final class MigrationSourcePage: @unchecked Sendable {
    /// How the entity's rows are read: columns, types, positions.
    let plan: RowPlan
    /// The position of each attribute of the plan by name, for plans of many attributes.
    private let attributes: [String: Int]
    /// The names of the plan's attributes, in plan order: found by comparing names.
    private let names: [String]
    /// The column position of each attribute among a row's values, in plan order.
    private let positions: [Int]
    /// The type of each attribute, in plan order (read per value without copying the attribute).
    private let types: [AttributeType]
    /// The attribute after the one last looked up: mappings read a row's attributes in the same
    /// order row after row, so it is usually the next one asked for.
    private var guess = 0
    /// The number of columns per row.
    private let width: Int
    /// The selected columns, for the page's query.
    private let selection: SQL
    /// The primary key of each row, ascending.
    private(set) var keys: [Int64] = []
    /// The column values, row after row.
    private var values: [DatabaseValue] = []

    /// Creates an empty page for the rows of one concrete entity.
    ///
    /// - Parameters:
    ///   - plan: The plan for reading the selected columns; `Z_PK`, `Z_ENT` and `Z_OPT` come first.
    ///   - columns: The columns the page's query selects, in the order of the plan's positions.
    init(plan: RowPlan, columns: [String]) {
        self.plan = plan
        self.width = columns.count
        // A row of a table that is its entity's alone is read as the entity's, whatever its Z_ENT.
        self.selection = SQL.joined(columns.map { $0 == "Z_ENT" ? plan.layout.rowEntityNumber() : SQL.identifier($0) })
        self.attributes = Dictionary(
            plan.attributes.enumerated().map { ($1.name, $0) }, uniquingKeysWith: { first, _ in first })
        self.names = plan.attributes.map(\.name)
        self.positions = plan.attributes.map(\.position)
        self.types = plan.attributes.map(\.type)
    }

    /// Creates an empty page for the rows of one concrete entity that selects `Z_PK`, `Z_ENT`,
    /// `Z_OPT` and the columns of the attributes named, or every column when `attributes` is nil.
    ///
    /// Attributes the page does not hold are still read, one row at a time, by ``row(at:in:)``.
    ///
    /// - Parameters:
    ///   - entity: The concrete entity's name.
    ///   - attributes: The names of the attributes mappings read; nil for every column.
    ///   - store: The source store (on its executor).
    /// - Throws: ``SQLiteError`` for an entity the store does not have.
    convenience init(entity: String, attributes: Set<String>?, in store: isolated SQLiteStore) throws {
        let (plan, columns) = try Self.selection(entity: entity, attributes: attributes, in: store)
        self.init(plan: plan, columns: columns)
    }

    /// The plan and the selected columns of a page (see ``init(entity:attributes:in:)``).
    static func selection(
        entity: String, attributes: Set<String>?, in store: isolated SQLiteStore
    ) throws -> (plan: RowPlan, columns: [String]) {
        let layout = try store.schema.entity(named: entity)
        guard let attributes else {
            return (try store.rowPlan(number: layout.number), try store.columnNames(of: layout))
        }
        var columns = ["Z_PK", "Z_ENT", "Z_OPT"]
        for attribute in layout.attributes
        where attributes.contains(attribute.name) && !columns.contains(attribute.column) {
            columns.append(attribute.column)
        }
        let positions = Dictionary(columns.enumerated().map { ($1, $0) }, uniquingKeysWith: { first, _ in first })
        return (
            RowPlan(layout: layout, keys: store.attributeKeys(of: layout), positions: positions, relationships: false),
            columns
        )
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
    func read(from store: isolated SQLiteStore, after key: Int64, limit: Int) throws {
        // Filled as locals, moved back at the end: no access check per value, buffers reused.
        var keys: [Int64] = []
        var values: [DatabaseValue] = []
        swap(&keys, &self.keys)
        swap(&values, &self.values)
        defer {
            swap(&keys, &self.keys)
            swap(&values, &self.values)
        }
        keys.removeAll(keepingCapacity: true)
        values.removeAll(keepingCapacity: true)
        let layout = plan.layout
        let sql: SQL = """
            SELECT \(selection) FROM \(.identifier(layout.table)) WHERE \(layout.rowFilter(includingSubentities: false)) AND Z_PK > \(key) \
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
    func value(ofAttribute name: String, at index: Int, in store: SQLiteStore) throws -> AttributeValue?? {
        guard let found = self.index(ofAttribute: name) else { return nil }
        return .some(try value(atAttribute: found, row: index, in: store))
    }

    /// The value of the attribute at an index of the plan (see ``index(ofAttribute:)``) of the row
    /// at a position, decoded as the store decodes it; nil for NULL.
    ///
    /// - Throws: ``SQLiteError`` with code `invalidValue` when the column holds something the type cannot read.
    func value(atAttribute found: Int, row index: Int, in store: SQLiteStore) throws -> AttributeValue? {
        var value = values[index * width + positions[found]]
        if case .blob(let bytes) = value, plan.attributes[found].allowsExternalStorage {
            value = .blob(try store.externalData.resolve(bytes))
        }
        do {
            return try AttributeValue(databaseValue: value, type: types[found])
        } catch {
            let attribute = plan.attributes[found]
            throw TernError(
                .invalidValue,
                "\(plan.layout.name).\(attribute.name) of row \(keys[index]) holds a value a "
                    + "\(attribute.type.xcodeName) attribute cannot read.", path: store.url.path, underlyingError: error
            )
        }
    }

    /// The index in the plan of the attribute of that name, nil when the page does not hold it:
    /// the guess first, then a look through a short list, a hash of the name for long ones.
    func index(ofAttribute name: String) -> Int? {
        let count = names.count
        if guess < count, names[guess] == name {
            let found = guess
            guess = found + 1 == count ? 0 : found + 1
            return found
        }
        let found = count > 12 ? attributes[name] : names.firstIndex(of: name)
        if let found { guess = found + 1 == count ? 0 : found + 1 }
        return found
    }

    /// The whole row at a position, with its relationships, read again from the store.
    ///
    /// - Throws: ``SQLiteError`` when a value cannot be read.
    func row(at index: Int, in store: isolated SQLiteStore) throws -> StoreRow? {
        try store.row(of: entityName, primaryKey: keys[index])
    }
}
