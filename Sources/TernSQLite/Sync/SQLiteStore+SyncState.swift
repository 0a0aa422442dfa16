public import Foundation
public import TernCore

extension SQLiteStore {
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

    /// Sets values of the sync state, in one transaction.
    ///
    /// - Parameter values: The values by name.
    /// - Throws: ``SQLiteError`` when the store does not track global identities or cannot be written.
    public func setSyncState(_ values: [String: String]) throws {
        try requireWritable()
        try requireGlobalIdentifiers()
        try createSyncStateTable()
        try connection.inTransaction(.immediate) { () throws(SQLiteError) in try writeSyncState(values) }
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
    /// - Returns: The new version of every inserted and updated row.
    /// - Throws: As ``save(_:)`` does.
    @discardableResult
    public func saveSynced(
        _ changes: StoreChangeSet, identifiers: [RowReference: UUID], renamed: [UUID: UUID] = [:],
        state: [String: String]
    ) throws -> StoreSaveResult {
        try requireGlobalIdentifiers()
        try createSyncStateTable()
        return try save(changes, identifiers: identifiers) { [self] in
            for (old, new) in renamed.sorted(by: { $0.key.uuidString < $1.key.uuidString }) {
                try connection.execute(
                    "UPDATE TERNSYNC_OBJECT SET ZUUID = \(Self.bytes(of: new)) WHERE ZUUID = \(Self.bytes(of: old))")
            }
            try writeSyncState(state)
        }
    }

    // MARK: - Non public

    /// Creates the state table if needed.
    private func createSyncStateTable() throws(SQLiteError) {
        try connection.execute(
            "CREATE TABLE IF NOT EXISTS TERNSYNC_STATE (ZKEY VARCHAR PRIMARY KEY, ZVALUE VARCHAR NOT NULL)")
    }

    /// Upserts state values (inside the caller's transaction).
    private func writeSyncState(_ values: [String: String]) throws(SQLiteError) {
        for (key, value) in values.sorted(by: { $0.key < $1.key }) {
            try connection.execute("""
                INSERT INTO TERNSYNC_STATE (ZKEY, ZVALUE) VALUES (\(key), \(value)) \
                ON CONFLICT (ZKEY) DO UPDATE SET ZVALUE = excluded.ZVALUE
                """)
        }
    }
}
