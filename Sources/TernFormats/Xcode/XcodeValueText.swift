import Foundation
import TernCore

/// The text forms Xcode uses for attribute values in `contents`: `defaultValueString`,
/// `minValueString`, `maxValueString` and the `…DateTimeInterval` attributes.
enum XcodeValueText {
    /// Why a text could not be read as a value.
    struct Failure: Error {
        /// What is wrong, for an error message (never the value itself).
        var reason: String
    }

    // MARK: - Reading

    /// Reads a `defaultValueString` for an attribute of `type`.
    ///
    /// - Returns: The value, or nil for types whose defaults Xcode cannot express in text
    ///   (binary, transformable, object IDs, composites), which are ignored.
    static func defaultValue(_ text: String, for type: AttributeType) throws(Failure) -> AttributeValue? {
        switch type {
        case .integer16, .integer32, .integer64, .decimal, .double, .float:
            return try number(text, for: type)
        case .string, .undefined:
            return .string(text)
        case .boolean:
            switch text.trimmingCharacters(in: .whitespaces).uppercased() {
            case "YES", "TRUE", "1": return .bool(true)
            case "NO", "FALSE", "0": return .bool(false)
            default: throw Failure(reason: "is not YES or NO")
            }
        case .date:
            return .date(Date(timeIntervalSinceReferenceDate: try interval(text)))
        case .uuid:
            guard let uuid = UUID(uuidString: text.trimmingCharacters(in: .whitespaces)) else {
                throw Failure(reason: "is not a UUID")
            }
            return .uuid(uuid)
        case .uri:
            guard let url = URL(string: text) else { throw Failure(reason: "is not a URI") }
            return .uri(url)
        case .binary, .transformable, .objectID, .composite:
            return nil
        }
    }

    /// Reads a `minValueString` or `maxValueString`: a number for numeric attributes, a length
    /// for strings and binary data.
    static func bound(_ text: String, for type: AttributeType) throws(Failure) -> AttributeValue? {
        if type.isNumeric { return try number(text, for: type) }
        guard let length = Int64(text.trimmingCharacters(in: .whitespaces)), length >= 0 else {
            throw Failure(reason: "is not a length (a whole number of at least 0)")
        }
        return .integer(length)
    }

    /// Reads a `…DateTimeInterval`: seconds since 2001-01-01 00:00:00 UTC.
    static func interval(_ text: String) throws(Failure) -> TimeInterval {
        guard let seconds = Double(text.trimmingCharacters(in: .whitespaces)), seconds.isFinite else {
            throw Failure(reason: "is not a number of seconds")
        }
        return seconds
    }

    /// Reads a number for a numeric attribute, checking that integers fit their width.
    static func number(_ text: String, for type: AttributeType) throws(Failure) -> AttributeValue {
        let trimmed = text.trimmingCharacters(in: .whitespaces)
        switch type {
        case .integer16, .integer32, .integer64:
            let value: Int64
            if let integer = Int64(trimmed) {
                value = integer
            } else if let real = Double(trimmed), real.rounded() == real, let integer = Int64(exactly: real) {
                value = integer
            } else {
                throw Failure(reason: "is not a whole number")
            }
            let range = integerRange(of: type)
            guard range.contains(value) else { throw Failure(reason: "does not fit \(type.xcodeName)") }
            return .integer(value)
        case .decimal:
            guard Double(trimmed) != nil, let decimal = Decimal(string: trimmed, locale: posixLocale) else {
                throw Failure(reason: "is not a decimal number")
            }
            return .decimal(decimal)
        default:
            guard let real = Double(trimmed), real.isFinite else { throw Failure(reason: "is not a finite number") }
            return .double(real)
        }
    }

    // MARK: - Writing

    /// The text of a value in a `defaultValueString`, `minValueString` or `maxValueString`.
    ///
    /// - Returns: nil for values that have no text form in Xcode's files (bytes).
    static func text(of value: AttributeValue) -> String? {
        switch value {
        case .integer(let integer): return String(integer)
        case .double(let real): return String(real)
        case .decimal(let decimal): return decimal.description
        case .string(let string): return string
        case .bool(let flag): return flag ? "YES" : "NO"
        case .date(let date): return intervalText(date.timeIntervalSinceReferenceDate)
        case .uuid(let uuid): return uuid.uuidString
        case .uri(let url): return url.absoluteString
        case .data: return nil
        }
    }

    /// The text of a `…DateTimeInterval`: whole seconds without a fraction, like Xcode.
    static func intervalText(_ seconds: TimeInterval) -> String {
        if seconds.rounded() == seconds, let whole = Int64(exactly: seconds) { return String(whole) }
        return String(seconds)
    }

    // MARK: - Non public

    private static let posixLocale = Locale(identifier: "en_US_POSIX")

    private static func integerRange(of type: AttributeType) -> ClosedRange<Int64> {
        switch type {
        case .integer16: Int64(Int16.min)...Int64(Int16.max)
        case .integer32: Int64(Int32.min)...Int64(Int32.max)
        default: Int64.min...Int64.max
        }
    }
}
