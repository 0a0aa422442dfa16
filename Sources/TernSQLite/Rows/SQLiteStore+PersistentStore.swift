public import Foundation
public import TernCore
package import TernRelational

extension SQLiteStore: PersistentStore {
    // MARK: - Describing the store

    /// The store file.
    public nonisolated var location: URL? { url }
    /// ``/TernCore/StoreKind/sqlite``.
    public nonisolated var kind: StoreKind { .sqlite }
    /// Whether the store was opened read-only.
    public nonisolated var isReadOnly: Bool { configuration.isReadOnly }

    // MARK: - Fetching

    /// The rows of an entity that match a request, sorted, with its offset and limit.
    ///
    /// When the predicate translates to SQL (`PredicateSQL`), SQLite filters with bound values
    /// and, when the sorts translate too, sorts, skips and limits. Otherwise rows are read in key
    /// order in batches and the predicate is evaluated in Swift as they come; only the matches are
    /// kept, for sorting. Both ways give the same rows in the same order.
    ///
    /// - Parameter request: What to fetch.
    /// - Returns: The rows, in the requested order (primary-key order among equals).
    /// - Throws: ``/TernCore/TernError`` with code `objectNotFound` for an unknown entity,
    ///   `invalidPredicate` for an unknown key path; ``SQLiteError`` when reading fails.
    /// - Complexity: O(*n*) reads of the entity's rows at most, O(*m* log *m*) to sort *m* matches.
    public func fetch(_ request: StoreFetchRequest) throws -> [StoreRow] {
        try checkEntity(of: request)
        if let rows = try fetchInSQL(request) { return rows }
        var matches: [StoreRow] = []
        try forEachMatch(of: request) { matches.append($0) }
        return try request.ordered(matches.map { StoreRowValues(row: $0, store: self) }).map(\.row)
    }

    /// The chosen attribute values of the rows ``fetch(_:)`` returns, one dictionary per row.
    ///
    /// When the request names its ``/TernCore/StoreFetchRequest/propertiesToFetch`` and its predicate and
    /// sorts translate to SQL, only those columns are read, straight into dictionaries;
    /// otherwise the values come from ``fetch(_:)``.
    ///
    /// - Complexity: As ``fetch(_:)``.
    public func fetchValues(_ request: StoreFetchRequest) async throws -> [[String: AttributeValue]] {
        // `async` although it never suspends: a synchronous method loses to the protocol's
        // default when called on the concrete type with `await` (ProtocolDefaultShadowingTests).
        try checkEntity(of: request)
        if let dictionaries = try fetchValuesInSQL(request) { return dictionaries }
        let rows = try fetch(request)
        guard let wanted = request.propertiesToFetch.map(Set.init) else { return rows.map(\.attributes) }
        return rows.map { AttributeValue.projecting($0.attributes, onto: wanted) }
    }

    /// The references of the rows ``fetch(_:)`` returns, in the same order.
    ///
    /// When the predicate and sorts translate to SQL only `Z_PK` and `Z_ENT` are read. Otherwise,
    /// without sort descriptors only the references are kept, and without a predicate only the
    /// keys are read, so memory holds the references and one batch of rows.
    ///
    /// - Complexity: As ``fetch(_:)``.
    public func fetchReferences(_ request: StoreFetchRequest) throws -> [RowReference] {
        if let references = try fetchReferencesInSQL(request) { return references }
        guard request.sortDescriptors.isEmpty else { return try fetch(request).map(\.reference) }
        let end = request.limit.map { request.offset + $0 } ?? Int.max
        var references: [RowReference] = []
        if request.predicate == nil {
            try forEachKey(of: request.entityName, includingSubentities: request.includesSubentities) { reference in
                references.append(reference)
                return references.count < end
            }
        } else {
            try checkEntity(of: request)
            try forEachMatch(of: request) { references.append($0.reference) }
        }
        return Array(references[min(request.offset, references.count)..<min(end, references.count)])
    }

    /// The number of rows ``fetch(_:)`` returns.
    ///
    /// - Complexity: One `COUNT(*)` when the predicate translates to SQL; else as ``fetch(_:)``,
    ///   keeping no rows.
    public func count(_ request: StoreFetchRequest) throws -> Int {
        if let sql = translatedCount(request) { return Int(try connection.fetchValue(sql)?.int64 ?? 0) }
        guard request.predicate != nil || request.offset > 0 || request.limit != nil else {
            let layout = try schema.entity(named: request.entityName)
            let filter = layout.rowFilter(includingSubentities: request.includesSubentities)
            let sql: SQL = "SELECT COUNT(*) FROM \(.identifier(layout.table)) WHERE \(filter)"
            return Int(try connection.fetchValue(sql)?.int64 ?? 0)
        }
        var matches = 0
        try checkEntity(of: request)
        try forEachMatch(of: request) { _ in matches += 1 }
        let afterOffset = max(0, matches - request.offset)
        return request.limit.map { min($0, afterOffset) } ?? afterOffset
    }

    /// The rows with these references, in their order; references without a row are left out.
    ///
    /// - Complexity: O(*k* log *n*) for *k* references.
    public func rows(for references: [RowReference]) throws -> [StoreRow] {
        var plans: [Int: RowPlan] = [:]
        for layout in Set(references.compactMap { schema.entities[$0.entityName]?.number }) {
            plans[layout] = try rowPlan(number: layout)
        }
        return try rows(for: references, using: connection, plans: plans)
    }

    /// The rows with these references read through `connection`, in their order; `plans` holds
    /// the plans known already, by entity number, and others are made.
    nonisolated func rows(
        for references: [RowReference], using connection: Connection, plans: [Int: RowPlan] = [:]
    ) throws -> [StoreRow] {
        var found: [RowReference: StoreRow] = [:]
        let known = references.filter { schema.entities[$0.entityName] != nil }
        for (entity, group) in Dictionary(grouping: known, by: \.entityName) {
            let layout = try schema.entity(named: entity)
            let select = try selection(for: layout)
            for start in stride(from: 0, to: group.count, by: Self.fetchBatchSize) {
                let keys = Self.boundList(
                    group[start..<min(start + Self.fetchBatchSize, group.count)].map(\.primaryKey))
                let sql: SQL = "\(select) WHERE Z_PK IN (\(keys)) AND \(layout.rowFilter())"
                let rows = try packedRows(sql, using: connection) { (number) throws in
                    if let plan = plans[number] { return plan }
                    return try makeRowPlan(number: number)
                }
                for row in rows {
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
    /// - Returns: `count` new keys, unique across every connection to the store.
    public func newPrimaryKeys(forEntity entity: String, count: Int) throws -> [Int64] {
        guard count > 0 else { return [] }
        return Array(try allocatePrimaryKeys(for: entity, count: count))
    }

    /// How many rows ``fetch(_:)`` reads at a time.
    package static let fetchBatchSize = 500

    // MARK: - Non public

    /// Throws ``TernError/Code/objectNotFound`` when the model has no entity of that name.
    func checkEntity(of request: StoreFetchRequest) throws(TernError) {
        guard schema.entities[request.entityName] == nil else { return }
        throw TernError(
            .objectNotFound, "the model has no entity \(request.entityName); check the fetch request",
            entity: request.entityName)
    }

    /// Calls `body` with the reference of each row of an entity, in key order, reading only
    /// keys, a batch at a time, until `body` returns false.
    private func forEachKey(
        of entity: String, includingSubentities: Bool, _ body: (RowReference) -> Bool
    ) throws {
        let layout = try schema.entity(named: entity)
        let filter = layout.rowFilter(includingSubentities: includingSubentities)
        var last: Int64 = 0
        while true {
            let sql: SQL = """
                SELECT Z_PK, \(layout.rowEntityNumber()) FROM \(.identifier(layout.table)) WHERE \(filter) \
                AND Z_PK > \(last) ORDER BY Z_PK LIMIT \(Self.fetchBatchSize)
                """
            var count = 0
            var proceed = true
            try connection.forEachRow(sql) { (values) throws in
                guard proceed else { return }
                count += 1
                last = values[0].int64 ?? 0
                let name = try schema.entity(number: Int(values[1].int64 ?? 0)).name
                proceed = body(RowReference(entityName: name, primaryKey: last))
            }
            guard proceed, count == Self.fetchBatchSize else { return }
        }
    }
}

extension SQLiteStore: RelationalRowStore {
    /// SQLite's spelling of translated predicates and sorts.
    package nonisolated var dialect: any SQLDialect { SQLiteDialect() }
}
