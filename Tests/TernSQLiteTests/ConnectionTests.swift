import Foundation
import TernCore
import TernRelational
import TernTestSupport
import Testing

@testable import TernSQLite

@Suite struct ConnectionTests {
    static let hostile = ["it's", "\"quoted\"", "'; DROP TABLE x; --", "nul\u{0}inside", "🦅 émoji", ""]

    func makeConnection(_ folder: TemporaryDirectory, _ configuration: SQLiteConfiguration = .init()) throws
        -> Connection
    {
        try Connection(path: folder.path("test.sqlite").path, configuration: configuration)
    }

    @Test func interpolationBindsValues() {
        let name = "'; DROP TABLE x; --"
        let sql: SQL = "SELECT * FROM \(.identifier("Z\"T")) WHERE a = \(name) AND b = \(42) AND c = \(nil as String?)"
        #expect(sql.text == "SELECT * FROM \"Z\"\"T\" WHERE a = ? AND b = ? AND c = ?")
        #expect(sql.arguments == [.text(name), .integer(42), .null])
    }

    @Test func hostileValuesAndIdentifiersRoundTrip() throws {
        let folder = try TemporaryDirectory()
        let connection = try makeConnection(folder)
        for (index, name) in Self.hostile.enumerated() where !name.contains("\u{0}") && !name.isEmpty {
            let table = SQL.identifier("T_" + name)
            let column = SQL.identifier(name)
            try connection.executeOnce("CREATE TABLE \(table) (\(column))")
            for value in Self.hostile {
                try connection.execute("INSERT INTO \(table) (\(column)) VALUES (\(value))")
            }
            let values = try connection.fetchAll("SELECT \(column) FROM \(table) ORDER BY rowid").map { $0[0] }
            #expect(values == Self.hostile.map { .text($0) }, "table \(index)")
        }
        let tables = try connection.fetchAll("SELECT name FROM sqlite_master WHERE type = 'table'")
        #expect(tables.count == Self.hostile.count - 2)
    }

    @Test func blobsKeepTheirBytesAndEmptyBlobsAreNotNull() throws {
        let folder = try TemporaryDirectory()
        let connection = try makeConnection(folder)
        try connection.executeOnce("CREATE TABLE t (b BLOB)")
        let bytes = Data([0, 1, 2, 0, 255])
        try connection.execute("INSERT INTO t VALUES (\(bytes))")
        try connection.execute("INSERT INTO t VALUES (\(Data()))")
        let values = try connection.fetchAll("SELECT b, typeof(b) FROM t ORDER BY rowid")
        #expect(values == [[.blob(bytes), .text("blob")], [.blob(Data()), .text("blob")]])
    }

    @Test func errorsCarryTheSQLButNeverTheValues() throws {
        let folder = try TemporaryDirectory()
        let connection = try makeConnection(folder)
        try connection.executeOnce("CREATE TABLE t (x UNIQUE)")
        let secret = "secret-value-123"
        try connection.execute("INSERT INTO t VALUES (\(secret))")
        let error = try #require(throws: SQLiteError.self) {
            try connection.execute("INSERT INTO t VALUES (\(secret))")
        }
        #expect(error.code == .sqliteFailure)
        #expect(error.resultCode == 19)
        #expect(error.extendedResultCode == 2067)
        #expect(error.sql == "INSERT INTO t VALUES (?)")
        #expect(!error.description.contains(secret))
        let syntax = try #require(throws: SQLiteError.self) { try connection.execute("SELEC 1") }
        #expect(syntax.sql == "SELEC 1")
        #expect(throws: SQLiteError.self) { try connection.execute("SELECT 1; DROP TABLE t") }
        try connection.execute("SELECT 1 ;  ")
        #expect(try connection.fetchValue("SELECT COUNT(*) FROM t") == .integer(1))
    }

    @Test func transactionsCommitOrRollBack() throws {
        let folder = try TemporaryDirectory()
        let connection = try makeConnection(folder)
        try connection.executeOnce("CREATE TABLE t (x)")
        try connection.inTransaction(.immediate) { () throws(SQLiteError) in
            try connection.execute("INSERT INTO t VALUES (\(1))")
        }
        #expect(throws: SQLiteError.self) {
            try connection.inTransaction { () throws(SQLiteError) in
                try connection.execute("INSERT INTO t VALUES (\(2))")
                try connection.inTransaction { () throws(SQLiteError) in
                    try connection.execute("INSERT INTO t VALUES (\(3))")
                }
                throw SQLiteError(.sqliteFailure, "stop")
            }
        }
        #expect(try connection.fetchAll("SELECT x FROM t") == [[.integer(1)]])
        #expect(!connection.isInTransaction)
    }

    @Test func configurationIsApplied() throws {
        let folder = try TemporaryDirectory()
        var configuration = SQLiteConfiguration()
        configuration.synchronous = .normal
        let connection = try makeConnection(folder, configuration)
        #expect(try connection.fetchValue("PRAGMA journal_mode") == .text("wal"))
        #expect(try connection.fetchValue("PRAGMA auto_vacuum") == .integer(2))
        #expect(try connection.fetchValue("PRAGMA synchronous") == .integer(1))
        configuration.fullSync = true
        configuration.journalMode = .delete
        let second = try makeConnection(folder, configuration)
        #expect(try second.fetchValue("PRAGMA synchronous") == .integer(2))
        #expect(try second.fetchValue("PRAGMA journal_mode") == .text("delete"))
    }

    @Test func readOnlyConnectionsRefuseWritesAndCreateNoFiles() throws {
        let folder = try TemporaryDirectory()
        do {
            let writer = try makeConnection(folder)
            try writer.executeOnce("CREATE TABLE t (x)")
            try writer.execute("INSERT INTO t VALUES (\(7))")
            try writer.executeOnce("PRAGMA wal_checkpoint(TRUNCATE)")
        }
        try? FileManager.default.removeItem(at: folder.path("test.sqlite-wal"))
        try? FileManager.default.removeItem(at: folder.path("test.sqlite-shm"))
        let before = folder.fileNames
        #expect(before == ["test.sqlite"])
        let reader = try makeConnection(folder, .readOnly)
        #expect(try reader.fetchValue("SELECT x FROM t") == .integer(7))
        let error = try #require(throws: SQLiteError.self) { try reader.execute("INSERT INTO t VALUES (\(8))") }
        #expect(error.code == .readOnly)
        #expect(folder.fileNames == before)
    }

    @Test func statementsAreCachedBySQL() throws {
        let folder = try TemporaryDirectory()
        let connection = try makeConnection(folder)
        for value in 0..<10 { _ = try connection.fetchValue("SELECT \(value) + 1") }
        #expect(try connection.fetchValue("SELECT \(41) + 1") == .integer(42))
    }

    @Test func directoriesCanBeSynced() throws {
        let folder = try TemporaryDirectory()
        try FileSystem.synchronizeDirectory(atPath: folder.url.path)
        #expect(throws: TernError.self) { try FileSystem.synchronizeDirectory(atPath: folder.path("none").path) }
    }
}
