import TernCore

/// What an inferred migration step does to a store's tables, worked out from the source and
/// destination layouts and the inferred mapping, before any SQL is written.
///
/// The plan is a list of table operations in terms of tables, columns and the value of each
/// destination column (a ``ColumnValue``); ``Connection/apply(_:)`` turns it into SQLite
/// statements run in one transaction. Keeping the two apart lets another SQL store reuse the
/// planning with its own emitter.
///
/// Each source table either stays and is altered (``TableAlteration``: columns dropped, renamed or
/// added, entity numbers rewritten) when every one of its rows stays in it and its kept columns
/// keep their declared types; or it is read by the rebuilds of the destination tables it feeds
/// (``TableRebuild``, SQLite's twelve-step recipe), then dropped.
package struct TableMigrationPlan: Sendable {
    /// The SQL function a store registers to read a column that may hold external data
    /// (``ColumnValue/resolvedExternal(_:)``): it returns the bytes, wherever they are kept.
    package static let externalValueFunction = "TERN_EXTERNAL_VALUE"

    /// The value of one destination column for the rows of one source entity, in terms of the
    /// source row's columns.
    package indirect enum ColumnValue: Sendable, Hashable {
        /// A constant: an added attribute's default value, or NULL.
        case constant(DatabaseValue)
        /// A source column as it is.
        case column(String)
        /// A source column, or a constant where it is NULL (an attribute that became required).
        case coalesce(String, DatabaseValue)
        /// A source column holding entity numbers, each rewritten to its destination number.
        case renumbered(String, [Int: Int])
        /// A constant where a source column is not NULL, NULL elsewhere (the entity column of a
        /// to-one whose destination gained subentities).
        case constantWhereNotNull(String, DatabaseValue)
        /// The position of the row among the rows with the same value in `partition`, counted in
        /// steps of 1024 from 1024, ordered by `order` (when given) then by primary key: the
        /// order column of an ordered to-many's objects.
        case position(partition: String, order: String?)
        /// A source column holding keys of objects that get new keys (their entity moved under
        /// another inheritance root), each shifted as the object it refers to.
        case shiftedKey(String, KeyShift)
        /// A source column of raw bytes, as an attribute that now allows external storage keeps
        /// them: inline, behind Core Data's inline marker (`0x01`).
        case markedInline(String)
        /// A source column of an attribute that no longer allows external storage: the bytes it
        /// stands for (the inline marker removed, a value in a file read from it).
        case resolvedExternal(String)
        /// A value of a to-one, or NULL where the source column `entityColumn` holds one of
        /// `numbers`: the object referred to left the relationship's inheritance tree, and the
        /// link is dropped.
        case droppedFor(ColumnValue, entityColumn: String, numbers: [Int])

        /// The source columns the value reads.
        var sourceColumns: [String] {
            switch self {
            case .constant: []
            case .column(let column), .coalesce(let column, _), .renumbered(let column, _),
                .constantWhereNotNull(let column, _), .markedInline(let column), .resolvedExternal(let column):
                [column]
            case .position(let partition, let order): [partition] + (order.map { [$0] } ?? [])
            case .shiftedKey(let column, let shift): [column] + (shift.entityColumn.map { [$0] } ?? [])
            case .droppedFor(let value, let entityColumn, _): value.sourceColumns + [entityColumn]
            }
        }
    }

    /// How the keys of objects change when their entity moves under another inheritance root:
    /// a destination table then receives rows of several source tables, whose keys would clash.
    /// The rows of the first source table keep their keys; each other source table's rows get
    /// their key plus an offset, the largest key of the tables before it, so that keys stay
    /// unique; every reference to them (to-one columns, join tables, global identities) is
    /// shifted the same way.
    package struct KeyShift: Sendable, Hashable {
        /// The column of the referring row holding the source entity number of the object
        /// referred to; nil when every object referred to shifts alike.
        package var entityColumn: String?
        /// The offset of each source entity number's objects (missing: 0).
        package var offsets: [Int: Int64]

        /// Whether no key changes.
        package var isZero: Bool { offsets.values.allSatisfy { $0 == 0 } }

        /// The one offset of every object referred to, when they all shift alike.
        var uniformOffset: Int64? {
            let distinct = Set(offsets.values)
            return distinct.count <= 1 ? distinct.first ?? 0 : nil
        }

        /// The SQL of a key shifted: `key + offset`, or `key + CASE entity WHEN … END`.
        ///
        /// - Parameter key: The SQL of the key.
        package func sql(of key: SQL) -> SQL {
            if let offset = uniformOffset { return offset == 0 ? key : "(\(key) + \(offset))" }
            guard let entityColumn else { return key }
            let cases = offsets.filter { $0.value != 0 }.sorted { $0.key < $1.key }
                .map { "WHEN \(Int64($0.key)) THEN \($0.value)" as SQL }
            return "(\(key) + CASE \(SQL.identifier(entityColumn)) \(SQL.joined(cases, separator: " ")) ELSE 0 END)"
        }
    }

    /// The rows of a source table a destination table receives, and each column's value.
    package struct TableCopy: Sendable {
        /// The source table.
        package var sourceTable: String
        /// The offset added to the rows' keys (0 but for rows of an entity that moved under
        /// another inheritance root, see ``KeyShift``).
        package var keyOffset: Int64 = 0
        /// The source entity numbers (`Z_ENT`) of the rows copied.
        package var sourceNumbers: [Int]
        /// The value of each destination column (besides `Z_PK` and `Z_OPT`, copied), per source
        /// entity number; an entity missing from a column's map gets NULL.
        package var values: [String: [Int: ColumnValue]]

        /// The value of a column when it is the same for every row copied.
        package func uniformValue(of column: String) -> ColumnValue? {
            guard let byEntity = values[column] else { return .constant(.null) }
            let distinct = Set(sourceNumbers.map { byEntity[$0] ?? .constant(.null) })
            return distinct.count == 1 ? distinct.first : nil
        }
    }

    /// A source table kept in place and changed with `ALTER TABLE` and `UPDATE`.
    package struct TableAlteration: Sendable {
        /// The table.
        package var table: TableLayout
        /// Columns renamed, old name to new name.
        package var renamedColumns: [(from: String, to: String)]
        /// Columns added, each filled per source entity number where not NULL.
        package var addedColumns: [(column: ColumnLayout, values: [Int: DatabaseValue])]
        /// Columns rewritten in place after the renames (entity numbers, defaults where NULL),
        /// for the rows of the given source entity numbers; `Z_ENT` comes last.
        package var rewrittenColumns: [(column: String, value: ColumnValue, numbers: [Int])]
        /// Columns of removed properties, dropped before the renames (`ALTER TABLE … DROP COLUMN`);
        /// indexes and triggers that use them are dropped first.
        package var droppedColumns: [String] = []
        /// The source entity numbers of the table's rows (every non-abstract entity stored in it).
        package var rowNumbers: [Int] = []

        /// Whether an added column's values are one integer or string for every row of the table, so that
        /// the column can be added with that value as its declared default instead of an `UPDATE`
        /// of every row (rows then read the default; writers always give every column a value).
        ///
        /// - Parameter values: The added column's values per source entity number.
        package func fillsByDefault(_ values: [Int: DatabaseValue]) -> Bool {
            switch uniformFill(values) {
            case .integer?: true
            case .text(let text)? where !text.unicodeScalars.contains("\0"): true
            default: false
            }
        }

        /// The one value an added column gets in every row of the table, when every source
        /// entity stored in it gets the same value and it is not NULL; nil otherwise.
        ///
        /// - Parameter values: The added column's values per source entity number.
        /// - Complexity: O(*e*) in the entities stored in the table.
        package func uniformFill(_ values: [Int: DatabaseValue]) -> DatabaseValue? {
            guard !rowNumbers.isEmpty, Set(values.keys) == Set(rowNumbers), let first = values.first?.value,
                first != .null, values.values.allSatisfy({ $0 == first })
            else { return nil }
            return first
        }
    }

    /// A derived attribute that counts the objects of a one-to-many, new in the destination (or
    /// with a new derivation): filled once the rows are in place, as the store's triggers keep it.
    package struct DerivedCount: Sendable, Hashable {
        /// The destination table holding the attribute.
        package var table: String
        /// The attribute's column.
        package var column: String
        /// The destination entity numbers of the rows that get the count.
        package var numbers: [Int]
        /// The destination table of the counted objects.
        package var countedTable: String
        /// The counted objects' foreign key column, pointing at the row.
        package var foreignKey: String
    }

    /// A destination table created anew and filled from source tables.
    package struct TableRebuild: Sendable {
        /// The destination table.
        package var table: TableLayout
        /// Where its rows come from; empty for a new entity's table.
        package var copy: TableCopy?
        /// Rows of other source tables, of entities that moved under this table's inheritance
        /// root, with new keys (``TableCopy/keyOffset``).
        package var movedCopies: [TableCopy] = []
    }

    /// Where rows of a destination join table come from.
    package enum JoinSource: Sendable, Hashable {
        /// A source join table: its columns for the destination's first and second columns.
        case joinTable(table: String, first: String, second: String)
        /// A source foreign key: the rows of `table` with the given entity numbers whose `first`
        /// column is not NULL, `first` and `second` giving the destination's two columns.
        case foreignKey(table: String, numbers: [Int], first: String, second: String)
    }

    /// The value of an order column of an ordered many-to-many's join table: the position of
    /// each row among the rows of the same owner, counted in steps of 1024 from 1024, in the
    /// order the source relationship had (its order column, when it was ordered, then the key of
    /// the object listed), read from the one source join table.
    package struct JoinOrder: Sendable, Hashable {
        /// The destination order column.
        package var column: String
        /// The source join table's column of the owner.
        package var partition: String
        /// The source join table's order column of the relationship, when it was ordered.
        package var order: String?
        /// The source join table's column of the objects listed.
        package var item: String
    }

    /// Rows of a join source left out: those whose `column` holds the key of an object of one
    /// of the source entities `numbers` (stored in `table`), which left the inheritance tree the
    /// relationship points into. Their links are dropped; the objects stay.
    package struct JoinExclusion: Sendable, Hashable {
        /// The join source's column holding the keys of the objects.
        package var column: String
        /// The source table of the objects.
        package var table: String
        /// The source entity numbers of the objects whose links are dropped.
        package var numbers: [Int]
    }

    /// A destination join table created anew and filled.
    package struct JoinRebuild: Sendable {
        /// The destination join table.
        package var table: JoinTableLayout
        /// Its sources; their rows are merged, duplicates once.
        package var sources: [JoinSource]
        /// The values of its order columns (an ordered many-to-many), computed over its single
        /// source, a join table.
        package var orders: [JoinOrder] = []
        /// How each source's two columns shift, for sources that refer to objects with new keys.
        package var keyShifts: [JoinSource: JoinShift] = [:]
        /// The rows each source leaves out (see ``JoinExclusion``).
        package var exclusions: [JoinSource: [JoinExclusion]] = [:]
    }

    /// How the two columns of a join source shift (see ``KeyShift``).
    package struct JoinShift: Sendable, Hashable {
        /// The shift of the destination's first column.
        package var first: KeyShift
        /// The shift of the destination's second column.
        package var second: KeyShift
    }

    /// The source layout.
    package var source: StoreSchema
    /// The destination layout, with Core Data's entity numbers for a new store.
    package var destination: StoreSchema
    /// Source tables altered in place.
    package var alterations: [TableAlteration] = []
    /// Destination tables built anew.
    package var rebuilds: [TableRebuild] = []
    /// Source join tables kept as they are.
    package var keptJoinTables: Set<String> = []
    /// Destination join tables built anew.
    package var joinRebuilds: [JoinRebuild] = []
    /// Source tables (entity and join tables) read by rebuilds or no longer needed, dropped at the end.
    package var replacedTables: Set<String> = []
    /// The smallest `Z_MAX` of each destination root table: the largest key its source roots ever gave.
    package var carriedKeys: [String: Int64] = [:]
    /// New derived count attributes, filled after the rows are in place and before the triggers
    /// that keep them are created.
    package var derivedCounts: [DerivedCount] = []
    /// The key offset of each source entity number whose objects get new keys (see ``KeyShift``).
    package var keyOffsets: [Int: Int64] = [:]
    /// Where each destination table's rows come from (the rows of altered tables included), by
    /// table name: what a check of the destination's values can read from the store beforehand.
    package var copies: [String: [TableCopy]] = [:]
}

extension TableMigrationPlan.ColumnValue {
    /// The SQL of the value over a source row, for any SQL store: identifiers quoted, each
    /// constant written by `constant` (bound, and cast where the dialect needs it).
    ///
    /// - Parameter constant: Writes a constant.
    package func sql(constant: (DatabaseValue) -> SQL) -> SQL {
        switch self {
        case .constant(let value):
            return constant(value)
        case .column(let column):
            return .identifier(column)
        case .coalesce(let column, let value):
            return "COALESCE(\(.identifier(column)), \(constant(value)))"
        case .renumbered(let column, let numbers):
            let cases = numbers.sorted { $0.key < $1.key }.map {
                "WHEN \(Int64($0.key)) THEN \(Int64($0.value))" as SQL
            }
            return "CASE \(.identifier(column)) \(SQL.joined(cases, separator: " ")) ELSE NULL END"
        case .constantWhereNotNull(let column, let value):
            return "CASE WHEN \(.identifier(column)) IS NULL THEN NULL ELSE \(constant(value)) END"
        case .shiftedKey(let column, let shift):
            return shift.sql(of: .identifier(column))
        case .droppedFor(let value, let entityColumn, let numbers):
            let list = SQL.joined(numbers.sorted().map { "\(Int64($0))" as SQL })
            return
                "CASE WHEN \(.identifier(entityColumn)) IN (\(list)) THEN NULL ELSE \(value.sql(constant: constant)) END"
        case .markedInline(let column):
            // `||` makes text; the cast keeps the bytes as a blob (NULL stays NULL).
            return "CAST(X'01' || \(.identifier(column)) AS BLOB)"
        case .resolvedExternal(let column):
            return "\(SQL(unsafeSQL: TableMigrationPlan.externalValueFunction))(\(.identifier(column)))"
        case .position(let partition, let order):
            let key = SQL.identifier("Z_PK")
            let ordering: SQL = order.map { SQL.identifier($0) + ", " + key } ?? key
            return """
                CASE WHEN \(.identifier(partition)) IS NULL THEN NULL ELSE \
                ROW_NUMBER() OVER (PARTITION BY \(.identifier(partition)) ORDER BY \(ordering)) * 1024 END
                """
        }
    }
}

extension TableMigrationPlan.TableCopy {
    /// The SQL value of a destination column for the rows copied: one expression, or a `CASE`
    /// on the source entity number when entities differ.
    ///
    /// - Parameters:
    ///   - column: The destination column.
    ///   - constant: Writes a constant (see ``TableMigrationPlan/ColumnValue/sql(constant:)``).
    package func sql(of column: String, constant: (DatabaseValue) -> SQL) -> SQL {
        if let uniform = uniformValue(of: column) { return uniform.sql(constant: constant) }
        let byEntity = values[column] ?? [:]
        let cases = sourceNumbers.compactMap { number in
            byEntity[number].map { "WHEN \(Int64(number)) THEN \($0.sql(constant: constant))" as SQL }
        }
        return "CASE \(SQL.identifier("Z_ENT")) \(SQL.joined(cases, separator: " ")) ELSE NULL END"
    }
}

/// Why an inferred step cannot run in place; the migrator then builds it beside the store.
package struct InPlaceUnsupported: Error, Sendable, CustomStringConvertible {
    /// What the in-place planner cannot express.
    package var reason: String

    package init(_ reason: String) { self.reason = reason }

    package var description: String { reason }
}
