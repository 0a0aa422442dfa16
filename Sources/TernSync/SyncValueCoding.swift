import Foundation
import TernCore
import TernPostgreSQL

/// The text form of attribute values on the sync server: a one-letter tag and the value,
/// exact for every type (doubles and dates by their bit patterns).
enum SyncValueCoding {
    /// A value's text.
    static func encode(_ value: AttributeValue) -> String {
        switch value {
        case .integer(let number): "i" + String(number)
        case .double(let number): "f" + String(number.bitPattern)
        case .decimal(let number): "n" + number.description
        case .string(let text): "s" + text
        case .bool(let flag): flag ? "b1" : "b0"
        case .date(let date): "t" + String(date.timeIntervalSinceReferenceDate.bitPattern)
        case .data(let bytes): "x" + bytes.base64EncodedString()
        case .uuid(let identifier): "u" + identifier.uuidString
        case .uri(let url): "r" + url.absoluteString
        }
    }

    /// The value a text stands for, or nil when it does not read.
    static func decode(_ text: String) -> AttributeValue? {
        guard let tag = text.first else { return nil }
        let body = String(text.dropFirst())
        switch tag {
        case "i": return Int64(body).map(AttributeValue.integer)
        case "f": return UInt64(body).map { .double(Double(bitPattern: $0)) }
        case "n": return Decimal(string: body, locale: Locale(identifier: "en_US_POSIX")).map(AttributeValue.decimal)
        case "s": return .string(body)
        case "b": return .bool(body == "1")
        case "t": return UInt64(body).map { .date(Date(timeIntervalSinceReferenceDate: Double(bitPattern: $0))) }
        case "x": return Data(base64Encoded: body).map(AttributeValue.data)
        case "u": return UUID(uuidString: body).map(AttributeValue.uuid)
        case "r": return URL(string: body).map(AttributeValue.uri)
        default: return nil
        }
    }

    /// A property's value from its server text.
    static func value(_ text: String?, kind: SyncWriteConflict.Kind) -> SyncConflict.Value {
        switch kind {
        case .attribute: .attribute(text.flatMap(decode))
        case .toOne: .toOne(text.flatMap(UUID.init(uuidString:)))
        case .toMany: .toMany((text ?? "").split(separator: ",").compactMap { UUID(uuidString: String($0)) })
        }
    }

    /// A property's server text.
    static func text(of value: SyncConflict.Value) -> String? {
        switch value {
        case .attribute(let value): value.map(encode)
        case .toOne(let identifier): identifier?.uuidString
        case .toMany(let identifiers): identifiers.map(\.uuidString).joined(separator: ",")
        }
    }
}
