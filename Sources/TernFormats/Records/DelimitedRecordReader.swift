public import Foundation

/// Reads TSV or CSV records from a file in batches, holding only one chunk of the file at a time.
///
/// The first row is the header: the keys of every record. Each following row is one record; an
/// empty field is ``RecordValue/null``, any other field is ``RecordValue/text(_:)``. Blank lines
/// are skipped.
///
/// - TSV: fields end at a tab, records at a newline (`\r\n` too); there is no quoting. Inside a
///   field `\t`, `\n`, `\r` and `\\` stand for a tab, a newline, a carriage return and a
///   backslash, as in PostgreSQL's text format; a backslash before any other character stands
///   for that character.
/// - CSV (RFC 4180): fields end at a comma, records at `\r\n` or `\n`; a field in double quotes
///   may hold commas, newlines and doubled quotes (`""`).
///
/// ```swift
/// let reader = try DelimitedRecordReader(contentsOf: url, dialect: .tsv)
/// while case let batch = try reader.nextBatch(), !batch.isEmpty { … }
/// ```
public final class DelimitedRecordReader {
    /// The two delimited formats.
    public enum Dialect: String, Sendable, CaseIterable {
        /// Tab-separated values with backslash escapes.
        case tsv
        /// Comma-separated values, RFC 4180.
        case csv
    }

    /// The header's keys, in column order.
    public private(set) var header: [String] = []
    /// How many bytes of the file have been consumed, for progress.
    public private(set) var bytesRead: Int64 = 0

    private let dialect: Dialect
    private let path: String
    private let handle: FileHandle
    private var buffer: [UInt8] = []
    private var position = 0
    private var isAtEnd = false
    private var line = 1
    private var columns: [String: Int] = [:]

    /// Opens a file and reads its header row.
    ///
    /// - Parameters:
    ///   - url: The file.
    ///   - dialect: TSV or CSV.
    /// - Throws: ``RecordError`` when the file cannot be read, has no header, or its header has an
    ///   empty or repeated key.
    public init(contentsOf url: URL, dialect: Dialect) throws(RecordError) {
        self.dialect = dialect
        self.path = url.path
        do {
            handle = try FileHandle(forReadingFrom: url)
        } catch {
            throw RecordError(
                .unreadableFile, "cannot open the file; check that it exists and is readable", path: url.path,
                underlyingError: error)
        }
        guard let (headerLine, names) = try readStrings() else {
            throw RecordError(.malformedFile, "the file is empty; give a header row of attribute names", path: path)
        }
        for (index, name) in names.enumerated() {
            guard let name, !name.isEmpty else {
                throw RecordError(
                    .malformedFile, "the header has an empty name; name every column", path: path,
                    line: headerLine, column: index + 1)
            }
            guard columns[name] == nil else {
                throw RecordError(
                    .malformedFile, "the header names '\(name)' twice; name each column once", path: path,
                    line: headerLine, column: index + 1)
            }
            columns[name] = index + 1
        }
        header = names.compactMap { $0 }
    }

    deinit { try? handle.close() }

    /// The next records, at most `maxCount`; empty at the end of the file.
    ///
    /// - Parameter maxCount: The largest batch.
    /// - Throws: ``RecordError`` naming the line and column of invalid UTF-8, a row with the wrong
    ///   number of fields, a quote out of place or an unterminated quoted field.
    /// - Complexity: O(*n*) in the bytes of the rows read.
    public func nextBatch(maxCount: Int = 500) throws(RecordError) -> [ImportRecord] {
        try nextRows(maxCount: maxCount).map { start, fields in
            var values: [String: RecordValue] = [:]
            for (name, field) in zip(header, fields) {
                values[name] = field.map(RecordValue.text) ?? .null
            }
            return ImportRecord(fields: values, line: start, columns: columns)
        }
    }

    /// The next rows as their fields in header order (nil for an empty field), with the line
    /// each starts on, at most `maxCount`; empty at the end of the file.
    ///
    /// - Parameter maxCount: The largest batch.
    /// - Throws: What ``nextBatch(maxCount:)`` throws.
    func nextRows(maxCount: Int) throws(RecordError) -> [(line: Int, fields: [String?])] {
        var rows: [(line: Int, fields: [String?])] = []
        while rows.count < maxCount, let (start, fields) = try readStrings() {
            try checkWidth(fields.count, line: start)
            rows.append((start, fields))
        }
        return rows
    }

    /// Reads the next row into `row`, replacing what it held: its fields as bytes, one per
    /// column of the header, valid UTF-8, with no `String` made.
    ///
    /// - Parameter row: The buffer the fields go to, reused from row to row.
    /// - Returns: The line the row starts on, or nil at the end of the file.
    /// - Throws: What ``nextBatch(maxCount:)`` throws.
    func nextRow(into row: inout RecordBytes) throws(RecordError) -> Int? {
        guard let start = try readRow(into: &row) else { return nil }
        try checkWidth(row.count, line: start)
        return start
    }

    // MARK: - Non public

    /// Throws unless a row has one field per column of the header.
    private func checkWidth(_ count: Int, line: Int) throws(RecordError) {
        guard count != header.count else { return }
        throw RecordError(
            .malformedFile,
            "the row has \(count) field\(count == 1 ? "" : "s") but the header has \(header.count); give one per column",
            path: path, line: line, column: min(count, header.count) + 1)
    }

    /// Reads one non-blank row as strings (nil for an empty field).
    private func readStrings() throws(RecordError) -> (Int, [String?])? {
        var row = RecordBytes()
        guard let start = try readRow(into: &row) else { return nil }
        return (start, (0..<row.count).map { row.isNull($0) ? nil : row.string($0) })
    }

    /// The next byte, without consuming it; nil at the end of the file.
    private func peek() throws(RecordError) -> UInt8? {
        if position == buffer.count {
            guard !isAtEnd else { return nil }
            let chunk: Data?
            do {
                chunk = try handle.read(upToCount: 1 << 16)
            } catch {
                throw RecordError(
                    .unreadableFile, "cannot read the file: \(error.localizedDescription)", path: path,
                    underlyingError: error)
            }
            guard let chunk, !chunk.isEmpty else {
                isAtEnd = true
                return nil
            }
            buffer = Array(chunk)
            position = 0
        }
        return buffer[position]
    }

    /// Consumes one byte.
    private func advance() {
        position += 1
        bytesRead += 1
    }

    /// Reads one non-blank row into `row`: the line it starts on and its fields.
    private func readRow(into row: inout RecordBytes) throws(RecordError) -> Int? {
        while true {
            guard let first = try peek() else { return nil }
            if first == 0x0A {
                advance()
                line += 1
                continue
            }
            if first == 0x0D {
                advance()
                continue
            }
            break
        }
        let start = line
        row.removeAll()
        var quoted = false
        var fieldLine = line
        var endsWithRawReturn = false
        func finish() throws(RecordError) {
            guard row.endField(quoted: quoted) else {
                throw RecordError(
                    .invalidUTF8, "the field is not valid UTF-8; save the file as UTF-8", path: path,
                    line: fieldLine, column: row.count)
            }
            quoted = false
        }
        let separator: UInt8 = dialect == .tsv ? 0x09 : 0x2C
        while true {
            // Runs of ordinary bytes are copied from the chunk at once; the bytes that mean
            // something (separator, line ends, backslash, quote) go through the switch below.
            if position < buffer.count {
                let runStart = position
                let end = buffer.withUnsafeBufferPointer { bytes in
                    var end = runStart
                    while end < bytes.count {
                        let byte = bytes[end]
                        if byte == separator || byte == 0x0A || byte == 0x0D || byte == 0x5C || byte == 0x22 { break }
                        end += 1
                    }
                    return end
                }
                if end > runStart {
                    guard !quoted else { throw misplaced(row.count + 1) }
                    row.bytes.append(contentsOf: buffer[runStart..<end])
                    bytesRead += Int64(end - runStart)
                    position = end
                    endsWithRawReturn = false
                }
            }
            guard let byte = try peek() else { break }
            advance()
            switch byte {
            case separator:
                try finish()
                endsWithRawReturn = false
                fieldLine = line
            case 0x0A:
                if endsWithRawReturn { row.bytes.removeLast() }
                line += 1
                try finish()
                return start
            case 0x5C where dialect == .tsv:
                guard let next = try peek(), next != 0x0A else {
                    throw RecordError(
                        .malformedFile, "a backslash ends the line; write \\\\ for a backslash",
                        path: path, line: line, column: row.count + 1)
                }
                advance()
                endsWithRawReturn = false
                switch next {
                case UInt8(ascii: "t"): row.bytes.append(0x09)
                case UInt8(ascii: "n"): row.bytes.append(0x0A)
                case UInt8(ascii: "r"): row.bytes.append(0x0D)
                default: row.bytes.append(next)
                }
            case 0x22 where dialect == .csv:
                guard row.isFieldEmpty, !quoted else {
                    throw RecordError(
                        .malformedFile, "a quote inside an unquoted field; quote the whole field and double the quote",
                        path: path, line: line, column: row.count + 1)
                }
                quoted = true
                try readQuoted(into: &row.bytes, column: row.count + 1)
                guard let after = try peek(), after != 0x0A else { continue }
                if after == 0x0D {
                    advance()
                    guard try peek() == 0x0A else { throw misplaced(row.count + 1) }
                    continue
                }
                guard after == separator else { throw misplaced(row.count + 1) }
            default:
                guard !quoted else { throw misplaced(row.count + 1) }
                row.bytes.append(byte)
                endsWithRawReturn = byte == 0x0D
            }
        }
        if endsWithRawReturn { row.bytes.removeLast() }
        try finish()
        return start
    }

    /// Reads a quoted CSV field's contents after its opening quote, through its closing quote.
    private func readQuoted(into field: inout [UInt8], column: Int) throws(RecordError) {
        let opening = line
        while let byte = try peek() {
            advance()
            if byte == 0x0A { line += 1 }
            guard byte == 0x22 else {
                field.append(byte)
                continue
            }
            guard try peek() == 0x22 else { return }
            advance()
            field.append(0x22)
        }
        throw RecordError(
            .malformedFile, "a quoted field is never closed; end it with a double quote",
            path: path, line: opening, column: column)
    }

    /// The error for text after a closing quote.
    private func misplaced(_ column: Int) -> RecordError {
        RecordError(
            .malformedFile, "text follows a closing quote; quote the whole field and double inner quotes",
            path: path, line: line, column: column)
    }
}

/// The fields of one delimited row as UTF-8 bytes in one buffer, reused from row to row, so that
/// reading a row makes no `String` and no array per field.
struct RecordBytes {
    /// The bytes of every field, one after the other.
    fileprivate(set) var bytes: [UInt8] = []
    /// Where each field ends in ``bytes``.
    private var ends: [Int] = []
    /// Whether each field was quoted (an empty quoted field is empty text, not null).
    private var quoted: [Bool] = []

    /// The number of complete fields.
    var count: Int { ends.count }

    /// Whether a field is empty and unquoted: a null value.
    func isNull(_ field: Int) -> Bool { !quoted[field] && start(of: field) == ends[field] }

    /// The text of a field.
    func string(_ field: Int) -> String {
        withBytes(of: field) { String(decoding: $0, as: UTF8.self) }
    }

    /// Calls `body` with the bytes of a field (valid only during the call).
    func withBytes<Result>(of field: Int, _ body: (UnsafeBufferPointer<UInt8>) throws -> Result) rethrows -> Result {
        let start = start(of: field)
        return try bytes.withUnsafeBufferPointer { all in
            try body(UnsafeBufferPointer(rebasing: all[start..<ends[field]]))
        }
    }

    // MARK: - Non public

    private func start(of field: Int) -> Int { field == 0 ? 0 : ends[field - 1] }

    /// Whether the field being read has no bytes yet.
    fileprivate var isFieldEmpty: Bool { bytes.count == (ends.last ?? 0) }

    /// Empties the buffer for the next row, keeping its capacity.
    fileprivate mutating func removeAll() {
        bytes.removeAll(keepingCapacity: true)
        ends.removeAll(keepingCapacity: true)
        quoted.removeAll(keepingCapacity: true)
    }

    /// Ends the field being read; false when its bytes are not valid UTF-8.
    fileprivate mutating func endField(quoted isQuoted: Bool) -> Bool {
        let start = ends.last ?? 0
        ends.append(bytes.count)
        quoted.append(isQuoted)
        // ASCII (the usual case) is valid as it is; anything else is checked.
        let isASCII = bytes.withUnsafeBufferPointer { all in all[start...].allSatisfy { $0 < 0x80 } }
        return isASCII || String(validating: bytes[start...], as: UTF8.self) != nil
    }
}
