import Foundation
import TernCore
import TernFormats

extension CoreDataMapping {
    /// The `type` spelling Core Data writes for an attribute type; nil for types that are never
    /// stored (undefined, object ID, composite).
    static func spelling(of type: AttributeType) -> String? {
        typealias Spelling = CoreDataXMLDocument.AttributeType
        return switch type {
        case .integer16: Spelling.integer16
        case .integer32: Spelling.integer32
        case .integer64: Spelling.integer64
        case .decimal: Spelling.decimal
        case .double: Spelling.double
        case .float: Spelling.float
        case .string: Spelling.string
        case .boolean: Spelling.boolean
        case .date: Spelling.date
        case .binary: Spelling.binary
        case .transformable: Spelling.transformable
        case .uuid: Spelling.uuid
        case .uri: Spelling.uri
        default: nil
        }
    }

    /// The spelling for a value when no model says: the widest type of its kind.
    static func spelling(of value: AttributeValue) -> String {
        typealias Spelling = CoreDataXMLDocument.AttributeType
        return switch value {
        case .integer: Spelling.integer64
        case .double: Spelling.double
        case .decimal: Spelling.decimal
        case .string: Spelling.string
        case .bool: Spelling.boolean
        case .date: Spelling.date
        case .data: Spelling.binary
        case .uuid: Spelling.uuid
        case .uri: Spelling.uri
        }
    }

    /// A value as Core Data writes its text: integers in decimal, Booleans `1` or `0`, dates as
    /// seconds since 2001 with 20 decimals, binary data in base64 broken after its first 76
    /// characters and ended by a line feed. Numbers Core Data would round are written with all
    /// the digits needed to read them back exactly.
    static func text(of value: AttributeValue) -> String {
        switch value {
        case .integer(let number): String(number)
        case .double(let number): text(ofDouble: number)
        case .decimal(let number): number.isNaN ? "NaN" : number.description
        case .string(let text): text
        case .bool(let flag): flag ? "1" : "0"
        case .date(let date): text(ofDate: date.timeIntervalSinceReferenceDate)
        case .data(let bytes): base64Text(bytes)
        case .uuid(let uuid): uuid.uuidString
        case .uri(let url): url.absoluteString
        }
    }

    /// A value read from an attribute's text as an attribute of `type`: Core Data reads by the
    /// model's type, whatever the file's `type` says; nil when the text does not fit it.
    static func value(of text: String, as type: AttributeType, spelled spelling: String) -> AttributeValue? {
        let trimmed = text.trimmingCharacters(in: .whitespacesAndNewlines)
        switch type {
        case .integer16, .integer32, .integer64:
            if let number = Int64(trimmed) { return .integer(number) }
            // A Boolean or a real written for an integer attribute.
            if let flag = boolean(trimmed) { return .integer(flag ? 1 : 0) }
            guard let real = Double(trimmed), real.rounded() == real, abs(real) < 9.2e18 else { return nil }
            return .integer(Int64(real))
        case .decimal:
            if trimmed == "NaN" { return .decimal(.nan) }
            return Decimal(string: trimmed, locale: Locale(identifier: "en_US_POSIX")).map(AttributeValue.decimal)
        case .double, .float: return Double(trimmed).map(AttributeValue.double)
        case .string: return .string(text)
        case .boolean: return boolean(trimmed).map(AttributeValue.bool)
        case .date: return Double(trimmed).map { .date(Date(timeIntervalSinceReferenceDate: $0)) }
        case .binary, .transformable:
            let compact = text.filter { !$0.isWhitespace }
            return compact.isEmpty ? .data(Data()) : Data(base64Encoded: compact).map(AttributeValue.data)
        case .uuid: return UUID(uuidString: trimmed).map(AttributeValue.uuid)
        case .uri: return URL(string: trimmed).map(AttributeValue.uri)
        default:
            // No model type to read by: the file's spelling says.
            guard let written = attributeType(spelled: spelling), written != type else { return nil }
            return value(of: text, as: written, spelled: spelling)
        }
    }

    // MARK: - Non public

    /// The attribute type a `type` spelling names.
    private static func attributeType(spelled spelling: String) -> AttributeType? {
        let types: [AttributeType] = [
            .integer16, .integer32, .integer64, .decimal, .double, .float, .string, .boolean, .date, .binary,
            .transformable, .uuid, .uri,
        ]
        return types.first { self.spelling(of: $0) == spelling }
    }

    /// `1`/`0`, `true`/`false`, `YES`/`NO` (any case), or any integer (not zero is true).
    private static func boolean(_ text: String) -> Bool? {
        switch text.lowercased() {
        case "1", "true", "yes": return true
        case "0", "false", "no": return false
        default: return Int64(text).map { $0 != 0 }
        }
    }

    /// Shortest digits that read back exactly; integral values without a fraction, as
    /// `NSNumber` writes them.
    private static func text(ofDouble number: Double) -> String {
        if number.isNaN { return "nan" }
        if number.isInfinite { return number < 0 ? "-inf" : "inf" }
        if number == number.rounded(), abs(number) < 1e15 {
            return number.sign == .minus && number == 0 ? "-0" : String(Int64(number))
        }
        return "\(number)"
    }

    /// Seconds since 2001 with 20 decimals (`336046917.00164198875427246094`), as Core Data
    /// writes dates; the shortest exact digits when those 20 decimals would round the value.
    private static func text(ofDate interval: Double) -> String {
        guard interval.isFinite else { return interval.isNaN ? "nan" : interval < 0 ? "-inf" : "inf" }
        let fixed = String(format: "%.20f", interval)
        return Double(fixed) == interval ? fixed : "\(interval)"
    }

    /// Base64 laid out as Core Data writes binary attributes: a line feed after the first 76
    /// characters and one at the end.
    private static func base64Text(_ bytes: Data) -> String {
        let encoded = bytes.base64EncodedString()
        guard !encoded.isEmpty else { return "" }
        guard encoded.utf8.count > 76 else { return encoded + "\n" }
        let split = encoded.index(encoded.startIndex, offsetBy: 76)
        return encoded[..<split] + "\n" + encoded[split...] + "\n"
    }
}
