internal import CPostgreSQL
import Foundation
package import TernRelational

/// One libpq connection (`PGconn`), owned by exactly one ``PostgreSQLStore`` (or tool) and used
/// on its serial executor only. It closes the connection in `deinit`.
///
/// Statements are ``SQL`` values: their `?` placeholders become `$1…$n`, every value is bound
/// (integers, reals and bytes in binary, text as text) and never interpolated. Each distinct text
/// is prepared once and reused (`PQexecPrepared`).
final class Connection {
    /// The `PGconn`.
    let handle: OpaquePointer
    /// Where the connection goes, without its password: for messages.
    let location: String
    /// Statement names by text and parameter types.
    private var prepared: [String: String] = [:]
    /// How deep `inTransaction` calls are nested.
    private var transactionDepth = 0
    /// The number of rows the last statement changed.
    private(set) var changedRowCount = 0

    /// The most prepared statements kept before the cache is emptied.
    private static let statementCacheLimit = 512

    /// Connects.
    ///
    /// - Parameter location: Where to connect and which schema to use.
    /// - Throws: ``PostgreSQLError`` with code `connectionFailed` when the server cannot be reached
    ///   or refuses the connection; the message shows libpq's reason, never the password.
    init(_ location: PostgreSQLLocation) throws(PostgreSQLError) {
        guard let handle = PQconnectdb(location.connectionInfo) else {
            throw PostgreSQLError(.connectionFailed, "libpq could not allocate a connection (out of memory).")
        }
        self.handle = handle
        self.location = location.description
        guard PQstatus(handle) == CONNECTION_OK else {
            let reason = Self.text(PQerrorMessage(handle))
            throw PostgreSQLError(
                .connectionFailed,
                "Cannot connect to PostgreSQL at \(location.description): \(reason); check that the server runs "
                    + "and the connection string (host, port, user, database).")
        }
        // Notices ("relation already exists, skipping"…) are not errors: keep them off stderr.
        PQsetNoticeProcessor(handle, { _, _ in }, nil)
        try execute("SET client_encoding TO 'UTF8'")
        try execute("SET client_min_messages TO warning")
        if let schema = location.schema {
            do {
                try execute("CREATE SCHEMA IF NOT EXISTS \(.identifier(schema))")
            } catch let error where error.sqlState == "23505" || error.sqlState == "42P06" {
                // Another connection created the schema meanwhile: `IF NOT EXISTS` looks before
                // it waits on that connection's insert into the catalog, so it can still fail
                // with a unique violation (or "schema already exists"). The schema is there now.
            }
            try execute("SELECT set_config('search_path', \(SQL.quoted(schema)), false)")
        }
    }

    deinit {
        PQfinish(handle)
    }

    // MARK: - Running statements

    /// Runs a statement, ignoring any rows it returns.
    ///
    /// - Throws: ``PostgreSQLError`` carrying the statement's text.
    func execute(_ sql: SQL) throws(PostgreSQLError) {
        try run(sql) { _ throws(PostgreSQLError) in }
    }

    /// Every row a statement returns.
    func fetchAll(_ sql: SQL) throws(PostgreSQLError) -> [[DatabaseValue]] {
        var rows: [[DatabaseValue]] = []
        try forEachRow(sql) { rows.append($0) }
        return rows
    }

    /// The first row a statement returns, if any.
    func fetchOne(_ sql: SQL) throws(PostgreSQLError) -> [DatabaseValue]? {
        try fetchAll(sql).first
    }

    /// The first column of the first row, if any.
    func fetchValue(_ sql: SQL) throws(PostgreSQLError) -> DatabaseValue? {
        try fetchOne(sql)?.first
    }

    /// Calls `body` with each row a statement returns.
    func forEachRow(_ sql: SQL, _ body: ([DatabaseValue]) throws(PostgreSQLError) -> Void) throws(PostgreSQLError) {
        try run(sql) { (result) throws(PostgreSQLError) in
            let rows = PQntuples(result)
            let columns = PQnfields(result)
            let types = (0..<columns).map { PQftype(result, $0) }
            var values: [DatabaseValue] = []
            values.reserveCapacity(Int(columns))
            for row in 0..<rows {
                values.removeAll(keepingCapacity: true)
                for column in 0..<columns {
                    values.append(Self.value(result, row, column, type: types[Int(column)]))
                }
                try body(values)
            }
        }
    }

    /// ``forEachRow(_:_:)`` for a body that throws more than the server's errors (a layout
    /// lookup's `TernError`): the first error the body throws ends the calls and is rethrown.
    ///
    /// - Throws: ``PostgreSQLError`` from the server, or what `body` throws.
    /// - Complexity: O(*n*) in the number of rows the statement returns.
    func forEachRow(_ sql: SQL, _ body: ([DatabaseValue]) throws -> Void) throws {
        var failure: (any Error)?
        try forEachRow(sql) { (values) throws(PostgreSQLError) in
            guard failure == nil else { return }
            do { try body(values) } catch { failure = error }
        }
        if let failure { throw failure }
    }

    /// Runs statements in one transaction: committed when `body` returns, rolled back when it throws.
    /// Nested calls join the outer transaction.
    func inTransaction<T>(_ body: () throws -> T) throws -> T {
        if transactionDepth > 0 { return try body() }
        try execute("BEGIN")
        transactionDepth += 1
        defer { transactionDepth -= 1 }
        do {
            let result = try body()
            try execute("COMMIT")
            return result
        } catch {
            try? execute("ROLLBACK")
            throw error
        }
    }

    /// Runs several statements given as one text (DDL Tern builds itself, no values).
    func executeScript(_ text: String) throws(PostgreSQLError) {
        guard let result = PQexec(handle, text) else { throw connectionLost(sql: text) }
        defer { PQclear(result) }
        try check(result, sql: text)
    }

    // MARK: - Non public

    /// Prepares (once) and runs a statement, handing its result to `body`.
    private func run(_ sql: SQL, _ body: (OpaquePointer) throws(PostgreSQLError) -> Void) throws(PostgreSQLError) {
        let text = Self.numberedPlaceholders(sql.text)
        let parameters = sql.arguments.map(Parameter.init)
        let key = text + "\u{0}" + parameters.map { String($0.type) }.joined(separator: ",")
        let name: String
        if let known = prepared[key] {
            name = known
        } else {
            if prepared.count >= Self.statementCacheLimit {
                try executeScript("DEALLOCATE ALL")
                prepared.removeAll()
            }
            name = "tern_\(prepared.count + 1)"
            let types = parameters.map(\.type)
            guard let result = PQprepare(handle, name, text, Int32(types.count), types) else {
                throw connectionLost(sql: text)
            }
            defer { PQclear(result) }
            try check(result, sql: text)
            prepared[key] = name
        }
        let result = withParameters(parameters) { values, lengths, formats in
            PQexecPrepared(handle, name, Int32(parameters.count), values, lengths, formats, 0)
        }
        guard let result else { throw connectionLost(sql: text) }
        defer { PQclear(result) }
        try check(result, sql: text)
        changedRowCount = Int(Self.text(PQcmdTuples(result))) ?? 0
        try body(result)
    }

    /// Calls `body` with the C arrays of parameter values, lengths and formats.
    private func withParameters<T>(
        _ parameters: [Parameter],
        _ body: (UnsafePointer<UnsafePointer<CChar>?>?, UnsafePointer<Int32>?, UnsafePointer<Int32>?) -> T
    ) -> T {
        let buffers: [UnsafeMutableRawBufferPointer?] = parameters.map { parameter in
            guard let bytes = parameter.bytes else { return nil }
            // Text parameters are read up to their NUL terminator; binary ones by length.
            let buffer = UnsafeMutableRawBufferPointer.allocate(byteCount: bytes.count + 1, alignment: 1)
            buffer.copyBytes(from: bytes)
            buffer[bytes.count] = 0
            return buffer
        }
        defer { for buffer in buffers { buffer?.deallocate() } }
        let pointers: [UnsafePointer<CChar>?] = buffers.map { buffer in
            buffer.flatMap { $0.baseAddress }.map { UnsafePointer($0.assumingMemoryBound(to: CChar.self)) }
        }
        let lengths = parameters.map { Int32($0.bytes?.count ?? 0) }
        let formats = parameters.map { $0.isBinary ? Int32(1) : 0 }
        return body(pointers, lengths, formats)
    }

    /// Throws the error a failed result reports.
    func check(_ result: OpaquePointer, sql: String) throws(PostgreSQLError) {
        switch PQresultStatus(result) {
        case PGRES_COMMAND_OK, PGRES_TUPLES_OK, PGRES_EMPTY_QUERY, PGRES_COPY_IN, PGRES_COPY_OUT: return
        default: throw Self.error(of: result, connection: handle, sql: sql)
        }
    }

    /// The error a failed result reports, without any value the server may quote.
    static func error(of result: OpaquePointer?, connection: OpaquePointer, sql: String) -> PostgreSQLError {
        guard let result, let state = PQresultErrorField(result, Int32(Character("C").asciiValue ?? 67)) else {
            return PostgreSQLError(
                .connectionFailed, "The connection to PostgreSQL failed: \(text(PQerrorMessage(connection)))", sql: sql)
        }
        let sqlState = text(state)
        // Data exceptions (class 22) may quote the offending value: their text is left out.
        let primary =
            sqlState.hasPrefix("22")
            ? "a bound value does not fit its column"
            : text(PQresultErrorField(result, Int32(Character("M").asciiValue ?? 77)))
        return PostgreSQLError(
            sqlState.hasPrefix("08") ? .connectionFailed : .serverFailure,
            "PostgreSQL refused the statement: \(primary).", sqlState: sqlState, sql: sql)
    }

    /// The error of a call that returned no result at all.
    func connectionLost(sql: String) -> PostgreSQLError {
        PostgreSQLError(
            .connectionFailed, "The connection to PostgreSQL failed: \(Self.text(PQerrorMessage(handle)))", sql: sql)
    }

    /// A C string as Swift text, without a trailing newline.
    static func text(_ pointer: UnsafePointer<CChar>?) -> String {
        guard let pointer else { return "" }
        return String(cString: pointer).trimmingCharacters(in: .whitespacesAndNewlines)
    }

    /// The statement text with each `?` outside quotes replaced by `$1`, `$2`…
    static func numberedPlaceholders(_ text: String) -> String {
        var result = ""
        result.reserveCapacity(text.utf8.count + 8)
        var number = 0
        var quote: Character?
        for character in text {
            if let open = quote {
                if character == open { quote = nil }
                result.append(character)
            } else if character == "\"" || character == "'" {
                quote = character
                result.append(character)
            } else if character == "?" {
                number += 1
                result += "$\(number)"
            } else {
                result.append(character)
            }
        }
        return result
    }

    /// A value of a text-format result column.
    private static func value(_ result: OpaquePointer, _ row: Int32, _ column: Int32, type: Oid) -> DatabaseValue {
        if PQgetisnull(result, row, column) != 0 { return .null }
        guard let bytes = PQgetvalue(result, row, column) else { return .null }
        let length = Int(PQgetlength(result, row, column))
        let buffer = UnsafeRawBufferPointer(start: bytes, count: length)
        switch type {
        case 20, 21, 23, 26:
            return NumberText.int64(buffer).map(DatabaseValue.integer) ?? .null
        case 700, 701:
            return NumberText.double(buffer).map(DatabaseValue.real) ?? .null
        case 16:
            return .integer(length > 0 && buffer[0] == UInt8(ascii: "t") ? 1 : 0)
        case 17:
            return .blob(Self.bytes(ofHex: buffer))
        default:
            return .text(String(decoding: buffer, as: UTF8.self))
        }
    }

    /// The bytes of a bytea in hex output (`\x0a1b…`).
    private static func bytes(ofHex buffer: UnsafeRawBufferPointer) -> Data {
        var data = Data(capacity: max(0, (buffer.count - 2) / 2))
        func nibble(_ byte: UInt8) -> UInt8 {
            switch byte {
            case 0x30...0x39: byte - 0x30
            case 0x61...0x66: byte - 0x61 + 10
            case 0x41...0x46: byte - 0x41 + 10
            default: 0
            }
        }
        var index = 2
        while index + 1 < buffer.count {
            data.append(nibble(buffer[index]) << 4 | nibble(buffer[index + 1]))
            index += 2
        }
        return data
    }
}

/// A bound parameter: its type (an OID, 0 to let the server infer it from context), bytes and format.
private struct Parameter {
    var type: Oid
    var bytes: [UInt8]?
    var isBinary: Bool

    init(_ value: DatabaseValue) {
        switch value {
        case .null: (type, bytes, isBinary) = (0, nil, false)
        case .integer(let number):
            (type, bytes, isBinary) = (20, withUnsafeBytes(of: number.bigEndian) { Array($0) }, true)
        case .real(let number):
            (type, bytes, isBinary) = (701, withUnsafeBytes(of: number.bitPattern.bigEndian) { Array($0) }, true)
        case .text(let text): (type, bytes, isBinary) = (0, Array(text.utf8), false)
        case .blob(let data): (type, bytes, isBinary) = (17, Array(data), true)
        }
    }
}

extension Connection: RelationalConnection {
    /// Inserts rows with one `COPY` (``copy(into:columns:rows:)``).
    ///
    /// - Parameters:
    ///   - table: The table.
    ///   - columns: The columns the values fill, in order.
    ///   - rows: The rows' values, one per column.
    /// - Throws: ``PostgreSQLError`` carrying the `COPY` statement; a unique violation has
    ///   SQLSTATE `23505`.
    /// - Complexity: O(*n*) in the size of the data; memory holds one chunk.
    func insertRows(into table: String, columns: [String], rows: [[DatabaseValue]]) throws(PostgreSQLError) {
        try copy(into: table, columns: columns, rows: rows)
    }
}

extension Connection: RelationalSession {}

extension PostgreSQLLocation {
    /// Opens a connection for code above the stores that keeps tables of its own in this
    /// location's database (the sync server's).
    ///
    /// - Throws: ``PostgreSQLError`` with code `connectionFailed` when the server cannot be reached.
    package func openSession() throws -> any RelationalSession {
        try Connection(self)
    }
}
