import Foundation
import TernCore
import TernRelational

/// SQLite's spelling of a translated fetch (``FetchQuery``).
///
/// Strings compare through the `TERN_COMPARE` function and sort with the `TERN_STRING`
/// collations (see `Connection+PredicateFunctions.swift`), which run the same Swift code as
/// in-memory evaluation, so results are identical. Constants are bound in the form the store
/// writes them (``TernRelational/DatabaseValue``); columns kept in external files do not translate.
struct SQLiteDialect: SQLDialect {
    var trueCondition: SQL { "1" }
    var falseCondition: SQL { "0" }
    var testsEntityOfWholeHierarchy: Bool { false }

    func primaryKey(of alias: String) -> SQL { SQL(unsafeSQL: alias + ".Z_PK") }

    func translates(_ column: AttributeColumn) -> Bool { !column.allowsExternalStorage }

    func operand(_ column: SQL, type: AttributeType) -> SQL { column }

    func stringCondition(
        _ column: SQL, _ op: FetchPredicate.Operator, _ value: AttributeValue,
        _ options: FetchPredicate.ComparisonOptions
    ) throws(TernError) -> SQL {
        guard case .string(let text) = value, op != .between else { throw FetchQuery.untranslatable }
        if op == .matches,
            (try? FetchPredicate.compare(.constant(.string("")), op, .constant(value))
                .evaluate(with: [String: PredicateValue]())) == nil
        {
            throw FetchQuery.untranslatable  // A broken pattern: Swift evaluation reports it.
        }
        return "TERN_COMPARE(\(op.rawValue), \(Int64(options.rawValue)), " + column + ", \(text))"
    }

    func bound(_ value: AttributeValue, for type: AttributeType) throws(TernError) -> SQL? {
        try Self.storedValue(value, for: type).map { "\($0)" }
    }

    func positionBound(_ value: AttributeValue, for type: AttributeType) -> SQL? {
        value.databaseValue(for: type).map { "\($0)" }
    }

    func comparison(_ column: SQL, _ op: FetchPredicate.Operator, _ bound: SQL) -> SQL {
        switch op {
        case .notEqualTo: return "(" + column + " IS NOT " + bound + ")"
        case .lessThan: return "(" + column + " < " + bound + " AND " + column + " IS NOT NULL)"
        case .lessThanOrEqualTo: return "(" + column + " <= " + bound + " AND " + column + " IS NOT NULL)"
        case .greaterThan: return "(" + column + " > " + bound + " AND " + column + " IS NOT NULL)"
        case .greaterThanOrEqualTo: return "(" + column + " >= " + bound + " AND " + column + " IS NOT NULL)"
        default: return "(" + column + " IS " + bound + ")"
        }
    }

    func sortOperand(_ column: SQL, type: AttributeType, caseInsensitive: Bool) -> SQL? {
        guard type == .string else { return column }
        return column + (caseInsensitive ? " COLLATE TERN_STRING_C" : " COLLATE TERN_STRING")
    }

    func orderTerm(_ operand: SQL, ascending: Bool) -> SQL { operand + (ascending ? " ASC" : " DESC") }

    /// A constant in the column's storage form, or nil when it never compares with the column's values.
    private static func storedValue(_ value: AttributeValue, for type: AttributeType) throws(TernError)
        -> DatabaseValue?
    {
        switch (value, type) {
        case (.integer(let number), .integer16), (.integer(let number), .integer32), (.integer(let number), .integer64),
            (.integer(let number), .boolean), (.integer(let number), .double), (.integer(let number), .float),
            (.integer(let number), .date):
            return .integer(number)
        case (.bool(let flag), .integer16), (.bool(let flag), .integer32), (.bool(let flag), .integer64),
            (.bool(let flag), .boolean), (.bool(let flag), .double), (.bool(let flag), .float),
            (.bool(let flag), .date):
            return .integer(flag ? 1 : 0)
        case (.double(let number), .integer16), (.double(let number), .integer32), (.double(let number), .integer64),
            (.double(let number), .boolean), (.double(let number), .double), (.double(let number), .float),
            (.double(let number), .date):
            guard !number.isNaN else { throw FetchQuery.untranslatable }
            return .real(number)
        case (.date(let date), .integer16), (.date(let date), .integer32), (.date(let date), .integer64),
            (.date(let date), .boolean), (.date(let date), .double), (.date(let date), .float),
            (.date(let date), .date):
            return .real(date.timeIntervalSinceReferenceDate)
        case (.decimal, _):
            throw FetchQuery.untranslatable
        case (.uuid, .uuid), (.data, .binary), (.data, .transformable), (.uri, .uri):
            return value.databaseValue(for: type)
        default:
            return nil
        }
    }
}

/// A fetch request translated into SQLite (``FetchQuery`` in ``SQLiteDialect``).
typealias PredicateSQL = FetchQuery

extension FetchQuery {
    /// Translates a request into SQLite, or returns nil when its predicate cannot be expressed
    /// exactly.
    ///
    /// - Parameters:
    ///   - request: The request.
    ///   - schema: The store's schema.
    init?(_ request: StoreFetchRequest, schema: StoreSchema) {
        self.init(request, schema: schema, dialect: SQLiteDialect())
    }
}
