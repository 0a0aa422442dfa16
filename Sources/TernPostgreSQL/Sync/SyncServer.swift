import Foundation
import TernSQLite

/// The server side of sync: a PostgreSQL schema holding the change log (transactions in server
/// order, `seq`) and the current state of every object by global identifier (docs/Sync.md).
///
/// Pushes are serialized by a table lock, so server order is commit order. Each property keeps
/// the value of its last write in server order (later write wins). An insert whose uniqueness
/// key (or, for an entity without one, whose content) matches an object another device pushed
/// first becomes an update of that object, and its identifier an alias of it.
///
/// ```swift
/// let server = try SyncServer(location: "postgresql://localhost/kitchen")
/// let batch = try await server.pull(after: 0)
/// ```
public actor SyncServer {
    /// The connection, owned by this actor.
    private let connection: Connection

    /// Connects and creates the sync tables when they are missing.
    ///
    /// - Parameter location: A PostgreSQL connection URI or `key=value` string (a `schema`
    ///   parameter puts the tables in that schema).
    /// - Throws: ``PostgreSQLError`` when the server cannot be reached or the tables cannot be made.
    public init(location: String) throws {
        connection = try Connection(try PostgreSQLLocation(location))
        try connection.executeScript("""
            CREATE TABLE IF NOT EXISTS tern_sync_transactions (seq bigserial PRIMARY KEY, device text NOT NULL,
              local_number bigint NOT NULL, author text, model_digest text NOT NULL,
              committed_at timestamptz NOT NULL DEFAULT now(), UNIQUE (device, local_number));
            CREATE TABLE IF NOT EXISTS tern_sync_objects (object text PRIMARY KEY, entity text NOT NULL,
              unique_key text, is_content_key integer NOT NULL, device text NOT NULL,
              deleted integer NOT NULL DEFAULT 0, seq bigint NOT NULL);
            CREATE INDEX IF NOT EXISTS tern_sync_objects_key ON tern_sync_objects (entity, unique_key);
            CREATE INDEX IF NOT EXISTS tern_sync_objects_seq ON tern_sync_objects (seq);
            CREATE TABLE IF NOT EXISTS tern_sync_values (object text NOT NULL, property text NOT NULL,
              kind text NOT NULL, value text, seq bigint NOT NULL, PRIMARY KEY (object, property));
            CREATE TABLE IF NOT EXISTS tern_sync_aliases (alias text PRIMARY KEY, object text NOT NULL,
              device text NOT NULL, seq bigint NOT NULL);
            """)
    }

    // MARK: - Push

    /// Records local transactions, all in one server transaction. A transaction the server
    /// already has (same device and local number) is skipped, so a push re-sent after a kill
    /// changes nothing.
    ///
    /// - Parameter transactions: The transactions, oldest first.
    /// - Returns: What was recorded.
    /// - Throws: ``PostgreSQLError``; nothing is recorded when it throws.
    /// - Complexity: O(*c*) statements for *c* changes.
    public func push(_ transactions: [SyncPushTransaction]) throws -> SyncPushResult {
        try connection.inTransaction {
            try connection.execute("LOCK TABLE tern_sync_transactions IN EXCLUSIVE MODE")
            var result = SyncPushResult(transactions: 0, changes: 0, merged: 0)
            for transaction in transactions {
                guard let seq = try connection.fetchValue("""
                    INSERT INTO tern_sync_transactions (device, local_number, author, model_digest) \
                    VALUES (\(transaction.device.uuidString), \(transaction.localNumber), \
                    \(transaction.author.map(DatabaseValue.text) ?? .null), \(transaction.modelDigest)) \
                    ON CONFLICT (device, local_number) DO NOTHING RETURNING seq
                    """)?.int64
                else { continue }
                result.transactions += 1
                result.changes += transaction.changes.count
                result.merged += try record(transaction, seq: seq)
            }
            return result
        }
    }

    // MARK: - Pull

    /// The objects changed after a server sequence number, with the aliases made since and the
    /// model digests of the transactions involved, read in one consistent snapshot.
    ///
    /// - Parameter sequence: The last sequence number the device has applied (0 for none).
    /// - Returns: The batch.
    /// - Throws: ``PostgreSQLError``.
    /// - Complexity: O(*n*) for *n* changed objects and their values.
    public func pull(after sequence: Int64) throws -> SyncPullBatch {
        try connection.execute("BEGIN ISOLATION LEVEL REPEATABLE READ")
        do {
            let batch = try readBatch(after: sequence)
            try connection.execute("COMMIT")
            return batch
        } catch {
            try? connection.execute("ROLLBACK")
            throw error
        }
    }

    // MARK: - Non public

    /// Records one transaction's changes under `seq`; returns how many inserts were merged.
    private func record(_ transaction: SyncPushTransaction, seq: Int64) throws -> Int {
        let device = transaction.device.uuidString
        var merged = 0
        // Identities first: keyed entities before content-identified ones, so that content keys
        // see their owners' final identifiers.
        let inserts = transaction.changes.filter { $0.kind == .insert }
        for change in inserts.filter({ $0.uniqueKey != nil }) + inserts.filter({ $0.uniqueKey == nil }) {
            let object = try resolve(change.object)
            guard try connection.fetchValue("SELECT 1 FROM tern_sync_objects WHERE object = \(object)") == nil else {
                continue
            }
            let isContent = change.uniqueKey == nil
            let key = try identityKey(of: change, isContent: isContent)
            let owner: String? = if isContent {
                try connection.fetchValue("""
                    SELECT o.object FROM tern_sync_objects o WHERE o.entity = \(change.entity) AND o.unique_key = \(key) \
                    AND o.deleted = 0 AND o.device <> \(device) AND NOT EXISTS (SELECT 1 FROM tern_sync_aliases a \
                    WHERE a.object = o.object AND a.device = \(device)) ORDER BY o.seq, o.object LIMIT 1
                    """)?.string
            } else {
                try connection.fetchValue("""
                    SELECT object FROM tern_sync_objects WHERE entity = \(change.entity) AND unique_key = \(key) \
                    AND deleted = 0 ORDER BY seq, object LIMIT 1
                    """)?.string
            }
            if let owner {
                try connection.execute("""
                    INSERT INTO tern_sync_aliases (alias, object, device, seq) VALUES (\(object), \(owner), \(device), \(seq)) \
                    ON CONFLICT (alias) DO NOTHING
                    """)
                merged += 1
            } else {
                try connection.execute("""
                    INSERT INTO tern_sync_objects (object, entity, unique_key, is_content_key, device, seq) \
                    VALUES (\(object), \(change.entity), \(key), \(isContent ? 1 : 0), \(device), \(seq))
                    """)
            }
        }
        for change in transaction.changes {
            let object = try resolve(change.object)
            guard let deleted = try connection.fetchValue(
                "SELECT deleted FROM tern_sync_objects WHERE object = \(object)")?.int64, deleted == 0
            else { continue }  // unknown, or deleted: a delete is final
            if change.kind == .delete {
                try connection.execute("UPDATE tern_sync_objects SET deleted = 1, seq = \(seq) WHERE object = \(object)")
                continue
            }
            for (name, value) in change.attributes {
                try write(object, name, kind: "a", value: value, seq: seq)
            }
            for (name, destination) in change.toOne {
                try write(object, name, kind: "o", value: try destination.map(resolve), seq: seq)
            }
            for (name, destinations) in change.toMany {
                var seen: Set<String> = []
                let resolved = try destinations.map(resolve).filter { seen.insert($0).inserted }
                try write(object, name, kind: "m", value: resolved.joined(separator: ","), seq: seq)
            }
            try connection.execute("UPDATE tern_sync_objects SET seq = \(seq) WHERE object = \(object)")
        }
        return merged
    }

    /// Sets one property's value (the latest write in server order).
    private func write(_ object: String, _ property: String, kind: String, value: String?, seq: Int64) throws {
        try connection.execute("""
            INSERT INTO tern_sync_values (object, property, kind, value, seq) \
            VALUES (\(object), \(property), \(kind), \(value.map(DatabaseValue.text) ?? .null), \(seq)) \
            ON CONFLICT (object, property) DO UPDATE SET kind = excluded.kind, value = excluded.value, seq = excluded.seq
            """)
    }

    /// An identifier after following aliases, as text.
    private func resolve(_ identifier: UUID) throws -> String {
        let text = identifier.uuidString
        return try connection.fetchValue("SELECT object FROM tern_sync_aliases WHERE alias = \(text)")?.string ?? text
    }

    /// The canonical text of an insert's identity: its uniqueness key's values, or its content.
    private func identityKey(of change: SyncChange, isContent: Bool) throws -> String {
        var parts: [String] = []
        let names = change.uniqueKey ?? change.attributes.keys.sorted()
        for name in names {
            parts.append(name + "=" + ((change.attributes[name] ?? nil).map { "v" + $0 } ?? "-"))
        }
        if isContent {
            for name in change.toOne.keys.sorted() {
                let destination = try (change.toOne[name] ?? nil).map(resolve)
                parts.append(name + ">" + (destination ?? "-"))
            }
        }
        return parts.map { $0.replacingOccurrences(of: "\u{1F}", with: "\u{1F}\u{1F}") }.joined(separator: "\u{1F}|")
    }

    /// Reads a pull batch (inside the caller's snapshot).
    private func readBatch(after sequence: Int64) throws -> SyncPullBatch {
        let last = try connection.fetchValue("SELECT COALESCE(MAX(seq), 0) FROM tern_sync_transactions")?.int64 ?? 0
        var digests: [String: Int64] = [:]
        for row in try connection.fetchAll("""
            SELECT model_digest, MIN(seq) FROM tern_sync_transactions WHERE seq > \(sequence) GROUP BY model_digest
            """) {
            if let digest = row[0].string, let seq = row[1].int64 { digests[digest] = seq }
        }
        var aliases: [UUID: UUID] = [:]
        for row in try connection.fetchAll("SELECT alias, object FROM tern_sync_aliases WHERE seq > \(sequence)") {
            if let alias = row[0].string.flatMap(UUID.init), let owner = row[1].string.flatMap(UUID.init) {
                aliases[alias] = owner
            }
        }
        var objects: [String: SyncObjectState] = [:]
        var order: [String] = []
        for row in try connection.fetchAll("""
            SELECT object, entity, deleted FROM tern_sync_objects WHERE seq > \(sequence) ORDER BY seq, object
            """) {
            guard let text = row[0].string, let object = UUID(uuidString: text), let entity = row[1].string else { continue }
            objects[text] = SyncObjectState(
                object: object, entity: entity, isDeleted: row[2].int64 == 1, attributes: [:], toOne: [:], toMany: [:])
            order.append(text)
        }
        for row in try connection.fetchAll("""
            SELECT v.object, v.property, v.kind, v.value FROM tern_sync_values v JOIN tern_sync_objects o \
            ON o.object = v.object WHERE o.seq > \(sequence) AND o.deleted = 0
            """) {
            guard let object = row[0].string, let property = row[1].string, let kind = row[2].string else { continue }
            let value = row[3].string
            switch kind {
            case "o": objects[object]?.toOne[property] = .some(value.flatMap(UUID.init))
            case "m":
                objects[object]?.toMany[property] = (value ?? "").split(separator: ",").compactMap { UUID(uuidString: String($0)) }
            default: objects[object]?.attributes[property] = .some(value)
            }
        }
        return SyncPullBatch(
            lastSequence: last, modelDigests: digests, aliases: aliases, objects: order.compactMap { objects[$0] })
    }
}
