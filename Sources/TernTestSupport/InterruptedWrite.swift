internal import CSQLite
public import Foundation

/// Store files as a writer that crashed in the middle of its work leaves them, and folders that
/// nobody can write, for tests of what read-only opens and recovery do with them.
///
/// ```swift
/// try InterruptedWrite.copyMidTransaction(of: store, to: copy, running: "UPDATE ZPET SET ZNAME = 'x'")
/// // copy and copy-journal: a hot rollback journal, as after a kill during that UPDATE
/// ```
public enum InterruptedWrite {
    /// A failure of SQLite while making the files.
    public struct Failure: Error, CustomStringConvertible {
        /// What failed.
        public let description: String
    }

    /// Copies a rollback-journal store as it is in the middle of a transaction running `sql`:
    /// the main file with pages already overwritten (the page cache is kept small so that they
    /// spill) and the hot journal (`-journal`) that undoes them. The source keeps its state.
    ///
    /// - Parameters:
    ///   - store: A store in rollback-journal mode, holding more than a few pages of data.
    ///   - destination: Where the copy goes; `destination-journal` gets the journal.
    ///   - sql: Statements that rewrite many pages.
    /// - Throws: ``Failure`` when SQLite fails, or when no journal page reached the file.
    public static func copyMidTransaction(of store: URL, to destination: URL, running sql: String) throws {
        let connection = try open(store)
        defer { sqlite3_close_v2(connection) }
        try execute("PRAGMA journal_mode = DELETE; PRAGMA cache_size = 4; BEGIN IMMEDIATE; \(sql)", on: connection)
        defer { sqlite3_exec(connection, "ROLLBACK", nil, nil, nil) }
        guard FileManager.default.fileExists(atPath: store.path + "-journal") else {
            throw Failure(description: "no rollback journal beside \(store.path): is the store in WAL mode?")
        }
        try FileManager.default.copyItem(at: store, to: destination)
        try FileManager.default.copyItem(atPath: store.path + "-journal", toPath: destination.path + "-journal")
    }

    /// Copies a write-ahead-log store with its `-wal` file holding a committed transaction that
    /// was not checkpointed, and without its `-shm` index: as a running or crashed app leaves it
    /// when only the store and its log are copied.
    ///
    /// - Parameters:
    ///   - store: A store in WAL mode.
    ///   - destination: Where the copy goes; `destination-wal` gets the log.
    ///   - sql: Statements committed into the log.
    /// - Throws: ``Failure`` when SQLite fails.
    public static func copyWithUncheckpointedLog(of store: URL, to destination: URL, running sql: String) throws {
        let connection = try open(store)
        defer { sqlite3_close_v2(connection) }
        try execute("PRAGMA journal_mode = WAL; PRAGMA wal_autocheckpoint = 0; \(sql)", on: connection)
        try FileManager.default.copyItem(at: store, to: destination)
        try FileManager.default.copyItem(atPath: store.path + "-wal", toPath: destination.path + "-wal")
    }

    /// Every file of a store (the store, `-journal`, `-wal`, `-shm`) that exists, with its bytes.
    ///
    /// - Parameter store: The store file.
    /// - Returns: The contents by file name.
    public static func files(of store: URL) -> [String: Data] {
        var files: [String: Data] = [:]
        for suffix in ["", "-journal", "-wal", "-shm"] {
            let url = URL(fileURLWithPath: store.path + suffix)
            if let data = FileManager.default.contents(atPath: url.path) { files[url.lastPathComponent] = data }
        }
        return files
    }

    private static func open(_ store: URL) throws -> OpaquePointer {
        var connection: OpaquePointer?
        let code = sqlite3_open_v2(store.path, &connection, SQLITE_OPEN_READWRITE, nil)
        guard code == SQLITE_OK, let connection else {
            sqlite3_close_v2(connection)
            throw Failure(description: "cannot open \(store.path): SQLite error \(code)")
        }
        return connection
    }

    private static func execute(_ sql: String, on connection: OpaquePointer) throws {
        guard sqlite3_exec(connection, sql, nil, nil, nil) == SQLITE_OK else {
            throw Failure(description: "\(sql): \(String(cString: sqlite3_errmsg(connection)))")
        }
    }
}

/// Makes folders that cannot be written, even by root (whose permission checks `chmod` does not
/// stop): `chmod 0555`, then, when a file can still be created, the immutable attribute
/// (`chattr +i`, which needs root and a file system that has it).
///
/// ```swift
/// try #require(ReadOnlyFolder.lock(folder))
/// defer { ReadOnlyFolder.unlock(folder) }
/// ```
public enum ReadOnlyFolder {
    /// Whether folders can be made read-only here (checked once, on a scratch folder).
    public static let isSupported: Bool = {
        guard let folder = try? TemporaryDirectory() else { return false }
        defer { unlock(folder.url) }
        return lock(folder.url)
    }()

    /// Makes a folder read-only.
    ///
    /// - Parameter folder: The folder.
    /// - Returns: Whether creating a file in it now fails; when false the folder is left writable.
    @discardableResult
    public static func lock(_ folder: URL) -> Bool {
        try? FileManager.default.setAttributes([.posixPermissions: 0o555], ofItemAtPath: folder.path)
        if !canCreateFile(in: folder) { return true }
        run("/usr/bin/chattr", ["+i", folder.path])
        if !canCreateFile(in: folder) { return true }
        unlock(folder)
        return false
    }

    /// Makes a folder writable again (undoes ``lock(_:)``).
    ///
    /// - Parameter folder: The folder.
    public static func unlock(_ folder: URL) {
        if FileManager.default.isExecutableFile(atPath: "/usr/bin/chattr") {
            run("/usr/bin/chattr", ["-i", folder.path])
        }
        try? FileManager.default.setAttributes([.posixPermissions: 0o755], ofItemAtPath: folder.path)
    }

    private static func canCreateFile(in folder: URL) -> Bool {
        let probe = folder.appendingPathComponent(".probe-\(UUID().uuidString)")
        guard FileManager.default.createFile(atPath: probe.path, contents: Data()) else { return false }
        try? FileManager.default.removeItem(at: probe)
        return true
    }

    private static func run(_ tool: String, _ arguments: [String]) {
        guard FileManager.default.isExecutableFile(atPath: tool),
            let child = try? ChildProcess(URL(fileURLWithPath: tool), arguments)
        else { return }
        child.waitUntilExit()
    }
}
