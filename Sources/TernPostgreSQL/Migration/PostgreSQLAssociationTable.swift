import TernCore
import TernRelational

/// The associations of a migration step on PostgreSQL (which destination objects each source
/// object became under each entity mapping), kept as runs in a table of the scratch schema the
/// step writes, `TERN_ASSOCIATION`, so that memory does not grow with the store.
///
/// Runs are ``AssociationRuns``' (the SQLite engine's too): `COUNT` consecutive source keys
/// became `COUNT` consecutive destination keys, so a mapping that makes one object per source
/// object in key order writes one row per 64 objects. Finished runs gather in memory and are
/// loaded with one `COPY` per ``flushLimit`` of them, or before a lookup that needs them; lookups
/// read the table through its indexes and then the runs not yet written, so each answer keeps
/// the order associations were made in.
///
/// ```swift
/// let associations = try PostgreSQLAssociationTable(connection: writer, flushLimit: 1000)
/// try associations.associate(source: event, withDestination: stamp, mapping: "EventToStamp")
/// try associations.destinations(of: event, mapping: "EventToStamp")   // [stamp]
/// ```
final class PostgreSQLAssociationTable: MigrationAssociationStorage {
    /// The scratch schema's connection.
    private let connection: Connection
    /// How many finished runs gather before they are written.
    private let flushLimit: Int
    /// The runs being extended.
    private var runs = AssociationRuns()
    /// The finished runs not yet written, in the order they finished.
    private var finished: [AssociationRuns.Run] = []
    /// How many runs were written: the `ORD` of the last one, their order in the table.
    private var written: Int64 = 0

    /// Creates the table in the connection's schema.
    ///
    /// - Parameters:
    ///   - connection: The connection of the scratch schema the step writes.
    ///   - flushLimit: How many finished runs gather before they are written.
    /// - Throws: ``PostgreSQLError`` when the table cannot be created.
    init(connection: Connection, flushLimit: Int) throws(PostgreSQLError) {
        self.connection = connection
        self.flushLimit = max(1, flushLimit)
        try connection.executeScript(
            """
            CREATE UNLOGGED TABLE "TERN_ASSOCIATION" ("ORD" bigint PRIMARY KEY, "MAPPING" text NOT NULL, \
            "SENT" text NOT NULL, "SSTART" bigint NOT NULL, "DENT" text NOT NULL, "DSTART" bigint NOT NULL, \
            "COUNT" bigint NOT NULL, "FRESH" bigint NOT NULL, "SEQ" bigint NOT NULL);
            CREATE INDEX "TERN_ASSOCIATION_S" ON "TERN_ASSOCIATION" ("SENT", "SSTART");
            CREATE INDEX "TERN_ASSOCIATION_D" ON "TERN_ASSOCIATION" ("MAPPING", "DENT", "DSTART")
            """)
    }

    // MARK: - Recording

    /// Records that a source object became a destination object under a mapping.
    ///
    /// - Throws: ``PostgreSQLError`` when gathered runs cannot be written.
    func associate(source: RowReference, withDestination destination: RowReference, mapping: String)
        throws(PostgreSQLError)
    {
        guard let run = runs.associate(source: source, withDestination: destination, mapping: mapping) else { return }
        finished.append(run)
        if finished.count >= flushLimit { try writeFinished() }
    }

    /// Writes every run, the open ones too, with one `COPY`.
    ///
    /// - Throws: ``PostgreSQLError`` when they cannot be written.
    func flush() throws(PostgreSQLError) {
        finished += runs.finishAll()
        try writeFinished()
    }

    /// Writes the finished runs with one `COPY`, numbered in the order they finished.
    private func writeFinished() throws(PostgreSQLError) {
        guard !finished.isEmpty else { return }
        let rows = finished.map { run -> [DatabaseValue] in
            written += 1
            return [
                .integer(written), .text(run.mapping), .text(run.sourceEntity), .integer(run.sourceStart),
                .text(run.destinationEntity), .integer(run.destinationStart), .integer(run.count),
                .integer(run.isFresh ? 1 : 0), .integer(run.sequence),
            ]
        }
        finished.removeAll(keepingCapacity: true)
        try connection.copy(
            into: "TERN_ASSOCIATION",
            columns: ["ORD", "MAPPING", "SENT", "SSTART", "DENT", "DSTART", "COUNT", "FRESH", "SEQ"],
            rows: rows)
    }

    // MARK: - Looking up

    /// The destination objects of a source object under a mapping (any mapping when nil), in the
    /// order they were associated.
    ///
    /// - Complexity: One indexed query, plus the runs not yet written.
    func destinations(of source: RowReference, mapping: String?) throws(PostgreSQLError) -> [RowReference] {
        let key = source.primaryKey
        var sql: SQL = """
            SELECT "DENT", "DSTART" + (\(key) - "SSTART") FROM "TERN_ASSOCIATION" WHERE "SENT" = \(source.entityName) \
            AND "SSTART" BETWEEN \(key - AssociationRuns.runLimit + 1) AND \(key) AND "SSTART" + "COUNT" > \(key)
            """
        if let mapping {
            sql.append(" AND \"MAPPING\" = \(mapping)")
        } else {
            // Across mappings, the written runs alone give the order of association, by when
            // each run was opened (not when it finished).
            try flush()
        }
        var result: [RowReference] = []
        try connection.forEachRow(sql + " ORDER BY \"SEQ\"") { row in
            result.append(RowReference(entityName: row[0].string ?? "", primaryKey: row[1].int64 ?? 0))
        }
        for run in finished where run.mapping == mapping {
            if let destination = run.destination(of: source) { result.append(destination) }
        }
        if let destination = runs.openDestination(of: source, mapping: mapping) { result.append(destination) }
        return result
    }

    /// The source objects of a destination object under a mapping, in the order they were associated.
    ///
    /// - Complexity: One indexed query, plus the runs not yet written.
    func sources(of destination: RowReference, mapping: String) throws(PostgreSQLError) -> [RowReference] {
        let key = destination.primaryKey
        var result: [RowReference] = []
        try connection.forEachRow(
            """
            SELECT "SENT", "SSTART" + (\(key) - "DSTART") FROM "TERN_ASSOCIATION" WHERE "MAPPING" = \(mapping) \
            AND "DENT" = \(destination.entityName) AND "DSTART" BETWEEN \(key - AssociationRuns.runLimit + 1) AND \(key) \
            AND "DSTART" + "COUNT" > \(key) ORDER BY "ORD"
            """
        ) { row in
            result.append(RowReference(entityName: row[0].string ?? "", primaryKey: row[1].int64 ?? 0))
        }
        for run in finished where run.mapping == mapping {
            if let source = run.source(of: destination) { result.append(source) }
        }
        if let source = runs.openSource(of: destination, mapping: mapping) { result.append(source) }
        return result
    }

    /// Calls `body` with each destination object a mapping's associations name, once, at its first
    /// association, at most `pageSize` objects a call; runs are read `pageSize` at a time, so
    /// associations `body` adds are seen too.
    ///
    /// - Throws: ``PostgreSQLError``, or what `body` throws.
    /// - Complexity: O(*n*) in the number of associations, plus one query per run that is not
    ///   fresh (whose destinations an earlier run may hold); memory bounded by `pageSize` runs.
    func forEachDestination(mapping: String, pageSize: Int, _ body: ([RowReference]) throws -> Void) throws {
        var last: Int64 = 0
        let size = max(1, pageSize)
        while true {
            try flush()
            let page = try connection.fetchAll(
                """
                SELECT "ORD", "DENT", "DSTART", "COUNT", "FRESH" FROM "TERN_ASSOCIATION" WHERE "MAPPING" = \(mapping) \
                AND "ORD" > \(last) ORDER BY "ORD" LIMIT \(size)
                """)
            var batch: [RowReference] = []
            for run in page {
                let entity = run[1].string ?? ""
                let start = run[2].int64 ?? 0
                let keys = start..<(start + (run[3].int64 ?? 0))
                let earlier =
                    run[4].int64 == 1
                    ? [] : try earlierRuns(of: mapping, entity, overlapping: keys, before: run[0].int64 ?? 0)
                for key in keys where !earlier.contains(where: { $0.contains(key) }) {
                    batch.append(RowReference(entityName: entity, primaryKey: key))
                    if batch.count == size {
                        try body(batch)
                        batch.removeAll(keepingCapacity: true)
                    }
                }
            }
            if !batch.isEmpty { try body(batch) }
            guard let next = page.last?[0].int64, page.count == size else { return }
            last = next
        }
    }

    /// The SQL condition that a destination table row (alias `d`) was made under a mapping, for
    /// a join with the table aliased `a`.
    static func joinCondition(mapping: String, entity: String) -> SQL {
        // The BETWEEN repeats the range in a form the index on (MAPPING, DENT, DSTART) bounds.
        """
        a."MAPPING" = \(mapping) AND a."DENT" = \(entity) \
        AND a."DSTART" BETWEEN d."Z_PK" - \(AssociationRuns.runLimit - 1) AND d."Z_PK" AND d."Z_PK" < a."DSTART" + a."COUNT"
        """
    }

    /// The destination keys that runs written before `order` hold among `keys`, as ranges.
    private func earlierRuns(
        of mapping: String, _ entity: String, overlapping keys: Range<Int64>, before order: Int64
    ) throws(PostgreSQLError) -> [Range<Int64>] {
        try connection.fetchAll(
            """
            SELECT "DSTART", "COUNT" FROM "TERN_ASSOCIATION" WHERE "MAPPING" = \(mapping) AND "DENT" = \(entity) \
            AND "DSTART" BETWEEN \(keys.lowerBound - AssociationRuns.runLimit + 1) AND \(keys.upperBound - 1) \
            AND "DSTART" + "COUNT" > \(keys.lowerBound) AND "ORD" < \(order)
            """
        ).map { row in
            let start = row[0].int64 ?? 0
            return start..<(start + (row[1].int64 ?? 0))
        }
    }

    // MARK: - Finishing

    /// Drops the table.
    func drop() throws(PostgreSQLError) {
        runs.removeAll()
        finished.removeAll()
        try connection.execute(#"DROP TABLE IF EXISTS "TERN_ASSOCIATION""#)
    }
}
