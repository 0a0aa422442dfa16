import Foundation
import TernCore
import TernRelational

extension SQLiteStore {
    // MARK: - Allocating primary keys

    /// Reserves a block of primary keys for new objects of an entity.
    ///
    /// Keys come from the `Z_MAX` of the entity's inheritance root (the hierarchy shares one key
    /// space), inside an IMMEDIATE transaction, so that two connections, in this process or
    /// another, never receive the same key.
    ///
    /// With write-ahead logging the reservation commits without its own `fsync`: the log is
    /// sequential, so the commit that first makes a row with one of these keys durable makes the
    /// reservation durable too, and a reservation lost to a power cut was used by no durable row.
    ///
    /// - Parameters:
    ///   - entity: The entity of the new objects.
    ///   - count: How many keys to reserve.
    /// - Returns: The reserved keys.
    /// - Throws: ``SQLiteError`` when the store is read-only, the entity unknown or the lock
    ///   cannot be taken within the busy timeout.
    package func allocatePrimaryKeys(for entity: String, count: Int) throws -> ClosedRange<Int64> {
        precondition(count > 0, "allocate at least one key")
        try requireWritable()
        let layout = try schema.entity(named: entity)
        // Inside a transaction (a sync pull) the level cannot change, and the enclosing commit syncs anyway.
        let relaxed =
            configuration.journalMode == .wal && !configuration.fullSync && configuration.synchronous != .off
            && !connection.isInTransaction
        if relaxed { try connection.execute("PRAGMA synchronous = NORMAL") }
        defer {
            // Back to the configured level for the saves; failing here leaves NORMAL, still safe with WAL.
            if relaxed {
                try? connection.execute(
                    SQL(unsafeSQL: "PRAGMA synchronous = \(configuration.effectiveSynchronous.rawValue.uppercased())"))
            }
        }
        return try connection.inTransaction(.immediate) { () throws in
            try reservePrimaryKeys(for: layout, count: count)
        }
    }

    /// Reserves keys; the caller holds the write lock.
    func reservePrimaryKeys(for layout: EntityLayout, count: Int) throws -> ClosedRange<Int64> {
        let root = try schema.entity(named: layout.rootName)
        let select: SQL = "SELECT Z_MAX FROM Z_PRIMARYKEY WHERE Z_ENT = \(root.number)"
        guard let current = try connection.fetchValue(select) else {
            throw TernError(
                .schemaMismatch, "Z_PRIMARYKEY has no row for entity \(SQL.quoted(root.name)); the store is damaged.",
                path: url.path, sql: select.text)
        }
        // Z_MAX should never lag behind the table, but a key handed out twice would be worse.
        let largest = try connection.fetchValue("SELECT MAX(Z_PK) FROM \(.identifier(root.table))")?.int64 ?? 0
        let first = max(current.int64 ?? 0, largest) + 1
        let last = first + Int64(count) - 1
        try connection.execute("UPDATE Z_PRIMARYKEY SET Z_MAX = \(last) WHERE Z_ENT = \(root.number)")
        return first...last
    }

    /// The last primary key each inheritance root handed out: its `Z_MAX`, which stays above
    /// the keys of deleted objects.
    ///
    /// - Throws: ``SQLiteError`` when `Z_PRIMARYKEY` cannot be read.
    package func lastPrimaryKeys() throws -> [String: Int64] {
        schema.lastPrimaryKeys(fromCounters: try connection.fetchAll("SELECT Z_ENT, Z_MAX FROM Z_PRIMARYKEY"))
    }

    /// Raises the `Z_MAX` of inheritance roots to at least the keys given, never lowering one,
    /// so that a copy does not hand out again a key its source gave a deleted object.
    ///
    /// - Parameter keys: The last primary key handed out, by inheritance root; names that are
    ///   not a root of this store's model are ignored.
    /// - Throws: ``SQLiteError`` when the store is read-only or cannot be written.
    package func raiseLastPrimaryKeys(to keys: [String: Int64]) throws {
        try requireWritable()
        let counters = schema.rootCounters(keys)
        guard !counters.isEmpty else { return }
        try connection.inTransaction(.immediate) { () throws in
            for (number, key) in counters {
                try connection.execute(
                    "UPDATE Z_PRIMARYKEY SET Z_MAX = \(key) WHERE Z_ENT = \(number) AND Z_MAX < \(key)")
            }
        }
    }
}

extension SQLiteStore: PrimaryKeyCounting {}
