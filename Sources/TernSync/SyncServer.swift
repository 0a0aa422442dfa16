public import Foundation
import TernCore
import TernPostgreSQL
import TernRelational

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
    private let connection: any RelationalSession

    /// Connects and creates the sync tables when they are missing.
    ///
    /// - Parameter location: A PostgreSQL connection URI or `key=value` string (a `schema`
    ///   parameter puts the tables in that schema).
    /// - Throws: ``/TernPostgreSQL/PostgreSQLError`` when the server cannot be reached or the tables cannot be made.
    public init(location: String) throws {
        connection = try PostgreSQLLocation(location).openSession()
        // One script is one transaction; the lock makes sessions creating the tables at once (two
        // devices, or a device and the backend of one killed while creating them) wait for each
        // other, where CREATE TABLE IF NOT EXISTS alone can fail on PostgreSQL's catalog.
        try connection.executeScript(
            """
            SELECT pg_advisory_xact_lock(hashtext('tern_sync_tables'));
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
            CREATE TABLE IF NOT EXISTS tern_sync_devices (device text PRIMARY KEY, pulled bigint NOT NULL);
            CREATE TABLE IF NOT EXISTS tern_sync_settings (name text PRIMARY KEY, value bigint NOT NULL);
            ALTER TABLE tern_sync_objects ADD COLUMN IF NOT EXISTS echo_device text;
            CREATE TABLE IF NOT EXISTS tern_sync_staged (device text NOT NULL, local_number bigint NOT NULL,
              part integer NOT NULL, changes text NOT NULL, PRIMARY KEY (device, local_number, part));
            """)
    }

    /// Decides a concurrent write of a property (see ``SyncWriteConflict``).
    public typealias ConflictHandler = @Sendable (SyncWriteConflict) -> SyncWriteChoice

    // MARK: - Push

    /// Records local transactions, all in one server transaction. A transaction the server
    /// already has (same device and local number) is skipped, so a push re-sent after a kill
    /// changes nothing.
    ///
    /// A property the pushing device writes that another device wrote after the transaction's
    /// `basedOn` is a conflict: `resolve` decides it (by default the pushed value wins, as the
    /// later write in server order). A snapshot transaction keeps the other device's value.
    ///
    /// - Parameters:
    ///   - transactions: The transactions, oldest first.
    ///   - resolve: Decides conflicting writes; nil: the pushed value wins.
    /// - Returns: What was recorded.
    /// - Throws: ``/TernPostgreSQL/PostgreSQLError``; nothing is recorded when it throws.
    /// - Complexity: O(*c*) statements for *c* changes.
    public func push(_ transactions: [SyncPushTransaction], resolve: ConflictHandler? = nil) throws -> SyncPushResult {
        try connection.inTransaction {
            try connection.execute("LOCK TABLE tern_sync_transactions IN EXCLUSIVE MODE")
            var result = SyncPushResult(transactions: 0, changes: 0, merged: 0)
            for transaction in transactions {
                guard try !isRecorded(transaction), let seq = try insertTransaction(transaction) else { continue }
                result.transactions += 1
                result.changes += transaction.changes.count
                result.merged += try record(transaction, seq: seq, handler: resolve) {
                    $0 == 0 ? transaction.changes : nil
                }
            }
            return result
        }
    }

    /// Records one local transaction too large for one round trip, a part at a time. Parts
    /// before the last are kept aside (`tern_sync_staged`); when the last arrives, the whole
    /// transaction is recorded in one server transaction, as ``push(_:resolve:)`` would, reading
    /// the parts back one at a time, and the parts are removed. So other devices never see part
    /// of it, a part sent again replaces itself, and memory holds one part.
    ///
    /// - Parameters:
    ///   - transaction: The transaction's header, with this part's changes.
    ///   - number: The part's number, from 0.
    ///   - isLast: Whether it is the last part.
    ///   - resolve: Decides conflicting writes; nil: the pushed value wins.
    /// - Returns: What was recorded (nothing before the last part).
    /// - Throws: ``/TernPostgreSQL/PostgreSQLError`` when the server fails; ``/TernCore/TernError``
    ///   with code `invalidValue` when an earlier part is missing (push the transaction again from
    ///   its first part). Nothing is recorded when it throws.
    /// - Complexity: O(*c*) statements for *c* changes in all parts.
    public func push(
        part transaction: SyncPushTransaction, number: Int, isLast: Bool, resolve: ConflictHandler? = nil
    ) throws -> SyncPushResult {
        let device = transaction.device.uuidString
        let changes = String(decoding: try JSONEncoder().encode(transaction.changes), as: UTF8.self)
        let stage: SQL = """
            INSERT INTO tern_sync_staged (device, local_number, part, changes) \
            VALUES (\(device), \(transaction.localNumber), \(Int64(number)), \(changes)) \
            ON CONFLICT (device, local_number, part) DO UPDATE SET changes = excluded.changes
            """
        guard isLast else {
            try connection.execute(stage)
            return SyncPushResult(transactions: 0, changes: 0, merged: 0)
        }
        return try connection.inTransaction {
            try connection.execute("LOCK TABLE tern_sync_transactions IN EXCLUSIVE MODE")
            try connection.execute(stage)
            let forget: SQL = """
                DELETE FROM tern_sync_staged WHERE device = \(device) AND local_number = \(transaction.localNumber)
                """
            let staged =
                try connection.fetchValue(
                    """
                    SELECT COUNT(*) FROM tern_sync_staged WHERE device = \(device) AND local_number = \(transaction.localNumber) \
                    AND part <= \(Int64(number))
                    """)?.int64 ?? 0
            guard staged == Int64(number) + 1 else {
                throw TernError(
                    .invalidValue,
                    "Part of local transaction \(transaction.localNumber) of device \(device) never reached the server; "
                        + "push the transaction again from its first part.")
            }
            var result = SyncPushResult(transactions: 0, changes: 0, merged: 0)
            guard try !isRecorded(transaction), let seq = try insertTransaction(transaction) else {
                try connection.execute(forget)
                return result
            }
            var counted: Set<Int> = []
            let decoder = JSONDecoder()
            result.merged = try record(transaction, seq: seq, handler: resolve) { index in
                guard index <= number,
                    let text = try connection.fetchValue(
                        """
                        SELECT changes FROM tern_sync_staged WHERE device = \(device) \
                        AND local_number = \(transaction.localNumber) AND part = \(Int64(index))
                        """)?.string
                else { return nil }
                let changes = try decoder.decode([SyncChange].self, from: Data(text.utf8))
                if counted.insert(index).inserted { result.changes += changes.count }
                return changes
            }
            result.transactions = 1
            try connection.execute(forget)
            return result
        }
    }

    // MARK: - Pull

    /// The objects changed after a cursor, at most `limit` of them, with the aliases made in
    /// the same range and the model digests of the transactions after the cursor, read in one
    /// consistent snapshot.
    ///
    /// An object whose current state is exactly what `device` pushed, on top of a state that
    /// device had already pulled, is left out for that device: it holds that state already.
    ///
    /// - Parameters:
    ///   - cursor: Where the device stands (`SyncPullCursor(sequence: 0)` for nothing pulled).
    ///   - limit: The page size.
    ///   - device: The pulling device, whose own pushes are left out; nil: send everything.
    /// - Returns: The page; ``SyncPullBatch/isComplete`` tells whether more follow.
    /// - Throws: ``/TernPostgreSQL/PostgreSQLError``.
    /// - Complexity: O(*limit*) objects and their values.
    public func pull(after cursor: SyncPullCursor, limit: Int = 1_000, excluding device: UUID? = nil) throws
        -> SyncPullBatch
    {
        try connection.execute("BEGIN ISOLATION LEVEL REPEATABLE READ")
        do {
            let batch = try readBatch(after: cursor, limit: max(1, limit), excluding: device)
            try connection.execute("COMMIT")
            return batch
        } catch {
            try? connection.execute("ROLLBACK")
            throw error
        }
    }

    /// Records how far a device has pulled, so that ``lowestPulledSequence()`` knows what every
    /// device has seen.
    ///
    /// - Parameters:
    ///   - device: The device.
    ///   - sequence: The last sequence number it applied completely.
    /// - Throws: ``/TernPostgreSQL/PostgreSQLError``.
    public func recordPulled(device: UUID, sequence: Int64) throws {
        try connection.execute(
            """
            INSERT INTO tern_sync_devices (device, pulled) VALUES (\(device.uuidString), \(sequence)) \
            ON CONFLICT (device) DO UPDATE SET pulled = excluded.pulled
            """)
    }

    // MARK: - Purging

    /// The lowest sequence number every device that ever pulled has applied: purging up to it
    /// leaves no known device behind.
    ///
    /// - Returns: The sequence number, or 0 when no device pulled yet.
    /// - Throws: ``/TernPostgreSQL/PostgreSQLError``.
    public func lowestPulledSequence() throws -> Int64 {
        try connection.fetchValue("SELECT COALESCE(MIN(pulled), 0) FROM tern_sync_devices")?.int64 ?? 0
    }

    /// The sequence number purged through (0 when nothing was purged): a device that pulled
    /// less than this must resync.
    ///
    /// - Returns: The horizon.
    /// - Throws: ``/TernPostgreSQL/PostgreSQLError``.
    public func purgedSequence() throws -> Int64 {
        try connection.fetchValue("SELECT value FROM tern_sync_settings WHERE name = 'purged'")?.int64 ?? 0
    }

    /// Removes what the server no longer needs up to a sequence number: the log of edit
    /// transactions (snapshot transactions stay, so that a re-sent snapshot stays a no-op) and
    /// deleted objects (tombstones) with their values. Devices that pulled less than `sequence`
    /// get ``SyncPullBatch/needsResync`` from then on.
    ///
    /// - Parameter sequence: The last sequence number to purge; normally ``lowestPulledSequence()``.
    ///   A number past the last transaction purges through the last transaction.
    /// - Returns: How many transactions and deleted objects went.
    /// - Throws: ``/TernPostgreSQL/PostgreSQLError``; nothing is purged when it throws.
    /// - Complexity: O(*r*) for *r* rows removed.
    public func purge(through sequence: Int64) throws -> (transactions: Int, objects: Int) {
        try connection.inTransaction {
            try connection.execute("LOCK TABLE tern_sync_transactions IN EXCLUSIVE MODE")
            let current = try purgedSequence()
            // Never past the highest sequence number assigned: pulls end at the purge point at
            // least, and later pushes must land after it.
            let highest =
                try connection.fetchValue("SELECT COALESCE(MAX(seq), 0) FROM tern_sync_transactions")?.int64 ?? 0
            let sequence = min(sequence, max(highest, current))
            guard sequence > current else { return (0, 0) }
            // Each device's highest edit number stays, so that a re-sent old push is still refused.
            try connection.execute(
                """
                INSERT INTO tern_sync_settings (name, value) SELECT 'device:' || device, MAX(local_number) \
                FROM tern_sync_transactions WHERE seq <= \(sequence) AND local_number > 0 GROUP BY device \
                ON CONFLICT (name) DO UPDATE SET value = GREATEST(tern_sync_settings.value, excluded.value)
                """)
            let transactions =
                try connection.fetchValue(
                    """
                    WITH gone AS (DELETE FROM tern_sync_transactions WHERE seq <= \(sequence) AND local_number > 0 \
                    RETURNING 1) SELECT COUNT(*) FROM gone
                    """)?.int64 ?? 0
            try connection.execute(
                """
                DELETE FROM tern_sync_values v USING tern_sync_objects o \
                WHERE o.object = v.object AND o.deleted = 1 AND o.seq <= \(sequence)
                """)
            let objects =
                try connection.fetchValue(
                    """
                    WITH gone AS (DELETE FROM tern_sync_objects WHERE deleted = 1 AND seq <= \(sequence) RETURNING 1) \
                    SELECT COUNT(*) FROM gone
                    """)?.int64 ?? 0
            try connection.execute(
                """
                INSERT INTO tern_sync_settings (name, value) VALUES ('purged', \(sequence)) \
                ON CONFLICT (name) DO UPDATE SET value = excluded.value
                """)
            return (Int(transactions), Int(objects))
        }
    }

    // MARK: - Non public

    /// Whether a transaction was recorded before a purge removed it from the log.
    private func isRecorded(_ transaction: SyncPushTransaction) throws -> Bool {
        guard transaction.localNumber > 0,
            let purged = try connection.fetchValue(
                "SELECT value FROM tern_sync_settings WHERE name = \("device:" + transaction.device.uuidString)"
            )?.int64
        else { return false }
        return transaction.localNumber <= purged
    }

    /// Adds a transaction to the log; returns its sequence number, or nil when the log has it already.
    private func insertTransaction(_ transaction: SyncPushTransaction) throws -> Int64? {
        try connection.fetchValue(
            """
            INSERT INTO tern_sync_transactions (device, local_number, author, model_digest) \
            VALUES (\(transaction.device.uuidString), \(transaction.localNumber), \
            \(transaction.author.map(DatabaseValue.text) ?? .null), \(transaction.modelDigest)) \
            ON CONFLICT (device, local_number) DO NOTHING RETURNING seq
            """)?.int64
    }

    /// Records one transaction's changes under `seq`, a part at a time (`parts(k)` gives part
    /// *k*, nil past the last); returns how many inserts were merged.
    private func record(
        _ transaction: SyncPushTransaction, seq: Int64, handler: ConflictHandler?, parts: (Int) throws -> [SyncChange]?
    ) throws -> Int {
        var merged = 0
        // Identities first: keyed entities before content-identified ones, so that content keys
        // see their owners' final identifiers.
        for keyed in [true, false] {
            var index = 0
            while let changes = try parts(index) {
                for change in changes where change.kind == .insert && (change.uniqueKey != nil) == keyed {
                    if try recordIdentity(of: change, device: transaction.device.uuidString, seq: seq) { merged += 1 }
                }
                index += 1
            }
        }
        var index = 0
        while let changes = try parts(index) {
            for change in changes { try recordValues(of: change, in: transaction, seq: seq, handler: handler) }
            index += 1
        }
        return merged
    }

    /// Records an inserted object's identity, or makes it an alias of the object with the same
    /// key; returns whether it was merged.
    private func recordIdentity(of change: SyncChange, device: String, seq: Int64) throws -> Bool {
        let object = try resolve(change.object)
        guard try connection.fetchValue("SELECT 1 FROM tern_sync_objects WHERE object = \(object)") == nil else {
            return false
        }
        let isContent = change.uniqueKey == nil
        let key = try identityKey(of: change, isContent: isContent)
        // As in SQLite's unique indexes, a key with a missing value matches nothing.
        let hasKey = isContent || (change.uniqueKey ?? []).allSatisfy { (change.attributes[$0] ?? nil) != nil }
        let owner: String? =
            if !hasKey {
                nil
            } else if isContent {
                try connection.fetchValue(
                    """
                    SELECT o.object FROM tern_sync_objects o WHERE o.entity = \(change.entity) AND o.unique_key = \(key) \
                    AND o.deleted = 0 AND o.device <> \(device) AND NOT EXISTS (SELECT 1 FROM tern_sync_aliases a \
                    WHERE a.object = o.object AND a.device = \(device)) ORDER BY o.seq, o.object LIMIT 1
                    """)?.string
            } else {
                try connection.fetchValue(
                    """
                    SELECT object FROM tern_sync_objects WHERE entity = \(change.entity) AND unique_key = \(key) \
                    AND deleted = 0 ORDER BY seq, object LIMIT 1
                    """)?.string
            }
        if let owner {
            try connection.execute(
                """
                INSERT INTO tern_sync_aliases (alias, object, device, seq) VALUES (\(object), \(owner), \(device), \(seq)) \
                ON CONFLICT (alias) DO NOTHING
                """)
            return true
        }
        try connection.execute(
            """
            INSERT INTO tern_sync_objects (object, entity, unique_key, is_content_key, device, seq, echo_device) \
            VALUES (\(object), \(change.entity), \(hasKey ? DatabaseValue.text(key) : .null), \(isContent ? 1 : 0), \
            \(device), \(seq), \(device))
            """)
        return false
    }

    /// Records a change's values (or its delete) under `seq`.
    private func recordValues(
        of change: SyncChange, in transaction: SyncPushTransaction, seq: Int64, handler: ConflictHandler?
    ) throws {
        let device = transaction.device.uuidString
        let object = try resolve(change.object)
        guard
            let current = try connection.fetchOne(
                "SELECT deleted, seq, echo_device FROM tern_sync_objects WHERE object = \(object)"),
            current[0].int64 == 0
        else { return }  // unknown, or deleted: a delete is final
        if change.kind == .delete {
            try connection.execute(
                """
                UPDATE tern_sync_objects SET deleted = 1, seq = \(seq), echo_device = \(device) WHERE object = \(object)
                """)
            return
        }
        let writer = Writer(
            transaction: transaction, entity: change.entity, object: object, seq: seq, resolve: handler,
            isEdited: change.isEdited)
        var isExact = true
        for (name, value) in change.attributes.sorted(by: { $0.key < $1.key }) {
            isExact = try write(name, kind: .attribute, value: value, by: writer) && isExact
        }
        for (name, destination) in change.toOne.sorted(by: { $0.key < $1.key }) {
            isExact = try write(name, kind: .toOne, value: try destination.map(resolve), by: writer) && isExact
        }
        for (name, destinations) in change.toMany.sorted(by: { $0.key < $1.key }) {
            var seen: Set<String> = []
            let resolved = try destinations.map(resolve).filter { seen.insert($0).inserted }
            isExact = try write(name, kind: .toMany, value: resolved.joined(separator: ","), by: writer) && isExact
        }
        // The pushing device holds this state already when it wrote it exactly, under its own
        // identifier, on top of a state it had pulled (or made or pushed itself): its pulls skip it.
        let hadState = (current[1].int64 ?? .max) <= transaction.basedOn || current[2].string == device
        let echo = isExact && hadState && object == change.object.uuidString
        try connection.execute(
            """
            UPDATE tern_sync_objects SET seq = \(seq), echo_device = \(echo ? DatabaseValue.text(device) : .null) \
            WHERE object = \(object)
            """)
    }

    /// Who writes, and how conflicts are decided.
    private struct Writer {
        let transaction: SyncPushTransaction
        let entity: String
        let object: String
        let seq: Int64
        let resolve: ConflictHandler?
        /// Whether a snapshot's change carries edits (``SyncChange/isEdited``).
        let isEdited: Bool
    }

    /// Sets one property's value (the latest write in server order), unless it is a conflict
    /// decided otherwise; returns whether the property now holds the pushed value.
    private func write(_ property: String, kind: SyncWriteConflict.Kind, value: String?, by writer: Writer) throws
        -> Bool
    {
        let pushed = value
        var value = value
        let transaction = writer.transaction
        if transaction.isSnapshot || writer.resolve != nil {
            let current = try connection.fetchOne(
                """
                SELECT v.value, v.seq, t.device FROM tern_sync_values v LEFT JOIN tern_sync_transactions t \
                ON t.seq = v.seq WHERE v.object = \(writer.object) AND v.property = \(property)
                """)
            if let current, let currentSeq = current[1].int64 {
                let currentValue = current[0].string
                if transaction.isSnapshot, currentValue == value { return true }
                let isConflict =
                    currentSeq > transaction.basedOn && current[2].string != transaction.device.uuidString
                    && currentValue != value
                if isConflict {
                    if transaction.isSnapshot, !writer.isEdited { return false }
                    let conflict = SyncWriteConflict(
                        object: UUID(uuidString: writer.object) ?? transaction.device, entity: writer.entity,
                        property: property, kind: kind, pushed: value, current: currentValue,
                        currentSequence: currentSeq)
                    switch writer.resolve?(conflict) ?? .pushed {
                    case .pushed: break
                    case .current: return currentValue == pushed
                    case .value(let chosen): value = chosen
                    }
                }
            }
        }
        try connection.execute(
            """
            INSERT INTO tern_sync_values (object, property, kind, value, seq) \
            VALUES (\(writer.object), \(property), \(kind.rawValue), \(value.map(DatabaseValue.text) ?? .null), \(writer.seq)) \
            ON CONFLICT (object, property) DO UPDATE SET kind = excluded.kind, value = excluded.value, seq = excluded.seq
            """)
        return value == pushed
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

    /// Reads a pull page (inside the caller's snapshot).
    private func readBatch(after cursor: SyncPullCursor, limit: Int, excluding device: UUID?) throws -> SyncPullBatch {
        let sequence = cursor.sequence
        // The purge check applies to where the device stood when the pull began: a later page of
        // a read of the whole state (start 0) may well sit below the purge point.
        let start = cursor.object == nil ? sequence : cursor.start ?? sequence
        let purged = try purgedSequence()
        // The purge may have removed the last transactions: a device that has everything stands
        // at the purge point at least, or it would be told to resync again.
        let last = max(
            purged, try connection.fetchValue("SELECT COALESCE(MAX(seq), 0) FROM tern_sync_transactions")?.int64 ?? 0)
        var batch = SyncPullBatch(
            lastSequence: last, cursor: SyncPullCursor(sequence: last), isComplete: true, modelDigests: [:],
            aliases: [:],
            objects: [], needsResync: start > 0 && start < purged)
        guard !batch.needsResync else { return batch }
        for row in try connection.fetchAll(
            """
            SELECT model_digest, MIN(seq) FROM tern_sync_transactions WHERE seq > \(sequence) GROUP BY model_digest
            """)
        {
            if let digest = row[0].string, let seq = row[1].int64 { batch.modelDigests[digest] = seq }
        }
        var objects: [String: SyncObjectState] = [:]
        var order: [String] = []
        var lastRow: (seq: Int64, object: UUID)?
        let echo = device.map { DatabaseValue.text($0.uuidString) } ?? .null
        let rows =
            if let start = cursor.object?.uuidString {
                try connection.fetchAll(
                    """
                    SELECT object, entity, deleted, seq FROM tern_sync_objects WHERE (seq, object) > (\(sequence), \(start)) \
                    AND echo_device IS DISTINCT FROM \(echo) ORDER BY seq, object LIMIT \(Int64(limit) + 1)
                    """)
            } else {
                try connection.fetchAll(
                    """
                    SELECT object, entity, deleted, seq FROM tern_sync_objects WHERE seq > \(sequence) \
                    AND echo_device IS DISTINCT FROM \(echo) ORDER BY seq, object LIMIT \(Int64(limit) + 1)
                    """)
            }
        for row in rows {
            guard let text = row[0].string, let object = UUID(uuidString: text), let entity = row[1].string,
                let seq = row[3].int64
            else { continue }
            if order.count == limit {
                batch.isComplete = false
                break
            }
            objects[text] = SyncObjectState(
                object: object, entity: entity, isDeleted: row[2].int64 == 1, attributes: [:], toOne: [:], toMany: [:])
            order.append(text)
            lastRow = (seq, object)
        }
        if !batch.isComplete, let lastRow {
            batch.cursor = SyncPullCursor(sequence: lastRow.seq, object: lastRow.object, start: start)
            batch.lastSequence = lastRow.seq
        }
        let upper = batch.isComplete ? last : batch.cursor.sequence
        for row in try connection.fetchAll(
            """
            SELECT alias, object FROM tern_sync_aliases WHERE seq >= \(sequence) AND seq <= \(upper)
            """)
        {
            if let alias = row[0].string.flatMap(UUID.init), let owner = row[1].string.flatMap(UUID.init) {
                batch.aliases[alias] = owner
            }
        }
        if !order.isEmpty {
            for row in try connection.fetchAll(
                """
                SELECT v.object, v.property, v.kind, v.value FROM tern_sync_values v \
                WHERE v.object = ANY (string_to_array(\(order.joined(separator: ",")), ','))
                """)
            {
                guard let object = row[0].string, let property = row[1].string, let kind = row[2].string,
                    objects[object]?.isDeleted == false
                else { continue }
                let value = row[3].string
                switch kind {
                case "o": objects[object]?.toOne[property] = .some(value.flatMap(UUID.init))
                case "m":
                    objects[object]?.toMany[property] =
                        (value ?? "").split(separator: ",").compactMap { UUID(uuidString: String($0)) }
                default: objects[object]?.attributes[property] = .some(value)
                }
            }
        }
        batch.objects = order.compactMap { objects[$0] }
        return batch
    }
}
