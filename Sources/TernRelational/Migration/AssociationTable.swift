package import TernCore

/// The associations of a migration step (which destination objects each source object became
/// under each entity mapping), kept as runs in a table beside the destination's,
/// `TERN_ASSOCIATION`, so that memory does not grow with the store: one copy for both SQL
/// stores, over a ``RelationalConnection``.
///
/// A run says that `COUNT` consecutive source keys became `COUNT` consecutive destination keys
/// under one mapping: source `SSTART + i` became destination `DSTART + i` (``AssociationRuns``).
/// A mapping that makes one object per source object, read and created in key order, gives one
/// run per ``AssociationRuns/runLimit`` objects, so the table stays small; any other pattern still
/// works, as runs of one. Runs never span more than that many keys, so finding the runs that
/// hold a key reads one short index range.
///
/// Finished runs gather in memory and are written with one ``RelationalConnection/insertRows(into:columns:rows:)``
/// per ``flushLimit`` of them, or before a lookup that needs them; lookups read the table through
/// its indexes and then the runs not yet written, so each answer keeps the order associations
/// were made in. `ORD` numbers the runs in the order they finished.
///
/// ```swift
/// let associations = try AssociationTable(connection: destination, flushLimit: 1000)
/// try associations.associate(source: event, withDestination: stamp, mapping: "EventToStamp")
/// try associations.destinations(of: event, mapping: "EventToStamp")   // [stamp]
/// ```
package final class AssociationTable: MigrationAssociationStorage {
    /// The columns, in the order rows are written.
    private static var columns: [String] {
        ["ORD", "MAPPING", "SENT", "SSTART", "DENT", "DSTART", "COUNT", "FRESH", "SEQ"]
    }

    /// The connection of the destination (an existential: the per-row calls of a migration,
    /// ``associate(source:withDestination:mapping:)``, then need no generic specialization across
    /// modules, and the database is reached once per written batch).
    private let connection: any RelationalConnection
    /// How many finished runs gather before they are written.
    package let flushLimit: Int
    /// The runs being extended.
    private var runs = AssociationRuns()
    /// The finished runs not yet written, in the order they finished.
    private var finished: [AssociationRuns.Run] = []
    /// How many runs were written: the `ORD` of the last one.
    private var written: Int64 = 0
    /// The source keys the written runs span, by mapping and source entity: a lookup of a key
    /// outside them needs no query (a walk in key order looks up keys above every written run).
    private var writtenSources = KeySpans()
    /// The source keys the written runs of any mapping span, by source entity.
    private var writtenSourcesOfAnyMapping = KeySpans()
    /// The destination keys the written runs span, by mapping and destination entity.
    private var writtenDestinations = KeySpans()

    /// Creates the table (replacing one a failed attempt left) with its two indexes.
    ///
    /// - Parameters:
    ///   - connection: The destination's connection.
    ///   - flushLimit: How many finished runs gather before they are written.
    ///   - tableKind: How the table is created: `CREATE TABLE`, or `CREATE UNLOGGED TABLE` where
    ///     the database need not log a table that never outlives the step.
    /// - Throws: The database's error when the table cannot be created.
    package init(connection: any RelationalConnection, flushLimit: Int, tableKind: SQL = "CREATE TABLE") throws {
        self.connection = connection
        self.flushLimit = max(1, flushLimit)
        try connection.execute(#"DROP TABLE IF EXISTS "TERN_ASSOCIATION""#)
        try connection.execute(
            tableKind
                + """
                 "TERN_ASSOCIATION" ("ORD" BIGINT PRIMARY KEY, "MAPPING" TEXT NOT NULL, "SENT" TEXT NOT NULL, \
                "SSTART" BIGINT NOT NULL, "DENT" TEXT NOT NULL, "DSTART" BIGINT NOT NULL, "COUNT" BIGINT NOT NULL, \
                "FRESH" BIGINT NOT NULL, "SEQ" BIGINT NOT NULL)
                """)
        try connection.execute(#"CREATE INDEX "TERN_ASSOCIATION_S" ON "TERN_ASSOCIATION" ("SENT", "SSTART")"#)
        try connection.execute(
            #"CREATE INDEX "TERN_ASSOCIATION_D" ON "TERN_ASSOCIATION" ("MAPPING", "DENT", "DSTART")"#)
        // The pages of `forEachDestination`, in order: without it SQLite reads every run of the
        // mapping through the index above and sorts them again for each page, which made the
        // walk quadratic (10,000,000 rows of the Swift-policy split: 1.64x C against 1.44 at 1,000,000).
        try connection.execute(#"CREATE INDEX "TERN_ASSOCIATION_O" ON "TERN_ASSOCIATION" ("MAPPING", "ORD")"#)
    }

    // MARK: - Recording

    /// Records that a source object became a destination object under a mapping.
    ///
    /// - Throws: The database's error when gathered runs cannot be written.
    package func associate(source: RowReference, withDestination destination: RowReference, mapping: String) throws {
        guard let run = runs.associate(source: source, withDestination: destination, mapping: mapping) else { return }
        try append(run)
    }

    /// Records that a source object became a destination object under a mapping, by entity and
    /// key, without making references.
    ///
    /// - Throws: The database's error when gathered runs cannot be written.
    package func associate(
        sourceEntity: String, sourceKey: Int64, destinationEntity: String, destinationKey: Int64, mapping: String
    ) throws {
        guard
            let run = runs.associate(
                sourceEntity: sourceEntity, sourceKey: sourceKey, destinationEntity: destinationEntity,
                destinationKey: destinationKey, mapping: mapping)
        else { return }
        try append(run)
    }

    /// Records that `count` consecutive source keys became `count` consecutive destination keys
    /// under a mapping, as that many calls of
    /// ``associate(sourceEntity:sourceKey:destinationEntity:destinationKey:mapping:)`` would.
    ///
    /// - Throws: The database's error when gathered runs cannot be written.
    /// - Complexity: O(`count` ÷ ``AssociationRuns/runLimit``).
    package func associateRange(
        sourceEntity: String, sourceStart: Int64, destinationEntity: String, destinationStart: Int64, count: Int64,
        mapping: String
    ) throws {
        // In chunks of at most a flush of runs, so that memory stays bounded by the flush limit.
        let chunk = AssociationRuns.runLimit * Int64(flushLimit)
        var done: Int64 = 0
        while done < count {
            let size = min(chunk, count - done)
            for run in runs.associateRange(
                sourceEntity: sourceEntity, sourceStart: sourceStart + done, destinationEntity: destinationEntity,
                destinationStart: destinationStart + done, count: size, mapping: mapping)
            {
                try append(run)
            }
            done += size
        }
    }

    /// Writes every run, the open ones too.
    ///
    /// - Throws: The database's error when they cannot be written.
    package func flush() throws {
        finished += runs.finishAll()
        try writeFinished()
    }

    // MARK: - Looking up

    /// The destination objects of a source object under a mapping (any mapping when nil), in the
    /// order they were associated.
    ///
    /// - Throws: The database's error.
    /// - Complexity: One indexed query, plus the runs not yet written.
    package func destinations(of source: RowReference, mapping: String?) throws -> [RowReference] {
        let key = source.primaryKey
        var sql: SQL = """
            SELECT "DENT", "DSTART" + (\(key) - "SSTART") FROM "TERN_ASSOCIATION" WHERE "SENT" = \(source.entityName) \
            AND "SSTART" BETWEEN \(key - AssociationRuns.runLimit + 1) AND \(key) AND "SSTART" + "COUNT" > \(key)
            """
        if let mapping {
            sql.append(#" AND "MAPPING" = \#(mapping)"#)
        } else {
            // Across mappings, the written runs alone give the order of association, by when
            // each run was opened (not when it finished).
            try flush()
        }
        let spans =
            mapping.map { writtenSources.span(mapping: $0, entity: source.entityName) }
            ?? writtenSourcesOfAnyMapping.span(mapping: "", entity: source.entityName)
        var result =
            spans?.contains(key) == true ? try connection.fetchAll(sql + #" ORDER BY "SEQ""#).map(rowReference) : []
        for run in finished where run.mapping == mapping {
            if let destination = run.destination(of: source) { result.append(destination) }
        }
        if let destination = runs.openDestination(of: source, mapping: mapping) { result.append(destination) }
        return result
    }

    /// The source objects of a destination object under a mapping, in the order they were associated.
    ///
    /// - Throws: The database's error.
    /// - Complexity: One indexed query, plus the runs not yet written.
    package func sources(of destination: RowReference, mapping: String) throws -> [RowReference] {
        let key = destination.primaryKey
        var result: [RowReference] = []
        if writtenDestinations.span(mapping: mapping, entity: destination.entityName)?.contains(key) == true {
            result = try connection.fetchAll(
                """
                SELECT "SENT", "SSTART" + (\(key) - "DSTART") FROM "TERN_ASSOCIATION" WHERE "MAPPING" = \(mapping) \
                AND "DENT" = \(destination.entityName) AND "DSTART" BETWEEN \(key - AssociationRuns.runLimit + 1) \
                AND \(key) AND "DSTART" + "COUNT" > \(key) ORDER BY "ORD"
                """
            ).map(rowReference)
        }
        for run in finished where run.mapping == mapping {
            if let source = run.source(of: destination) { result.append(source) }
        }
        if let source = runs.openSource(of: destination, mapping: mapping) { result.append(source) }
        return result
    }

    /// Calls `body` with each destination object a mapping's associations name, once, at its
    /// first association, at most `pageSize` objects a call; runs are read `pageSize` at a time,
    /// so associations `body` adds are seen too.
    ///
    /// - Throws: The database's error, or what `body` throws.
    /// - Complexity: O(*n*) in the number of associations, plus one query per run that is not
    ///   fresh (whose destinations an earlier run may hold); memory bounded by `pageSize` runs.
    package func forEachDestination(mapping: String, pageSize: Int, _ body: ([RowReference]) throws -> Void) throws {
        var last: Int64 = 0
        let size = max(1, pageSize)
        while true {
            try flush()
            let page = try connection.fetchAll(Self.runPage(mapping: mapping, after: last, limit: size))
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

    /// The query of one page of a mapping's runs in association order, after the run `last`.
    ///
    /// - Complexity: O(log *n* + `limit`) through the index on `MAPPING, ORD`.
    package static func runPage(mapping: String, after last: Int64, limit: Int) -> SQL {
        """
        SELECT "ORD", "DENT", "DSTART", "COUNT", "FRESH" FROM "TERN_ASSOCIATION" WHERE "MAPPING" = \(mapping) \
        AND "ORD" > \(last) ORDER BY "ORD" LIMIT \(Int64(limit))
        """
    }

    /// ``forEachDestination(mapping:pageSize:_:)`` one object at a time.
    ///
    /// - Throws: The database's error, or what `body` throws.
    package func forEachDestination(mapping: String, pageSize: Int, _ body: (RowReference) throws -> Void) throws {
        try forEachDestination(mapping: mapping, pageSize: pageSize) { (references: [RowReference]) in
            for reference in references { try body(reference) }
        }
    }

    /// The SQL condition that a destination table row (alias `d`) was made under a mapping, for
    /// a join with the table aliased `a`.
    package static func joinCondition(mapping: String, entity: String) -> SQL {
        // The BETWEEN repeats the range in a form the index on (MAPPING, DENT, DSTART) bounds.
        """
        a."MAPPING" = \(mapping) AND a."DENT" = \(entity) \
        AND a."DSTART" BETWEEN d."Z_PK" - \(AssociationRuns.runLimit - 1) AND d."Z_PK" AND d."Z_PK" < a."DSTART" + a."COUNT"
        """
    }

    // MARK: - Finishing

    /// Drops the table.
    ///
    /// - Throws: The database's error.
    package func drop() throws {
        runs.removeAll()
        finished.removeAll()
        try connection.execute(#"DROP TABLE IF EXISTS "TERN_ASSOCIATION""#)
    }

    // MARK: - Non public

    /// Gathers a finished run, writing the gathered ones when there are ``flushLimit``.
    private func append(_ run: AssociationRuns.Run) throws {
        finished.append(run)
        if finished.count >= flushLimit { try writeFinished() }
    }

    /// Writes the finished runs, numbered in the order they finished.
    private func writeFinished() throws {
        guard !finished.isEmpty else { return }
        let rows = finished.map { run -> [DatabaseValue] in
            written += 1
            writtenSources.include(run.sourceStart, count: run.count, mapping: run.mapping, entity: run.sourceEntity)
            writtenSourcesOfAnyMapping.include(run.sourceStart, count: run.count, mapping: "", entity: run.sourceEntity)
            writtenDestinations.include(
                run.destinationStart, count: run.count, mapping: run.mapping, entity: run.destinationEntity)
            return [
                .integer(written), .text(run.mapping), .text(run.sourceEntity), .integer(run.sourceStart),
                .text(run.destinationEntity), .integer(run.destinationStart), .integer(run.count),
                .integer(run.isFresh ? 1 : 0), .integer(run.sequence),
            ]
        }
        finished.removeAll(keepingCapacity: true)
        try connection.insertRows(into: "TERN_ASSOCIATION", columns: Self.columns, rows: rows)
    }

    /// The destination keys that runs written before `order` hold among `keys`, as ranges.
    private func earlierRuns(
        of mapping: String, _ entity: String, overlapping keys: Range<Int64>, before order: Int64
    ) throws -> [Range<Int64>] {
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
}

/// The smallest and largest keys a set of runs covers, by mapping and entity.
private struct KeySpans {
    private var spans: [String: [String: ClosedRange<Int64>]] = [:]

    /// The keys from the first to the last that runs of the mapping and entity cover, if any.
    func span(mapping: String, entity: String) -> ClosedRange<Int64>? {
        spans[mapping]?[entity]
    }

    /// Widens the span of a mapping and entity to a run's keys.
    mutating func include(_ start: Int64, count: Int64, mapping: String, entity: String) {
        guard count > 0 else { return }
        let run = start...(start + count - 1)
        if let span = spans[mapping]?[entity] {
            spans[mapping, default: [:]][entity] =
                min(span.lowerBound, run.lowerBound)...max(span.upperBound, run.upperBound)
        } else {
            spans[mapping, default: [:]][entity] = run
        }
    }
}

/// A reference read from a row of an entity name and a key.
private func rowReference(_ row: [DatabaseValue]) -> RowReference {
    RowReference(entityName: row[0].string ?? "", primaryKey: row[1].int64 ?? 0)
}
