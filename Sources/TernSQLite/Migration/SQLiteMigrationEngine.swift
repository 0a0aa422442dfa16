import Foundation
import TernCore
import TernMigration
import TernRelational

/// The SQLite store's migration engine: a ``TernMigration/MigrationManager`` that reads a source
/// store and writes a new destination file beside it.
///
/// The engine never writes to the source. It reads source rows a page at a time with keyset
/// queries on the source store's executor (see ``SQLiteStore/runMigrationStep(_:progress:emit:)``)
/// into a ``MigrationSourcePage``, decoding only the values mappings read; writes destination
/// rows through one prepared INSERT per entity (a row's values gather until the next row starts);
/// and keeps its associations as runs in a table of the destination file
/// (`AssociationTable`, dropped at the end), so memory does not grow with the store.
final class SQLiteMigrationEngine: MigrationManager {
    let sourceModel: ManagedObjectModel
    let destinationModel: ManagedObjectModel
    let environment: ExpressionEnvironment
    /// The source store; every use is on its executor (checked by `assumeIsolated`).
    let source: SQLiteStore
    /// The destination file's connection.
    let destination: Connection
    /// The destination layout.
    let schema: StoreSchema
    /// Where large destination binary values go (the final store's support folder).
    private let externalData: ExternalDataStore
    let batchSize: Int
    let onBatch: (Int) throws(MigrationError) -> Void
    /// Whether a source object's first destination object keeps its primary key and `Z_OPT`
    /// when the key is free (inferred steps keep object IDs, as in place).
    let keepsKeys: Bool
    /// The smallest `Z_MAX` of each destination root table.
    let carriedKeys: [String: Int64]
    /// The associations, as runs in the destination file.
    let associations: AssociationTable
    /// The schema name the source store is attached under on the destination connection, so
    /// that mappings with an SQL form run as `INSERT … SELECT` (#24); nil when it is not attached.
    let attachedSource: String?
    // The stored properties read or written for every row are `@exclusivity(unchecked)`: the
    // engine is used from one migration task at a time (never shared across threads), and none of
    // its methods reaches a property while a change to that same property is in progress, so the
    // runtime's dynamic exclusivity check (a lookup per access, for every row) finds nothing.

    /// The source object whose destination objects are being created, until it has one.
    @exclusivity(unchecked) var unclaimedSource: RowReference?
    /// The last primary key given per destination table (one per inheritance root).
    @exclusivity(unchecked) private var lastKeys: [String: MigrationKeyCounter] = [:]
    /// The destination attributes found so far, by entity and name, with their table and column
    /// (nil for transient and derived ones): finding one walks the entity's ancestors.
    private var destinationAttributes: [String: [String: (AttributeDescription, table: String, AttributeColumn?)]] = [:]
    /// The INSERT of each destination entity, made on first use.
    @exclusivity(unchecked) private var insertPlans: [String: MigrationInsertPlan] = [:]
    /// The last source row read outside the page, so that the property mappings of one object read it once.
    @exclusivity(unchecked) private var cachedRow: StoreRow?
    /// The page of source rows being migrated, and the position of the current one.
    @exclusivity(unchecked) var page: MigrationSourcePage?
    @exclusivity(unchecked) var pageIndex = 0
    /// The whole row of the page last asked for by a key path through relationships.
    @exclusivity(unchecked) var decodedRow: StoreRow?
    /// A failure inside a non-throwing protocol method, thrown at the next throwing one.
    var pendingFailure: MigrationError?
    /// The last destination object created, not yet inserted: its attribute values gather here so
    /// that it is written with one INSERT instead of one UPDATE per attribute.
    @exclusivity(unchecked) var pendingRow: (reference: RowReference, plan: MigrationInsertPlan)?
    /// The values of the pending row, one per slot of its plan; the buffer is reused row after row.
    @exclusivity(unchecked) var pendingValues: [DatabaseValue] = []
    /// The slot of the pending row most likely set next: the one after the last set.
    @exclusivity(unchecked) private var nextSlot = 3
    /// The plans made so far, in the order made: a few entities are found by comparing names,
    /// without hashing them (mappings that share a walk insert their entities in turns).
    @exclusivity(unchecked) private var plansInOrder: [MigrationInsertPlan] = []
    /// The routes of the attribute policies run so far, one per entity mapping.
    var attributeRoutes: [AttributeRoute] = []
    /// The entity mappings whose stage 1 ran as one `INSERT … SELECT`, in order.
    var mappingsRunAsSQL: [String] = []
    /// The entity mappings whose stage 2 ran as SQL statements, in order.
    var relationshipsSetAsSQL: [String] = []
    /// The links dropped because their object's entity left the relationship's inheritance tree.
    var droppedLinks = 0

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
    ///   - attachedSource: The schema name of the source on the destination connection, if attached.
    ///   - onBatch: Called after each batch with its object count; throws to stop.
    init(
        source: SQLiteStore, destination: Connection, schema: StoreSchema, finalURL: URL, externalStorage: Bool,
        environment: ExpressionEnvironment, batchSize: Int, keepsKeys: Bool = false, carriedKeys: [String: Int64] = [:],
        attachedSource: String? = nil, onBatch: @escaping (Int) throws(MigrationError) -> Void
    ) throws(MigrationError) {
        self.keepsKeys = keepsKeys
        self.attachedSource = attachedSource
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
        self.associations = try Self.storeWork { try AssociationTable(connection: destination, flushLimit: batchSize) }
        try Self.storeWork {
            for (name, table) in schema.tables {
                let largest = try destination.fetchValue("SELECT MAX(Z_PK) FROM \(.identifier(table.name))")?.int64
                lastKeys[name] = MigrationKeyCounter(largest ?? 0)
            }
        }
    }

    // MARK: - Reading the source

    /// Reads each page of source rows once for every mapping: a row's destination objects are
    /// all made while it is in the page.
    func forEachSourceInstance(
        of mappings: [EntityMapping], readingAttributes attributes: Set<String>?,
        _ body: (Int, RowReference) throws(MigrationError) -> Void
    ) throws(MigrationError) {
        try walk(mappings, readingAttributes: attributes, routes: mappings.map { _ in nil }, body)
    }

    /// Walks the source pages for several mappings of one source entity: a mapping with a route
    /// is an attribute policy's, run here row after row (``insertRow(_:row:of:)``); the others
    /// get `body` calls.
    func walk(
        _ mappings: [EntityMapping], readingAttributes attributes: Set<String>?, routes: [AttributeRoute?],
        _ body: (Int, RowReference) throws(MigrationError) -> Void
    ) throws(MigrationError) {
        guard let entity = mappings.first?.sourceEntityName else { return }
        guard mappings.allSatisfy({ $0.sourceEntityName == entity }) else {
            for (index, mapping) in mappings.enumerated() {
                try walk([mapping], readingAttributes: attributes, routes: [routes[index]]) {
                    _, source throws(MigrationError) in
                    try body(index, source)
                }
            }
            return
        }
        let store = source
        let limit = batchSize
        let (plan, columns) = try Self.storeWork {
            try store.assumeIsolated { store in
                try MigrationSourcePage.selection(entity: entity, attributes: attributes, in: store)
            }
        }
        let current = MigrationSourcePage(plan: plan, columns: columns)
        for route in routes { route?.locate(in: current) }
        let filtered = mappings.map { $0.sourceFilter != nil }
        page = current
        defer { page = nil }
        var last: Int64 = 0
        while true {
            try Task.checkCancellationAsMigration()
            try Self.storeWork {
                try store.assumeIsolated { store in try current.read(from: store, after: last, limit: limit) }
            }
            for index in current.indices {
                pageIndex = index
                decodedRow = nil
                defer { unclaimedSource = nil }
                // By index: a mapping is not copied per row.
                for position in mappings.indices {
                    if filtered[position] {
                        let reference = RowReference(entityName: entity, primaryKey: current.keys[index])
                        guard try SourceRowReading.passesFilter(reference, of: mappings[position], manager: self) else {
                            continue
                        }
                    }
                    if let route = routes[position] {
                        // No handle per row unless keys are kept (the first object may keep the source key).
                        if keepsKeys {
                            unclaimedSource = RowReference(entityName: entity, primaryKey: current.keys[index])
                        }
                        try insertRow(route, row: index, of: current)
                        continue
                    }
                    let reference = RowReference(entityName: entity, primaryKey: current.keys[index])
                    // Each mapping's first destination object may keep the source key, as when run alone.
                    unclaimedSource = reference
                    try body(position, reference)
                }
            }
            decodedRow = nil
            try throwPending()
            // Progress counts a row once per mapping, as when the mappings run one after the other.
            try onBatch(current.keys.count * mappings.count)
            guard let next = current.keys.last, current.keys.count == limit else { return }
            last = next
        }
    }

    func sourceValue(forKeyPath keyPath: [String], of source: RowReference) throws(MigrationError) -> ExpressionValue {
        if keyPath.count == 1, let page, let index = pageIndex(of: source, in: page) {
            let store = self.source
            if let value = try Self.storeWork({ try page.value(ofAttribute: keyPath[0], at: index, in: store) }) {
                return .value(value)
            }
        }
        return try SourceRowReading.value(forKeyPath: keyPath, of: source, in: sourceModel) {
            reference throws(MigrationError) in
            try sourceRow(reference)
        }
    }

    /// The number of source objects of exactly an entity.
    func sourceCount(of entity: String) throws(MigrationError) -> Int {
        let store = source
        return try Self.storeWork {
            try store.assumeIsolated { store in
                let layout = try store.schema.entity(named: entity)
                // A table of one entity is counted without reading its rows.
                let filter = layout.rowFilter(includingSubentities: false)
                let sql: SQL = "SELECT COUNT(*) FROM \(.identifier(layout.table)) WHERE \(filter)"
                return Int(try store.connection.fetchValue(sql)?.int64 ?? 0)
            }
        }
    }

    // MARK: - Writing the destination

    func insertDestinationInstance(ofEntity entity: String) throws(MigrationError) -> RowReference {
        let plan = try insertPlan(of: entity)
        try flush()
        let (key, version) = try newKey(in: plan)
        // Filled as a local, moved back at the end: no access check per value, buffer reused.
        var values: [DatabaseValue] = []
        swap(&values, &pendingValues)
        defer { swap(&values, &pendingValues) }
        if values.count == plan.defaults.count {
            for slot in plan.defaults.indices { values[slot] = plan.defaults[slot] }
        } else {
            values = plan.defaults
        }
        nextSlot = 3
        values[0] = .integer(key)
        values[2] = .integer(version)
        for (slot, column, value) in plan.perRowDefaults { values[slot] = try databaseValue(value, column) }
        let reference = RowReference(entityName: entity, primaryKey: key)
        pendingRow = (reference, plan)
        return reference
    }

    func setDestinationValue(_ value: AttributeValue?, forAttribute attribute: String, of destination: RowReference)
        throws(MigrationError)
    {
        if let (reference, plan) = pendingRow, reference.primaryKey == destination.primaryKey,
            reference.entityName == destination.entityName, let slot = plan.slot(of: attribute, guess: nextSlot),
            let column = plan.columns[slot]
        {
            pendingValues[slot] = try storedValue(value, column, entity: destination.entityName)
            nextSlot = slot + 1
            return
        }
        let (_, table, attributeColumn) = try destinationAttribute(attribute, of: destination.entityName)
        guard let column = attributeColumn else { return }  // transient or derived
        let stored = try storedValue(value, column, entity: destination.entityName)
        if pendingRow?.reference == destination {
            try flush()
        }
        try Self.storeWork {
            try self.destination.execute(
                """
                UPDATE \(.identifier(table)) SET \(.identifier(column.column)) = \(stored) \
                WHERE Z_PK = \(destination.primaryKey)
                """)
        }
    }

    // MARK: - Non public

    /// Runs SQLite work that throws only ``SQLiteError``, turning its error into a migration error.
    static func sqlite<Result>(_ body: () throws(SQLiteError) -> Result) throws(MigrationError) -> Result {
        do {
            return try body()
        } catch {
            throw storeFailure(error)
        }
    }

    /// The primary key and `Z_OPT` of a new row of a plan's entity: the unclaimed source object's
    /// when keys are kept and its key is free, the next key of the table otherwise.
    func newKey(in plan: MigrationInsertPlan) throws(MigrationError) -> (key: Int64, version: Int64) {
        var key = plan.lastKey.value + 1
        var version: Int64 = 1
        if keepsKeys, let source = unclaimedSource, try !isTaken(source.primaryKey, in: plan.layout.table) {
            key = source.primaryKey
            version = try sourceVersion(source)
            unclaimedSource = nil
        }
        plan.lastKey.value = max(plan.lastKey.value, key)
        return (key, version)
    }

    /// Inserts the pending destination row, if any.
    func flush() throws(MigrationError) {
        guard let (_, plan) = pendingRow else { return }
        pendingRow = nil
        try Self.storeWork { try plan.insert(pendingValues) }
    }

    /// The plan that inserts rows of a destination entity, made on first use.
    func insertPlan(of entity: String) throws(MigrationError) -> MigrationInsertPlan {
        if plansInOrder.count <= 8 {
            for plan in plansInOrder where plan.layout.name == entity { return plan }
        } else if let plan = insertPlans[entity] {
            return plan
        }
        guard destinationModel.entity(named: entity)?.isAbstract == false,
            let layout = try? schema.entity(named: entity)
        else {
            throw MigrationError(
                .invalidMapping, "The destination model has no concrete entity \(entity) to create objects of",
                entity: entity)
        }
        let counter = lastKeys[layout.table] ?? MigrationKeyCounter(0)
        lastKeys[layout.table] = counter
        let plan = try Self.storeWork {
            try MigrationInsertPlan(layout: layout, model: destinationModel, connection: destination, lastKey: counter)
        }
        insertPlans[entity] = plan
        plansInOrder.append(plan)
        return plan
    }

    /// An attribute value converted to its column's type and stored form.
    func storedValue(_ value: AttributeValue?, _ column: AttributeColumn, entity: String)
        throws(MigrationError) -> DatabaseValue
    {
        guard let value else { return .null }
        do {
            return try databaseValue(try value.converted(to: column.type), column)
        } catch {
            throw error.located(mapping: nil, property: column.name).withEntity(entity)
        }
    }

    /// Whether a destination table already has a row with that key.
    func isTaken(_ key: Int64, in table: String) throws(MigrationError) -> Bool {
        try Self.storeWork {
            try destination.fetchValue("SELECT 1 FROM \(.identifier(table)) WHERE Z_PK = \(key)") != nil
        }
    }

    /// The position of a source object in the page: the current row, or another one of the page.
    func pageIndex(of reference: RowReference, in page: MigrationSourcePage) -> Int? {
        if page.keys.indices.contains(pageIndex), page.keys[pageIndex] == reference.primaryKey,
            reference.entityName == page.entityName
        {
            return pageIndex
        }
        return page.index(of: reference)
    }

    /// The `Z_OPT` of a source object.
    func sourceVersion(_ reference: RowReference) throws(MigrationError) -> Int64 {
        if let page, let index = pageIndex(of: reference, in: page) { return page.version(at: index) }
        return try sourceRow(reference)?.version ?? 1
    }

    /// A source row: decoded from the page when it is there, read alone (once per object) otherwise.
    private func sourceRow(_ reference: RowReference) throws(MigrationError) -> StoreRow? {
        let store = source
        if let page, let index = pageIndex(of: reference, in: page) {
            if let decodedRow, decodedRow.reference == reference { return decodedRow }
            let row = try Self.storeWork { try store.assumeIsolated { store in try page.row(at: index, in: store) } }
            decodedRow = row
            return row
        }
        if let cachedRow, cachedRow.reference == reference { return cachedRow }
        let row = try Self.storeWork {
            try store.assumeIsolated { store in
                try store.row(of: reference.entityName, primaryKey: reference.primaryKey)
            }
        }
        cachedRow = row
        return row
    }

    /// The column value of an attribute value, external data written to its file.
    /// A destination attribute, its table and its column, looked up once per entity and name.
    func destinationAttribute(
        _ attribute: String, of entity: String
    ) throws(MigrationError) -> (AttributeDescription, table: String, AttributeColumn?) {
        if let known = destinationAttributes[entity]?[attribute] { return known }
        guard let description = destinationModel.attribute(named: attribute, inEntity: entity),
            let layout = try? schema.entity(named: entity)
        else {
            throw MigrationError(
                .invalidMapping, "\(entity) has no attribute \(attribute)", entity: entity, property: attribute)
        }
        let found = (description, table: layout.table, layout.attribute(named: attribute))
        destinationAttributes[entity, default: [:]][attribute] = found
        return found
    }

    func databaseValue(_ value: AttributeValue, _ column: AttributeColumn) throws(MigrationError) -> DatabaseValue {
        guard let stored = value.databaseValue(for: column.type) else {
            throw MigrationError(
                .evaluationFailed, "The value does not fit a \(column.type.xcodeName) attribute", property: column.name)
        }
        guard column.allowsExternalStorage, case .blob(let bytes) = stored else { return stored }
        return .blob(try Self.storeWork { try externalData.store(bytes) })
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

extension SQLiteMigrationEngine: RelationalMigrationEngine {
    static func path(of error: any Error) -> String? {
        (error as? SQLiteError)?.path
    }
}
