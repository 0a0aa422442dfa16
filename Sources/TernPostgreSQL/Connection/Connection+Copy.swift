internal import CPostgreSQL
import Foundation
import TernSQLite

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
        let statement = "COPY \(SQL.quoted(table)) (\(columns.map(SQL.quoted).joined(separator: ", "))) FROM STDIN"
        guard let start = PQexec(handle, statement) else { throw connectionLost(sql: statement) }
        let status = PQresultStatus(start)
        let startError = status == PGRES_COPY_IN ? nil : Self.error(of: start, connection: handle, sql: statement)
        PQclear(start)
        if let startError { throw startError }
        var chunk: [UInt8] = []
        chunk.reserveCapacity(Self.copyChunkSize + 4096)
        var failure: PostgreSQLError?
        func send() {
            guard failure == nil, !chunk.isEmpty else { return }
            let sent = chunk.withUnsafeBufferPointer { buffer in
                buffer.withMemoryRebound(to: CChar.self) { PQputCopyData(handle, $0.baseAddress, Int32($0.count)) }
            }
            if sent != 1 { failure = connectionLost(sql: statement) }
            chunk.removeAll(keepingCapacity: true)
        }
        for row in rows {
            for (index, value) in row.enumerated() {
                if index > 0 { chunk.append(0x09) }
                Self.appendCopyText(value, to: &chunk)
            }
            chunk.append(0x0A)
            if chunk.count >= Self.copyChunkSize { send() }
        }
        send()
        let ended = PQputCopyEnd(handle, failure == nil ? nil : "client failure")
        if ended != 1, failure == nil { failure = connectionLost(sql: statement) }
        // The final result says whether the server accepted the data.
        while let result = PQgetResult(handle) {
            if failure == nil, PQresultStatus(result) != PGRES_COMMAND_OK {
                failure = Self.error(of: result, connection: handle, sql: statement)
            }
            PQclear(result)
        }
        if let failure { throw failure }
    }

    /// How many bytes of COPY data are sent at a time.
    static let copyChunkSize = 1 << 20

    /// Appends a value in COPY's text format.
    static func appendCopyText(_ value: DatabaseValue, to buffer: inout [UInt8]) {
        switch value {
        case .null:
            buffer += [0x5C, 0x4E]  // \N
        case .integer(let number):
            buffer += Array(String(number).utf8)
        case .real(let number):
            let text = number.isNaN ? "NaN" : number == .infinity ? "Infinity" : number == -.infinity ? "-Infinity" : "\(number)"
            buffer += Array(text.utf8)
        case .text(let text):
            for byte in text.utf8 {
                switch byte {
                case 0x5C: buffer += [0x5C, 0x5C]
                case 0x0A: buffer += [0x5C, 0x6E]
                case 0x0D: buffer += [0x5C, 0x72]
                case 0x09: buffer += [0x5C, 0x74]
                default: buffer.append(byte)
                }
            }
        case .blob(let data):
            // bytea's hex input `\x…`, its backslash escaped for COPY.
            buffer += [0x5C, 0x5C, 0x78]
            let digits = Array("0123456789abcdef".utf8)
            for byte in data {
                buffer.append(digits[Int(byte >> 4)])
                buffer.append(digits[Int(byte & 0x0F)])
            }
        }
    }
}
