import Foundation
import TernCore
import TernMigration
import TernRelational

/// Global identities and sync state through migrations (docs/Sync.md, "Migrations"): every
/// object keeps its UUID, deleted objects keep theirs, and the device is told to push its whole
/// state again (the migration's changes are in no history).
extension Connection {
    /// The table of global identities.
    static let globalIdentityTable: SQL = """
        CREATE TABLE IF NOT EXISTS TERNSYNC_OBJECT (ZENTITY INTEGER NOT NULL, ZENTITYPK INTEGER NOT NULL, \
        ZUUID BLOB NOT NULL UNIQUE, ZDELETED INTEGER NOT NULL DEFAULT 0, PRIMARY KEY (ZENTITY, ZENTITYPK))
        """

    /// The table of sync state values.
    static let syncStateTable: SQL =
        "CREATE TABLE IF NOT EXISTS TERNSYNC_STATE (ZKEY VARCHAR PRIMARY KEY, ZVALUE VARCHAR NOT NULL)"

    /// Whether the database has a table.
    func hasTable(_ name: String) throws(SQLiteError) -> Bool {
        try fetchValue("SELECT COUNT(*) FROM sqlite_master WHERE type = 'table' AND name = \(name)")?.int64 == 1
    }

    /// After an in-place step (keys kept): gives the identities their entities' new numbers, and
    /// drops those of entities the step removed.
    ///
    /// - Complexity: O(*n*) in the number of identities.
    func renumberGlobalIdentities(
        from source: StoreSchema, to destination: StoreSchema, mapping: MappingModel, keyOffsets: [Int: Int64] = [:]
    ) throws(SQLiteError) {
        guard try hasTable("TERNSYNC_OBJECT") else { return }
        // Through negative numbers, so that swapped numbers never collide.
        for entityMapping in mapping.entityMappings
        where entityMapping.kind == .copy || entityMapping.kind == .transform {
            guard let from = entityMapping.sourceEntityName.flatMap({ source.entities[$0]?.number }),
                let to = entityMapping.destinationEntityName.flatMap({ destination.entities[$0]?.number })
            else { continue }
            // Objects whose entity moved under another root have new keys (`keyOffsets`).
            try execute(
                """
                UPDATE OR IGNORE TERNSYNC_OBJECT SET ZENTITY = \(Int64(-to)), ZENTITYPK = ZENTITYPK + \(keyOffsets[from] ?? 0) \
                WHERE ZENTITY = \(Int64(from))
                """)
        }
        try execute("DELETE FROM TERNSYNC_OBJECT WHERE ZENTITY > 0")
        try execute("UPDATE TERNSYNC_OBJECT SET ZENTITY = -ZENTITY")
        try requestSyncSnapshot()
    }

    /// Tells sync to push the whole state again, as a new snapshot (`SyncEngine` reads it).
    func requestSyncSnapshot() throws(SQLiteError) {
        guard try hasTable("TERNSYNC_STATE") else { return }
        let count =
            try fetchValue("SELECT ZVALUE FROM TERNSYNC_STATE WHERE ZKEY = 'snapshots'")?.string.flatMap(Int64.init)
            ?? 0
        for (key, value) in [("snapshots", count + 1), (SQLiteStore.resnapshotStateKey, count + 1)] {
            try execute(
                """
                INSERT INTO TERNSYNC_STATE (ZKEY, ZVALUE) VALUES (\(key), \(String(value))) \
                ON CONFLICT (ZKEY) DO UPDATE SET ZVALUE = excluded.ZVALUE
                """)
        }
        // A snapshot a migration interrupted starts again (SyncEngine's state keys).
        try execute("DELETE FROM TERNSYNC_STATE WHERE ZKEY IN ('snapshot', 'snapshotCursor')")
    }
}

extension SQLiteStore {
    /// During a step built beside (`connection` is the source store's): gives each destination object the
    /// identity of the source object it came from (its first destination, when a mapping made
    /// several), keeps deleted objects' identities under their destination entity, and copies
    /// the sync state with a request for a new snapshot.
    ///
    /// - Complexity: O(*n*) in the number of identities, a page at a time.
    static func carryGlobalIdentities(
        from connection: Connection, schema sourceSchema: StoreSchema, into destination: Connection,
        schema: StoreSchema,
        passes: [MappingModel], manager: SQLiteMigrationEngine
    ) throws(SQLiteError) {
        guard try connection.hasTable("TERNSYNC_OBJECT") else { return }
        try destination.execute(Connection.globalIdentityTable)
        // Deleted objects go to the entity their live rows would (custom mappings included), so
        // that their deletes are pushed after the migration.
        var targets: [String: String] = [:]
        for mapping in passes.flatMap(\.entityMappings)
        where mapping.kind == .copy || mapping.kind == .transform || mapping.kind == .custom {
            if let from = mapping.sourceEntityName, let to = mapping.destinationEntityName, targets[from] == nil {
                targets[from] = to
            }
        }
        var last: Int64 = 0
        while true {
            let rows = try connection.fetchAll(
                """
                SELECT rowid, ZENTITY, ZENTITYPK, ZUUID, ZDELETED FROM TERNSYNC_OBJECT WHERE rowid > \(last) \
                ORDER BY rowid LIMIT 500
                """)
            for row in rows {
                guard let rowid = row[0].int64, let number = row[1].int64, let key = row[2].int64,
                    let entity = try? sourceSchema.entity(number: Int(number))
                else { continue }
                if row[4].int64 == 1 {
                    // No row any more: a key no row can have.
                    guard let target = targets[entity.name], let layout = try? schema.entity(named: target) else {
                        continue
                    }
                    try destination.execute(
                        """
                        INSERT OR IGNORE INTO TERNSYNC_OBJECT (ZENTITY, ZENTITYPK, ZUUID, ZDELETED) \
                        VALUES (\(Int64(layout.number)), \(-rowid), \(row[3]), 1)
                        """)
                } else {
                    let made = manager.destinationInstances(
                        forMapping: nil, sourceInstances: [RowReference(entityName: entity.name, primaryKey: key)])
                    guard let first = made.first, let layout = try? schema.entity(named: first.entityName) else {
                        continue
                    }
                    try destination.execute(
                        """
                        INSERT OR IGNORE INTO TERNSYNC_OBJECT (ZENTITY, ZENTITYPK, ZUUID) \
                        VALUES (\(Int64(layout.number)), \(first.primaryKey), \(row[3]))
                        """)
                }
            }
            guard rows.count == 500, let next = rows.last?[0].int64 else { break }
            last = next
        }
        guard try connection.hasTable("TERNSYNC_STATE") else { return }
        try destination.execute(Connection.syncStateTable)
        for row in try connection.fetchAll("SELECT ZKEY, ZVALUE FROM TERNSYNC_STATE") {
            try destination.execute(
                "INSERT OR REPLACE INTO TERNSYNC_STATE (ZKEY, ZVALUE) VALUES (\(row[0]), \(row[1]))")
        }
        try destination.requestSyncSnapshot()
    }
}
