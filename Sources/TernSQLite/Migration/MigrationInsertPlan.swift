import Foundation
import TernCore
import TernRelational

/// How the migration engine inserts rows of one destination entity: one prepared INSERT of
/// `Z_PK`, `Z_ENT`, `Z_OPT` and every attribute column, with each attribute's slot among the
/// bound values and the default values, worked out once per entity instead of once per row.
///
/// ```swift
/// let plan = try MigrationInsertPlan(
///     layout: layout, model: model, connection: destination, lastKey: MigrationKeyCounter(0))
/// var values = plan.defaults
/// values[0] = .integer(key)
/// values[plan.slots["title"]!] = .text("Soup")
/// try plan.insert(values)
/// ```
final class MigrationInsertPlan {
    /// The destination entity.
    let layout: EntityLayout
    /// The slot of each stored attribute among the values, by attribute name.
    let slots: [String: Int]
    /// The column of each slot; the first three (`Z_PK`, `Z_ENT`, `Z_OPT`) have none.
    let columns: [AttributeColumn?]
    /// The attribute type of each slot; nil for the first three.
    let types: [AttributeType?]
    /// The values of a new row: the entity number, version 1 and each default value; the key is 0.
    let defaults: [DatabaseValue]
    /// The defaults stored per row: binary values that may go to external files, and values that
    /// do not fit their column (storing them fails as any value that does not fit).
    let perRowDefaults: [(slot: Int, column: AttributeColumn, value: AttributeValue)]
    /// The last primary key given in the entity's table, shared by the plans of every entity
    /// stored in that table.
    let lastKey: MigrationKeyCounter
    /// The prepared INSERT; finalized with the plan, before the connection closes (the engine
    /// that owns the plan lives inside the migration step that owns the connection).
    fileprivate let statement: Statement

    /// Works out the plan of a concrete destination entity and prepares its INSERT.
    ///
    /// - Parameters:
    ///   - layout: The entity's layout.
    ///   - model: The destination model, for default values.
    ///   - connection: The destination connection.
    /// - Throws: ``SQLiteError`` when the INSERT cannot be prepared.
    ///   - lastKey: The last primary key given in the entity's table.
    init(layout: EntityLayout, model: ManagedObjectModel, connection: Connection, lastKey: MigrationKeyCounter)
        throws(SQLiteError)
    {
        self.layout = layout
        self.lastKey = lastKey
        var slots: [String: Int] = [:]
        var columns: [AttributeColumn?] = [nil, nil, nil]
        var defaults: [DatabaseValue] = [.integer(0), .integer(Int64(layout.number)), .integer(1)]
        var perRowDefaults: [(slot: Int, column: AttributeColumn, value: AttributeValue)] = []
        for column in layout.attributes {
            let slot = columns.count
            slots[column.name] = slot
            columns.append(column)
            var stored = DatabaseValue.null
            if let value = model.attribute(named: column.name, inEntity: layout.name)?.defaultValue {
                switch value.databaseValue(for: column.type) {
                case .blob? where column.allowsExternalStorage, nil: perRowDefaults.append((slot, column, value))
                case let converted?: stored = converted
                }
            }
            defaults.append(stored)
        }
        self.slots = slots
        self.columns = columns
        self.types = columns.map { $0?.type }
        self.defaults = defaults
        self.perRowDefaults = perRowDefaults
        let names = ["Z_PK", "Z_ENT", "Z_OPT"].map(SQL.quoted) + layout.attributes.map { SQL.quoted($0.column) }
        let sql =
            "INSERT INTO \(SQL.quoted(layout.table)) (\(names.joined(separator: ", "))) VALUES ("
            + Array(repeating: "?", count: names.count).joined(separator: ", ") + ")"
        self.statement = try Statement(sql: sql, database: connection.handle, persistent: true)
    }

    // MARK: - Inserting

    /// The slot of a stored attribute: a look through a short list, a hash of the name for long ones.
    ///
    /// - Complexity: O(1), or O(*n*) string comparisons for 12 attributes or fewer.
    func slot(of attribute: String) -> Int? {
        guard columns.count > 15 else { return columns.firstIndex { $0?.name == attribute } }
        return slots[attribute]
    }

    /// The slot of a stored attribute, tried first at `guess`: mappings set the attributes of
    /// each row in the same order, so the slot after the last one set is usually right.
    ///
    /// - Complexity: O(1) when the guess is right; as ``slot(of:)`` otherwise.
    func slot(of attribute: String, guess: Int) -> Int? {
        if guess < columns.count, let column = columns[guess], column.name == attribute { return guess }
        return slot(of: attribute)
    }

    /// Inserts one row.
    ///
    /// - Parameter values: One value per slot, starting with `Z_PK`, `Z_ENT` and `Z_OPT`.
    /// - Throws: ``SQLiteError`` with the SQL when the insert fails.
    func insert(_ values: [DatabaseValue]) throws(SQLiteError) {
        precondition(values.count == columns.count, "one value per slot")
        // Every placeholder is bound again, so the bindings need no clearing between rows.
        defer { statement.resetKeepingBindings() }
        for (offset, value) in values.enumerated() { try statement.bind(value, at: Int32(offset + 1)) }
        while try statement.step() {}
    }
}

extension MigrationInsertPlan {
    // MARK: - Binding a row in place

    /// Binds the first three values of the next row and the default of every slot not skipped,
    /// for a caller that binds the skipped slots itself and then calls ``insertBoundRow()``.
    ///
    /// - Parameters:
    ///   - key: The row's primary key.
    ///   - version: Its `Z_OPT`.
    ///   - skipping: One flag per slot: true for a slot the caller binds.
    /// - Throws: ``SQLiteError`` when a value cannot be bound.
    func bindDefaults(key: Int64, version: Int64, skipping: [Bool]) throws(SQLiteError) {
        try statement.bind(key, at: 1)
        try statement.bind(Int64(layout.number), at: 2)
        try statement.bind(version, at: 3)
        for slot in 3..<defaults.count where !skipping[slot] { try statement.bind(defaults[slot], at: Int32(slot + 1)) }
    }

    /// Binds a column value to a slot of the next row.
    ///
    /// - Throws: ``SQLiteError`` when it cannot be bound.
    func bind(_ value: DatabaseValue, at slot: Int) throws(SQLiteError) {
        try statement.bind(value, at: Int32(slot + 1))
    }

    /// Binds an attribute value to a slot of the next row without converting it, when it has the
    /// slot's attribute type and the column keeps it as is (strings, 64-bit integers, doubles,
    /// dates, Booleans, nil); returns false, binding nothing, for any other value.
    ///
    /// - Throws: ``SQLiteError`` when it cannot be bound.
    func bindDirectly(_ value: AttributeValue?, at slot: Int) throws(SQLiteError) -> Bool {
        let index = Int32(slot + 1)
        guard let value else {
            try statement.bindNull(at: index)
            return true
        }
        switch (value, types[slot]) {
        case (.string(let text), .string?): try statement.bind(text: text, at: index)
        case (.integer(let number), .integer64?): try statement.bind(number, at: index)
        case (.double(let number), .double?): try statement.bind(number, at: index)
        case (.date(let date), .date?): try statement.bind(date.timeIntervalSinceReferenceDate, at: index)
        case (.bool(let flag), .boolean?): try statement.bind(Int64(flag ? 1 : 0), at: index)
        default: return false
        }
        return true
    }

    /// Inserts the row bound since ``bindDefaults(key:version:skipping:)``.
    ///
    /// - Throws: ``SQLiteError`` with the SQL when the insert fails.
    func insertBoundRow() throws(SQLiteError) {
        // Every placeholder is bound again for the next row, so the bindings need no clearing.
        defer { statement.resetKeepingBindings() }
        while try statement.step() {}
    }

    /// Forgets a row partly bound.
    func discardRow() {
        statement.reset()
    }
}

/// The last primary key given in one destination table, shared by the insert plans of the
/// entities stored there, so that giving a key hashes no table name.
final class MigrationKeyCounter {
    /// The last key given.
    var value: Int64

    /// Creates a counter.
    ///
    /// - Parameter value: The largest key the table holds.
    init(_ value: Int64) {
        self.value = value
    }
}
