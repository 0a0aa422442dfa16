import Foundation
import TernFormats

/// A JSON value built by a command for `--json` output.
///
/// Encoded with `JSONEncoder` and `.sortedKeys`, so the same result always prints the same bytes.
///
/// ```swift
/// let document: JSONValue = ["current": .string("v2"), "versions": .array([])]
/// let text = try document.encoded()
/// ```
enum JSONValue: Sendable, Hashable {
    /// `null`.
    case null
    /// `true` or `false`.
    case bool(Bool)
    /// An integer number.
    case integer(Int64)
    /// A floating-point number; not-a-number and infinities are written as `null`.
    case double(Double)
    /// A string.
    case string(String)
    /// An array.
    case array([JSONValue])
    /// An object; keys are written sorted.
    case object([String: JSONValue])

    /// A string, or `null` when nil.
    static func string(_ value: String?) -> JSONValue {
        value.map(JSONValue.string) ?? .null
    }

    /// A date as an ISO 8601 UTC string that reads back exactly: `2011-05-09T11:30:53.000Z`, with
    /// more fractional digits when the date needs them.
    static func date(_ date: Date) -> JSONValue {
        .string(ISO8601Text.string(from: date))
    }

    // MARK: - Encoding

    /// The value as JSON text with sorted keys.
    ///
    /// - Parameter pretty: Whether to indent (for documents) or not (for one record a line).
    /// - Returns: UTF-8 JSON text without a trailing newline.
    /// - Complexity: O(*n*) in the size of the value.
    func encoded(pretty: Bool = true) -> String {
        let encoder = JSONEncoder()
        encoder.outputFormatting =
            pretty
            ? [.sortedKeys, .prettyPrinted, .withoutEscapingSlashes] : [.sortedKeys, .withoutEscapingSlashes]
        // Every case encodes: strings, numbers (non-finite become null), arrays and objects of them.
        guard let data = try? encoder.encode(self) else { return "null" }
        return String(decoding: data, as: UTF8.self)
    }

    /// Appends the value as compact JSON text with sorted keys: the text of
    /// `encoded(pretty: false)`, made without an encoder (exports write one record a line).
    ///
    /// - Parameter output: The text to extend.
    /// - Complexity: O(*n*) in the size of the value, plus sorting each object's keys.
    func append(to output: inout String) {
        switch self {
        case .null: output += "null"
        case .bool(let flag): output += flag ? "true" : "false"
        case .integer(let number): output += String(number)
        case .double(let number): output += number.isFinite ? encoded(pretty: false) : "null"
        case .string(let text): Self.appendQuoted(text, to: &output)
        case .array(let elements):
            output += "["
            for (index, element) in elements.enumerated() {
                if index > 0 { output += "," }
                element.append(to: &output)
            }
            output += "]"
        case .object(let members):
            output += "{"
            for (index, key) in members.keys.sorted().enumerated() {
                if index > 0 { output += "," }
                Self.appendQuoted(key, to: &output)
                output += ":"
                members[key]?.append(to: &output)
            }
            output += "}"
        }
    }

    /// Appends a JSON string literal as `JSONEncoder` writes it: `"` and `\` escaped, `\b`,
    /// `\t`, `\n`, `\f`, `\r` for those controls, `\u00xx` for the other controls, and
    /// everything else (slashes included) as it is.
    static func appendQuoted(_ text: String, to output: inout String) {
        output += "\""
        guard text.utf8.contains(where: { $0 < 0x20 || $0 == 0x22 || $0 == 0x5C }) else {
            output += text
            output += "\""
            return
        }
        for scalar in text.unicodeScalars {
            switch scalar {
            case "\"": output += "\\\""
            case "\\": output += "\\\\"
            case "\u{8}": output += "\\b"
            case "\t": output += "\\t"
            case "\n": output += "\\n"
            case "\u{c}": output += "\\f"
            case "\r": output += "\\r"
            case _ where scalar.value < 0x20:
                let hex = String(scalar.value, radix: 16)
                output += "\\u" + String(repeating: "0", count: 4 - hex.count) + hex
            default: output.unicodeScalars.append(scalar)
            }
        }
        output += "\""
    }
}

extension JSONValue: Encodable {
    /// Encodes the value as the JSON it stands for.
    func encode(to encoder: any Encoder) throws {
        switch self {
        case .object(let members):
            var container = encoder.container(keyedBy: MemberKey.self)
            for (key, value) in members { try container.encode(value, forKey: MemberKey(key)) }
        case .array(let elements):
            var container = encoder.unkeyedContainer()
            for element in elements { try container.encode(element) }
        default:
            var container = encoder.singleValueContainer()
            switch self {
            case .null: try container.encodeNil()
            case .bool(let value): try container.encode(value)
            case .integer(let value): try container.encode(value)
            case .double(let value) where value.isFinite: try container.encode(value)
            case .double: try container.encodeNil()
            case .string(let value): try container.encode(value)
            case .array, .object: preconditionFailure("handled above")
            }
        }
    }

    /// A coding key for any object member name.
    private struct MemberKey: CodingKey {
        var stringValue: String
        var intValue: Int? { nil }
        init(_ string: String) { stringValue = string }
        init?(stringValue: String) { self.stringValue = stringValue }
        init?(intValue: Int) { nil }
    }
}

extension JSONValue: ExpressibleByDictionaryLiteral {
    /// An object from a literal.
    init(dictionaryLiteral elements: (String, JSONValue)...) {
        self = .object(Dictionary(elements, uniquingKeysWith: { _, last in last }))
    }
}

extension JSONValue: ExpressibleByArrayLiteral {
    /// An array from a literal.
    init(arrayLiteral elements: JSONValue...) {
        self = .array(elements)
    }
}
