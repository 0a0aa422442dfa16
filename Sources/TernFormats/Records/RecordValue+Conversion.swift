import Foundation
public import TernCore

extension RecordValue {
    /// Converts the value to an attribute's type.
    ///
    /// Text forms: integers and doubles in decimal; decimals as digits (or `NaN`, not a number); Booleans `true`/`false`,
    /// `YES`/`NO`, `1`/`0` (any case); dates ISO 8601 (fractional seconds optional) or seconds since
    /// 2001-01-01 as a number; binary data base64; UUIDs canonical; URIs absolute. ``null`` (an
    /// empty field) is nil.
    ///
    /// - Parameter type: The attribute's type.
    /// - Returns: The value, `.some(nil)` for no value, or nil when the value does not convert.
    public func attributeValue(for type: AttributeType) -> AttributeValue?? {
        let text: String
        switch self {
        case .null: return .some(nil)
        case .text(let string): text = string
        case .number(let string): text = string
        case .bool(let flag):
            return type == .boolean ? .bool(flag) : nil
        case .list, .record: return nil
        }
        let converted: AttributeValue?
        switch type {
        case .integer16: converted = Int16(text).map { .integer(Int64($0)) }
        case .integer32: converted = Int32(text).map { .integer(Int64($0)) }
        case .integer64: converted = Int64(text).map { .integer($0) }
        case .double, .float: converted = Double(text).map { .double($0) }
        case .decimal where text.caseInsensitiveCompare("NaN") == .orderedSame:
            converted = .decimal(.nan)
        case .decimal:
            let isNumber = !text.isEmpty && text.allSatisfy { "0123456789.-+eE".contains($0) }
            converted =
                isNumber ? Decimal(string: text, locale: Locale(identifier: "en_US_POSIX")).map { .decimal($0) } : nil
        case .string: converted = .string(text)
        case .boolean:
            switch text.lowercased() {
            case "true", "yes", "1": converted = .bool(true)
            case "false", "no", "0": converted = .bool(false)
            default: converted = nil
            }
        case .date: converted = Self.date(from: text).map { .date($0) }
        case .binary, .transformable: converted = Data(base64Encoded: text).map { .data($0) }
        case .uuid: converted = UUID(uuidString: text).map { .uuid($0) }
        case .uri: converted = URL(string: text).flatMap { $0.scheme == nil ? nil : .uri($0) }
        case .undefined, .objectID, .composite: converted = nil
        }
        return converted.map { .some($0) }
    }

    /// A date from ISO 8601 text, or from a number of seconds since 2001-01-01 00:00:00 UTC.
    ///
    /// ISO 8601 text with any number of fractional digits reads back exactly what
    /// ``ISO8601Text/string(from:)`` wrote; other ISO 8601 forms go through Foundation's parser.
    static func date(from text: String) -> Date? {
        if let seconds = Double(text) { return Date(timeIntervalSinceReferenceDate: seconds) }
        if let date = ISO8601Text.date(from: text) { return date }
        if let date = try? Date.ISO8601FormatStyle(includingFractionalSeconds: true).parse(text) { return date }
        return try? Date.ISO8601FormatStyle().parse(text)
    }
}
