import TernCore
import TernSQLite

/// The associations of a migration step on PostgreSQL (which destination objects each source
/// object became under each entity mapping), kept in a table of the scratch schema the step
/// writes, `TERN_ASSOCIATION`, so that memory does not grow with the store.
///
/// New associations gather in memory and are loaded with one `COPY` per ``flushLimit`` of them,
/// or before a lookup needs them; lookups read the table through its indexes and then the ones
/// not yet written, so each answer keeps the order associations were made in.
///
/// ```swift
/// let associations = try PostgreSQLAssociationTable(connection: writer, flushLimit: 1000)
/// try associations.associate(source: event, withDestination: stamp, mapping: "EventToStamp")
/// try associations.destinations(of: event, mapping: "EventToStamp")   // [stamp]
/// ```
final class PostgreSQLAssociationTable: MigrationAssociationStorage {
    /// One association, numbered in the order it was made.
    private struct Association {
        var sequence: Int64
        var mapping: String
        var source: RowReference
        var destination: RowReference
    }

    /// The scratch schema's connection.
    private let connection: Connection
    /// How many associations gather before they are written.
    private let flushLimit: Int
    /// The associations not yet written, in order.
    private var pending: [Association] = []
    /// The number of the last association made.
    private var sequence: Int64 = 0

    /// Creates the table in the connection's schema.
    ///
    /// - Parameters:
    ///   - connection: The connection of the scratch schema the step writes.
    ///   - flushLimit: How many associations gather before they are written.
    /// - Throws: ``PostgreSQLError`` when the table cannot be created.
    init(connection: Connection, flushLimit: Int) throws(PostgreSQLError) {
        self.connection = connection
        self.flushLimit = max(1, flushLimit)
        try connection.executeScript("""
            CREATE UNLOGGED TABLE "TERN_ASSOCIATION" ("SEQ" bigint PRIMARY KEY, "MAPPING" text NOT NULL, "SENT" text NOT NULL, \
            "SPK" bigint NOT NULL, "DENT" text NOT NULL, "DPK" bigint NOT NULL);
            CREATE INDEX "TERN_ASSOCIATION_S" ON "TERN_ASSOCIATION" ("SENT", "SPK");
            CREATE INDEX "TERN_ASSOCIATION_D" ON "TERN_ASSOCIATION" ("MAPPING", "DENT", "DPK")
            """)
    }

    // MARK: - Recording

    /// Records that a source object became a destination object under a mapping.
    ///
    /// - Throws: ``PostgreSQLError`` when gathered associations cannot be written.
    func associate(source: RowReference, withDestination destination: RowReference, mapping: String) throws(PostgreSQLError) {
        if pending.count >= flushLimit { try flush() }
        sequence += 1
        pending.append(Association(sequence: sequence, mapping: mapping, source: source, destination: destination))
    }

    /// Writes the gathered associations with one `COPY`.
    ///
    /// - Throws: ``PostgreSQLError`` when they cannot be written.
    func flush() throws(PostgreSQLError) {
        guard !pending.isEmpty else { return }
        let rows = pending.map { association -> [DatabaseValue] in
            [
                .integer(association.sequence), .text(association.mapping), .text(association.source.entityName),
                .integer(association.source.primaryKey), .text(association.destination.entityName),
                .integer(association.destination.primaryKey),
            ]
        }
        pending.removeAll(keepingCapacity: true)
        try connection.copy(into: "TERN_ASSOCIATION", columns: ["SEQ", "MAPPING", "SENT", "SPK", "DENT", "DPK"], rows: rows)
    }

    // MARK: - Looking up

    /// The destination objects of a source object under a mapping (any mapping when nil), in the
    /// order they were associated.
    ///
    /// - Complexity: One indexed query, plus the associations not yet written.
    func destinations(of source: RowReference, mapping: String?) throws(PostgreSQLError) -> [RowReference] {
        var sql: SQL = """
            SELECT "DENT", "DPK" FROM "TERN_ASSOCIATION" WHERE "SENT" = \(source.entityName) AND "SPK" = \(source.primaryKey)
            """
        if let mapping { sql.append(" AND \"MAPPING\" = \(mapping)") }
        var result: [RowReference] = []
        try connection.forEachRow(sql + " ORDER BY \"SEQ\"") { row in
            result.append(RowReference(entityName: row[0].string ?? "", primaryKey: row[1].int64 ?? 0))
        }
        for association in pending where association.source == source && (mapping == nil || association.mapping == mapping) {
            result.append(association.destination)
        }
        return result
    }

    /// The source objects of a destination object under a mapping, in the order they were associated.
    ///
    /// - Complexity: One indexed query, plus the associations not yet written.
    func sources(of destination: RowReference, mapping: String) throws(PostgreSQLError) -> [RowReference] {
        var result: [RowReference] = []
        try connection.forEachRow("""
            SELECT "SENT", "SPK" FROM "TERN_ASSOCIATION" WHERE "MAPPING" = \(mapping) \
            AND "DENT" = \(destination.entityName) AND "DPK" = \(destination.primaryKey) ORDER BY "SEQ"
            """) { row in
            result.append(RowReference(entityName: row[0].string ?? "", primaryKey: row[1].int64 ?? 0))
        }
        for association in pending where association.mapping == mapping && association.destination == destination {
            result.append(association.source)
        }
        return result
    }

    /// Calls `body` with each destination object a mapping's associations name, once, at its first
    /// association, with the source objects it was made from; associations are read `pageSize`
    /// at a time, so those `body` adds are seen too.
    ///
    /// - Throws: ``PostgreSQLError``, or what `body` throws.
    /// - Complexity: O(*n*) in the number of associations; memory bounded by `pageSize`.
    func forEachDestination(mapping: String, pageSize: Int, _ body: ([RowReference]) throws -> Void) throws {
        var last: Int64 = 0
        let size = max(1, pageSize)
        while true {
            try flush()
            let page = try connection.fetchAll("""
                SELECT a."SEQ", a."DENT", a."DPK" FROM "TERN_ASSOCIATION" AS a WHERE a."MAPPING" = \(mapping) \
                AND a."SEQ" > \(last) AND NOT EXISTS (SELECT 1 FROM "TERN_ASSOCIATION" AS b WHERE b."MAPPING" = a."MAPPING" \
                AND b."DENT" = a."DENT" AND b."DPK" = a."DPK" AND b."SEQ" < a."SEQ") ORDER BY a."SEQ" LIMIT \(size)
                """)
            try body(page.map { RowReference(entityName: $0[1].string ?? "", primaryKey: $0[2].int64 ?? 0) })
            guard let next = page.last?[0].int64, page.count == size else { return }
            last = next
        }
    }

    /// The SQL condition that a destination table row (alias `d`) was made under a mapping, for
    /// a join with the table aliased `a`.
    static func joinCondition(mapping: String, entity: String) -> SQL {
        "d.\"Z_PK\" = a.\"DPK\" AND a.\"MAPPING\" = \(mapping) AND a.\"DENT\" = \(entity)"
    }

    // MARK: - Finishing

    /// Drops the table.
    func drop() throws(PostgreSQLError) {
        pending.removeAll()
        try connection.execute(#"DROP TABLE IF EXISTS "TERN_ASSOCIATION""#)
    }
}
