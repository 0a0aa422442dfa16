import Foundation
import TernCore
import TernMigration

/// The SQLite store's migration engine: a ``TernMigration/MigrationManager`` that reads a source
/// store and writes a new destination file beside it.
///
/// The engine never writes to the source. It reads source rows one at a time through the source
/// store (on the store's own executor, see ``SQLiteStore/runMapping(_:into:)``), writes the
/// destination with bound SQL, and keeps its associations in an on-disk table of the destination
/// file (`TERN_ASSOCIATION`, dropped at the end), so memory does not grow with the store.
final class SQLiteMigrationEngine: MigrationManager {
    let sourceModel: ManagedObjectModel
    let destinationModel: ManagedObjectModel
    let environment: ExpressionEnvironment
    /// The source store; every use is on its executor (checked by `assumeIsolated`).
    private let source: SQLiteStore
    /// The destination file's connection.
    let destination: Connection
    /// The destination layout.
    let schema: StoreSchema
    /// Where large destination binary values go (the final store's support folder).
    private let externalData: ExternalDataStore
    private let batchSize: Int
    private let onBatch: (Int) throws(MigrationError) -> Void
    /// Whether a source object's first destination object keeps its primary key and `Z_OPT`
    /// when the key is free (inferred steps keep object IDs, as in place).
    private let keepsKeys: Bool
    /// The smallest `Z_MAX` of each destination root table.
    private let carriedKeys: [String: Int64]
    /// The source object whose destination objects are being created, until it has one.
    private var unclaimedSource: RowReference?
    /// The last primary key given per destination inheritance root.
    private var lastKeys: [String: Int64] = [:]
    /// The destination attributes found so far, by entity and name, with their table and column
    /// (nil for transient and derived ones): finding one walks the entity's ancestors.
    private var destinationAttributes: [String: [String: (AttributeDescription, table: String, AttributeColumn?)]] = [:]
    /// The last source row read, so that the property mappings of one object read it once.
    private var cachedRow: StoreRow?
    /// The source rows of the batch being migrated, read with one query.
    private var batchRows: [RowReference: StoreRow] = [:]
    /// A failure inside a non-throwing protocol method, thrown at the next throwing one.
    private var pendingFailure: MigrationError?
    /// The last destination object created, not yet inserted: its attribute values gather here so
    /// that it is written with one INSERT instead of one UPDATE per attribute.
    private var pendingRow: (reference: RowReference, layout: EntityLayout, version: Int64, values: [String: DatabaseValue])?

    /// Creates an engine; the destination file holds the destination model's empty tables.
    ///
    /// - Parameters:
    ///   - source: The source store, opened read-only.
    ///   - destination: The destination connection.
    ///   - schema: The destination layout.
    ///   - finalURL: The store URL the destination will have, for its external data.
    ///   - externalStorage: Whether large binary values go to files; inline otherwise.
    ///   - environment: The clock and UUID source of value expressions.
    ///   - batchSize: How many source objects are read per query.
    ///   - keepsKeys: Whether objects keep their source primary key and `Z_OPT` where free.
    ///   - carriedKeys: The smallest `Z_MAX` of each destination root table.
    ///   - onBatch: Called after each batch with its object count; throws to stop.
    init(
        source: SQLiteStore, destination: Connection, schema: StoreSchema, finalURL: URL, externalStorage: Bool,
        environment: ExpressionEnvironment, batchSize: Int, keepsKeys: Bool = false, carriedKeys: [String: Int64] = [:],
        onBatch: @escaping (Int) throws(MigrationError) -> Void
    ) throws(MigrationError) {
        self.keepsKeys = keepsKeys
        self.carriedKeys = carriedKeys
        self.source = source
        self.sourceModel = source.model
        self.destinationModel = schema.model
        self.destination = destination
        self.schema = schema
        self.environment = environment
        self.batchSize = max(1, batchSize)
        self.onBatch = onBatch
        self.externalData = ExternalDataStore(
            storeURL: finalURL, threshold: externalStorage ? source.configuration.externalStorageThreshold : Int.max,
            isDurable: true)
        try Self.store {
            try destination.executeOnce("""
                CREATE TABLE IF NOT EXISTS TERN_ASSOCIATION (MAPPING TEXT NOT NULL, SENT TEXT NOT NULL, \
                SPK INTEGER NOT NULL, DENT TEXT NOT NULL, DPK INTEGER NOT NULL)
                """)
            try destination.executeOnce("CREATE INDEX IF NOT EXISTS TERN_ASSOCIATION_S ON TERN_ASSOCIATION (SENT, SPK)")
            try destination.executeOnce(
                "CREATE INDEX IF NOT EXISTS TERN_ASSOCIATION_D ON TERN_ASSOCIATION (MAPPING, DENT, DPK)")
            for (name, table) in schema.tables {
                let largest = try destination.fetchValue("SELECT MAX(Z_PK) FROM \(.identifier(table.name))")?.int64
                lastKeys[name] = largest ?? 0
            }
        }
    }

    // MARK: - Reading the source

    func forEachSourceInstance(of mapping: EntityMapping, _ body: (RowReference) throws(MigrationError) -> Void)
        throws(MigrationError)
    {
        guard let entity = mapping.sourceEntityName else { return }
        var last: Int64 = 0
        while true {
            let rows = try sourceRows(of: entity, after: last)
            let keys = rows.map(\.reference.primaryKey)
            batchRows = Dictionary(rows.map { ($0.reference, $0) }, uniquingKeysWith: { first, _ in first })
            defer { batchRows = [:] }
            for row in rows {
                let reference = row.reference
                guard try SourceRowReading.passesFilter(reference, of: mapping, manager: self) else { continue }
                unclaimedSource = reference
                defer { unclaimedSource = nil }
                try body(reference)
            }
            try throwPending()
            try onBatch(keys.count)
            guard let next = keys.last, keys.count == batchSize else { return }
            last = next
        }
    }

    func sourceValue(forKeyPath keyPath: [String], of source: RowReference) throws(MigrationError) -> ExpressionValue {
        try SourceRowReading.value(forKeyPath: keyPath, of: source, in: sourceModel) { reference throws(MigrationError) in
            try sourceRow(reference)
        }
    }

    /// The number of source objects of exactly an entity.
    func sourceCount(of entity: String) throws(MigrationError) -> Int {
        let store = source
        return try Self.store {
            try store.assumeIsolated { store in
                let layout = try store.schema.entity(named: entity)
                let sql: SQL = "SELECT COUNT(*) FROM \(.identifier(layout.table)) WHERE Z_ENT = \(layout.number)"
                return Int(try store.connection.fetchValue(sql)?.int64 ?? 0)
            }
        }
    }

    // MARK: - Writing the destination

    func insertDestinationInstance(ofEntity entity: String) throws(MigrationError) -> RowReference {
        guard destinationModel.entity(named: entity)?.isAbstract == false, let layout = try? schema.entity(named: entity) else {
            throw MigrationError(
                .invalidMapping, "The destination model has no concrete entity \(entity) to create objects of", entity: entity)
        }
        try flush()
        var key = (lastKeys[layout.table] ?? 0) + 1
        var version: Int64 = 1
        if keepsKeys, let source = unclaimedSource, try !isTaken(source.primaryKey, in: layout.table) {
            key = source.primaryKey
            version = try sourceRow(source)?.version ?? 1
            unclaimedSource = nil
        }
        lastKeys[layout.table] = max(lastKeys[layout.table] ?? 0, key)
        var values: [String: DatabaseValue] = [:]
        for attribute in destinationModel.allAttributes(of: entity) where !attribute.isTransient {
            guard let value = attribute.defaultValue, let column = layout.attribute(named: attribute.name) else { continue }
            values[column.column] = try databaseValue(value, column)
        }
        pendingRow = (RowReference(entityName: entity, primaryKey: key), layout, version, values)
        return RowReference(entityName: entity, primaryKey: key)
    }

    func setDestinationValue(_ value: AttributeValue?, forAttribute attribute: String, of destination: RowReference)
        throws(MigrationError)
    {
        let (description, table, attributeColumn) = try destinationAttribute(attribute, of: destination.entityName)
        guard let column = attributeColumn else { return }  // transient or derived
        var stored = DatabaseValue.null
        do {
            if let converted = try value?.converted(to: description.type) { stored = try databaseValue(converted, column) }
        } catch {
            throw error.located(mapping: nil, property: attribute).withEntity(destination.entityName)
        }
        if pendingRow?.reference == destination {
            pendingRow?.values[column.column] = stored
            return
        }
        try Self.store {
            try self.destination.execute("""
                UPDATE \(.identifier(table)) SET \(.identifier(column.column)) = \(stored) \
                WHERE Z_PK = \(destination.primaryKey)
                """)
        }
    }

    func setDestinationRelationship(_ relationship: String, of destination: RowReference, to objects: [RowReference])
        throws(MigrationError)
    {
        let description = try destinationRelationship(relationship, of: destination, count: objects.count)
        try flush()
        let layout = try Self.store { try schema.entity(named: destination.entityName) }
        try Self.store {
            if let toOne = layout.toOne(named: relationship) {
                try setToOne(toOne, of: destination, layout: layout, to: objects.first)
                // A to-one inverse has its own column; a to-many inverse is this same column.
                if let inverseName = description.inverseName {
                    for object in objects {
                        let objectLayout = try schema.entity(named: object.entityName)
                        if let inverse = objectLayout.toOne(named: inverseName) {
                            try setToOne(inverse, of: object, layout: objectLayout, to: destination)
                        }
                    }
                }
            } else if let toMany = layout.toMany(named: relationship) {
                try setToMany(toMany, of: destination, layout: layout, to: objects)
            }
        }
    }

    func forEachDestinationInstance(of mapping: EntityMapping, _ body: (RowReference) throws(MigrationError) -> Void)
        throws(MigrationError)
    {
        try flush()
        var last: Int64 = 0
        while true {
            // Each destination object once, at its first association, in creation order.
            let rows = try Self.store {
                try destination.fetchAll("""
                    SELECT a.rowid, a.DENT, a.DPK FROM TERN_ASSOCIATION AS a WHERE a.MAPPING = \(mapping.name) \
                    AND a.rowid > \(last) AND NOT EXISTS (SELECT 1 FROM TERN_ASSOCIATION AS b \
                    WHERE b.MAPPING = a.MAPPING AND b.DENT = a.DENT AND b.DPK = a.DPK AND b.rowid < a.rowid) \
                    ORDER BY a.rowid LIMIT \(batchSize)
                    """)
            }
            for row in rows {
                try body(RowReference(entityName: row[1].string ?? "", primaryKey: row[2].int64 ?? 0))
            }
            try throwPending()
            guard let next = rows.last?[0].int64, rows.count == batchSize else { return }
            last = next
        }
    }

    func validateDestinationInstances(of mapping: EntityMapping) throws(MigrationError) {
        try flush()
        guard let entity = mapping.destinationEntityName, let layout = try? schema.entity(named: entity) else { return }
        var failures: [MigrationError] = []
        var checks: [(property: String, column: String)] = []
        for attribute in destinationModel.allAttributes(of: entity) where !attribute.isOptional && !attribute.isTransient {
            if let column = layout.attribute(named: attribute.name) { checks.append((attribute.name, column.column)) }
        }
        for relationship in destinationModel.allRelationships(of: entity) where !relationship.isOptional {
            if let column = layout.toOne(named: relationship.name) { checks.append((relationship.name, column.column)) }
        }
        for check in checks {
            let keys = try Self.store {
                try destination.fetchAll("""
                    SELECT d.Z_PK FROM \(.identifier(layout.table)) AS d JOIN TERN_ASSOCIATION AS a \
                    ON a.DPK = d.Z_PK AND a.DENT = \(entity) WHERE a.MAPPING = \(mapping.name) \
                    AND d.Z_ENT = \(layout.number) AND d.\(.identifier(check.column)) IS NULL LIMIT 100
                    """)
            }
            for key in keys {
                failures.append(
                    MigrationError(
                        .evaluationFailed, "\(entity) \(key.first?.int64 ?? 0) \(check.property) is required but has no value",
                        entity: entity, property: check.property))
            }
        }
        guard failures.isEmpty else {
            throw MigrationError(
                .evaluationFailed, "\(failures.count) migrated object(s) are invalid in the destination model",
                mapping: mapping.name, failures: failures)
        }
    }

    // MARK: - Associations

    func associate(source: RowReference, withDestination destination: RowReference, mapping: EntityMapping) {
        do {
            try self.destination.execute("""
                INSERT INTO TERN_ASSOCIATION (MAPPING, SENT, SPK, DENT, DPK) VALUES (\(mapping.name), \
                \(source.entityName), \(source.primaryKey), \(destination.entityName), \(destination.primaryKey))
                """)
        } catch {
            pendingFailure = pendingFailure ?? Self.failure(error)
        }
    }

    func destinationInstances(forMapping mappingName: String?, sourceInstances sources: [RowReference]) -> [RowReference] {
        var result: [RowReference] = []
        for source in sources {
            let filter: SQL = mappingName.map { " AND MAPPING = \($0)" } ?? ""
            do {
                let sql: SQL = "SELECT DENT, DPK FROM TERN_ASSOCIATION WHERE SENT = \(source.entityName) AND SPK = \(source.primaryKey)"
                for row in try destination.fetchAll(sql + filter + " ORDER BY rowid") {
                    result.append(RowReference(entityName: row[0].string ?? "", primaryKey: row[1].int64 ?? 0))
                }
            } catch {
                pendingFailure = pendingFailure ?? Self.failure(error)
            }
        }
        return result
    }

    func sourceInstances(forMapping mappingName: String, destinationInstance destination: RowReference) -> [RowReference] {
        do {
            return try self.destination.fetchAll("""
                SELECT SENT, SPK FROM TERN_ASSOCIATION WHERE MAPPING = \(mappingName) AND DENT = \(destination.entityName) \
                AND DPK = \(destination.primaryKey) ORDER BY rowid
                """).map { RowReference(entityName: $0[0].string ?? "", primaryKey: $0[1].int64 ?? 0) }
        } catch {
            pendingFailure = pendingFailure ?? Self.failure(error)
            return []
        }
    }

    // MARK: - Finishing

    /// Drops the association table and records each root's largest key in `Z_PRIMARYKEY`.
    func finish() throws(MigrationError) {
        try flush()
        try throwPending()
        try Self.store {
            try destination.executeOnce("DROP TABLE IF EXISTS TERN_ASSOCIATION")
            for layout in schema.entities.values where layout.superNumber == 0 {
                let largest = try destination.fetchValue("SELECT MAX(Z_PK) FROM \(.identifier(layout.table))")?.int64 ?? 0
                let carried = carriedKeys[layout.table] ?? 0
                try destination.execute("UPDATE Z_PRIMARYKEY SET Z_MAX = \(max(largest, carried)) WHERE Z_ENT = \(layout.number)")
            }
        }
    }

    // MARK: - Non public

    /// Runs SQLite work, turning its errors into migration errors.
    static func store<Result>(_ body: () throws -> Result) throws(MigrationError) -> Result {
        do {
            return try body()
        } catch let error as MigrationError {
            throw error
        } catch let error as SQLiteError {
            throw failure(error)
        } catch {
            throw MigrationError(.storeFailure, "The store failed while migrating: \(error)")
        }
    }

    /// A migration error for a SQLite failure.
    static func failure(_ error: SQLiteError) -> MigrationError {
        var failure = MigrationError(.storeFailure, "The store failed while migrating: \(error)")
        failure.path = error.path
        return failure
    }

    /// Inserts the pending destination row, if any.
    private func flush() throws(MigrationError) {
        guard let (reference, layout, version, values) = pendingRow else { return }
        pendingRow = nil
        let names = values.keys.sorted()
        let columns: [SQL] = ["Z_PK", "Z_ENT", "Z_OPT"] + names.map { SQL.identifier($0) }
        let bound: [SQL] = ["\(reference.primaryKey)", "\(layout.number)", "\(version)"] + names.map { "\(values[$0] ?? .null)" }
        try Self.store {
            try destination.execute(
                "INSERT INTO \(.identifier(layout.table)) (\(SQL.joined(columns))) VALUES (\(SQL.joined(bound)))")
        }
    }

    /// Whether a destination table already has a row with that key.
    private func isTaken(_ key: Int64, in table: String) throws(MigrationError) -> Bool {
        try Self.store {
            try destination.fetchValue("SELECT 1 FROM \(.identifier(table)) WHERE Z_PK = \(key)") != nil
        }
    }

    private func throwPending() throws(MigrationError) {
        if let pendingFailure { throw pendingFailure }
    }

    /// The next batch of source rows of exactly an entity.
    private func sourceRows(of entity: String, after last: Int64) throws(MigrationError) -> [StoreRow] {
        try Task.checkCancellationAsMigration()
        let store = source
        let limit = batchSize
        return try Self.store {
            try store.assumeIsolated { store in
                try store.rows(of: entity, includingSubentities: false, after: last, limit: limit)
            }
        }
    }

    /// A source row, read once per object.
    private func sourceRow(_ reference: RowReference) throws(MigrationError) -> StoreRow? {
        if let row = batchRows[reference] { return row }
        if let cachedRow, cachedRow.reference == reference { return cachedRow }
        let store = source
        let row = try Self.store {
            try store.assumeIsolated { store in
                try store.row(of: reference.entityName, primaryKey: reference.primaryKey)
            }
        }
        cachedRow = row
        return row
    }

    /// The column value of an attribute value, external data written to its file.
    /// A destination attribute, its table and its column, looked up once per entity and name.
    private func destinationAttribute(
        _ attribute: String, of entity: String
    ) throws(MigrationError) -> (AttributeDescription, table: String, AttributeColumn?) {
        if let known = destinationAttributes[entity]?[attribute] { return known }
        guard let description = destinationModel.attribute(named: attribute, inEntity: entity),
            let layout = try? schema.entity(named: entity)
        else {
            throw MigrationError(.invalidMapping, "\(entity) has no attribute \(attribute)", entity: entity, property: attribute)
        }
        let found = (description, table: layout.table, layout.attribute(named: attribute))
        destinationAttributes[entity, default: [:]][attribute] = found
        return found
    }

    private func databaseValue(_ value: AttributeValue, _ column: AttributeColumn) throws(MigrationError) -> DatabaseValue {
        guard let stored = value.databaseValue(for: column.type) else {
            throw MigrationError(
                .evaluationFailed, "The value does not fit a \(column.type.xcodeName) attribute", property: column.name)
        }
        guard column.allowsExternalStorage, case .blob(let bytes) = stored else { return stored }
        return .blob(try Self.store { try externalData.store(bytes) })
    }

    private func setToOne(_ column: ToOneColumn, of row: RowReference, layout: EntityLayout, to target: RowReference?)
        throws(SQLiteError)
    {
        let key = target.map { DatabaseValue.integer($0.primaryKey) } ?? .null
        var set: [SQL] = [SQL.identifier(column.column) + " = \(key)"]
        if let entityColumn = column.entityColumn {
            var number = DatabaseValue.null
            if let target { number = .integer(Int64(try schema.entity(named: target.entityName).number)) }
            set.append(SQL.identifier(entityColumn) + " = \(number)")
        }
        try destination.execute("UPDATE \(.identifier(layout.table)) SET \(SQL.joined(set)) WHERE Z_PK = \(row.primaryKey)")
    }

    private func setToMany(_ mapping: ToManyMapping, of row: RowReference, layout: EntityLayout, to objects: [RowReference])
        throws(SQLiteError)
    {
        switch mapping.storage {
        case .inverseForeignKey(let table, let column, let orderColumn):
            let target = try schema.entity(named: mapping.destination)
            let entityColumn = target.toOneRelationships.first { $0.column == column }?.entityColumn
            for (index, object) in objects.enumerated() {
                var set = [SQL.identifier(column) + " = \(row.primaryKey)"]
                if let entityColumn { set.append(SQL.identifier(entityColumn) + " = \(layout.number)") }
                if let orderColumn { set.append(SQL.identifier(orderColumn) + " = \(Int64(index + 1) * 1024)") }
                try destination.execute("UPDATE \(.identifier(table)) SET \(SQL.joined(set)) WHERE Z_PK = \(object.primaryKey)")
            }
        case .joinTable(let table, let sourceColumn, let targetColumn, let orderColumn):
            // Rows the inverse side wrote keep its order column: only this side's rows that are
            // gone are deleted, the others are inserted or get this side's position.
            let (source, target) = (SQL.identifier(sourceColumn), SQL.identifier(targetColumn))
            var stale: SQL = "DELETE FROM \(.identifier(table)) WHERE \(source) = \(row.primaryKey)"
            if !objects.isEmpty { stale = stale + " AND \(target) NOT IN (\(SQL.joined(objects.map { "\($0.primaryKey)" as SQL })))" }
            try destination.execute(stale)
            for (index, object) in objects.enumerated() {
                if let orderColumn {
                    let order = SQL.identifier(orderColumn)
                    try destination.execute("""
                        INSERT INTO \(.identifier(table)) (\(source), \(target), \(order)) \
                        VALUES (\(row.primaryKey), \(object.primaryKey), \(Int64(index + 1) * 1024)) \
                        ON CONFLICT DO UPDATE SET \(order) = excluded.\(order)
                        """)
                } else {
                    try destination.execute("""
                        INSERT OR IGNORE INTO \(.identifier(table)) (\(source), \(target)) VALUES (\(row.primaryKey), \(object.primaryKey))
                        """)
                }
            }
        }
    }
}

extension MigrationError {
    /// The same error with its entity filled where missing.
    func withEntity(_ entity: String) -> MigrationError {
        var copy = self
        copy.entityName = copy.entityName ?? entity
        return copy
    }
}
