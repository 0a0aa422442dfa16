import Foundation
import TernCore

/// The text forms Xcode uses for attribute values in `contents`: `defaultValueString`,
/// `minValueString`, `maxValueString` and the `…DateTimeInterval` attributes.
enum XcodeValueText {
    /// A value read from text, and how it was read when the text was not a clean value of its type.
    struct Reading<Value> {
        /// The value, or nil when the text gives none (it was ignored, or the type has no text form).
        var value: Value?
        /// How the text was read when a lenient rule changed or dropped something, for a warning
        /// (`read as 0, as momc reads it`, `ignored: it is not a UUID`); nil for a clean value.
        var leniency: String?

        /// A clean value.
        init(_ value: Value?) {
            self.value = value
        }

        /// A value read leniently.
        init(_ value: Value?, leniency: String?) {
            self.value = value
            self.leniency = leniency
        }

        /// Nothing: the text was ignored, for the reason given (`it is not a UUID`).
        static func ignored(_ reason: String) -> Reading { Reading(nil, leniency: "ignored: " + reason) }
    }

    // MARK: - Reading

    /// Reads a `defaultValueString` for an attribute of `type`, as `momc` reads it: numbers with
    /// `integerValue`, `doubleValue` or `NSDecimalNumber(string:)`, Booleans with `boolValue`,
    /// dates as the text Xcode writes (`2013-04-23 12:00:00 +0000`) or a number of seconds since
    /// 2001 (a date's `defaultDateTimeInterval`, when present, is read instead).
    ///
    /// - Returns: The value, or none for texts that give no value of the type (a UUID that is
    ///   not one) and for types whose defaults Xcode cannot express in text (binary,
    ///   transformable, object IDs, composites).
    /// - Complexity: O(*n*) in the length of the text.
    static func defaultValue(_ text: String, for type: AttributeType) -> Reading<AttributeValue> {
        switch type {
        case .integer16, .integer32, .integer64, .decimal, .double, .float:
            return number(text, for: type)
        case .string, .undefined:
            return Reading(.string(text))
        case .boolean:
            let flag = FoundationText.boolValue(text)
            return Reading(
                .bool(flag),
                leniency: FoundationText.isExactBool(text) ? nil : "read as \(flag ? "YES" : "NO")" + asMomc)
        case .date:
            if let date = dateText(text) { return Reading(.date(date)) }
            let seconds = interval(text)
            guard let value = seconds.value else {
                return .ignored(
                    "it is neither a date (like 2013-04-23 12:00:00 +0000) nor a number of seconds since 2001")
            }
            return Reading(.date(Date(timeIntervalSinceReferenceDate: value)), leniency: seconds.leniency)
        case .uuid:
            guard let uuid = UUID(uuidString: text.trimmingCharacters(in: .whitespacesAndNewlines)) else {
                return .ignored("it is not a UUID")
            }
            return Reading(.uuid(uuid))
        case .uri:
            let trimmed = text.trimmingCharacters(in: .whitespacesAndNewlines)
            guard let url = URL(string: trimmed) else { return .ignored("it is not a URI") }
            return Reading(.uri(url), leniency: url.absoluteString == trimmed ? nil : "read as \(url.absoluteString)")
        case .binary, .transformable, .objectID, .composite:
            return .ignored("\(type.xcodeName) attributes have no default value in text")
        }
    }

    /// Reads a `minValueString` or `maxValueString`: a number for numeric attributes, a length
    /// for strings and binary data, as `momc` reads them.
    ///
    /// - Returns: The bound, or none when the text gives none (a negative length, a decimal
    ///   that is not a number).
    /// - Complexity: O(*n*) in the length of the text.
    static func bound(_ text: String, for type: AttributeType) -> Reading<AttributeValue> {
        if type.isNumeric { return number(text, for: type) }
        let (length, isExact) = FoundationText.integerValue(text)
        guard length >= 0 else { return .ignored("a length cannot be negative") }
        return Reading(.integer(length), leniency: isExact ? nil : "read as \(length)" + asMomc)
    }

    /// Reads a `…DateTimeInterval` (or a date's `defaultValueString`): seconds since
    /// 2001-01-01 00:00:00 UTC, as `doubleValue` reads them.
    ///
    /// - Returns: The seconds, or none when the text starts with no finite number: reading it
    ///   as 0 would invent a date.
    /// - Complexity: O(*n*) in the length of the text.
    static func interval(_ text: String) -> Reading<TimeInterval> {
        guard !FoundationText.scan(text, real: true).number.isEmpty else {
            return .ignored("it is not a number of seconds since 2001")
        }
        let (seconds, isExact) = FoundationText.doubleValue(text)
        guard seconds.isFinite else { return .ignored("the number of seconds is too large") }
        return Reading(seconds, leniency: isExact ? nil : "read as \(intervalText(seconds)) seconds" + asMomc)
    }

    /// Reads a date in the text form Xcode shows and writes beside `defaultDateTimeInterval`
    /// (`2013-04-23 12:00:00 +0000`, `NSDate`'s description).
    ///
    /// - Returns: The date, or nil when the text is not in that form.
    static func dateText(_ text: String) -> Date? {
        let formatter = DateFormatter()
        formatter.locale = Locale(identifier: "en_US_POSIX")
        formatter.dateFormat = "yyyy-MM-dd HH:mm:ss Z"
        return formatter.date(from: text.trimmingCharacters(in: .whitespacesAndNewlines))
    }

    /// Reads a relationship's `minCount` or `maxCount`, as `integerValue` reads it.
    ///
    /// - Complexity: O(*n*) in the length of the text.
    static func count(_ text: String) -> Reading<Int> {
        let (count, isExact) = FoundationText.integerValue(text)
        let value = Int(clamping: count)
        return Reading(value, leniency: isExact ? nil : "read as \(value)" + asMomc)
    }

    /// Reads a number for a numeric attribute as `momc` does, clamping integers to their width.
    ///
    /// - Complexity: O(*n*) in the length of the text.
    static func number(_ text: String, for type: AttributeType) -> Reading<AttributeValue> {
        switch type {
        case .integer16, .integer32, .integer64:
            let (value, isExact) = FoundationText.integerValue(text)
            let range = integerRange(of: type)
            let clamped = min(max(value, range.lowerBound), range.upperBound)
            guard clamped == value else {
                let extreme = "the \(clamped > 0 ? "largest" : "smallest") value of an \(type.xcodeName) attribute"
                return Reading(.integer(clamped), leniency: "read as \(clamped), \(extreme)")
            }
            return Reading(.integer(value), leniency: isExact ? nil : "read as \(value)" + asMomc)
        case .decimal:
            let (value, isExact) = FoundationText.decimalValue(text)
            guard let value else { return .ignored("it is not a number (momc reads it as NaN)") }
            return Reading(.decimal(value), leniency: isExact ? nil : "read as \(value)" + asMomc)
        default:
            let (value, isExact) = FoundationText.doubleValue(text)
            let shown = value.isInfinite ? (value > 0 ? "infinity" : "minus infinity") : String(value)
            return Reading(.double(value), leniency: isExact ? nil : "read as \(shown)" + asMomc)
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

    /// How warnings credit a lenient reading.
    private static let asMomc = ", as momc reads it"

    private static func integerRange(of type: AttributeType) -> ClosedRange<Int64> {
        switch type {
        case .integer16: Int64(Int16.min)...Int64(Int16.max)
        case .integer32: Int64(Int32.min)...Int64(Int32.max)
        default: Int64.min...Int64.max
        }
    }
}
