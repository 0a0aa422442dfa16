public import Foundation

/// Reads JSON records: an array of objects (one entity, named by the caller) or an object keyed
/// by entity name whose values are arrays of objects (`{"Recipe": [ … ], "Tag": [ … ]}`).
///
/// The file is read whole and parsed into records at once, so its size is bounded by
/// ``maximumSize``; records are then handed out in batches. Nested objects become
/// ``RecordValue/record(_:)`` values, arrays ``RecordValue/list(_:)``; numbers keep their text.
///
/// ```swift
/// let reader = try JSONRecordReader(contentsOf: url)
/// while case let batch = reader.nextBatch(), !batch.isEmpty { … }
/// ```
public final class JSONRecordReader {
    /// The largest file read: 256 MiB.
    public static let maximumSize = 256 << 20
    /// The deepest nesting of arrays and objects accepted.
    public static let maximumDepth = 64

    /// The number of records in the file, for progress.
    public var count: Int { records.count }

    private var records: [ImportRecord] = []
    private var next = 0

    /// Reads and parses a file.
    ///
    /// - Parameter url: The file.
    /// - Throws: ``RecordError`` naming the line and column of invalid UTF-8 or broken JSON, or
    ///   when the file is too large or not of either shape.
    /// - Complexity: O(*n*) in the file's size.
    public init(contentsOf url: URL) throws(RecordError) {
        let data: Data
        do {
            let size = try FileManager.default.attributesOfItem(atPath: url.path)[.size] as? Int ?? 0
            guard size <= Self.maximumSize else {
                throw RecordError(
                    .malformedFile, "the JSON file is larger than 256 MiB; split it or use TSV",
                    path: url.path)
            }
            data = try Data(contentsOf: url)
        } catch let error as RecordError {
            throw error
        } catch {
            throw RecordError(
                .unreadableFile, "cannot read the file; check that it exists and is readable", path: url.path,
                underlyingError: error)
        }
        var parser = JSONRecordParser(bytes: Array(data), path: url.path)
        records = try parser.parseDocument()
    }

    /// Parses JSON text already in memory (for tests and callers that hold the text).
    ///
    /// - Parameters:
    ///   - text: The JSON document.
    ///   - path: The name to use in errors.
    /// - Throws: ``RecordError`` as for ``init(contentsOf:)``.
    public init(text: String, path: String = "<input>") throws(RecordError) {
        var parser = JSONRecordParser(bytes: Array(text.utf8), path: path)
        records = try parser.parseDocument()
    }

    /// The next records, at most `maxCount`; empty at the end.
    ///
    /// - Parameter maxCount: The largest batch.
    public func nextBatch(maxCount: Int = 500) -> [ImportRecord] {
        let end = min(records.count, next + maxCount)
        defer { next = end }
        return Array(records[next..<end])
    }
}

/// A small JSON parser that keeps each object's line and reports errors by line and column.
struct JSONRecordParser {
    let bytes: [UInt8]
    let path: String
    var index = 0
    var line = 1
    var lineStart = 0
    var depth = 0

    init(bytes: [UInt8], path: String) {
        self.bytes = bytes
        self.path = path
    }

    /// Parses `[{…}, …]` or `{"Entity": [{…}, …], …}` into top-level records.
    mutating func parseDocument() throws(RecordError) -> [ImportRecord] {
        if bytes.starts(with: [0xEF, 0xBB, 0xBF]) {
            index = 3
            lineStart = 3
        }
        skipSpace()
        let records: [ImportRecord]
        switch bytes.indices.contains(index) ? bytes[index] : 0 {
        case UInt8(ascii: "["):
            records = try topLevelList(entityName: nil)
        case UInt8(ascii: "{"):
            index += 1
            var all: [ImportRecord] = []
            try members { (parser: inout JSONRecordParser, key: String) throws(RecordError) in
                all += try parser.topLevelList(entityName: key)
            }
            records = all
        default:
            throw error("the file must hold an array of records or an object of entity names to arrays")
        }
        skipSpace()
        guard index == bytes.count else { throw error("text follows the JSON document; remove it") }
        return records
    }

    private mutating func topLevelList(entityName: String?) throws(RecordError) -> [ImportRecord] {
        skipSpace()
        guard case .list(let items) = try value() else {
            throw error("expected an array of records\(entityName.map { " for \($0)" } ?? "")")
        }
        var records: [ImportRecord] = []
        for item in items {
            guard case .record(var record) = item else {
                throw error("an array of records holds something other than an object; give objects only")
            }
            record.entityName = entityName
            records.append(record)
        }
        return records
    }

    private mutating func value() throws(RecordError) -> RecordValue {
        skipSpace()
        guard index < bytes.count else { throw error("the JSON ends too early; close every array and object") }
        switch bytes[index] {
        case UInt8(ascii: "{"):
            let start = line
            index += 1
            try nest()
            var fields: [String: RecordValue] = [:]
            try members { (parser: inout JSONRecordParser, key: String) throws(RecordError) in
                guard fields[key] == nil else { throw parser.error("an object has the key '\(key)' twice") }
                fields[key] = try parser.value()
            }
            depth -= 1
            return .record(ImportRecord(fields: fields, line: start))
        case UInt8(ascii: "["):
            index += 1
            try nest()
            var items: [RecordValue] = []
            skipSpace()
            if peek() == UInt8(ascii: "]") {
                index += 1
            } else {
                while true {
                    items.append(try value())
                    skipSpace()
                    guard let byte = peek() else { throw error("the JSON ends inside an array; close it with ]") }
                    index += 1
                    if byte == UInt8(ascii: "]") { break }
                    guard byte == UInt8(ascii: ",") else {
                        index -= 1
                        throw error("expected , or ] in an array")
                    }
                }
            }
            depth -= 1
            return .list(items)
        case UInt8(ascii: "\""):
            return .text(try string())
        case UInt8(ascii: "t"):
            try literal("true")
            return .bool(true)
        case UInt8(ascii: "f"):
            try literal("false")
            return .bool(false)
        case UInt8(ascii: "n"):
            try literal("null")
            return .null
        default:
            return .number(try number())
        }
    }

    /// Parses `"key": value, …}` after an opening brace, handing each key to `body`.
    private mutating func members(
        _ body: (inout JSONRecordParser, String) throws(RecordError) -> Void
    ) throws(RecordError) {
        skipSpace()
        if peek() == UInt8(ascii: "}") {
            index += 1
            return
        }
        while true {
            skipSpace()
            guard peek() == UInt8(ascii: "\"") else { throw error("expected a key in double quotes") }
            let key = try string()
            skipSpace()
            guard peek() == UInt8(ascii: ":") else { throw error("expected : after a key") }
            index += 1
            try body(&self, key)
            skipSpace()
            guard let byte = peek() else { throw error("the JSON ends inside an object; close it with }") }
            index += 1
            if byte == UInt8(ascii: "}") { return }
            guard byte == UInt8(ascii: ",") else {
                index -= 1
                throw error("expected , or } in an object")
            }
        }
    }

    private mutating func nest() throws(RecordError) {
        depth += 1
        guard depth <= Self.maximumDepth else { throw error("arrays and objects nest deeper than 64 levels") }
    }

    private static let maximumDepth = JSONRecordReader.maximumDepth

    private mutating func string() throws(RecordError) -> String {
        index += 1
        var bytesOut: [UInt8] = []
        while index < bytes.count {
            let byte = bytes[index]
            index += 1
            switch byte {
            case UInt8(ascii: "\""):
                guard let text = String(validating: bytesOut, as: UTF8.self) else {
                    throw error("a string is not valid UTF-8; save the file as UTF-8", code: .invalidUTF8)
                }
                return text
            case UInt8(ascii: "\\"):
                guard index < bytes.count else { break }
                let escape = bytes[index]
                index += 1
                switch escape {
                case UInt8(ascii: "\""), UInt8(ascii: "\\"), UInt8(ascii: "/"): bytesOut.append(escape)
                case UInt8(ascii: "b"): bytesOut.append(0x08)
                case UInt8(ascii: "f"): bytesOut.append(0x0C)
                case UInt8(ascii: "n"): bytesOut.append(0x0A)
                case UInt8(ascii: "r"): bytesOut.append(0x0D)
                case UInt8(ascii: "t"): bytesOut.append(0x09)
                case UInt8(ascii: "u"):
                    var scalar = try hex4()
                    if (0xD800..<0xDC00).contains(scalar) {
                        guard bytes[index...].starts(with: [0x5C, UInt8(ascii: "u")]) else {
                            throw error("a \\u escape is half of a surrogate pair; give both halves")
                        }
                        index += 2
                        let low = try hex4()
                        guard (0xDC00..<0xE000).contains(low) else { throw error("a \\u surrogate pair is broken") }
                        scalar = 0x10000 + ((scalar - 0xD800) << 10) + (low - 0xDC00)
                    }
                    guard let unicode = Unicode.Scalar(scalar) else { throw error("a \\u escape is not a character") }
                    bytesOut += Array(String(Character(unicode)).utf8)
                default:
                    index -= 1
                    throw error("unknown escape in a string; write \\\\ for a backslash")
                }
            case 0x00..<0x20:
                index -= 1
                throw error("a control character in a string; escape it (\\n, \\t, \\u0000)")
            default:
                bytesOut.append(byte)
            }
        }
        throw error("a string is never closed; end it with a double quote")
    }

    private mutating func hex4() throws(RecordError) -> UInt32 {
        guard index + 4 <= bytes.count, let text = String(validating: bytes[index..<index + 4], as: UTF8.self),
            let scalar = UInt32(text, radix: 16)
        else { throw error("a \\u escape needs four hexadecimal digits") }
        index += 4
        return scalar
    }

    private mutating func number() throws(RecordError) -> String {
        let start = index
        while let byte = peek(),
            byte == UInt8(ascii: "-") || byte == UInt8(ascii: "+") || byte == UInt8(ascii: ".")
                || byte == UInt8(ascii: "e") || byte == UInt8(ascii: "E") || (0x30...0x39).contains(byte)
        {
            index += 1
        }
        let text = String(decoding: bytes[start..<index], as: UTF8.self)
        guard !text.isEmpty, Double(text) != nil, text.first != "+" else {
            index = start
            throw error("expected a value (a string, number, true, false, null, array or object)")
        }
        return text
    }

    private mutating func literal(_ word: String) throws(RecordError) {
        guard bytes[index...].starts(with: word.utf8) else { throw error("expected \(word)") }
        index += word.utf8.count
    }

    private func peek() -> UInt8? { index < bytes.count ? bytes[index] : nil }

    private mutating func skipSpace() {
        while let byte = peek() {
            switch byte {
            case 0x0A:
                index += 1
                line += 1
                lineStart = index
            case 0x20, 0x09, 0x0D: index += 1
            default: return
            }
        }
    }

    func error(_ message: String, code: RecordError.Code = .malformedFile) -> RecordError {
        RecordError(code, message, path: path, line: line, column: index - lineStart + 1)
    }
}
