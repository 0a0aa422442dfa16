internal import CPostgreSQL
import Foundation
import TernRelational

extension Connection {
    // MARK: - Bulk loading with COPY

    /// Loads rows into a table with `COPY … FROM STDIN` in text format, streaming the data in
    /// chunks.
    ///
    /// COPY data is not SQL: each value is written in COPY's text escaping (`\N` for NULL,
    /// backslash escapes for backslash, newline, carriage return and tab; bytes as an escaped
    /// `\\x…` hex `bytea`), so that any string arrives unchanged.
    ///
    /// - Parameters:
    ///   - table: The table.
    ///   - columns: The columns the values fill, in order.
    ///   - rows: The rows' values.
    /// - Throws: ``PostgreSQLError`` carrying the `COPY` statement; a unique violation has
    ///   SQLSTATE `23505`.
    /// - Complexity: O(*n*) in the size of the data; memory holds one chunk.
    func copy(into table: String, columns: [String], rows: [[DatabaseValue]]) throws(PostgreSQLError) {
        _ = try copy(into: table, columns: columns, count: rows.count) { index, text in
            for value in rows[index] { text.append(value) }
            return true
        }
    }

    /// Loads `count` rows into a table with `COPY … FROM STDIN` in text format, each row's values
    /// written by `row` as the data is sent: the server parses a chunk while the next one is
    /// made, and no row is held once it is written.
    ///
    /// - Parameters:
    ///   - table: The table.
    ///   - columns: The columns the values fill, in order.
    ///   - count: The number of rows.
    ///   - row: Appends the values of the row at an index, one per column, in order; returns
    ///     false to abandon the `COPY` (the caller keeps the reason).
    /// - Returns: Whether every row was loaded; false when `row` abandoned the `COPY`, which
    ///   the server then rolls back whole.
    /// - Throws: ``PostgreSQLError`` carrying the `COPY` statement; a unique violation has
    ///   SQLSTATE `23505`.
    /// - Complexity: O(*n*) in the size of the data; memory holds one chunk.
    func copy(
        into table: String, columns: [String], count: Int, row: (Int, inout CopyText) -> Bool
    ) throws(PostgreSQLError) -> Bool {
        let statement = "COPY \(SQL.quoted(table)) (\(columns.map(SQL.quoted).joined(separator: ", "))) FROM STDIN"
        guard let start = PQexec(handle, statement) else { throw connectionLost(sql: statement) }
        let status = PQresultStatus(start)
        let startError = status == PGRES_COPY_IN ? nil : Self.error(of: start, connection: handle, sql: statement)
        PQclear(start)
        if let startError { throw startError }
        var text = CopyText()
        text.bytes.reserveCapacity(Self.copyChunkSize + 4096)
        var failure: PostgreSQLError?
        var abandoned = false
        func send() {
            guard failure == nil, !text.bytes.isEmpty else { return }
            let sent = text.bytes.withUnsafeBufferPointer { buffer in
                buffer.withMemoryRebound(to: CChar.self) { PQputCopyData(handle, $0.baseAddress, Int32($0.count)) }
            }
            if sent != 1 { failure = connectionLost(sql: statement) }
            text.bytes.removeAll(keepingCapacity: true)
        }
        for index in 0..<count {
            text.columns = 0
            guard row(index, &text) else {
                abandoned = true
                break
            }
            text.bytes.append(0x0A)
            if text.bytes.count >= Self.copyChunkSize {
                send()
                if failure != nil { break }
            }
        }
        if !abandoned { send() }
        let ended = PQputCopyEnd(handle, abandoned || failure != nil ? "client failure" : nil)
        if ended != 1, failure == nil { failure = connectionLost(sql: statement) }
        // The final result says whether the server accepted the data.
        while let result = PQgetResult(handle) {
            if failure == nil, !abandoned, PQresultStatus(result) != PGRES_COMMAND_OK {
                failure = Self.error(of: result, connection: handle, sql: statement)
            }
            PQclear(result)
        }
        if let failure { throw failure }
        return !abandoned
    }

    /// How many bytes of COPY data are sent at a time: small enough that the server can parse a
    /// chunk while the next is written (with 1 MiB, a batch of 10,000 events was one chunk, sent
    /// once the whole batch was written), large enough that each send costs little.
    static let copyChunkSize = 64 << 10

    /// The text of the rows of a `COPY`, one value after the other (``Connection/copy(into:columns:count:row:)``).
    struct CopyText {
        /// The bytes not sent yet.
        fileprivate(set) var bytes: [UInt8] = []
        /// The values of the current row so far.
        fileprivate var columns = 0

        /// Appends the next value of the current row, in COPY's text format.
        mutating func append(_ value: DatabaseValue) {
            if columns > 0 { bytes.append(0x09) }
            columns += 1
            Connection.appendCopyText(value, to: &bytes)
        }
    }

    /// Appends a value in COPY's text format: integers digit by digit, text in runs between the
    /// bytes COPY escapes, without a `String` or an array per value.
    static func appendCopyText(_ value: DatabaseValue, to buffer: inout [UInt8]) {
        switch value {
        case .null:
            buffer.append(0x5C)  // \N
            buffer.append(0x4E)
        case .integer(let number):
            appendDigits(of: number, to: &buffer)
        case .real(let number):
            if number.isNaN {
                buffer.append(contentsOf: "NaN".utf8)
            } else if number.isInfinite {
                buffer.append(contentsOf: (number < 0 ? "-Infinity" : "Infinity").utf8)
            } else {
                buffer.append(contentsOf: number.description.utf8)
            }
        case .text(let text):
            var text = text
            text.withUTF8 { bytes in
                var start = 0
                for (index, byte) in bytes.enumerated()
                where byte == 0x5C || byte == 0x0A || byte == 0x0D || byte == 0x09 {
                    buffer.append(contentsOf: UnsafeBufferPointer(rebasing: bytes[start..<index]))
                    buffer.append(0x5C)
                    buffer.append(byte == 0x5C ? 0x5C : byte == 0x0A ? 0x6E : byte == 0x0D ? 0x72 : 0x74)
                    start = index + 1
                }
                buffer.append(contentsOf: UnsafeBufferPointer(rebasing: bytes[start...]))
            }
        case .blob(let data):
            // bytea's hex input `\x…`, its backslash escaped for COPY.
            buffer.append(contentsOf: [0x5C, 0x5C, 0x78])
            buffer.reserveCapacity(buffer.count + data.count * 2)
            for byte in data {
                buffer.append(hexDigits[Int(byte >> 4)])
                buffer.append(hexDigits[Int(byte & 0x0F)])
            }
        }
    }

    /// The ASCII hex digits.
    private static let hexDigits: [UInt8] = Array("0123456789abcdef".utf8)

    /// Appends an integer's decimal digits (with a minus sign when negative).
    private static func appendDigits(of number: Int64, to buffer: inout [UInt8]) {
        if number < 0 { buffer.append(0x2D) }
        // The magnitude as unsigned, so that Int64.min has one; at most 19 digits.
        var magnitude = number.magnitude
        withUnsafeTemporaryAllocation(of: UInt8.self, capacity: 20) { digits in
            var position = digits.count
            repeat {
                position -= 1
                digits[position] = 0x30 + UInt8(magnitude % 10)
                magnitude /= 10
            } while magnitude > 0
            buffer.append(contentsOf: UnsafeBufferPointer(rebasing: digits[position...]))
        }
    }
}
