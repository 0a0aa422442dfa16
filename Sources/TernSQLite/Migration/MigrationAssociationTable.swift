import TernCore
import TernRelational

/// The associations of a migration step (which destination objects each source object became
/// under each entity mapping), kept as runs in a table of the destination file.
///
/// A run says that `count` consecutive source keys became `count` consecutive destination keys
/// under one mapping: source `SSTART + i` became destination `DSTART + i`. A mapping that makes
/// one object per source object, read and created in key order, gives one run per
/// ``runLimit`` objects (fewer where source keys have gaps), so the table stays small and
/// memory holds only the run being extended, one per mapping (mappings that share a walk over
/// their source associate in turns). Any other pattern of associations still works,
/// as runs of one. Runs never span more than ``runLimit`` keys, so that finding the runs that
/// hold a key reads one short index range.
///
/// ```swift
/// let associations = try MigrationAssociationTable(connection: destination)
/// try associations.associate(source: event, withDestination: stamp, mapping: "EventToStamp")
/// try associations.destinations(of: event, mapping: "EventToStamp")   // [stamp]
/// ```
final class MigrationAssociationTable {
    /// The most keys one run covers.
    static let runLimit = AssociationRuns.runLimit

    /// The destination file's connection.
    private let connection: Connection
    /// The runs being extended, not yet written.
    private var runs = AssociationRuns()

    /// Creates the table in the destination file.
    ///
    /// - Parameter connection: The destination file's connection.
    /// - Throws: ``SQLiteError`` when the table cannot be created.
    init(connection: Connection) throws(SQLiteError) {
        self.connection = connection
        try connection.executeOnce(
            """
            CREATE TABLE IF NOT EXISTS TERN_ASSOCIATION (MAPPING TEXT NOT NULL, SENT TEXT NOT NULL, \
            SSTART INTEGER NOT NULL, DENT TEXT NOT NULL, DSTART INTEGER NOT NULL, COUNT INTEGER NOT NULL, \
            FRESH INTEGER NOT NULL, SEQ INTEGER NOT NULL)
            """)
        try connection.executeOnce("CREATE INDEX IF NOT EXISTS TERN_ASSOCIATION_S ON TERN_ASSOCIATION (SENT, SSTART)")
        try connection.executeOnce(
            "CREATE INDEX IF NOT EXISTS TERN_ASSOCIATION_D ON TERN_ASSOCIATION (MAPPING, DENT, DSTART)")
    }

    // MARK: - Recording

    /// Records that a source object became a destination object under a mapping.
    ///
    /// - Throws: ``SQLiteError`` when a finished run cannot be written.
    func associate(source: RowReference, withDestination destination: RowReference, mapping: String) throws(SQLiteError)
    {
        if let finished = runs.associate(source: source, withDestination: destination, mapping: mapping) {
            try write(finished)
        }
    }

    /// Records that a source object became a destination object under a mapping, by entity and key.
    ///
    /// - Throws: ``SQLiteError`` when a finished run cannot be written.
    func associate(
        sourceEntity: String, sourceKey: Int64, destinationEntity: String, destinationKey: Int64, mapping: String
    ) throws(SQLiteError) {
        if let finished = runs.associate(
            sourceEntity: sourceEntity, sourceKey: sourceKey, destinationEntity: destinationEntity,
            destinationKey: destinationKey, mapping: mapping)
        {
            try write(finished)
        }
    }

    /// Writes the open runs to the table, in the order they were opened.
    ///
    /// - Throws: ``SQLiteError`` when one cannot be written.
    func flush() throws(SQLiteError) {
        for run in runs.finishAll() { try write(run) }
    }

    /// Writes one run to the table.
    private func write(_ run: AssociationRuns.Run) throws(SQLiteError) {
        try connection.execute(
            """
            INSERT INTO TERN_ASSOCIATION (MAPPING, SENT, SSTART, DENT, DSTART, COUNT, FRESH, SEQ) VALUES (\(run.mapping), \
            \(run.sourceEntity), \(run.sourceStart), \(run.destinationEntity), \(run.destinationStart), \(run.count), \
            \(run.isFresh ? 1 : 0), \(run.sequence))
            """)
    }

    // MARK: - Looking up

    /// The destination objects of a source object under a mapping (any mapping when nil), in the
    /// order they were associated.
    ///
    /// - Complexity: O(log *n*) in the number of runs, plus the runs that hold keys near the source's.
    func destinations(of source: RowReference, mapping: String?) throws(SQLiteError) -> [RowReference] {
        let key = source.primaryKey
        var sql: SQL = """
            SELECT DENT, DSTART + (\(key) - SSTART) FROM TERN_ASSOCIATION WHERE SENT = \(source.entityName) \
            AND SSTART BETWEEN \(key - Self.runLimit + 1) AND \(key) AND SSTART + COUNT > \(key)
            """
        if let mapping {
            sql.append(" AND MAPPING = \(mapping)")
        } else {
            // Across mappings, the written runs alone give the order of association, by when
            // each run was opened (not when it was written).
            try flush()
        }
        var result: [RowReference] = []
        try connection.forEachRow(sql + " ORDER BY SEQ") { row in
            result.append(RowReference(entityName: row[0].string ?? "", primaryKey: row[1].int64 ?? 0))
        }
        if let destination = runs.openDestination(of: source, mapping: mapping) { result.append(destination) }
        return result
    }

    /// The source objects of a destination object under a mapping, in the order they were associated.
    ///
    /// - Complexity: O(log *n*) in the number of runs, plus the runs that hold keys near the destination's.
    func sources(of destination: RowReference, mapping: String) throws(SQLiteError) -> [RowReference] {
        let key = destination.primaryKey
        var result: [RowReference] = []
        try connection.forEachRow(
            """
            SELECT SENT, SSTART + (\(key) - DSTART) FROM TERN_ASSOCIATION WHERE MAPPING = \(mapping) \
            AND DENT = \(destination.entityName) AND DSTART BETWEEN \(key - Self.runLimit + 1) AND \(key) \
            AND DSTART + COUNT > \(key) ORDER BY rowid
            """
        ) { row in
            result.append(RowReference(entityName: row[0].string ?? "", primaryKey: row[1].int64 ?? 0))
        }
        if let source = runs.openSource(of: destination, mapping: mapping) { result.append(source) }
        return result
    }

    /// Calls `body` with each destination object a mapping's associations name, once, at its first
    /// association; runs are read `pageSize` at a time, so associations `body` adds are seen too.
    ///
    /// - Throws: ``SQLiteError``, or what `body` throws.
    /// - Complexity: O(*n*) in the number of associations; memory bounded by `pageSize` runs.
    func forEachDestination(mapping: String, pageSize: Int, _ body: (RowReference) throws -> Void) throws {
        var last: Int64 = 0
        while true {
            try flush()
            let runs = try connection.fetchAll(
                """
                SELECT rowid, DENT, DSTART, COUNT, FRESH FROM TERN_ASSOCIATION WHERE MAPPING = \(mapping) \
                AND rowid > \(last) ORDER BY rowid LIMIT \(max(1, pageSize))
                """)
            for run in runs {
                let rowid = run[0].int64 ?? 0
                let entity = run[1].string ?? ""
                let start = run[2].int64 ?? 0
                let isFresh = run[4].int64 == 1
                for key in start..<(start + (run[3].int64 ?? 0)) {
                    if !isFresh, try isAssociated(entity, key, mapping: mapping, before: rowid) { continue }
                    try body(RowReference(entityName: entity, primaryKey: key))
                }
            }
            guard let next = runs.last?[0].int64, runs.count == max(1, pageSize) else { return }
            last = next
        }
    }

    /// The SQL condition that a destination table row (alias `d`) was made under a mapping, for
    /// a join with the table aliased `a`.
    static func joinCondition(mapping: String, entity: String) -> SQL {
        "d.Z_PK >= a.DSTART AND d.Z_PK < a.DSTART + a.COUNT AND a.MAPPING = \(mapping) AND a.DENT = \(entity)"
    }

    // MARK: - Finishing

    /// Drops the table.
    func drop() throws(SQLiteError) {
        runs.removeAll()
        try connection.executeOnce("DROP TABLE IF EXISTS TERN_ASSOCIATION")
    }

    // MARK: - Non public

    /// Whether a run written before `rowid` holds the destination object.
    private func isAssociated(_ entity: String, _ key: Int64, mapping: String, before rowid: Int64) throws(SQLiteError)
        -> Bool
    {
        try connection.fetchValue(
            """
            SELECT 1 FROM TERN_ASSOCIATION WHERE MAPPING = \(mapping) AND DENT = \(entity) \
            AND DSTART BETWEEN \(key - Self.runLimit + 1) AND \(key) AND DSTART + COUNT > \(key) AND rowid < \(rowid) LIMIT 1
            """) != nil
    }
}

extension MigrationAssociationTable: MigrationAssociationStorage {}
