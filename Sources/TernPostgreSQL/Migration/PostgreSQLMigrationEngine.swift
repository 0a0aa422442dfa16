import Foundation
import TernCore
import TernMigration
import TernRelational

/// The PostgreSQL store's migration engine: a ``TernMigration/MigrationManager`` that reads the
/// tables of one schema and writes the destination model's tables in another schema of the same
/// database, so that a mapped step streams table to table on the server with no local file.
///
/// Source rows are read a page at a time with keyset queries (`Z_PK > last ORDER BY Z_PK LIMIT
/// batch`), through the source store's row plans, once for all the independent mappings of a
/// source entity (``MappingRunner``'s shared walks). Destination rows gather in memory, their
/// attribute values set in place, and are loaded with one `COPY` per table once a batch is full
/// or before anything reads or updates the destination; relationships are written with bound
/// `UPDATE`s and join-table `INSERT`s as on SQLite. Associations live in a table of the
/// destination schema (`AssociationTable`, unlogged: it never outlives the step). Memory is
/// bounded by the batch size.
final class PostgreSQLMigrationEngine: RelationalMigrationEngine {
    let sourceModel: ManagedObjectModel
    let destinationModel: ManagedObjectModel
    let environment: ExpressionEnvironment
    /// The source store: its layout and row plans (its reads go through ``reader``).
    let source: PostgreSQLStore
    /// The connection reading the source schema.
    let reader: Connection
    /// The connection writing the destination schema.
    let destination: Connection
    /// The destination layout.
    let schema: StoreSchema
    let batchSize: Int
    let onBatch: (Int) throws(MigrationError) -> Void
    /// Whether a source object's first destination object keeps its primary key and `Z_OPT`
    /// when the key is free (inferred steps keep object IDs, as in place).
    let keepsKeys: Bool
    /// The smallest `Z_MAX` of each destination root table.
    let carriedKeys: [String: Int64]
    let associations: AssociationTable
    /// The source object whose destination objects are being created, until it has one.
    private var unclaimedSource: RowReference?
    /// The largest primary key given per destination table.
    var lastKeys: [String: Int64] = [:]
    /// How each destination entity's rows are written, made on first use.
    private var insertPlans: [String: InsertPlan] = [:]
    /// The schema of the source tables, when entity mappings may run as one `INSERT … SELECT`
    /// from them (``createDestinationInstancesInBulk(_:)``); nil when every mapping runs in Swift.
    let bulkSourceSchema: String?
    /// The entity mappings that ran as SQL, in order.
    var mappingsRunAsSQL: [String] = []
    /// The entity mappings whose stage 2 ran as SQL statements, in order.
    var relationshipsSetAsSQL: [String] = []
    /// Whether this connection's session has the fallback function of bulk statements.
    var hasBulkFallbackFunction = false
    /// The destination rows not yet written, in creation order, and the position of each.
    private var pending: [(plan: InsertPlan, values: [DatabaseValue])] = []
    private var pendingPositions: [RowReference: Int] = [:]
    /// The page of source rows being migrated, by primary key.
    private var page: [Int64: StoreRow] = [:]
    private var pageEntity = ""
    /// Source rows read outside the page (a few, so that an object's property mappings read each once).
    private var cachedRows: [RowReference: StoreRow] = [:]
    /// A failure inside a non-throwing protocol method, thrown at the next throwing one.
    var pendingFailure: MigrationError?
    /// The links dropped because their object's entity left the relationship's inheritance tree.
    var droppedLinks = 0

    /// How rows of one destination entity are written: the `COPY` columns, each attribute's slot
    /// among them and the default values, worked out once per entity.
    final class InsertPlan {
        let layout: EntityLayout
        let columnNames: [String]
        /// The column of each slot; the first three (`Z_PK`, `Z_ENT`, `Z_OPT`) have none.
        let columns: [AttributeColumn?]
        let slots: [String: Int]
        /// A new row's values: key 0, the entity number, version 1 and each default that fits.
        let defaults: [DatabaseValue]
        /// Defaults that do not fit their column: storing them fails per row, as any such value.
        let unfitDefaults: [(slot: Int, column: AttributeColumn, value: AttributeValue)]

        init(layout: EntityLayout, model: ManagedObjectModel) {
            self.layout = layout
            var columns: [AttributeColumn?] = [nil, nil, nil]
            var slots: [String: Int] = [:]
            var defaults: [DatabaseValue] = [.integer(0), .integer(Int64(layout.number)), .integer(1)]
            var unfit: [(slot: Int, column: AttributeColumn, value: AttributeValue)] = []
            for column in layout.attributes {
                slots[column.name] = columns.count
                var stored = DatabaseValue.null
                if let value = model.attribute(named: column.name, inEntity: layout.name)?.defaultValue {
                    if let converted = value.postgreSQLValue(for: column.type) {
                        stored = converted
                    } else {
                        unfit.append((columns.count, column, value))
                    }
                }
                columns.append(column)
                defaults.append(stored)
            }
            (self.columns, self.slots, self.defaults, unfitDefaults) = (columns, slots, defaults, unfit)
            columnNames = ["Z_PK", "Z_ENT", "Z_OPT"] + layout.attributes.map(\.column)
        }
    }

    /// Creates an engine; the destination schema holds the destination model's empty tables.
    ///
    /// - Parameters:
    ///   - source: The source store, opened read-only.
    ///   - reader: A connection to the source store's schema.
    ///   - destination: A connection to the destination schema, in the step's transaction.
    ///   - schema: The destination layout.
    ///   - environment: The clock and UUID source of value expressions.
    ///   - batchSize: How many source objects are read per query and rows written per `COPY`.
    ///   - keepsKeys: Whether objects keep their source primary key and `Z_OPT` where free.
    ///   - carriedKeys: The smallest `Z_MAX` of each destination root table.
    ///   - bulkSourceSchema: The schema of the source tables, in the destination's database, when
    ///     entity mappings may run as SQL; nil to run every one in Swift.
    ///   - onBatch: Called after each batch with its object count; throws to stop.
    init(
        source: PostgreSQLStore, reader: Connection, destination: Connection, schema: StoreSchema,
        environment: ExpressionEnvironment, batchSize: Int, keepsKeys: Bool, carriedKeys: [String: Int64],
        bulkSourceSchema: String? = nil, onBatch: @escaping (Int) throws(MigrationError) -> Void
    ) throws(MigrationError) {
        (self.source, self.reader, self.destination, self.schema) = (source, reader, destination, schema)
        self.bulkSourceSchema = keepsKeys ? nil : bulkSourceSchema
        (sourceModel, destinationModel, self.environment) = (source.model, schema.model, environment)
        (self.batchSize, self.keepsKeys, self.carriedKeys, self.onBatch) = (
            max(1, batchSize), keepsKeys, carriedKeys, onBatch
        )
        associations = try Self.storeWork {
            try AssociationTable(connection: destination, flushLimit: batchSize, tableKind: "CREATE UNLOGGED TABLE")
        }
    }

    // MARK: - Reading the source

    /// One walk over the source entity for several independent mappings: each page of source
    /// rows is read once, and each row is handed to every mapping whose filter it passes.
    func forEachSourceInstance(
        of mappings: [EntityMapping], readingAttributes attributes: Set<String>?,
        _ body: (Int, RowReference) throws(MigrationError) -> Void
    ) throws(MigrationError) {
        guard let entity = mappings.first?.sourceEntityName else { return }
        guard mappings.allSatisfy({ $0.sourceEntityName == entity }) else {
            for (index, mapping) in mappings.enumerated() {
                try forEachSourceInstance(of: [mapping], readingAttributes: attributes) {
                    _, source throws(MigrationError) in
                    try body(index, source)
                }
            }
            return
        }
        let (layout, select) = try Self.storeWork {
            let layout = try source.schema.entity(named: entity)
            return (layout, try source.selection(for: layout))
        }
        defer { page = [:] }
        var last: Int64 = 0
        while true {
            if Task.isCancelled {
                throw MigrationError(.cancelled, "The migration was cancelled; the store is unchanged")
            }
            let rows = try Self.storeWork {
                try source.packedRows(
                    """
                    \(select) WHERE \(layout.rowFilter(includingSubentities: false, alias: "t0")) AND t0."Z_PK" > \(last) \
                    ORDER BY t0."Z_PK" LIMIT \(batchSize)
                    """, using: reader)
            }
            page = Dictionary(uniqueKeysWithValues: rows.map { ($0.reference.primaryKey, StoreRow($0)) })
            pageEntity = entity
            for row in rows {
                let reference = RowReference(entityName: entity, primaryKey: row.reference.primaryKey)
                defer { unclaimedSource = nil }
                for position in mappings.indices {
                    guard try SourceRowReading.passesFilter(reference, of: mappings[position], manager: self) else {
                        continue
                    }
                    // Each mapping's first destination object may keep the source key, as when run alone.
                    unclaimedSource = reference
                    try body(position, reference)
                }
            }
            try throwPending()
            // Progress counts a row once per mapping, as when the mappings run one after the other.
            try onBatch(rows.count * mappings.count)
            guard let next = rows.last?.reference.primaryKey, rows.count == batchSize else { return }
            last = next
        }
    }

    func sourceValue(forKeyPath keyPath: [String], of source: RowReference) throws(MigrationError) -> ExpressionValue {
        try SourceRowReading.value(forKeyPath: keyPath, of: source, in: sourceModel) {
            reference throws(MigrationError) in
            try sourceRow(reference)
        }
    }

    /// The number of source objects of exactly an entity.
    func sourceCount(of entity: String) throws(MigrationError) -> Int {
        try Self.storeWork {
            let layout = try source.schema.entity(named: entity)
            return Int(
                try reader.fetchValue(
                    """
                    SELECT COUNT(*) FROM \(.identifier(layout.table)) WHERE \(layout.rowFilter(includingSubentities: false))
                    """)?.int64 ?? 0)
        }
    }

    // MARK: - Writing the destination

    func insertDestinationInstance(ofEntity entity: String) throws(MigrationError) -> RowReference {
        let plan = try insertPlan(of: entity)
        let table = plan.layout.table
        var key = (lastKeys[table] ?? 0) + 1
        var version: Int64 = 1
        if keepsKeys, let source = unclaimedSource, try !isTaken(source.primaryKey, in: table) {
            key = source.primaryKey
            version = try sourceRow(source)?.version ?? 1
            unclaimedSource = nil
        }
        lastKeys[table] = max(lastKeys[table] ?? 0, key)
        if pending.count >= batchSize { try flush() }
        var values = plan.defaults
        values[0] = .integer(key)
        values[2] = .integer(version)
        let reference = RowReference(entityName: entity, primaryKey: key)
        for (slot, column, value) in plan.unfitDefaults { values[slot] = try storedValue(value, column, of: reference) }
        pendingPositions[reference] = pending.count
        pending.append((plan, values))
        return reference
    }

    func setDestinationValue(_ value: AttributeValue?, forAttribute attribute: String, of destination: RowReference)
        throws(MigrationError)
    {
        if let position = pendingPositions[destination], let slot = pending[position].plan.slots[attribute],
            let column = pending[position].plan.columns[slot]
        {
            pending[position].values[slot] = try storedValue(value, column, of: destination)
            return
        }
        guard destinationModel.attribute(named: attribute, inEntity: destination.entityName) != nil,
            let layout = try? schema.entity(named: destination.entityName)
        else {
            throw MigrationError(
                .invalidMapping, "\(destination.entityName) has no attribute \(attribute)",
                entity: destination.entityName,
                property: attribute)
        }
        guard let column = layout.attribute(named: attribute) else { return }  // transient
        let stored = try storedValue(value, column, of: destination)
        try flush()
        try Self.storeWork {
            try self.destination.execute(
                """
                UPDATE \(.identifier(layout.table)) SET \(.identifier(column.column)) = \(stored) \
                WHERE "Z_PK" = \(destination.primaryKey)
                """)
        }
    }

    // MARK: - Non public

    /// Forgets the source rows read outside the page: a page of destination objects is done.
    func finishDestinationPage() {
        cachedRows.removeAll(keepingCapacity: true)
    }

    /// PostgreSQL's errors name no file.
    static func path(of error: any Error) -> String? { nil }

    /// Writes the pending destination rows: one `COPY` per table, each in creation order.
    func flush() throws(MigrationError) {
        guard !pending.isEmpty else { return }
        let rows = pending
        pending.removeAll(keepingCapacity: true)
        pendingPositions.removeAll(keepingCapacity: true)
        // One COPY per table, its rows in creation order: mappings that share a walk create rows
        // of several tables in turns.
        var tables: [(plan: InsertPlan, rows: [[DatabaseValue]])] = []
        for row in rows {
            if let index = tables.firstIndex(where: { $0.plan === row.plan }) {
                tables[index].rows.append(row.values)
            } else {
                tables.append((row.plan, [row.values]))
            }
        }
        for table in tables {
            try Self.storeWork {
                try destination.copy(into: table.plan.layout.table, columns: table.plan.columnNames, rows: table.rows)
            }
        }
    }

    /// The plan that writes rows of a destination entity, made on first use.
    func insertPlan(of entity: String) throws(MigrationError) -> InsertPlan {
        if let plan = insertPlans[entity] { return plan }
        guard destinationModel.entity(named: entity)?.isAbstract == false,
            let layout = try? schema.entity(named: entity)
        else {
            throw MigrationError(
                .invalidMapping, "The destination model has no concrete entity \(entity) to create objects of",
                entity: entity)
        }
        let plan = InsertPlan(layout: layout, model: destinationModel)
        insertPlans[entity] = plan
        return plan
    }

    /// An attribute value converted to its column's type and stored form.
    private func storedValue(_ value: AttributeValue?, _ column: AttributeColumn, of destination: RowReference)
        throws(MigrationError) -> DatabaseValue
    {
        guard let value else { return .null }
        do throws(MigrationError) {
            guard let stored = try value.converted(to: column.type).postgreSQLValue(for: column.type) else {
                throw MigrationError(
                    .evaluationFailed, "The value does not fit a \(column.type.xcodeName) attribute",
                    property: column.name)
            }
            return stored
        } catch {
            var located = error.located(mapping: nil, property: column.name)
            located.entityName = located.entityName ?? destination.entityName
            throw located
        }
    }

    /// Whether a destination table already has a row with that key: never when the key is above
    /// every key given so far in the table, otherwise asked of the server.
    private func isTaken(_ key: Int64, in table: String) throws(MigrationError) -> Bool {
        guard key <= lastKeys[table] ?? 0 else { return false }
        try flush()
        return try Self.storeWork {
            try destination.fetchValue("SELECT 1 FROM \(.identifier(table)) WHERE \"Z_PK\" = \(key)") != nil
        }
    }

    /// A source row: from the page when it is there, read alone otherwise (kept until the next page).
    private func sourceRow(_ reference: RowReference) throws(MigrationError) -> StoreRow? {
        if reference.entityName == pageEntity, let row = page[reference.primaryKey] { return row }
        if let row = cachedRows[reference] { return row }
        let row = try Self.storeWork { try source.rows(for: [reference], using: reader).first }
        if cachedRows.count >= batchSize { cachedRows.removeAll(keepingCapacity: true) }
        cachedRows[reference] = row
        return row
    }
}
