import TernCore
import TernMigration
import TernRelational

/// The SQLite text of a ``TernMigration/BulkMapping/Value``: each value the Swift path would
/// refuse or compute otherwise calls `tern_bulk_fallback()`, which fails the statement.
enum BulkSQL {
    /// The seconds from 1970 to 2001 (``TernMigration/BulkMapping/referenceDateOffset``).
    private static let referenceOffset = BulkMapping.referenceDateOffset
    /// The dates `formatDate` formats without `DateFormatter`, in seconds since 1970
    /// (``TernMigration/BulkMapping/formattedSeconds``).
    private static let formattedRange = BulkMapping.formattedSeconds

    /// The fallback call that fails the statement.
    private static var fallback: SQL { SQL(unsafeSQL: Connection.bulkFallbackFunction + "()") }

    /// Whether text is ASCII without NUL: `length` counts characters before the first NUL, so it
    /// equals the byte count only then.
    private static func ascii(_ text: SQL) -> SQL {
        "length(CAST(" + text + " AS BLOB)) = length(" + text + ")"
    }

    /// An integer expression whose overflow (SQLite then gives a real) goes to Swift.
    private static func integerChecked(_ expression: SQL) -> SQL {
        "(CASE WHEN typeof(" + expression + ") IN ('integer', 'null') THEN " + expression + " ELSE " + fallback
            + " END)"
    }

    /// `left op right` in doubles, as Swift computes them: NULL when a side is NULL; a NaN result,
    /// which SQLite reads as NULL, goes to Swift.
    private static func doubleArithmetic(_ op: ValueExpression.ArithmeticOperator, _ left: SQL, _ right: SQL) -> SQL {
        let result: SQL =
            "(CAST(" + left + " AS REAL)" + SQL(unsafeSQL: " \(op.rawValue) ") + "CAST(" + right + " AS REAL))"
        return "(CASE WHEN " + left + " IS NULL OR " + right + " IS NULL THEN NULL WHEN " + result + " IS NULL THEN "
            + fallback + " ELSE " + result + " END)"
    }

    /// A number's text as Swift reads it (trimmed of `CharacterSet.whitespaces`, which within
    /// ASCII is space and tab), and the same without a leading sign.
    private static func number(_ text: SQL) -> (trimmed: SQL, unsigned: SQL) {
        let trimmed: SQL = "trim(" + text + ", ' ' || char(9))"
        return (
            trimmed,
            "(CASE WHEN substr(" + trimmed + ", 1, 1) IN ('+', '-') THEN substr(" + trimmed + ", 2) ELSE " + trimmed
                + " END)"
        )
    }

    /// When text is an integer SQL reads as `Int64` does (a sign and 1 to 18 ASCII digits after
    /// space and tab), and the text trimmed.
    private static func integerText(_ text: SQL) -> (condition: SQL, trimmed: SQL) {
        let (trimmed, digits) = number(text)
        return (
            ascii(text) + " AND length(" + digits + ") BETWEEN 1 AND 18 AND " + digits + " NOT GLOB '*[^0-9]*'",
            trimmed
        )
    }

    /// When text is a decimal SQL reads as `Double` does (a sign, then at most 15 digits with
    /// perhaps a point among them), and its value: the digits' integer over 10^(digits after the
    /// point), both exact doubles, so that one IEEE division rounds as `Double` does.
    private static func decimalText(_ text: SQL) -> (condition: SQL, value: SQL) {
        let (trimmed, body) = number(text)
        // The digits before and after the point; none after it when there is no point.
        let point: SQL = "instr(" + body + ", '.')"
        let whole: SQL =
            "(CASE WHEN " + point + " = 0 THEN " + body + " ELSE substr(" + body + ", 1, " + point + " - 1) END)"
        let fraction: SQL = "(CASE WHEN " + point + " = 0 THEN '' ELSE substr(" + body + ", " + point + " + 1) END)"
        let digits: SQL = "(" + whole + " || " + fraction + ")"
        let condition: SQL =
            ascii(text) + " AND length(" + whole + ") >= 1 AND " + whole + " NOT GLOB '*[^0-9]*' AND " + fraction
            + " NOT GLOB '*[^0-9]*' AND (" + point + " = 0 OR length(" + fraction + ") >= 1) AND length(" + digits
            + ") <= 15"
        let magnitude: SQL =
            "(CAST(CAST(" + digits + " AS INTEGER) AS REAL) / CAST(CAST(substr('1000000000000000', 1, length("
            + fraction + ") + 1) AS INTEGER) AS REAL))"
        return (
            condition,
            "(CASE WHEN substr(" + trimmed + ", 1, 1) = '-' THEN -" + magnitude + " ELSE " + magnitude + " END)"
        )
    }

    /// A column read as the Swift reader reads it: a storage class it does not accept calls the
    /// fallback; a Boolean reads as `c != 0`.
    private static func typed(_ c: SQL, _ type: AttributeType) -> SQL {
        switch type {
        case .boolean:
            return "(CASE typeof(" + c + ") WHEN 'integer' THEN (" + c + " != 0) WHEN 'null' THEN NULL ELSE "
                + fallback + " END)"
        case .string:
            return "(CASE WHEN typeof(" + c + ") IN ('text', 'null') THEN " + c + " ELSE " + fallback + " END)"
        case .uuid:
            return "(CASE WHEN " + c + " IS NULL OR (typeof(" + c + ") = 'blob' AND length(" + c + ") = 16) THEN " + c
                + " ELSE " + fallback + " END)"
        case .double, .date:
            return "(CASE WHEN typeof(" + c + ") IN ('integer', 'real', 'null') THEN " + c + " ELSE " + fallback
                + " END)"
        default:
            return "(CASE WHEN typeof(" + c + ") IN ('integer', 'null') THEN " + c + " ELSE " + fallback + " END)"
        }
    }

    /// The text of a value as Swift's `string()` gives it: text as is, an integer's digits, a
    /// Boolean's `true` or `false`.
    private static func textSQL(_ value: BulkMapping.Value, columns: BulkSourceColumns) -> SQL? {
        guard let sql = render(value, columns: columns) else { return nil }
        switch value.type {
        case .boolean?: return "(CASE " + sql + " WHEN 1 THEN 'true' WHEN 0 THEN 'false' END)"
        case .string?, nil: return sql
        default: return "CAST(" + sql + " AS TEXT)"
        }
    }

    /// The SQL of a value over the source table aliased `s`, or nil when a column is missing.
    ///
    /// - Parameters:
    ///   - value: The value.
    ///   - columns: The source column of each source attribute.
    static func render(_ value: BulkMapping.Value, columns: BulkSourceColumns) -> SQL? {
        switch value {
        case .literal(let literal):
            guard let literal, let type = value.type else { return "NULL" }
            return literal.databaseValue(for: type).map { "\($0)" } ?? nil
        case .attribute(let name, let type):
            guard let column = columns.attributes[name] else { return nil }
            return typed("s.\(.identifier(column))", type)
        case .relatedAttribute(let path, let attribute, let type):
            return columns.related(path, attribute: attribute, fallback: fallback) { typed($0, type) }
        case .timeInterval(let date), .double(let date), .date(let date):
            guard let inner = render(date, columns: columns) else { return nil }
            return "CAST(" + inner + " AS REAL)"
        case .integer(let inner):
            return render(inner, columns: columns)
        case .changingCase(let inner, let uppercase):
            // SQLite's lower() and upper() map ASCII letters alone: other text goes to Swift.
            guard let text = render(inner, columns: columns) else { return nil }
            let mapped: SQL = SQL(unsafeSQL: uppercase ? "upper(" : "lower(") + text + ")"
            return "(CASE WHEN " + ascii(text) + " THEN " + mapped + " WHEN " + text + " IS NULL THEN NULL ELSE "
                + fallback + " END)"
        case .trim(let inner):
            guard let text = render(inner, columns: columns) else { return nil }
            let characters: SQL = "\(DatabaseValue.text(BulkMapping.asciiWhitespace))"
            let trimmed: SQL = "trim(" + text + ", " + characters + ")"
            return "(CASE WHEN " + ascii(text) + " THEN " + trimmed + " WHEN " + text + " IS NULL THEN NULL ELSE "
                + fallback + " END)"
        case .text(let inner):
            return textSQL(inner, columns: columns)
        case .concat(let parts):
            var joined: SQL = "("
            for (index, part) in parts.enumerated() {
                guard let text = textSQL(part, columns: columns) else { return nil }
                joined.append((index == 0 ? "" : " || ") + "COALESCE(" + text + ", '')")
            }
            return joined + ")"
        case .coalesce(let arguments, _):
            let rendered = arguments.map { render($0, columns: columns) }
            guard rendered.allSatisfy({ $0 != nil }) else { return nil }
            let sql = rendered.compactMap { $0 }
            guard sql.count > 1 else { return sql.first }
            return "COALESCE(" + sql.dropFirst().reduce(sql[0]) { $0 + ", " + $1 } + ")"
        case .integerArithmetic(let op, let lhs, let rhs):
            guard let left = render(lhs, columns: columns), let right = render(rhs, columns: columns) else {
                return nil
            }
            return integerChecked("(" + left + SQL(unsafeSQL: " \(op.rawValue) ") + right + ")")
        case .doubleArithmetic(let op, let lhs, let rhs), .dateArithmetic(let op, let lhs, let rhs):
            guard let left = render(lhs, columns: columns), let right = render(rhs, columns: columns) else {
                return nil
            }
            return doubleArithmetic(op, left, right)
        case .division(let lhs, let rhs):
            guard let left = render(lhs, columns: columns), let right = render(rhs, columns: columns) else {
                return nil
            }
            // SQLite gives NULL for a zero divisor, where Swift fails: that goes to Swift.
            return "(CASE WHEN " + left + " IS NULL OR " + right + " IS NULL THEN NULL WHEN CAST(" + right
                + " AS REAL) = 0.0 THEN " + fallback + " ELSE " + doubleArithmetic(.divide, left, right) + " END)"
        case .truncated(let inner):
            // CAST rounds toward zero, as Swift; outside Int64 it would clamp, and NaN fails both
            // comparisons: those go to Swift.
            guard let number = render(inner, columns: columns) else { return nil }
            return "(CASE WHEN " + number + " IS NULL THEN NULL WHEN " + number + " >= -9223372036854775808.0 AND "
                + number + " < 9223372036854775808.0 THEN CAST(" + number + " AS INTEGER) ELSE " + fallback + " END)"
        case .parsedInteger(let inner):
            guard let text = render(inner, columns: columns) else { return nil }
            let integer = integerText(text)
            return "(CASE WHEN " + text + " IS NULL THEN NULL WHEN " + integer.condition + " THEN CAST("
                + integer.trimmed + " AS INTEGER) ELSE " + fallback + " END)"
        case .uuid:
            return SQL(unsafeSQL: Connection.bulkUUIDFunction + "()")
        case .parsedDouble(let inner):
            guard let text = render(inner, columns: columns) else { return nil }
            let decimal = decimalText(text)
            return "(CASE WHEN " + text + " IS NULL THEN NULL WHEN " + decimal.condition + " THEN " + decimal.value
                + " ELSE " + fallback + " END)"
        case .parsedNumber(let inner):
            // As Swift: an integer's text first (a double once stored, so that -0 is 0.0), else a decimal.
            guard let text = render(inner, columns: columns) else { return nil }
            let (integer, decimal) = (integerText(text), decimalText(text))
            return "(CASE WHEN " + text + " IS NULL THEN NULL WHEN " + integer.condition + " THEN CAST(CAST("
                + integer.trimmed + " AS INTEGER) AS REAL) WHEN " + decimal.condition + " THEN " + decimal.value
                + " ELSE " + fallback + " END)"
        case .now:
            // Replaced by the migration's date before rendering (`replacingNow(with:)`).
            return nil
        case .negate(let inner):
            guard let operand = render(inner, columns: columns) else { return nil }
            return integerChecked("(-" + operand + ")")
        case .parseDate(let inner, let format, let fields):
            guard let text = render(inner, columns: columns) else { return nil }
            // The fields as `YYYY-MM-DD HH:MM:SS`, whose seconds SQLite's date functions give; the
            // date's text in the format must be the text itself (which also refuses 30 February,
            // which SQLite would carry into March, and any text DateFormatter reads more leniently).
            let iso = BulkSourceColumns.dateText(of: text, fields: fields)
            let seconds: SQL = "CAST(strftime('%s', " + iso + ") AS INTEGER)"
            return "(CASE WHEN " + text + " IS NULL THEN NULL WHEN " + seconds
                + " BETWEEN \(formattedRange.lowerBound) AND \(formattedRange.upperBound) AND strftime(\(format), "
                + seconds + ", 'unixepoch') = " + text + " THEN " + seconds + " - \(referenceOffset) ELSE " + fallback
                + " END)"
        case .formatDate(let date, let format):
            // A column is read as is: the CASE below checks its storage class.
            let c: SQL
            if case .attribute(let name, _) = date, let column = columns.attributes[name] {
                c = "s.\(.identifier(column))"
            } else {
                guard let rendered = render(date, columns: columns) else { return nil }
                c = rendered
            }
            // As DatePattern computes fields: milliseconds since 1970 as a double, days by floor
            // division, then whole milliseconds of the day ÷ 1000. An integer needs none of it.
            let milliseconds: SQL = "((" + c + " + \(Double(referenceOffset))) * 1000.0)"
            let quotient: SQL = "(" + milliseconds + " / 86400000.0)"
            let days: SQL =
                "(CAST(" + quotient + " AS INTEGER) - (" + quotient + " < CAST(" + quotient + " AS INTEGER)))"
            let realSeconds: SQL =
                "(" + days + " * 86400 + CAST((" + milliseconds + " - " + days + " * 86400000.0) AS INTEGER) / 1000)"
            let integerSeconds: SQL = "(" + c + " + \(referenceOffset))"
            func formatted(_ seconds: SQL) -> SQL {
                "(CASE WHEN " + seconds
                    + " BETWEEN \(formattedRange.lowerBound) AND \(formattedRange.upperBound) THEN strftime(\(format), "
                    + seconds + ", 'unixepoch') ELSE " + fallback + " END)"
            }
            return "(CASE typeof(" + c + ") WHEN 'null' THEN NULL WHEN 'integer' THEN " + formatted(integerSeconds)
                + " WHEN 'real' THEN " + formatted(realSeconds) + " ELSE " + fallback + " END)"
        }
    }
}
