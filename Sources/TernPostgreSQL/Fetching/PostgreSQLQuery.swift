import Foundation
import TernCore
import TernSQLite
import TernRelational

/// A fetch request translated into PostgreSQL over the store's tables: the `FROM` clause with
/// the joins that to-one key paths need, a `WHERE` condition, and an `ORDER BY` when every sort
/// translates.
///
/// Every condition is two-valued (never `NULL`), so that `NOT` keeps `NSPredicate`'s meaning,
/// and every value is bound. Only what PostgreSQL evaluates exactly as Swift does is translated:
/// numbers, dates, Booleans, UUIDs, bytes and URIs (compared byte by byte, `COLLATE "C"`),
/// strings only for `==`/`!=` without options (as canonical equivalence: both sides
/// `normalize`d to NFC). Any other string comparison, sorts on strings, decimals, key path
/// against key path… make ``init(_:schema:)`` fail, and the store evaluates the predicate (or
/// sorts) in Swift instead.
///
/// ```swift
/// let query = PostgreSQLQuery(request, schema: schema)   // nil when it cannot translate
/// let sql: SQL = "SELECT t0.\"Z_PK\" FROM \(query.from) WHERE \(query.condition)"
/// ```
struct PostgreSQLQuery {
    /// The root table with its alias `t0` and the `LEFT JOIN`s of to-one key paths.
    private(set) var from: SQL
    /// The condition, `TRUE` without a predicate.
    private(set) var condition: SQL
    /// The `ORDER BY` terms ending with `t0."Z_PK"`, or nil when a sort cannot be expressed in SQL.
    private(set) var order: SQL?
    /// The request's sorts as SQL, or nil when a sort cannot be expressed in SQL.
    private(set) var sortKeys: [SortKey]?

    /// One sort of the request: the column it sorts on and its direction.
    struct SortKey {
        /// The column (through a joined to-one relationship for a key path).
        var column: SQL
        /// The attribute type that reads the column.
        var type: AttributeType
        /// Whether it sorts ascending (`NULL` first) or descending (`NULL` last).
        var ascending: Bool
    }

    /// Translates a request, or returns nil when its predicate cannot be expressed exactly.
    ///
    /// - Parameters:
    ///   - request: The request.
    ///   - schema: The store's schema.
    init?(_ request: StoreFetchRequest, schema: StoreSchema) {
        guard let layout = schema.entities[request.entityName] else { return nil }
        var translator = Emitter(schema: schema, root: layout)
        // A table that is its entity's alone has no Z_ENT term, as Core Data reads it.
        var condition = layout.rowFilter(includingSubentities: request.includesSubentities, alias: "t0")
        if let predicate = request.predicate {
            guard let translated = try? predicate.accept(&translator) else { return nil }
            condition = condition + " AND " + translated
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
            SQL.joined(keys.map { $0.column + ($0.ascending ? " ASC NULLS FIRST" : " DESC NULLS LAST") } + [#"t0."Z_PK""#])
        }
        self.condition = condition
        self.from = "\(.identifier(layout.table)) AS t0" + SQL.joined(translator.joins, separator: "")
    }

    /// ` LIMIT … OFFSET …` for a request's limit and offset, empty when it has neither.
    static func window(_ request: StoreFetchRequest) -> SQL {
        var window: SQL = ""
        if let limit = request.limit { window.append(" LIMIT \(Int64(limit))") }
        if request.offset > 0 { window.append(" OFFSET \(Int64(request.offset))") }
        return window
    }

    /// The condition "comes after the position" in the order of the sort keys then `Z_PK`, as
    /// the query sorts (`NULL` first ascending, last descending), with bound values; nil when
    /// there are no sort keys or a position value cannot be bound in its column's type.
    ///
    /// - Parameter position: Where the previous page ended.
    func condition(after position: StoreFetchPosition) -> SQL? {
        guard let keys = sortKeys, position.sortValues.count == keys.count else { return nil }
        var terms: [SQL.KeysetTerm] = []
        for (key, value) in zip(keys, position.sortValues) {
            var bound: SQL?
            if let value {
                guard let sql = try? Emitter.boundValue(value, for: key.type) else { return nil }
                bound = sql
            }
            terms.append(SQL.KeysetTerm(column: key.column, compared: key.column, ascending: key.ascending, bound: bound))
        }
        return SQL.keysetCondition(terms, primaryKeyColumn: #"t0."Z_PK""#, after: position.reference.primaryKey)
    }
}

/// The visitor that emits PostgreSQL for each predicate node, collecting joins as it goes.
private struct Emitter: PredicateVisitor {
    let schema: StoreSchema
    let root: EntityLayout
    /// The `LEFT JOIN` clauses, each with its leading space.
    var joins: [SQL] = []
    /// The alias of each joined to-one key path prefix.
    var aliases: [String: String] = [:]

    init(schema: StoreSchema, root: EntityLayout) {
        self.schema = schema
        self.root = root
    }

    // MARK: - Compounds

    func visitConstant(_ value: Bool) -> SQL { value ? "TRUE" : "FALSE" }

    func visitNot(_ operand: SQL) -> SQL { "(NOT " + operand + ")" }

    func visitAnd(_ terms: [SQL]) -> SQL { terms.isEmpty ? "TRUE" : "(" + SQL.joined(terms, separator: " AND ") + ")" }

    func visitOr(_ terms: [SQL]) -> SQL { terms.isEmpty ? "FALSE" : "(" + SQL.joined(terms, separator: " OR ") + ")" }

    // MARK: - Comparisons

    mutating func visitComparison(_ comparison: FetchPredicate.Comparison) throws(TernError) -> SQL {
        switch (comparison.quantifier, comparison.lhs) {
        case (.direct, .keyPath(let path)):
            let operand = try attribute(at: path, alias: "t0", layout: root, joining: true)
            return try Self.condition(operand, comparison)
        case (.direct, .collection(.count, let path, nil)):
            let (mapping, destination) = try toMany(named: path)
            let count = "(SELECT COUNT(*) " + Self.elements(of: mapping, destination: destination) + ")"
            return try Self.condition(Operand(sql: count, type: .integer64), comparison)
        case (.any, .keyPath(let path)), (.all, .keyPath(let path)), (.none, .keyPath(let path)):
            let names = path.split(separator: ".", maxSplits: 1).map(String.init)
            guard names.count == 2 else { throw Self.untranslatable }
            let (mapping, destination) = try toMany(named: names[0])
            let element = try attribute(at: names[1], alias: "d", layout: destination, joining: false)
            let inner = try Self.condition(element, comparison)
            let elements = Self.elements(of: mapping, destination: destination)
            switch comparison.quantifier {
            case .any: return "EXISTS (SELECT 1 " + elements + " AND " + inner + ")"
            case .all: return "(NOT EXISTS (SELECT 1 " + elements + " AND NOT " + inner + "))"
            default: return "(NOT EXISTS (SELECT 1 " + elements + " AND " + inner + "))"
            }
        default:
            throw Self.untranslatable
        }
    }

    // MARK: - Sorts

    /// The sort key of a sort (NULLs first ascending, as Swift sorts nil), or nil when it
    /// cannot be expressed exactly: strings sort in Swift.
    mutating func sortKey(_ sort: FetchSort) -> PostgreSQLQuery.SortKey? {
        guard let operand = try? attribute(at: sort.key, alias: "t0", layout: root, joining: true),
            operand.type != .string
        else { return nil }
        return PostgreSQLQuery.SortKey(column: operand.sql, type: operand.type, ascending: sort.ascending)
    }

    // MARK: - Key paths

    /// A column value with the attribute type that reads it.
    struct Operand {
        var sql: SQL
        var type: AttributeType
    }

    /// The column of an attribute key path, through to-one relationships joined on the way.
    private mutating func attribute(
        at path: String, alias: String, layout: EntityLayout, joining: Bool
    ) throws(TernError) -> Operand {
        var names = path.split(separator: ".", omittingEmptySubsequences: false).map(String.init)
        let last = names.removeLast()
        var alias = alias
        var layout = layout
        var prefix = ""
        for name in names {
            guard joining, let relationship = layout.toOne(named: name),
                let destination = schema.entities[relationship.destination]
            else { throw Self.untranslatable }
            prefix += "." + name
            if let known = aliases[prefix] {
                alias = known
            } else {
                let next = SQL(unsafeSQL: "t\(aliases.count + 1)")
                joins.append(
                    " LEFT JOIN \(.identifier(destination.table)) AS \(next) ON \(next).\"Z_PK\" = "
                        + "\(SQL(unsafeSQL: alias)).\(.identifier(relationship.column)) AND "
                        + destination.rowFilter(alias: next.text))
                aliases[prefix] = next.text
                alias = next.text
            }
            layout = destination
        }
        guard let column = layout.attribute(named: last), Self.translatableTypes.contains(column.type) else {
            throw Self.untranslatable
        }
        var sql = SQL(unsafeSQL: alias + ".") + .identifier(column.column)
        if column.type == .uri { sql = "(" + sql + #" COLLATE "C")"# }
        return Operand(sql: sql, type: column.type)
    }

    /// A to-many relationship of the root entity and its destination's layout.
    private func toMany(named name: String) throws(TernError) -> (ToManyMapping, EntityLayout) {
        guard let mapping = root.toMany(named: name), let destination = schema.entities[mapping.destination] else {
            throw Self.untranslatable
        }
        return (mapping, destination)
    }

    /// `FROM … WHERE …` selecting the destination rows (alias `d`) of a to-many relationship of `t0`.
    private static func elements(of mapping: ToManyMapping, destination: EntityLayout) -> SQL {
        switch mapping.storage {
        case .inverseForeignKey(let table, let column, _):
            return "FROM \(.identifier(table)) AS d WHERE d.\(.identifier(column)) = t0.\"Z_PK\" "
                + "AND " + destination.rowFilter(alias: "d")
        case .joinTable(let table, let source, let target, _):
            return "FROM \(.identifier(table)) AS j JOIN \(.identifier(destination.table)) AS d "
                + "ON d.\"Z_PK\" = j.\(.identifier(target)) WHERE j.\(.identifier(source)) = t0.\"Z_PK\""
        }
    }

    // MARK: - Conditions

    /// The attribute types whose stored values compare in PostgreSQL as they do in Swift.
    static let translatableTypes: Set<AttributeType> = [
        .integer16, .integer32, .integer64, .double, .float, .string, .boolean, .date, .binary, .uuid, .uri,
        .transformable,
    ]

    /// The translation is not exact: the store evaluates the predicate in Swift.
    static let untranslatable = TernError(.invalidPredicate, "the predicate has no exact SQL translation")

    /// The two-valued condition of a comparison on one operand.
    private static func condition(_ operand: Operand, _ comparison: FetchPredicate.Comparison) throws(TernError) -> SQL {
        switch (comparison.op, comparison.rhs) {
        case (.in, .aggregate(let elements)):
            var terms: [SQL] = []
            for element in elements {
                guard case .constant(let value) = element else { throw untranslatable }
                terms.append(try single(operand, .equalTo, value, comparison.options))
            }
            return terms.isEmpty ? "FALSE" : "(" + SQL.joined(terms, separator: " OR ") + ")"
        case (.between, .aggregate(let bounds)):
            guard bounds.count == 2, case .constant(let low) = bounds[0], case .constant(let high) = bounds[1] else {
                throw untranslatable
            }
            return "(" + (try single(operand, .greaterThanOrEqualTo, low, comparison.options)) + " AND "
                + (try single(operand, .lessThanOrEqualTo, high, comparison.options)) + ")"
        case (.between, _), (_, .aggregate):
            throw untranslatable
        case (let op, .constant(let value)):
            return try single(operand, op, value, comparison.options)
        default:
            throw untranslatable
        }
    }

    /// The condition of one operand against one constant, with `NSPredicate`'s nil semantics.
    private static func single(
        _ operand: Operand, _ op: FetchPredicate.Operator, _ value: AttributeValue?,
        _ options: FetchPredicate.ComparisonOptions
    ) throws(TernError) -> SQL {
        let column = operand.sql
        guard let value else {
            switch op {
            case .equalTo, .in: return "(" + column + " IS NULL)"
            case .notEqualTo: return "(" + column + " IS NOT NULL)"
            default: return "FALSE"
            }
        }
        if operand.type == .string {
            guard case .string(let text) = value, options.isEmpty, op == .equalTo || op == .notEqualTo,
                !text.utf8.contains(0)
            else { throw untranslatable }
            let same = "(" + column + " IS NOT NULL AND normalize(" + column + ", NFC) = normalize(CAST(\(text) AS text), NFC))"
            return op == .notEqualTo ? "(NOT " + same + ")" : same
        }
        guard let bound = try boundValue(value, for: operand.type) else {
            // Values of kinds that never compare: only `!=` holds.
            return op == .notEqualTo ? "TRUE" : "FALSE"
        }
        switch op {
        case .equalTo, .in: return "(" + column + " IS NOT DISTINCT FROM " + bound + ")"
        case .notEqualTo: return "(" + column + " IS DISTINCT FROM " + bound + ")"
        case .lessThan: return "COALESCE(" + column + " < " + bound + ", FALSE)"
        case .lessThanOrEqualTo: return "COALESCE(" + column + " <= " + bound + ", FALSE)"
        case .greaterThan: return "COALESCE(" + column + " > " + bound + ", FALSE)"
        case .greaterThanOrEqualTo: return "COALESCE(" + column + " >= " + bound + ", FALSE)"
        case .between: throw untranslatable
        case .beginsWith, .endsWith, .contains, .like, .matches: return "FALSE"  // String operators on non-strings.
        }
    }

    /// A constant bound in the column's type, or nil when it never compares with the column's values.
    static func boundValue(_ value: AttributeValue, for type: AttributeType) throws(TernError) -> SQL? {
        let numeric: Set<AttributeType> = [.integer16, .integer32, .integer64, .boolean, .double, .float, .date]
        switch value {
        case .integer(let number) where numeric.contains(type): return "CAST(\(number) AS bigint)"
        case .bool(let flag) where numeric.contains(type): return "CAST(\(Int64(flag ? 1 : 0)) AS bigint)"
        case .double(let number) where numeric.contains(type):
            guard !number.isNaN, number.isFinite || type == .double || type == .float || type == .date else {
                throw untranslatable
            }
            return "CAST(\(number) AS double precision)"
        case .date(let date) where numeric.contains(type):
            return "CAST(\(date.timeIntervalSinceReferenceDate) AS double precision)"
        case .decimal:
            throw untranslatable
        case .uuid(let uuid) where type == .uuid: return "CAST(\(uuid.uuidString) AS uuid)"
        case .data(let bytes) where type == .binary || type == .transformable: return "CAST(\(bytes) AS bytea)"
        case .uri(let url) where type == .uri:
            guard !url.absoluteString.utf8.contains(0) else { throw untranslatable }
            return "(CAST(\(url.absoluteString) AS text) COLLATE \"C\")"
        default:
            return nil
        }
    }
}
