package import TernCore

/// A fetch request translated into SQL over Core Data's tables, in a database's ``SQLDialect``:
/// the `FROM` clause with the joins that to-one key paths need, a `WHERE` condition, and an
/// `ORDER BY` when every sort translates.
///
/// Every condition it emits is two-valued (never `NULL`), so that `NOT` keeps `NSPredicate`'s
/// meaning, and every value is bound. Whatever cannot be expressed exactly (decimals, key path
/// against key path, variables, other collection operators, `SELF`, and what the dialect
/// declines) makes ``init(_:schema:dialect:)`` fail, and the store evaluates the whole predicate
/// in Swift instead.
///
/// ```swift
/// let query = FetchQuery(request, schema: schema, dialect: dialect)   // nil when it cannot translate
/// let sql: SQL = "SELECT t0.Z_PK FROM \(query.from) WHERE \(query.condition)"
/// ```
package struct FetchQuery {
    /// The root table with its alias `t0` and the `LEFT JOIN`s of to-one key paths.
    package private(set) var from: SQL
    /// The condition; the dialect's true condition without a predicate.
    package private(set) var condition: SQL
    /// The `ORDER BY` terms ending with `t0`'s primary key, or nil when a sort cannot be expressed in SQL.
    package private(set) var order: SQL?
    /// The column of each sort descriptor, or nil when a sort cannot be expressed in SQL.
    package private(set) var sortKeys: [SortKey]?
    /// The dialect the query is written in.
    private let dialect: any SQLDialect

    /// The column a sort descriptor orders by.
    package struct SortKey {
        /// The column, as selected (for example `t1."ZNAME"`).
        package var column: SQL
        /// The column as the sort compares it (with its collation), for keyset conditions.
        package var collated: SQL
        /// The attribute type of the column.
        package var type: AttributeType
        /// Whether smaller values come first.
        package var ascending: Bool
    }

    /// Translates a request, or returns nil when its predicate cannot be expressed exactly in SQL.
    ///
    /// - Parameters:
    ///   - request: The request.
    ///   - schema: The store's schema.
    ///   - dialect: The database's dialect.
    ///   - tableSchema: The schema the store's tables are in, when not the connection's main one
    ///     (a migration's source, attached or in a schema of its own).
    /// - Complexity: O(*p* + *s*) in the size of the predicate and the number of sorts.
    package init?(
        _ request: StoreFetchRequest, schema: StoreSchema, dialect: any SQLDialect, tableSchema: String? = nil
    ) {
        guard let layout = schema.entities[request.entityName] else { return nil }
        var translator = FetchQueryTranslator(schema: schema, root: layout, dialect: dialect, tableSchema: tableSchema)
        // A root table holds the rows of one hierarchy only: for the whole hierarchy, testing
        // Z_ENT would only make the database read each row an index already answers for (a
        // count). A table that is its entity's alone has no Z_ENT term at all, as Core Data reads it.
        let entityCondition = layout.rowCondition(includingSubentities: request.includesSubentities, alias: "t0")
        let wholeHierarchy =
            request.includesSubentities && layout.superNumber == 0 && !dialect.testsEntityOfWholeHierarchy
        let everyRow = wholeHierarchy || entityCondition == nil
        var condition: SQL = entityCondition.flatMap { everyRow ? nil : $0 } ?? dialect.trueCondition
        if let predicate = request.predicate {
            guard let translated = try? predicate.accept(&translator) else { return nil }
            condition = everyRow ? "(" + translated + ")" : condition + " AND " + translated
        }
        var keys: [SortKey]? = []
        for sort in request.sortDescriptors {
            guard let key = translator.sortKey(sort) else {
                keys = nil
                break
            }
            keys?.append(key)
        }
        self.sortKeys = keys
        self.order = keys.map { keys in
            SQL.joined(
                keys.map { dialect.orderTerm($0.collated, ascending: $0.ascending) } + [dialect.primaryKey(of: "t0")])
        }
        self.condition = condition
        self.from = translator.table(layout.table) + " AS t0" + SQL.joined(translator.joins, separator: "")
        self.dialect = dialect
    }

    /// The condition "comes after the position" in the order of the sort keys then the primary
    /// key, as the query sorts (`NULL` first ascending, last descending), with bound values; nil
    /// when there are no sort keys or a position value cannot be bound in its column's form.
    ///
    /// - Parameter position: Where the previous page ended.
    /// - Complexity: O(*k*²) in the number of sort keys.
    package func condition(after position: StoreFetchPosition) -> SQL? {
        guard let keys = sortKeys, position.sortValues.count == keys.count else { return nil }
        var terms: [SQL.KeysetTerm] = []
        for (key, value) in zip(keys, position.sortValues) {
            var bound: SQL?
            if let value {
                guard let sql = dialect.positionBound(value, for: key.type) else { return nil }
                bound = sql
            }
            terms.append(
                SQL.KeysetTerm(column: key.column, compared: key.collated, ascending: key.ascending, bound: bound))
        }
        return SQL.keysetCondition(
            terms, primaryKeyColumn: dialect.primaryKey(of: "t0"), after: position.reference.primaryKey)
    }

    /// The translation is not exact: the store evaluates the predicate in Swift.
    package static let untranslatable = TernError(.invalidPredicate, "the predicate has no exact SQL translation")
}
