import Foundation
import TernCore

/// Reads Foundation's archived value classes (NSNumber, NSString, NSDate, NSData, NSUUID,
/// NSURL, NSDecimalNumber) as Tern values.
enum ArchivedFoundationValue {
    /// The attribute value an archived default value stands for, or nil when there is none or
    /// Tern cannot represent it (a transformable attribute's custom object).
    ///
    /// - Throws: ``TernError`` with code `corruptArchive` for a bad reference.
    static func attributeValue(_ value: ArchivedValue, type: AttributeType) throws -> AttributeValue? {
        switch (value, type) {
        case (.null, _): return nil
        case (.integer(let number), _) where type.isInteger: return .integer(number)
        case (.bool(let flag), _) where type.isInteger: return .integer(flag ? 1 : 0)
        case (.real(let number), _) where type.isInteger: return Int64(exactly: number).map { .integer($0) }
        case (.integer(let number), .double), (.integer(let number), .float): return .double(Double(number))
        case (.real(let number), .double), (.real(let number), .float): return .double(number)
        case (.integer(let number), .decimal): return .decimal(Decimal(number))
        case (.real(let number), .decimal): return .decimal(Decimal(number))
        case (.bool(let flag), .boolean): return .bool(flag)
        case (.integer(let number), .boolean): return .bool(number != 0)
        case (.date(let date), .date): return .date(date)
        case (.data(let bytes), .binary), (.data(let bytes), .transformable): return .data(bytes)
        case (.object(let object), _): return try attributeValue(object, type: type)
        case (_, .string), (_, .uri): return try value.string().map { type == .string ? .string($0) : url($0) } ?? nil
        default: return nil
        }
    }

    /// A plain-text rendering of an archived property-list value, for user info dictionaries.
    ///
    /// - Throws: ``TernError`` with code `corruptArchive` for a bad reference.
    static func text(_ value: ArchivedValue) throws -> String {
        switch value {
        case .null: return ""
        case .bool(let flag): return flag ? "YES" : "NO"
        case .integer(let number): return String(number)
        case .real(let number): return String(number)
        case .string(let text): return text
        case .date(let date): return String(date.timeIntervalSinceReferenceDate)
        case .data(let bytes): return bytes.base64EncodedString()
        case .array: return ""
        case .object(let object): return try value.string() ?? "<\(object.className)>"
        }
    }

    // MARK: - Non public

    private static func attributeValue(_ object: ArchivedObject, type: AttributeType) throws -> AttributeValue? {
        switch type {
        case .string:
            return try ArchivedValue.object(object).string().map { .string($0) }
        case .date:
            guard case .real(let seconds) = try object.value(forKey: "NS.time") else { return nil }
            return .date(Date(timeIntervalSinceReferenceDate: seconds))
        case .binary, .transformable:
            guard object.isKind(of: "NSData"), case .data(let bytes) = try object.value(forKey: "NS.bytes") else {
                return nil
            }
            return .data(bytes)
        case .uuid:
            guard case .data(let bytes) = try object.value(forKey: "NS.uuidbytes"), bytes.count == 16 else {
                return nil
            }
            let raw = [UInt8](bytes)
            return .uuid(
                UUID(
                    uuid: (
                        raw[0], raw[1], raw[2], raw[3], raw[4], raw[5], raw[6], raw[7],
                        raw[8], raw[9], raw[10], raw[11], raw[12], raw[13], raw[14], raw[15]
                    )))
        case .uri:
            guard let relative = try object.string(forKey: "NS.relative") else { return nil }
            let base = try object.object(forKey: "NS.base").flatMap { try $0.string(forKey: "NS.relative") }
            if let base, let baseURL = URL(string: base) {
                return URL(string: relative, relativeTo: baseURL).map { .uri($0.absoluteURL) }
            }
            return url(relative)
        case .decimal:
            return try decimal(object).map { .decimal($0) }
        default:
            return nil
        }
    }

    private static func url(_ text: String) -> AttributeValue? {
        URL(string: text).map { .uri($0) }
    }

    /// An `NSDecimalNumber` archived with `NS.mantissa` (little-endian bytes), `NS.exponent` and
    /// `NS.negative`.
    private static func decimal(_ object: ArchivedObject) throws -> Decimal? {
        guard object.isKind(of: "NSDecimalNumber"), case .data(let mantissa) = try object.value(forKey: "NS.mantissa"),
            mantissa.count <= 16
        else { return nil }
        let exponent = try Int(clamping: object.integer(forKey: "NS.exponent") ?? 0)
        let isNegative = try object.bool(forKey: "NS.negative")
        var magnitude = Decimal(0)
        for byte in mantissa.reversed() {
            magnitude = magnitude * 256 + Decimal(Int(byte))
        }
        let value = Decimal(sign: isNegative ? .minus : .plus, exponent: exponent, significand: magnitude)
        return value
    }
}
