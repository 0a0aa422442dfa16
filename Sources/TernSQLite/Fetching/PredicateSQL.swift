import Foundation
import TernCore
import TernRelational

/// A fetch request translated into SQL over Core Data's tables: the `FROM` clause with the joins
/// that to-one key paths need, a `WHERE` condition, and an `ORDER BY` when every sort translates.
///
/// Every condition it emits is two-valued (never `NULL`), so that `NOT` keeps `NSPredicate`'s
/// meaning, and every value is bound. Strings compare through the `TERN_COMPARE` function and the
/// `TERN_STRING` collations (see `Connection+PredicateFunctions.swift`), which run the same Swift
/// code as in-memory evaluation, so results are identical. Whatever cannot be expressed exactly
/// (decimals, key path against key path, variables, other collection operators, `SELF`…) makes
/// ``init(_:schema:)`` fail, and the store evaluates the whole predicate in Swift instead.
///
/// ```swift
/// let query = try PredicateSQL(request, schema: schema)   // nil when it cannot translate
/// let sql: SQL = "SELECT t0.Z_PK FROM \(query.from) WHERE \(query.condition)"
/// ```
struct PredicateSQL {
    /// The root table with its alias `t0` and the `LEFT JOIN`s of to-one key paths.
    private(set) var from: SQL
    /// The condition, `1` without a predicate.
    private(set) var condition: SQL
    /// The `ORDER BY` terms ending with `t0.Z_PK`, or nil when a sort cannot be expressed in SQL.
    private(set) var order: SQL?
    /// The column of each sort descriptor, or nil when a sort cannot be expressed in SQL.
    private(set) var sortKeys: [SortKey]?

    /// The column a sort descriptor orders by.
    struct SortKey {
        /// The column, as selected (for example `t1."ZNAME"`).
        var column: SQL
        /// The column with the collation it sorts with, for comparisons in the sort's order.
        var collated: SQL
        /// The attribute type of the column.
        var type: AttributeType
        /// Whether smaller values come first.
        var ascending: Bool
    }

    /// Translates a request, or returns nil when its predicate cannot be expressed exactly in SQL.
    ///
    /// - Parameters:
    ///   - request: The request.
    ///   - schema: The store's schema.
    init?(_ request: StoreFetchRequest, schema: StoreSchema) {
        guard let layout = schema.entities[request.entityName] else { return nil }
        var translator = Translator(schema: schema, root: layout)
        // A root table holds the rows of one hierarchy only: for the whole hierarchy, testing
        // Z_ENT would only make SQLite read each row an index already answers for (a count).
        // A table that is its entity's alone has no Z_ENT term at all, as Core Data reads it.
        let entityCondition = layout.rowCondition(includingSubentities: request.includesSubentities, alias: "t0")
        let everyRow = (request.includesSubentities && layout.superNumber == 0) || entityCondition == nil
        var condition: SQL = entityCondition.flatMap { everyRow ? nil : $0 } ?? "1"
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
            SQL.joined(keys.map { $0.collated + ($0.ascending ? " ASC" : " DESC") } + ["t0.Z_PK"])
        }
        self.condition = condition
        self.from = "\(.identifier(layout.table)) AS t0" + SQL.joined(translator.joins, separator: "")
    }
}

/// The visitor that emits the SQL of each predicate node, collecting joins as it goes.
private struct Translator: PredicateVisitor {
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

    func visitConstant(_ value: Bool) -> SQL { value ? "1" : "0" }

    func visitNot(_ operand: SQL) -> SQL { "(NOT " + operand + ")" }

    func visitAnd(_ terms: [SQL]) -> SQL { terms.isEmpty ? "1" : "(" + SQL.joined(terms, separator: " AND ") + ")" }

    func visitOr(_ terms: [SQL]) -> SQL { terms.isEmpty ? "0" : "(" + SQL.joined(terms, separator: " OR ") + ")" }

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

    /// The column and collation of a sort, or nil when it cannot be expressed exactly.
    mutating func sortKey(_ sort: FetchSort) -> PredicateSQL.SortKey? {
        guard let operand = try? attribute(at: sort.key, alias: "t0", layout: root, joining: true) else { return nil }
        var collated = operand.sql
        if operand.type == .string {
            collated = collated + (sort.caseInsensitive ? " COLLATE TERN_STRING_C" : " COLLATE TERN_STRING")
        }
        return PredicateSQL.SortKey(column: operand.sql, collated: collated, type: operand.type, ascending: sort.ascending)
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
                let next = "t\(aliases.count + 1)"
                joins.append(
                    " LEFT JOIN \(.identifier(destination.table)) AS \(SQL(unsafeSQL: next)) ON \(SQL(unsafeSQL: next)).Z_PK = "
                        + "\(SQL(unsafeSQL: alias)).\(.identifier(relationship.column)) AND "
                        + destination.rowFilter(alias: next))
                aliases[prefix] = next
                alias = next
            }
            layout = destination
        }
        guard let column = layout.attribute(named: last), !column.allowsExternalStorage,
            Self.translatableTypes.contains(column.type)
        else { throw Self.untranslatable }
        return Operand(sql: SQL(unsafeSQL: alias + ".") + .identifier(column.column), type: column.type)
    }

    /// A to-many relationship of the root entity and its destination's layout.
    private func toMany(named name: String) throws(TernError) -> (ToManyMapping, EntityLayout) {
        guard let mapping = root.toMany(named: name), let destination = schema.entities[mapping.destination] else {
            throw Self.untranslatable
        }
        return (mapping, destination)
    }

    /// `FROM … WHERE …` selecting the destination rows (alias `d`) of a to-many relationship of `t0`,
    /// as the store reads them.
    private static func elements(of mapping: ToManyMapping, destination: EntityLayout) -> SQL {
        switch mapping.storage {
        case .inverseForeignKey(let table, let column, _):
            return "FROM \(.identifier(table)) AS d WHERE d.\(.identifier(column)) = t0.Z_PK "
                + "AND " + destination.rowFilter(alias: "d")
        case .joinTable(let table, let source, let target, _):
            return "FROM \(.identifier(table)) AS j JOIN \(.identifier(destination.table)) AS d "
                + "ON d.Z_PK = j.\(.identifier(target)) WHERE j.\(.identifier(source)) = t0.Z_PK"
        }
    }

    // MARK: - Conditions

    /// The attribute types whose stored values compare in SQL as they do in Swift (not decimals,
    /// which Core Data stores as reals).
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
            return terms.isEmpty ? "0" : "(" + SQL.joined(terms, separator: " OR ") + ")"
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
            default: return "0"
            }
        }
        if operand.type == .string {
            guard case .string(let text) = value, op != .between else { throw untranslatable }
            if op == .matches, (try? FetchPredicate.compare(.constant(.string("")), op, .constant(value))
                .evaluate(with: [String: PredicateValue]())) == nil
            {
                throw untranslatable  // A broken pattern: Swift evaluation reports it.
            }
            return "TERN_COMPARE(\(op.rawValue), \(Int64(options.rawValue)), " + column + ", \(text))"
        }
        guard let bound = try boundValue(value, for: operand.type) else {
            // Values of kinds that never compare: only `!=` holds.
            return op == .notEqualTo ? "1" : "0"
        }
        switch op {
        case .equalTo, .in: return "(" + column + " IS \(bound))"
        case .notEqualTo: return "(" + column + " IS NOT \(bound))"
        case .lessThan: return "(" + column + " < \(bound) AND " + column + " IS NOT NULL)"
        case .lessThanOrEqualTo: return "(" + column + " <= \(bound) AND " + column + " IS NOT NULL)"
        case .greaterThan: return "(" + column + " > \(bound) AND " + column + " IS NOT NULL)"
        case .greaterThanOrEqualTo: return "(" + column + " >= \(bound) AND " + column + " IS NOT NULL)"
        case .between: throw untranslatable
        case .beginsWith, .endsWith, .contains, .like, .matches: return "0"  // String operators on non-strings.
        }
    }

    /// A constant in the column's storage form, or nil when it never compares with the column's values.
    private static func boundValue(_ value: AttributeValue, for type: AttributeType) throws(TernError) -> DatabaseValue? {
        switch (value, type) {
        case (.integer(let number), .integer16), (.integer(let number), .integer32), (.integer(let number), .integer64),
            (.integer(let number), .boolean), (.integer(let number), .double), (.integer(let number), .float),
            (.integer(let number), .date):
            return .integer(number)
        case (.bool(let flag), .integer16), (.bool(let flag), .integer32), (.bool(let flag), .integer64),
            (.bool(let flag), .boolean), (.bool(let flag), .double), (.bool(let flag), .float), (.bool(let flag), .date):
            return .integer(flag ? 1 : 0)
        case (.double(let number), .integer16), (.double(let number), .integer32), (.double(let number), .integer64),
            (.double(let number), .boolean), (.double(let number), .double), (.double(let number), .float),
            (.double(let number), .date):
            guard !number.isNaN else { throw untranslatable }
            return .real(number)
        case (.date(let date), .integer16), (.date(let date), .integer32), (.date(let date), .integer64),
            (.date(let date), .boolean), (.date(let date), .double), (.date(let date), .float), (.date(let date), .date):
            return .real(date.timeIntervalSinceReferenceDate)
        case (.decimal, _):
            throw untranslatable
        case (.uuid, .uuid), (.data, .binary), (.data, .transformable), (.uri, .uri):
            return value.databaseValue(for: type)
        default:
            return nil
        }
    }
}
