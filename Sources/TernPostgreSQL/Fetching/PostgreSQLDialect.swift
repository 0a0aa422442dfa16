import Foundation
import TernCore
import TernRelational

/// PostgreSQL's spelling of a translated fetch (``FetchQuery``).
///
/// Only what PostgreSQL evaluates exactly as Swift does is translated: numbers, dates, Booleans,
/// UUIDs, bytes and URIs (compared byte by byte, `COLLATE "C"`), strings only for `==`/`!=`
/// without options (as canonical equivalence: both sides `normalize`d to NFC). Any other string
/// comparison, sorts on strings and decimals make the translation fail, and the store
/// evaluates the predicate (or sorts) in Swift instead.
struct PostgreSQLDialect: SQLDialect {
    var trueCondition: SQL { "TRUE" }
    var falseCondition: SQL { "FALSE" }
    var testsEntityOfWholeHierarchy: Bool { true }

    func primaryKey(of alias: String) -> SQL { SQL(unsafeSQL: alias + ".") + .identifier("Z_PK") }

    func translates(_ column: AttributeColumn) -> Bool { true }

    func operand(_ column: SQL, type: AttributeType) -> SQL {
        type == .uri ? "(" + column + #" COLLATE "C")"# : column
    }

    func stringCondition(
        _ column: SQL, _ op: FetchPredicate.Operator, _ value: AttributeValue,
        _ options: FetchPredicate.ComparisonOptions
    ) throws(TernError) -> SQL {
        guard case .string(let text) = value, options.isEmpty, op == .equalTo || op == .notEqualTo,
            !text.utf8.contains(0)
        else { throw FetchQuery.untranslatable }
        let same =
            "(" + column + " IS NOT NULL AND normalize(" + column + ", NFC) = normalize(CAST(\(text) AS text), NFC))"
        return op == .notEqualTo ? "(NOT " + same + ")" : same
    }

    func bound(_ value: AttributeValue, for type: AttributeType) throws(TernError) -> SQL? {
        let numeric: Set<AttributeType> = [.integer16, .integer32, .integer64, .boolean, .double, .float, .date]
        switch value {
        case .integer(let number) where numeric.contains(type): return "CAST(\(number) AS bigint)"
        case .bool(let flag) where numeric.contains(type): return "CAST(\(Int64(flag ? 1 : 0)) AS bigint)"
        case .double(let number) where numeric.contains(type):
            guard !number.isNaN, number.isFinite || type == .double || type == .float || type == .date else {
                throw FetchQuery.untranslatable
            }
            return "CAST(\(number) AS double precision)"
        case .date(let date) where numeric.contains(type):
            return "CAST(\(date.timeIntervalSinceReferenceDate) AS double precision)"
        case .decimal:
            throw FetchQuery.untranslatable
        case .uuid(let uuid) where type == .uuid: return "CAST(\(uuid.uuidString) AS uuid)"
        case .data(let bytes) where type == .binary || type == .transformable: return "CAST(\(bytes) AS bytea)"
        case .uri(let url) where type == .uri:
            guard !url.absoluteString.utf8.contains(0) else { throw FetchQuery.untranslatable }
            return "(CAST(\(url.absoluteString) AS text) COLLATE \"C\")"
        default:
            return nil
        }
    }

    func positionBound(_ value: AttributeValue, for type: AttributeType) -> SQL? {
        (try? bound(value, for: type)) ?? nil
    }

    func comparison(_ column: SQL, _ op: FetchPredicate.Operator, _ bound: SQL) -> SQL {
        switch op {
        case .notEqualTo: return "(" + column + " IS DISTINCT FROM " + bound + ")"
        case .lessThan: return "COALESCE(" + column + " < " + bound + ", FALSE)"
        case .lessThanOrEqualTo: return "COALESCE(" + column + " <= " + bound + ", FALSE)"
        case .greaterThan: return "COALESCE(" + column + " > " + bound + ", FALSE)"
        case .greaterThanOrEqualTo: return "COALESCE(" + column + " >= " + bound + ", FALSE)"
        default: return "(" + column + " IS NOT DISTINCT FROM " + bound + ")"
        }
    }

    func sortOperand(_ column: SQL, type: AttributeType, caseInsensitive: Bool) -> SQL? {
        type == .string ? nil : column
    }

    func orderTerm(_ operand: SQL, ascending: Bool) -> SQL {
        operand + (ascending ? " ASC NULLS FIRST" : " DESC NULLS LAST")
    }
}

/// A fetch request translated into PostgreSQL (``FetchQuery`` in ``PostgreSQLDialect``).
typealias PostgreSQLQuery = FetchQuery

extension FetchQuery {
    /// Translates a request into PostgreSQL, or returns nil when its predicate cannot be
    /// expressed exactly.
    ///
    /// - Parameters:
    ///   - request: The request.
    ///   - schema: The store's schema.
    init?(_ request: StoreFetchRequest, schema: StoreSchema) {
        self.init(request, schema: schema, dialect: PostgreSQLDialect())
    }

    /// ` LIMIT … OFFSET …` for a request's limit and offset, empty when it has neither.
    static func window(_ request: StoreFetchRequest) -> SQL {
        var window: SQL = ""
        if let limit = request.limit { window.append(" LIMIT \(Int64(limit))") }
        if request.offset > 0 { window.append(" OFFSET \(Int64(request.offset))") }
        return window
    }
}
