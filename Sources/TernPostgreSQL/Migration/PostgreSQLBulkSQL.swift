import Foundation
import TernCore
import TernMigration
import TernRelational

/// The PostgreSQL text of a ``TernMigration/BulkMapping/Value``. The store's columns are typed
/// (integers and Booleans `bigint`, dates and doubles `double precision`, strings `text`), so a
/// value reads as Swift reads it; only `formatDate` outside the dates `DatePattern` formats calls
/// ``fallbackFunction``, which fails the statement so that the mapping runs in Swift.
enum PostgreSQLBulkSQL {
    /// The message of the fallback function's failure.
    static let fallbackMessage = "tern: this row needs the Swift path"

    /// Creates the fallback function in the session's temporary schema: it lasts as long as the
    /// connection and is seen by no other. Volatile, so that the server never calls it ahead of
    /// the row that needs it.
    static let fallbackFunction: SQL = SQL(
        unsafeSQL: """
            CREATE OR REPLACE FUNCTION pg_temp.tern_bulk_fallback(anyelement) RETURNS anyelement \
            LANGUAGE plpgsql VOLATILE AS $$ BEGIN RAISE EXCEPTION '\(fallbackMessage)'; END $$
            """)

    /// The seconds from 1970 to 2001 (``TernMigration/BulkMapping/referenceDateOffset``).
    private static let referenceOffset = BulkMapping.referenceDateOffset
    /// The dates `formatDate` formats without `DateFormatter`, in seconds since 1970
    /// (``TernMigration/BulkMapping/formattedSeconds``).
    private static let formattedRange = BulkMapping.formattedSeconds

    /// The SQL of a value over the source table aliased `s`, and whether it may call the fallback
    /// function; nil when a column is missing or a literal has no exact form.
    ///
    /// - Parameters:
    ///   - value: The value.
    ///   - columns: The source column of each source attribute.
    static func render(_ value: BulkMapping.Value, columns: BulkSourceColumns) -> (sql: SQL, mayFallBack: Bool)? {
        switch value {
        case .literal(let literal):
            guard let literal, let type = value.type else { return ("NULL", false) }
            if case .double(let number) = literal, !number.isFinite { return nil }
            guard let stored = literal.postgreSQLValue(for: type) else { return nil }
            return ("CAST(\(stored) AS " + SQL(unsafeSQL: Connection.columnType(of: type)) + ")", false)
        case .attribute(let name, let type):
            guard let column = columns.attributes[name] else { return nil }
            return (typed("s.\(.identifier(column))", type), false)
        case .relatedAttribute(let path, let attribute, let type):
            let fallback: SQL =
                "pg_temp.tern_bulk_fallback(CAST(NULL AS "
                + SQL(unsafeSQL: type == .boolean ? "integer" : Connection.columnType(of: type)) + "))"
            return columns.related(path, attribute: attribute, fallback: fallback) { typed($0, type) }
                .map { ($0, true) }
        case .timeInterval(let date), .double(let date), .date(let date):
            guard let inner = render(date, columns: columns) else { return nil }
            return ("CAST(" + inner.sql + " AS double precision)", inner.mayFallBack)
        case .integer(let inner):
            guard let operand = render(inner, columns: columns) else { return nil }
            return ("CAST(" + operand.sql + " AS bigint)", operand.mayFallBack)
        case .changingCase(let inner, let uppercase):
            // translate() maps ASCII letters alone, whatever the database's locale (lower() would
            // follow it: a Turkish one lowers I to ı); other text goes to Swift.
            guard let text = render(inner, columns: columns) else { return nil }
            let (from, to) = ("ABCDEFGHIJKLMNOPQRSTUVWXYZ", "abcdefghijklmnopqrstuvwxyz")
            let mapped: SQL =
                "translate(" + text.sql + ", " + boundText(uppercase ? to : from) + ", "
                + boundText(uppercase ? from : to) + ")"
            return (asciiOnly(text.sql, then: mapped), true)
        case .trim(let inner):
            guard let text = render(inner, columns: columns) else { return nil }
            let trimmed: SQL = "btrim(" + text.sql + ", " + boundText(BulkMapping.asciiWhitespace) + ")"
            return (asciiOnly(text.sql, then: trimmed), true)
        case .text(let inner):
            return textSQL(inner, columns: columns)
        case .concat(let parts):
            var joined: SQL = "("
            var mayFallBack = false
            for (index, part) in parts.enumerated() {
                guard let text = textSQL(part, columns: columns) else { return nil }
                joined.append((index == 0 ? "" : " || ") + "COALESCE(" + text.sql + ", '')")
                mayFallBack = mayFallBack || text.mayFallBack
            }
            return (joined + ")", mayFallBack)
        case .coalesce(let arguments, _):
            var rendered: [SQL] = []
            var mayFallBack = false
            for argument in arguments {
                guard let sql = render(argument, columns: columns) else { return nil }
                rendered.append(sql.sql)
                mayFallBack = mayFallBack || sql.mayFallBack
            }
            guard let first = rendered.first else { return nil }
            return ("COALESCE(" + rendered.dropFirst().reduce(first) { $0 + ", " + $1 } + ")", mayFallBack)
        case .integerArithmetic(let op, let lhs, let rhs):
            // bigint arithmetic that overflows fails the statement with SQLSTATE 22003, which
            // sends the mapping to Swift.
            guard let left = render(lhs, columns: columns), let right = render(rhs, columns: columns) else {
                return nil
            }
            let sql: SQL =
                "(CAST(" + left.sql + " AS bigint)" + SQL(unsafeSQL: " \(op.rawValue) ") + "CAST(" + right.sql
                + " AS bigint))"
            return (sql, left.mayFallBack || right.mayFallBack)
        case .doubleArithmetic(let op, let lhs, let rhs), .dateArithmetic(let op, let lhs, let rhs):
            // double precision arithmetic out of range fails with SQLSTATE 22003, which sends the
            // mapping to Swift (whose result is an infinity or zero).
            guard let left = render(lhs, columns: columns), let right = render(rhs, columns: columns) else {
                return nil
            }
            let sql: SQL =
                "(CAST(" + left.sql + " AS double precision)" + SQL(unsafeSQL: " \(op.rawValue) ") + "CAST("
                + right.sql + " AS double precision))"
            return (sql, left.mayFallBack || right.mayFallBack)
        case .division(let lhs, let rhs):
            // Swift fails on a zero divisor (PostgreSQL would too, with another SQLSTATE); a
            // result out of range fails with SQLSTATE 22003. Both go to Swift.
            guard let left = render(lhs, columns: columns), let right = render(rhs, columns: columns) else {
                return nil
            }
            let divisor: SQL = "CAST(" + right.sql + " AS double precision)"
            let sql: SQL =
                "(CASE WHEN " + divisor
                + " = 0 THEN pg_temp.tern_bulk_fallback(CAST(NULL AS double precision)) ELSE CAST("
                + left.sql + " AS double precision) / " + divisor + " END)"
            return (sql, true)
        case .truncated(let inner):
            // Rounded toward zero first: the cast rounds to nearest. Outside bigint, NaN and
            // infinities fail the cast with SQLSTATE 22003, which sends the mapping to Swift.
            guard let number = render(inner, columns: columns) else { return nil }
            return ("CAST(trunc(CAST(" + number.sql + " AS double precision)) AS bigint)", true)
        case .parsedInteger(let inner):
            guard let text = render(inner, columns: columns) else { return nil }
            let integer = integerText(text.sql)
            let sql: SQL =
                "(CASE WHEN " + text.sql + " IS NULL THEN NULL WHEN " + integer.condition + " THEN CAST("
                + integer.trimmed + " AS bigint) ELSE pg_temp.tern_bulk_fallback(CAST(NULL AS bigint)) END)"
            return (sql, true)
        case .uuid:
            // Version 4, as `UUID()` makes them.
            return ("gen_random_uuid()", false)
        case .parsedDouble(let inner):
            guard let text = render(inner, columns: columns) else { return nil }
            let decimal = decimalText(text.sql)
            let sql: SQL =
                "(CASE WHEN " + text.sql + " IS NULL THEN NULL WHEN " + decimal.condition + " THEN " + decimal.value
                + " ELSE pg_temp.tern_bulk_fallback(CAST(NULL AS double precision)) END)"
            return (sql, true)
        case .parsedNumber(let inner):
            // As Swift: an integer's text first (a double once stored, so that -0 is 0.0), else a decimal.
            guard let text = render(inner, columns: columns) else { return nil }
            let (integer, decimal) = (integerText(text.sql), decimalText(text.sql))
            let sql: SQL =
                "(CASE WHEN " + text.sql + " IS NULL THEN NULL WHEN " + integer.condition + " THEN CAST(CAST("
                + integer.trimmed + " AS bigint) AS double precision) WHEN " + decimal.condition + " THEN "
                + decimal.value + " ELSE pg_temp.tern_bulk_fallback(CAST(NULL AS double precision)) END)"
            return (sql, true)
        case .now:
            // Replaced by the migration's date before rendering (`replacingNow(with:)`).
            return nil
        case .negate(let inner):
            guard let operand = render(inner, columns: columns) else { return nil }
            return ("(-CAST(" + operand.sql + " AS bigint))", operand.mayFallBack)
        case .parseDate(let inner, let format, let fields):
            guard let text = render(inner, columns: columns), let pattern = toCharFormat(strftime: format) else {
                return nil
            }
            // The fields as `YYYY-MM-DD HH:MI:SS`, a timestamp without time zone (text it cannot
            // read fails with SQLSTATE 22007 or 22008: the fallback). The date's text in the
            // format must be the text itself, so that only what formatDate writes is read here.
            let iso = BulkSourceColumns.dateText(of: text.sql, fields: fields)
            let timestamp: SQL = "CAST(" + iso + " AS timestamp)"
            let seconds: SQL = "CAST(EXTRACT(EPOCH FROM " + timestamp + ") AS double precision)"
            let sql: SQL =
                "(CASE WHEN " + text.sql + " IS NULL THEN NULL WHEN " + seconds + " BETWEEN "
                + "\(Double(formattedRange.lowerBound)) AND \(Double(formattedRange.upperBound)) AND to_char("
                + timestamp + ", \(pattern)) = " + text.sql + " THEN " + seconds + " - \(Double(referenceOffset)) ELSE "
                + "pg_temp.tern_bulk_fallback(CAST(NULL AS double precision)) END)"
            return (sql, true)
        case .formatDate(let date, let format):
            guard let pattern = toCharFormat(strftime: format), let rendered = render(date, columns: columns) else {
                return nil
            }
            let c = rendered.sql
            // As DatePattern computes fields: milliseconds since 1970 as a double, days by floor
            // division, then whole milliseconds of the day ÷ 1000, all in IEEE doubles as Swift.
            let milliseconds: SQL = "((" + c + " + \(Double(referenceOffset))) * 1000.0)"
            let days: SQL = "floor(" + milliseconds + " / 86400000.0)"
            let seconds: SQL =
                "(CAST(" + days + " AS bigint) * 86400 + CAST(trunc(" + milliseconds + " - " + days
                + " * 86400000.0) AS bigint) / 1000)"
            let fallback: SQL = "pg_temp.tern_bulk_fallback(CAST(NULL AS text))"
            // The seconds since 2001 of the formatted range, a day wider: NaN and infinities fail
            // both comparisons and go to Swift before any cast.
            let (low, high) = (
                Double(formattedRange.lowerBound - referenceOffset - 86_400),
                Double(formattedRange.upperBound - referenceOffset + 86_400)
            )
            let timestamp: SQL = "(TIMESTAMP '1970-01-01 00:00:00' + " + seconds + " * INTERVAL '1 second')"
            // DatePattern gives nil (Swift then uses DateFormatter) for a remainder outside the day.
            let remainder: SQL = "(" + milliseconds + " - " + days + " * 86400000.0)"
            let sql: SQL =
                "(CASE WHEN " + c + " IS NULL THEN NULL WHEN " + c + " >= \(low) AND " + c + " <= \(high) THEN "
                + "(CASE WHEN " + remainder + " >= 0 AND " + remainder + " < 86400000.0 AND " + seconds
                + " BETWEEN \(formattedRange.lowerBound) AND \(formattedRange.upperBound) THEN to_char(" + timestamp
                + ", \(pattern)) ELSE " + fallback + " END) ELSE " + fallback + " END)"
            return (sql, true)
        }
    }

    /// A column as the Swift reader reads it: a Boolean reads as a nonzero integer and is
    /// written as 1 or 0.
    private static func typed(_ c: SQL, _ type: AttributeType) -> SQL {
        type == .boolean ? "CAST((" + c + " <> 0) AS integer)" : c
    }

    /// The SQLSTATEs that send a mapping to Swift: a result out of range (22003), and text a
    /// timestamp cannot be read from (22007, 22008).
    static let fallbackStates: Set<String> = ["22003", "22007", "22008"]

    /// Text trimmed as Swift trims a number's text: of `CharacterSet.whitespaces`, which within
    /// ASCII is space and tab.
    private static func spaceTrimmed(_ text: SQL) -> SQL {
        "btrim(" + text + ", " + boundText(" \t") + ")"
    }

    /// When text is an integer SQL reads as `Int64` does: after space and tab, a sign and up to
    /// 18 ASCII digits (`[0-9]` is a range of code points; other text, such as a non-breaking
    /// space Swift trims, goes to Swift); and the text trimmed.
    private static func integerText(_ text: SQL) -> (condition: SQL, trimmed: SQL) {
        let trimmed = spaceTrimmed(text)
        return (trimmed + " ~ " + boundText("^[+-]?[0-9]{1,18}$"), trimmed)
    }

    /// When text is a decimal SQL reads as `Double` does (a sign, then at most 15 digits with
    /// perhaps a point among them), and its value: the digits' integer over 10^(digits after the
    /// point), both exact doubles, rounded once by the division.
    private static func decimalText(_ text: SQL) -> (condition: SQL, value: SQL) {
        let trimmed = spaceTrimmed(text)
        let body: SQL = "ltrim(" + trimmed + ", " + boundText("+-") + ")"
        let fraction: SQL =
            "(CASE WHEN strpos(" + body + ", '.') = 0 THEN '' ELSE split_part(" + body + ", '.', 2) END)"
        let digits: SQL = "replace(" + body + ", '.', '')"
        let magnitude: SQL =
            "(CAST(CAST(" + digits + " AS bigint) AS double precision) / CAST(CAST(rpad('1', char_length("
            + fraction + ") + 1, '0') AS bigint) AS double precision))"
        return (
            trimmed + " ~ " + boundText("^[+-]?[0-9]+(\\.[0-9]+)?$") + " AND char_length(" + digits + ") <= 15",
            "(CASE WHEN left(" + trimmed + ", 1) = '-' THEN -" + magnitude + " ELSE " + magnitude + " END)"
        )
    }

    /// A text value, bound.
    private static func boundText(_ text: String) -> SQL {
        "CAST(\(DatabaseValue.text(text)) AS text)"
    }

    /// `value` when `text` is ASCII, NULL for NULL, the fallback otherwise (PostgreSQL text
    /// holds no NUL, so ASCII is one byte per character).
    private static func asciiOnly(_ text: SQL, then value: SQL) -> SQL {
        "(CASE WHEN octet_length(" + text + ") = char_length(" + text + ") THEN " + value + " WHEN " + text
            + " IS NULL THEN NULL ELSE pg_temp.tern_bulk_fallback(CAST(NULL AS text)) END)"
    }

    /// The text of a value as Swift's `string()` gives it: text as is, an integer's digits, a
    /// Boolean's `true` or `false`.
    private static func textSQL(_ value: BulkMapping.Value, columns: BulkSourceColumns) -> (
        sql: SQL, mayFallBack: Bool
    )? {
        guard let rendered = render(value, columns: columns) else { return nil }
        switch value.type {
        case .boolean?:
            return ("(CASE " + rendered.sql + " WHEN 1 THEN 'true' WHEN 0 THEN 'false' END)", rendered.mayFallBack)
        case .string?:
            return rendered
        default:
            return ("CAST(" + rendered.sql + " AS text)", rendered.mayFallBack)
        }
    }

    /// A `strftime` format of ``TernMigration/BulkMapping/Value/formatDate(_:strftime:)`` as
    /// `to_char` writes it: `%Y` `YYYY`, `%m` `MM`, `%d` `DD`, `%H` `HH24`, `%M` `MI`, `%S` `SS`,
    /// `%%` a percent sign, and all other text in double quotes (a quote or backslash in it
    /// escaped with a backslash), so that none of it is read as a field; nil for another `%` field.
    static func toCharFormat(strftime format: String) -> String? {
        var result = ""
        var literal = ""
        func closeLiteral() {
            guard !literal.isEmpty else { return }
            result += "\"" + literal + "\""
            literal = ""
        }
        var characters = format.makeIterator()
        while let character = characters.next() {
            guard character == "%" else {
                if character == "\"" || character == "\\" { literal.append("\\") }
                literal.append(character)
                continue
            }
            let field: String
            switch characters.next() {
            case "%":
                literal.append("%")
                continue
            case "Y": field = "YYYY"
            case "m": field = "MM"
            case "d": field = "DD"
            case "H": field = "HH24"
            case "M": field = "MI"
            case "S": field = "SS"
            default: return nil
            }
            closeLiteral()
            result += field
        }
        closeLiteral()
        return result
    }
}
