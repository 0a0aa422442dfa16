internal import CSQLite
import Foundation
import TernCore
import TernRelational

extension Connection {
    /// Registers the SQL function and collations that fetches translated from predicates use, so
    /// that strings compare in SQL exactly as Swift evaluation compares them:
    ///
    /// - `TERN_COMPARE(operator, options, value, constant)`: 1 when the comparison
    ///   `value <operator>[options] constant` holds, evaluated by ``FetchPredicate`` itself (Foundation's
    ///   Unicode case and diacritic folding, `LIKE` wildcards, ICU regular expressions for `MATCHES`
    ///   through TernCore's pattern cache), else 0; never NULL. Deterministic.
    /// - Collations `TERN_STRING` and `TERN_STRING_C`: the order of ``FetchSort`` for strings,
    ///   case-sensitive and case-insensitive.
    ///
    /// - Throws: ``SQLiteError`` when SQLite refuses a registration.
    func registerPredicateFunctions() throws(SQLiteError) {
        var code = sqlite3_create_function_v2(
            handle, "TERN_COMPARE", 4, SQLITE_UTF8 | SQLITE_DETERMINISTIC, nil,
            { context, _, arguments in
                guard let arguments,
                    let op = arguments[0].flatMap(PredicateFunctions.text).flatMap(FetchPredicate.Operator.init),
                    let constant = arguments[3].flatMap(PredicateFunctions.text)
                else { return sqlite3_result_error(context, "TERN_COMPARE needs an operator and a string", -1) }
                let options = FetchPredicate.ComparisonOptions(
                    rawValue: UInt8(clamping: sqlite3_value_int64(arguments[1])))
                let value = arguments[2].flatMap(PredicateFunctions.text).map(AttributeValue.string)
                let comparison = FetchPredicate.Comparison(
                    .constant(value), op, .constant(.string(constant)), options: options)
                do {
                    sqlite3_result_int(context, try comparison.evaluate(with: [String: PredicateValue]()) ? 1 : 0)
                } catch {
                    sqlite3_result_error(context, "TERN_COMPARE cannot evaluate its pattern", -1)
                }
            }, nil, nil, nil)
        guard code == SQLITE_OK else { throw SQLiteError(sqliteCode: code, database: handle, sql: nil, path: path) }
        // The collation's argument says whether it ignores case: non-nil for `TERN_STRING_C`.
        for (name, caseInsensitive) in [
            ("TERN_STRING", nil), ("TERN_STRING_C", UnsafeMutableRawPointer(bitPattern: 1)),
        ] {
            code = sqlite3_create_collation_v2(
                handle, name, SQLITE_UTF8, caseInsensitive,
                { caseInsensitive, leftCount, left, rightCount, right in
                    PredicateFunctions.order(
                        PredicateFunctions.text(left, leftCount), PredicateFunctions.text(right, rightCount),
                        caseInsensitive: caseInsensitive != nil)
                }, nil)
            guard code == SQLITE_OK else { throw SQLiteError(sqliteCode: code, database: handle, sql: nil, path: path) }
        }
    }
}

/// The Swift side of the SQL function and collations of ``Connection/registerPredicateFunctions()``.
private enum PredicateFunctions {
    /// The text of a function argument, nil for NULL.
    static func text(_ value: OpaquePointer) -> String? {
        guard sqlite3_value_type(value) != SQLITE_NULL, let bytes = sqlite3_value_text(value) else { return nil }
        let count = Int(sqlite3_value_bytes(value))
        return String(decoding: UnsafeBufferPointer(start: bytes, count: count), as: UTF8.self)
    }

    /// The text a collation receives.
    static func text(_ bytes: UnsafeRawPointer?, _ count: Int32) -> String {
        guard let bytes, count > 0 else { return "" }
        return String(decoding: UnsafeRawBufferPointer(start: bytes, count: Int(count)), as: UTF8.self)
    }

    /// The collation result of two strings in ``FetchSort``'s order.
    static func order(_ lhs: String, _ rhs: String, caseInsensitive: Bool) -> Int32 {
        let sort = FetchSort(key: "", caseInsensitive: caseInsensitive)
        switch sort.compare(.string(lhs), .string(rhs)) {
        case .orderedAscending: return -1
        case .orderedSame: return 0
        case .orderedDescending: return 1
        }
    }
}
