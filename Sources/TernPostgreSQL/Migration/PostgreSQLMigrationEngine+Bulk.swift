import Foundation
package import TernCore
import TernMigration
import TernRelational

extension PostgreSQLMigrationEngine: BulkMappingEngine {
    /// Runs stage 1 of a mapping as one `INSERT … SELECT` from the source schema of the same
    /// database, then records its associations from the source keys, in a savepoint: a row the
    /// statement cannot handle as Swift does rolls it back, and the mapping runs in Swift (see
    /// `docs/MappingsAsSQL.md`).
    ///
    /// - Complexity: One statement over the source rows, and one read of their keys in pages.
    func createDestinationInstancesInBulk(_ bulk: BulkMapping) throws(MigrationError) -> Bool {
        guard let sourceSchema = bulkSourceSchema, !keepsKeys else { return false }
        // uuid() of a migration's own generator (a test's) stays in Swift; gen_random_uuid()
        // is in PostgreSQL from version 13.
        if bulk.makesUUIDs {
            guard environment.generatesRandomUUIDs else { return false }
            let destination = self.destination
            let version = try Self.storeWork {
                try destination.fetchValue("SELECT CAST(current_setting('server_version_num') AS integer)")
            }
            guard (version?.int64 ?? 0) >= 130_000 else { return false }
        }
        try flush()
        try throwPending()
        let plan = try insertPlan(of: bulk.destinationEntity)
        guard plan.unfitDefaults.isEmpty else { return false }
        let (layout, sourceColumns) = try Self.storeWork {
            let layout = try source.schema.entity(named: bulk.sourceEntity)
            return (
                layout, BulkSourceColumns(layout: layout, schema: source.schema, values: bulk.attributes.map(\.value))
            )
        }
        guard let joins = sourceColumns.joinClause(schema: sourceSchema) else {
            return false
        }
        var values: [SQL] = []
        var needsFallback = false
        for slot in plan.columns.indices.dropFirst(3) {
            guard let column = plan.columns[slot] else { return false }
            if let value = bulk.attributes.first(where: { $0.name == column.name })?.value.replacingNow(
                with: environment.now)
            {
                guard let rendered = PostgreSQLBulkSQL.render(value, columns: sourceColumns) else { return false }
                values.append(rendered.sql)
                needsFallback = needsFallback || rendered.mayFallBack
            } else {
                values.append("\(plan.defaults[slot])")
            }
        }
        let destination = self.destination
        if needsFallback, !hasBulkFallbackFunction {
            try Self.storeWork { try destination.execute(PostgreSQLBulkSQL.fallbackFunction) }
            hasBulkFallbackFunction = true
        }
        let base = lastKeys[plan.layout.table] ?? 0
        var filter = layout.rowFilter(includingSubentities: false, alias: "s")
        if let predicate = bulk.filter {
            // A filter SQL cannot express exactly runs in Swift.
            guard
                let condition = try Self.storeWork({
                    BulkSourceColumns.filterCondition(
                        predicate, entity: bulk.sourceEntity, schema: source.schema, dialect: PostgreSQLDialect(),
                        tableSchema: sourceSchema)
                })
            else { return false }
            filter = filter + " AND " + condition
        }
        let sourceTable: SQL = "\(.identifier(sourceSchema)).\(.identifier(layout.table))"
        let keys = try Self.storeWork {
            try reader.fetchOne(
                "SELECT COUNT(*), MIN(s.\"Z_PK\"), MAX(s.\"Z_PK\") FROM \(.identifier(layout.table)) AS s WHERE \(filter)"
            )
        }
        let (count, first, last) = (keys?[0].int64 ?? 0, keys?[1].int64 ?? 0, keys?[2].int64 ?? 0)
        // Keys as the Swift path gives them, `base + 1, base + 2, …` in source key order. When the
        // source keys have no gap, that is the source key plus an offset, so the server reads the
        // table in any order and sorts nothing; otherwise `row_number()` over the key order.
        let (offset, overflows) = (base + 1).subtractingReportingOverflow(first)
        let isDense = count > 0 && !overflows && last - first + 1 == count
        let key: SQL = isDense ? "s.\"Z_PK\" + \(offset)" : "\(base) + row_number() OVER (ORDER BY s.\"Z_PK\")"
        var insert = SQL(unsafeSQL: "INSERT INTO \(SQL.quoted(plan.layout.table)) (")
        insert.append(SQL(unsafeSQL: plan.columnNames.map(SQL.quoted).joined(separator: ", ") + ") SELECT "))
        insert.append(key + ", \(plan.defaults[1]), 1")
        for value in values { insert.append(", " + value) }
        insert.append(" FROM \(sourceTable) AS s" + joins + " WHERE \(filter)")
        if !isDense { insert.append(" ORDER BY s.\"Z_PK\"") }
        if Task.isCancelled {
            throw MigrationError(.cancelled, "The migration was cancelled; the store is unchanged")
        }
        let ran = try inBulkSavepoint(isFallback: Self.isFallback(_:)) { try destination.execute(insert) }
        guard ran else { return false }
        lastKeys[plan.layout.table] = base + count
        try associate(bulk, source: layout, filter: filter, base: base, count: count, dense: isDense ? first : nil)
        mappingsRunAsSQL.append(bulk.mapping.name)
        try onBatch(Int(count))
        return true
    }

    /// Records the associations the Swift path would make, source key after source key: the
    /// source keys' islands of consecutive keys, each one range of associations, read a page of
    /// keys at a time (one range when the keys have no gap).
    private func associate(
        _ bulk: BulkMapping, source layout: EntityLayout, filter: SQL, base: Int64, count: Int64, dense first: Int64?
    ) throws(MigrationError) {
        let (sourceEntity, destinationEntity, mapping) = (bulk.sourceEntity, bulk.destinationEntity, bulk.mapping.name)
        let associations = self.associations
        if let first {
            try Self.storeWork {
                try associations.associateRange(
                    sourceEntity: sourceEntity, sourceStart: first, destinationEntity: destinationEntity,
                    destinationStart: base + 1, count: count, mapping: mapping)
            }
            return
        }
        var key = base
        var last = Int64.min
        while true {
            // The islands of one page of keys: (first key, length, the page's last key).
            let islands = try Self.storeWork {
                try reader.fetchAll(
                    """
                    SELECT MIN(k), COUNT(*), MAX(MAX(k)) OVER () FROM (SELECT k, k - row_number() OVER (ORDER BY k) AS g \
                    FROM (SELECT s."Z_PK" AS k FROM \(.identifier(layout.table)) AS s WHERE \(filter) AND s."Z_PK" > \(last) \
                    ORDER BY s."Z_PK" LIMIT \(Self.keyPageSize)) AS page) AS numbered GROUP BY g ORDER BY 1
                    """)
            }
            var read: Int64 = 0
            for island in islands {
                let (start, length) = (island[0].int64 ?? 0, island[1].int64 ?? 0)
                try Self.storeWork {
                    try associations.associateRange(
                        sourceEntity: sourceEntity, sourceStart: start, destinationEntity: destinationEntity,
                        destinationStart: key + 1, count: length, mapping: mapping)
                }
                key += length
                read += length
            }
            guard read == Self.keyPageSize, let next = islands.last?[2].int64 else { break }
            last = next
        }
        guard key == base + count else {
            throw MigrationError(
                .storeFailure,
                "The source table \(layout.table) changed while it was migrated; run the migration again",
                entity: sourceEntity)
        }
    }

    /// How many source keys one read of a bulk mapping's associations takes.
    private static var keyPageSize: Int64 { 65_536 }
}

extension PostgreSQLMigrationEngine: BulkRelationshipEngine {
    /// Runs stage 2 of a mapping as one statement per relationship over the source schema and
    /// the association table (``BulkRelationshipSQL``), in a savepoint: a related object the
    /// statements cannot handle as Swift does rolls them back, and the mapping runs in Swift.
    ///
    /// - Complexity: A few statements per relationship, each over the mapping's objects.
    func setRelationshipsInBulk(_ bulk: BulkRelationships) throws(MigrationError) -> Bool {
        guard let sourceSchema = bulkSourceSchema else { return false }
        try flush()
        try throwPending()
        let (destination, associations) = (self.destination, self.associations)
        let statements = try Self.storeWork {
            try associations.flush()
            return try BulkRelationshipSQL(
                source: source.schema, sourceTables: sourceSchema, destination: schema,
                fallback: "pg_temp.tern_bulk_fallback(CAST(NULL AS text))"
            ).statements(bulk)
        }
        guard let statements else { return false }
        if !hasBulkFallbackFunction {
            try Self.storeWork { try destination.execute(PostgreSQLBulkSQL.fallbackFunction) }
            hasBulkFallbackFunction = true
        }
        if Task.isCancelled {
            throw MigrationError(.cancelled, "The migration was cancelled; the store is unchanged")
        }
        let ran = try inBulkSavepoint(isFallback: Self.calledFallback(_:)) {
            for statement in statements { try destination.execute(statement) }
        }
        guard ran else { return false }
        relationshipsSetAsSQL.append(bulk.mapping.name)
        return true
    }

    /// Whether an error is a statement's call of the fallback function (a row for Swift).
    private static func calledFallback(_ error: any Error) -> Bool {
        (error as? PostgreSQLError)?.message.contains(PostgreSQLBulkSQL.fallbackMessage) == true
    }

    /// Whether an error sends a mapping's stage 1 to Swift: the fallback function, or a cast or
    /// range error of a value PostgreSQL reads otherwise than Swift.
    private static func isFallback(_ error: any Error) -> Bool {
        calledFallback(error)
            || (error as? PostgreSQLError)?.sqlState.map(PostgreSQLBulkSQL.fallbackStates.contains) == true
    }
}

extension PostgreSQLStore {
    /// Whether a mapping's filter has an SQL form on a PostgreSQL store of a model, as the
    /// migration engine translates it when the mapping runs: what `tern plan` forecasts (#24).
    ///
    /// - Parameters:
    ///   - filter: The mapping's filter.
    ///   - entity: The source entity.
    ///   - model: The source model.
    /// - Complexity: O(*n*) in the size of the model, to lay out its tables.
    package static func runsMigrationFilterAsSQL(
        _ filter: FetchPredicate, of entity: String, in model: ManagedObjectModel
    ) -> Bool {
        BulkSourceColumns.translates(filter, of: entity, in: model, dialect: PostgreSQLDialect())
    }
}
