import Foundation
import Synchronization
public import TernCore

/// The conversions of the expression language's functions, and of values stored into attributes.
enum ValueConversion {
    /// Applies a scalar function to evaluated arguments.
    static func apply(_ function: ValueExpression.Function, _ values: [AttributeValue?]) throws(MigrationError)
        -> AttributeValue?
    {
        let first = values.first ?? nil
        switch function {
        case .concat:
            return .string(values.compactMap { $0.map(text) }.joined())
        case .formatDate, .parseDate:
            guard let first else { return nil }
            guard case .string(let format)? = values[1] else {
                throw MigrationError(.evaluationFailed, "\(function.rawValue) needs a date format as text")
            }
            if function == .formatDate {
                guard case .date(let date) = first else { throw wrongType(function, "a date") }
                return .string(withDateFormatter(format) { $0.string(from: date) })
            }
            guard case .string(let text) = first else { throw wrongType(function, "text") }
            guard let date = withDateFormatter(format, { $0.date(from: text) }) else {
                throw MigrationError(.evaluationFailed, "parseDate could not read the text in the format given")
            }
            return .date(date)
        default:
            guard let first else { return nil }
            return try convert(function, first)
        }
    }

    /// Applies a one-argument conversion to a non-nil value.
    private static func convert(_ function: ValueExpression.Function, _ value: AttributeValue) throws(MigrationError)
        -> AttributeValue
    {
        switch function {
        case .string:
            return .string(text(value))
        case .number:
            if case .string(let text) = value {
                let trimmed = text.trimmingCharacters(in: .whitespaces)
                if let integer = Int64(trimmed) { return .integer(integer) }
                guard let number = Double(trimmed) else { throw unreadable(function) }
                return .double(number)
            }
            if value.isNumber { return value }
            guard let number = double(value) else { throw wrongType(function, "a number, text, a Boolean or a date") }
            return .double(number)
        case .integer:
            if case .integer = value { return value }
            if case .bool(let flag) = value { return .integer(flag ? 1 : 0) }
            if case .string(let text) = value, let integer = Int64(text.trimmingCharacters(in: .whitespaces)) {
                return .integer(integer)
            }
            guard let number = double(value) else {
                throw value.isText ? unreadable(function) : wrongType(function, "a number, text, a Boolean or a date")
            }
            guard number.isFinite, let integer = Int64(exactly: number.rounded(.towardZero)) else {
                throw MigrationError(.evaluationFailed, "integer() got a number that does not fit in 64 bits")
            }
            return .integer(integer)
        case .double:
            guard let number = double(value) else {
                throw value.isText ? unreadable(function) : wrongType(function, "a number, text, a Boolean or a date")
            }
            return .double(number)
        case .date:
            if case .date = value { return value }
            if case .string(let text) = value {
                guard let date = isoDate(text) else { throw unreadable(function) }
                return .date(date)
            }
            guard value.isNumber, let seconds = double(value) else { throw wrongType(function, "a number of seconds") }
            return .date(Date(timeIntervalSinceReferenceDate: seconds))
        case .timeInterval:
            guard case .date(let date) = value else { throw wrongType(function, "a date") }
            return .double(date.timeIntervalSinceReferenceDate)
        case .lowercase, .uppercase, .trim:
            guard case .string(let text) = value else { throw wrongType(function, "text") }
            switch function {
            case .lowercase: return .string(text.lowercased())
            case .uppercase: return .string(text.uppercased())
            default: return .string(text.trimmingCharacters(in: .whitespacesAndNewlines))
            }
        default:
            return value
        }
    }

    // MARK: - Shared conversions

    /// The text form of a value: ISO 8601 for dates, base64 for data, the canonical form otherwise.
    static func text(_ value: AttributeValue) -> String {
        switch value {
        case .integer(let number): String(number)
        case .double(let number): String(number)
        case .decimal(let number): number.description
        case .string(let text): text
        case .bool(let flag): flag ? "true" : "false"
        case .date(let date): date.ISO8601Format(Date.ISO8601FormatStyle(includingFractionalSeconds: true))
        case .data(let data): data.base64EncodedString()
        case .uuid(let uuid): uuid.uuidString
        case .uri(let url): url.absoluteString
        }
    }

    /// A value as a double: numbers, Booleans (0 or 1), dates (seconds since 2001) and numeric text.
    static func double(_ value: AttributeValue) -> Double? {
        switch value {
        case .integer(let number): Double(number)
        case .double(let number): number
        case .decimal(let number): NSDecimalNumber(decimal: number).doubleValue
        case .bool(let flag): flag ? 1 : 0
        case .date(let date): date.timeIntervalSinceReferenceDate
        case .string(let text): Double(text.trimmingCharacters(in: .whitespaces))
        default: nil
        }
    }

    /// A number as a decimal.
    static func decimal(_ value: AttributeValue) -> Decimal? {
        switch value {
        case .integer(let number): Decimal(number)
        case .decimal(let number): number
        case .double(let number): number.isFinite ? Decimal(number) : nil
        case .string(let text):
            Decimal(string: text.trimmingCharacters(in: .whitespaces), locale: Locale(identifier: "en_US_POSIX"))
        default: nil
        }
    }

    /// A date read from ISO 8601 text, with or without fractional seconds.
    static func isoDate(_ text: String) -> Date? {
        if let date = try? Date.ISO8601FormatStyle(includingFractionalSeconds: true).parse(text) { return date }
        return try? Date.ISO8601FormatStyle().parse(text)
    }

    /// A formatter for an explicit format, in UTC with the POSIX locale.
    static func dateFormatter(_ format: String) -> DateFormatter {
        let formatter = DateFormatter()
        formatter.locale = Locale(identifier: "en_US_POSIX")
        formatter.timeZone = TimeZone(identifier: "UTC")
        formatter.calendar = Calendar(identifier: .gregorian)
        formatter.dateFormat = format
        return formatter
    }

    /// Calls `body` with the cached formatter of a format: making a `DateFormatter` costs far
    /// more than using one, and a migration formats one date per object.
    static func withDateFormatter<Result: Sendable>(_ format: String, _ body: (DateFormatter) -> Result) -> Result {
        formatters.withLock { cache in
            let formatter = cache[format] ?? dateFormatter(format)
            if cache[format] == nil { cache[format] = formatter }
            return body(formatter)
        }
    }

    // MARK: - Non public

    /// The formatters made so far, by format; used under the lock only, one call at a time.
    private static let formatters = Mutex<[String: DateFormatter]>([:])

    private static func wrongType(_ function: ValueExpression.Function, _ expected: String) -> MigrationError {
        MigrationError(.evaluationFailed, "\(function.rawValue)() needs \(expected)")
    }

    private static func unreadable(_ function: ValueExpression.Function) -> MigrationError {
        MigrationError(.evaluationFailed, "\(function.rawValue)() could not read the text as a value of its type")
    }
}

extension AttributeValue {
    /// Whether the value is text.
    var isText: Bool {
        if case .string = self { return true }
        return false
    }

    // MARK: - Converting for storage

    /// The value converted for an attribute of another type, as a migration stores it.
    ///
    /// Numbers convert between integer, floating-point and decimal types: an integer keeps its
    /// value in any integer type, as Core Data's SQLite stores keep 64 bits whatever the width; a
    /// floating-point or decimal number is truncated toward zero and must fit the type's range. A
    /// Boolean converts to 0 or 1, and an integer to a Boolean that is true unless it is 0. Any other change of family is an error:
    /// convert explicitly with a value expression function.
    ///
    /// ```swift
    /// try AttributeValue.integer(3).converted(to: .double)   // .double(3)
    /// ```
    ///
    /// - Parameter type: The destination attribute's type.
    /// - Returns: The converted value.
    /// - Throws: ``MigrationError`` with code ``MigrationError/Code/evaluationFailed`` when the
    ///   value does not convert; the message names the types, never the value.
    public func converted(to type: AttributeType) throws(MigrationError) -> AttributeValue {
        // An integer keeps its value in a narrower integer type, as Core Data's SQLite stores keep
        // every integer in 64 bits (the plan counts the values the type cannot hold).
        if fits(type) { return self }
        switch type {
        case .integer16, .integer32, .integer64:
            guard isNumber || self == .bool(true) || self == .bool(false), let number = ValueConversion.double(self),
                number.isFinite, let integer = Int64(exactly: number.rounded(.towardZero)),
                type.integerRange.contains(integer)
            else { throw outOfRange(type) }
            return .integer(integer)
        case .double, .float:
            guard isNumber || self == .bool(true) || self == .bool(false), let number = ValueConversion.double(self)
            else { break }
            return .double(number)
        case .decimal:
            guard isNumber, let number = ValueConversion.decimal(self) else { break }
            return .decimal(number)
        case .boolean:
            guard case .integer(let number) = self else { break }
            return .bool(number != 0)
        default:
            break
        }
        throw MigrationError(
            .evaluationFailed,
            "A value of another kind cannot be stored in a \(type.xcodeName) attribute; convert it in the expression")
    }

    private func outOfRange(_ type: AttributeType) -> MigrationError {
        MigrationError(.evaluationFailed, "The value does not fit in a \(type.xcodeName) attribute")
    }
}

extension AttributeType {
    /// The values an integer type holds; every value for other types.
    var integerRange: ClosedRange<Int64> {
        switch self {
        case .integer16: Int64(Int16.min)...Int64(Int16.max)
        case .integer32: Int64(Int32.min)...Int64(Int32.max)
        default: Int64.min...Int64.max
        }
    }
}
