import Foundation
import TernCore
import TernFormats

/// The bytes of exported records, written straight into one buffer: the text
/// ``RecordFormat`` defines, without a `String` or a `JSONValue` per value.
///
/// ```swift
/// var writer = RecordWriter()
/// writer.appendQuoted("Car")                       // "Car" with its quotes
/// writer.appendJSON(.integer(-3))                  // -3
/// try writer.flush(to: handle)
/// ```
struct RecordWriter {
    /// The bytes not yet written out.
    private(set) var bytes: [UInt8] = []

    /// The written text, for tests.
    var text: String { String(decoding: bytes, as: UTF8.self) }

    /// Writes the bytes to a file and empties the buffer, keeping its room.
    ///
    /// - Parameter handle: The file.
    /// - Throws: Any error of writing.
    mutating func flush(to handle: FileHandle) throws {
        guard !bytes.isEmpty else { return }
        try handle.write(contentsOf: bytes)
        bytes.removeAll(keepingCapacity: true)
    }

    // MARK: - Text

    /// Appends text as it is.
    mutating func append(_ text: String) {
        bytes.append(contentsOf: text.utf8)
    }

    /// Appends one ASCII character.
    mutating func append(ascii character: Unicode.Scalar) {
        bytes.append(UInt8(ascii: character))
    }

    /// Appends an integer's decimal digits, with a minus sign below zero.
    mutating func append(_ number: Int64) {
        if number < 0 { bytes.append(UInt8(ascii: "-")) }
        var rest = number.magnitude
        // At most 20 digits, written backwards into a fixed scratch and copied once.
        var scratch: (UInt64, UInt64, UInt64) = (0, 0, 0)
        withUnsafeMutableBytes(of: &scratch) { digits in
            var index = digits.count
            repeat {
                index -= 1
                digits[index] = UInt8(48 + rest % 10)
                rest /= 10
            } while rest > 0
            bytes.append(contentsOf: UnsafeRawBufferPointer(rebasing: digits[index...]))
        }
    }

    /// Appends a reference's `Entity/p<key>`.
    mutating func append(_ reference: RowReference) {
        append(reference.entityName)
        bytes.append(UInt8(ascii: "/"))
        bytes.append(UInt8(ascii: "p"))
        append(reference.primaryKey)
    }

    // MARK: - JSON

    /// Appends a JSON string literal as `JSONEncoder` writes it: `"` and `\` escaped, `\b`,
    /// `\t`, `\n`, `\f`, `\r` for those controls, `\u00xx` for the other controls, and
    /// everything else (slashes included) as it is.
    ///
    /// - Complexity: O(*n*) in the text's UTF-8 length.
    mutating func appendQuoted(_ text: String) {
        bytes.append(UInt8(ascii: "\""))
        var text = text
        text.withUTF8 { utf8 in
            var start = 0
            for (index, byte) in utf8.enumerated() where byte < 0x20 || byte == 0x22 || byte == 0x5C {
                bytes.append(contentsOf: UnsafeBufferPointer(rebasing: utf8[start..<index]))
                start = index + 1
                bytes.append(UInt8(ascii: "\\"))
                switch byte {
                case 0x22, 0x5C: bytes.append(byte)
                case 0x08: bytes.append(UInt8(ascii: "b"))
                case 0x09: bytes.append(UInt8(ascii: "t"))
                case 0x0A: bytes.append(UInt8(ascii: "n"))
                case 0x0C: bytes.append(UInt8(ascii: "f"))
                case 0x0D: bytes.append(UInt8(ascii: "r"))
                default:
                    let hex = Array("0123456789abcdef".utf8)
                    bytes.append(contentsOf: "u00".utf8)
                    bytes.append(hex[Int(byte >> 4)])
                    bytes.append(hex[Int(byte & 0xF)])
                }
            }
            bytes.append(contentsOf: UnsafeBufferPointer(rebasing: utf8[start...]))
        }
        bytes.append(UInt8(ascii: "\""))
    }

    /// Appends a reference's `_id` as a JSON string, or `null` for nil.
    mutating func appendQuoted(_ reference: RowReference?) {
        guard let reference else { return append("null") }
        bytes.append(UInt8(ascii: "\""))
        // Entity names that need no escaping (all the model reader accepts) are written as they are.
        if reference.entityName.utf8.allSatisfy({ $0 >= 0x20 && $0 != 0x22 && $0 != 0x5C }) {
            append(reference)
            bytes.append(UInt8(ascii: "\""))
        } else {
            bytes.removeLast()
            appendQuoted(reference.description)
        }
    }

    /// Appends a double as `JSONEncoder` writes it: its shortest round-trip text without a
    /// trailing `.0`, and `null` when it is not finite.
    mutating func appendJSON(_ number: Double) {
        guard number.isFinite else { return append("null") }
        var text = number.description
        if text.hasSuffix(".0") { text.removeLast(2) }
        append(text)
    }

    /// Appends an attribute value as JSON: the text of ``RecordFormat/jsonValue(_:)`` encoded.
    mutating func appendJSON(_ value: AttributeValue?) {
        switch value {
        case nil: append("null")
        case .integer(let number): append(number)
        case .double(let number): appendJSON(number)
        case .bool(let flag): append(flag ? "true" : "false")
        case .date(let date):
            bytes.append(UInt8(ascii: "\""))
            ISO8601Text.append(date, to: &bytes)
            bytes.append(UInt8(ascii: "\""))
        case .string(let text): appendQuoted(text)
        case let value?: appendQuoted(RecordFormat.text(value))
        }
    }

    // MARK: - TSV

    /// Appends text with `\`, tab, newline and carriage return written as `\\`, `\t`, `\n`, `\r`.
    ///
    /// - Complexity: O(*n*) in the text's UTF-8 length.
    mutating func appendTSVEscaped(_ text: String) {
        var text = text
        text.withUTF8 { utf8 in
            var start = 0
            for (index, byte) in utf8.enumerated() where byte == 0x5C || byte == 0x09 || byte == 0x0A || byte == 0x0D {
                bytes.append(contentsOf: UnsafeBufferPointer(rebasing: utf8[start..<index]))
                start = index + 1
                bytes.append(UInt8(ascii: "\\"))
                switch byte {
                case 0x09: bytes.append(UInt8(ascii: "t"))
                case 0x0A: bytes.append(UInt8(ascii: "n"))
                case 0x0D: bytes.append(UInt8(ascii: "r"))
                default: bytes.append(byte)
                }
            }
            bytes.append(contentsOf: UnsafeBufferPointer(rebasing: utf8[start...]))
        }
    }

    /// Appends an attribute value as a TSV field: the text of ``RecordFormat/tsvField(_:)``.
    mutating func appendTSV(_ value: AttributeValue?) {
        switch value {
        case nil: return
        case .integer(let number): append(number)
        case .bool(let flag): append(flag ? "true" : "false")
        case .date(let date): ISO8601Text.append(date, to: &bytes)
        case .string(let text): appendTSVEscaped(text)
        case let value?: appendTSVEscaped(RecordFormat.text(value))
        }
    }
}
