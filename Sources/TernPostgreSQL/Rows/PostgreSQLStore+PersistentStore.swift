import Foundation
public import TernCore
package import TernRelational

extension PostgreSQLStore: PersistentStore {
    // MARK: - Fetching

    /// The rows of an entity that match a request, sorted, with its offset and limit.
    ///
    /// When the predicate translates (`PostgreSQLQuery`), the server filters with bound values
    /// and, when the sorts translate too, sorts, skips and limits. Otherwise rows are read in key
    /// order in batches and the predicate is evaluated in Swift as they come. Both ways give the
    /// same rows in the same order.
    ///
    /// - Parameter request: What to fetch.
    /// - Returns: The rows, in the requested order (primary-key order among equals).
    /// - Throws: ``/TernCore/TernError`` with code `objectNotFound` for an unknown entity; ``PostgreSQLError``
    ///   when reading fails.
    /// - Complexity: O(*n*) reads of the entity's rows at most, O(*m* log *m*) to sort *m* matches.
    public func fetch(_ request: StoreFetchRequest) throws -> [StoreRow] {
        _ = try knownEntity(request.entityName)
        if let statement = try translatedFetch(request) {
            let rows = try packedRows(statement.sql, using: connection).map(StoreRow.init)
            if statement.isOrdered { return rows }
            return try request.ordered(rows.map { StoreRowValues(row: $0, store: self) }).map(\.row)
        }
        var matches: [StoreRow] = []
        try forEachMatch(of: request) { matches.append($0) }
        return try request.ordered(matches.map { StoreRowValues(row: $0, store: self) }).map(\.row)
    }

    /// The references of the rows ``fetch(_:)`` returns, in the same order.
    ///
    /// - Complexity: As ``fetch(_:)``; only `Z_PK` and `Z_ENT` are read when everything translates.
    public func fetchReferences(_ request: StoreFetchRequest) throws -> [RowReference] {
        guard let query = PostgreSQLQuery(request, schema: schema), let order = query.order else {
            return try fetch(request).map(\.reference)
        }
        let layout = try schema.entity(named: request.entityName)
        let sql: SQL =
            #"SELECT t0."Z_PK", "# + layout.rowEntityNumber(alias: "t0") + " FROM " + query.from + " WHERE "
            + query.condition + " ORDER BY "
            + order + PostgreSQLQuery.window(request)
        var references: [RowReference] = []
        for values in try connection.fetchAll(sql) {
            let entity = try schema.entity(number: Int(values[1].int64 ?? 0)).name
            references.append(RowReference(entityName: entity, primaryKey: values[0].int64 ?? 0))
        }
        return references
    }

    /// The number of rows ``fetch(_:)`` returns.
    ///
    /// - Complexity: One `COUNT(*)` when the predicate translates; else as ``fetch(_:)``.
    public func count(_ request: StoreFetchRequest) throws -> Int {
        _ = try knownEntity(request.entityName)
        var unsorted = request
        unsorted.sortDescriptors = []
        if let query = PostgreSQLQuery(unsorted, schema: schema) {
            let inner: SQL =
                "SELECT 1 FROM " + query.from + " WHERE " + query.condition + PostgreSQLQuery.window(request)
            return Int(try connection.fetchValue("SELECT COUNT(*) FROM (" + inner + ") AS counted")?.int64 ?? 0)
        }
        var matches = 0
        try forEachMatch(of: request) { _ in matches += 1 }
        let afterOffset = max(0, matches - request.offset)
        return request.limit.map { min($0, afterOffset) } ?? afterOffset
    }

    /// The rows with these references, in their order; references without a row are left out.
    ///
    /// - Complexity: O(*k* log *n*) for *k* references, one query per entity and batch.
    public func rows(for references: [RowReference]) throws -> [StoreRow] {
        try rows(for: references, using: connection)
    }

    /// The rows with these references read through `connection`, in their order.
    nonisolated func rows(for references: [RowReference], using connection: Connection) throws -> [StoreRow] {
        var found: [RowReference: StoreRow] = [:]
        let known = references.filter { schema.entities[$0.entityName] != nil }
        for (entity, group) in Dictionary(grouping: known, by: \.entityName) {
            let layout = try schema.entity(named: entity)
            let select = try selection(for: layout)
            for start in stride(from: 0, to: group.count, by: Self.fetchBatchSize) {
                let keys = group[start..<min(start + Self.fetchBatchSize, group.count)].map(\.primaryKey)
                let sql: SQL = """
                    \(select) WHERE t0."Z_PK" = ANY(\(Self.keyArray(keys))::bigint[]) \
                    AND \(layout.rowFilter(alias: "t0"))
                    """
                for row in try packedRows(sql, using: connection) {
                    found[RowReference(entityName: entity, primaryKey: row.reference.primaryKey)] = StoreRow(row)
                }
            }
        }
        return references.compactMap { reference in
            found[reference].flatMap { $0.reference.entityName == reference.entityName ? $0 : nil }
        }
    }

    /// Reserves primary keys for new rows of an entity, from its root's `Z_MAX`.
    ///
    /// The `Z_PRIMARYKEY` row is locked (`SELECT … FOR UPDATE`) for the reservation, so that
    /// processes on any machine never receive the same key.
    ///
    /// - Returns: `count` new keys.
    /// - Throws: ``PostgreSQLError`` when the store is read-only or the entity unknown.
    public func newPrimaryKeys(forEntity entity: String, count: Int) throws -> [Int64] {
        guard count > 0 else { return [] }
        try requireWritable()
        let root = try schema.entity(named: try schema.entity(named: entity).rootName)
        let range = try connection.inTransaction { () throws -> ClosedRange<Int64> in
            let select: SQL = #"SELECT "Z_MAX" FROM "Z_PRIMARYKEY" WHERE "Z_ENT" = "# + "\(root.number) FOR UPDATE"
            guard let current = try connection.fetchValue(select) else {
                throw TernError(
                    .schemaMismatch,
                    "Z_PRIMARYKEY has no row for entity \(SQL.quoted(root.name)); the store is damaged.",
                    sql: select.text)
            }
            // Z_MAX should never lag behind the table, but a key handed out twice would be worse.
            let largest = try connection.fetchValue(#"SELECT MAX("Z_PK") FROM "# + .identifier(root.table))?.int64 ?? 0
            let first = max(current.int64 ?? 0, largest) + 1
            let last = first + Int64(count) - 1
            try connection.execute(
                #"UPDATE "Z_PRIMARYKEY" SET "Z_MAX" = "# + "\(last) WHERE \"Z_ENT\" = \(root.number)")
            return first...last
        }
        return Array(range)
    }

    /// How many rows are read at a time.
    package static let fetchBatchSize = 1000

    // MARK: - Non public

    /// The layout of a fetched entity, or the error a fetch of an unknown one throws.
    func knownEntity(_ name: String) throws -> EntityLayout {
        guard let layout = schema.entities[name] else {
            throw TernError(.objectNotFound, "the model has no entity \(name); check the fetch request", entity: name)
        }
        return layout
    }
}

extension PostgreSQLStore: RelationalRowStore {
    /// PostgreSQL's spelling of translated predicates and sorts.
    package nonisolated var dialect: any SQLDialect { PostgreSQLDialect() }
}
