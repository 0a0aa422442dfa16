public import Foundation
public import TernCore
import TernRelational

extension SQLiteStore: SyncableStore {
    // MARK: - Sync state

    /// A value the sync engine keeps in the store (`TERNSYNC_STATE`): its device identifier and
    /// its tokens.
    ///
    /// - Parameter key: The value's name.
    /// - Returns: The value, or nil when it was never set.
    /// - Throws: ``SQLiteError`` when the store does not track global identities or cannot be read.
    public func syncState(forKey key: String) throws -> String? {
        try requireGlobalIdentifiers()
        try createSyncStateTable()
        return try connection.fetchValue("SELECT ZVALUE FROM TERNSYNC_STATE WHERE ZKEY = \(key)")?.string
    }

    /// The values of the sync state whose names start with a prefix.
    ///
    /// - Parameter prefix: The names' start.
    /// - Returns: The values by name.
    /// - Throws: ``SQLiteError`` when the store does not track global identities or cannot be read.
    /// - Complexity: O(*k*) for *k* matching values.
    public func syncStates(withPrefix prefix: String) throws -> [String: String] {
        try requireGlobalIdentifiers()
        try createSyncStateTable()
        var values: [String: String] = [:]
        try connection.forEachRow(
            """
            SELECT ZKEY, ZVALUE FROM TERNSYNC_STATE WHERE substr(ZKEY, 1, \(Int64(prefix.utf8.count))) = \(prefix)
            """
        ) { row in
            if let key = row[0].string, let value = row[1].string { values[key] = value }
        }
        return values
    }

    /// Sets and removes values of the sync state, in one transaction.
    ///
    /// - Parameters:
    ///   - values: The values to set, by name.
    ///   - removing: The names of values to remove.
    /// - Throws: ``SQLiteError`` when the store does not track global identities or cannot be written.
    public func setSyncState(_ values: [String: String], removing: [String]) throws {
        try requireWritable()
        try requireGlobalIdentifiers()
        try createSyncStateTable()
        try connection.inTransaction(.immediate) { () throws(SQLiteError) in
            try writeSyncState(values)
            try removeSyncState(removing)
        }
    }

    /// Saves rows received from other devices: inserted rows take the given global identifiers,
    /// identifiers are renamed (merged objects), and the sync state is written, all in the save's
    /// one transaction, so that a kill leaves either nothing or everything.
    ///
    /// - Parameters:
    ///   - changes: The rows to write (its author is normally `tern.sync`).
    ///   - identifiers: The identifiers of inserted rows.
    ///   - renamed: Identifiers to replace (old to new), applied before the rows are written.
    ///   - state: Sync state values to set.
    ///   - removing: Names of sync state values to remove.
    /// - Returns: The new version of every inserted and updated row.
    /// - Throws: As ``save(_:)`` does.
    @discardableResult
    public func saveSynced(
        _ changes: StoreChangeSet, identifiers: [RowReference: UUID], renamed: [UUID: UUID] = [:],
        state: [String: String], removing: [String] = []
    ) throws -> StoreSaveResult {
        try requireGlobalIdentifiers()
        try createSyncStateTable()
        return try save(changes, identifiers: identifiers) { [self] in
            for (old, new) in renamed.sorted(by: { $0.key.uuidString < $1.key.uuidString }) {
                try connection.execute(
                    "UPDATE TERNSYNC_OBJECT SET ZUUID = \(Self.bytes(of: new)) WHERE ZUUID = \(Self.bytes(of: old))")
            }
            try writeSyncState(state)
            try removeSyncState(removing)
        }
    }

    /// Runs `body` on the store's executor inside one IMMEDIATE transaction: the saves it makes
    /// (``saveSynced(_:identifiers:renamed:state:removing:)``) commit together or not at all, no
    /// other writer (connection or process) can change the store in between, and nothing else
    /// runs on this store until it returns. A sync pull applies all its pages this way.
    ///
    /// - Parameter body: The work; it gets the store isolated, so it calls the store synchronously.
    /// - Returns: What `body` returns.
    /// - Throws: ``SQLiteError`` when the store does not track global identities or cannot be
    ///   written, or what `body` throws; then nothing `body` wrote is kept.
    public func inSyncTransaction<Result: Sendable>(
        _ body: @Sendable (isolated any SyncableStore) throws -> Result
    ) throws -> Result {
        try requireWritable()
        try requireGlobalIdentifiers()
        try createSyncStateTable()
        precondition(filesOfSyncTransaction == nil, "inSyncTransaction does not nest")
        filesOfSyncTransaction = ([], [])
        defer { filesOfSyncTransaction = nil }
        do {
            let result = try connection.inTransaction(.immediate, throwing: { try body(self) })
            externalData.removeFiles(named: filesOfSyncTransaction?.replaced ?? [])
            return result
        } catch {
            externalData.removeFiles(named: filesOfSyncTransaction?.written ?? [])
            throw error
        }
    }

    // MARK: - Staged pull pages

    /// Keeps a page a sync pull downloaded (`TERNSYNC_INCOMING`), with the cursor after it, in
    /// one transaction; the app's data is untouched until the pull applies the staged pages.
    ///
    /// - Parameters:
    ///   - page: The page, encoded by the sync engine.
    ///   - cursor: Where the next page starts.
    /// - Throws: ``SQLiteError`` when the store does not track global identities or cannot be written.
    public func stageSyncPage(_ page: Data, cursor: String) throws {
        try requireWritable()
        try requireGlobalIdentifiers()
        try connection.inTransaction(.immediate) { () throws(SQLiteError) in
            try createStagingTable()
            try connection.execute("INSERT INTO TERNSYNC_INCOMING (ZPAGE, ZCURSOR) VALUES (\(page), \(cursor))")
        }
    }

    /// The cursor after the last staged page, or nil when no page is staged.
    ///
    /// - Returns: The cursor's text.
    /// - Throws: ``SQLiteError`` when the store does not track global identities or cannot be read.
    public func stagedSyncCursor() throws -> String? {
        try requireGlobalIdentifiers()
        guard try connection.hasTable("TERNSYNC_INCOMING") else { return nil }
        return try connection.fetchValue("SELECT ZCURSOR FROM TERNSYNC_INCOMING ORDER BY ZNUMBER DESC LIMIT 1")?.string
    }

    /// The first staged page after a page number.
    ///
    /// - Parameter number: The number of the last page read (0 for the first page).
    /// - Returns: The page's number and content, or nil when no page follows.
    /// - Throws: ``SQLiteError`` when the store does not track global identities or cannot be read.
    public func stagedSyncPage(after number: Int64) throws -> (number: Int64, page: Data)? {
        try requireGlobalIdentifiers()
        guard try connection.hasTable("TERNSYNC_INCOMING") else { return nil }
        guard
            let row = try connection.fetchOne(
                "SELECT ZNUMBER, ZPAGE FROM TERNSYNC_INCOMING WHERE ZNUMBER > \(number) ORDER BY ZNUMBER LIMIT 1"),
            let found = row[0].int64, let page = row[1].data
        else { return nil }
        return (found, page)
    }

    /// Removes every staged page (inside ``inSyncTransaction(_:)``: when it commits).
    ///
    /// - Throws: ``SQLiteError`` when the store does not track global identities or cannot be written.
    public func removeStagedSyncPages() throws {
        try requireWritable()
        try requireGlobalIdentifiers()
        guard try connection.hasTable("TERNSYNC_INCOMING") else { return }
        try connection.execute("DELETE FROM TERNSYNC_INCOMING")
    }

    // MARK: - Non public

    /// Creates the table of staged pull pages if needed.
    private func createStagingTable() throws(SQLiteError) {
        try connection.execute(
            """
            CREATE TABLE IF NOT EXISTS TERNSYNC_INCOMING (ZNUMBER INTEGER PRIMARY KEY AUTOINCREMENT, \
            ZPAGE BLOB NOT NULL, ZCURSOR VARCHAR NOT NULL)
            """)
    }

    /// Creates the state table if needed.
    private func createSyncStateTable() throws(SQLiteError) {
        try connection.execute(Connection.syncStateTable)
    }

    /// Upserts state values (inside the caller's transaction).
    private func writeSyncState(_ values: [String: String]) throws(SQLiteError) {
        for (key, value) in values.sorted(by: { $0.key < $1.key }) {
            try connection.execute(
                """
                INSERT INTO TERNSYNC_STATE (ZKEY, ZVALUE) VALUES (\(key), \(value)) \
                ON CONFLICT (ZKEY) DO UPDATE SET ZVALUE = excluded.ZVALUE
                """)
        }
    }

    /// Removes state values (inside the caller's transaction).
    private func removeSyncState(_ keys: [String]) throws(SQLiteError) {
        for key in keys.sorted() {
            try connection.execute("DELETE FROM TERNSYNC_STATE WHERE ZKEY = \(key)")
        }
    }
}
