package import TernCore

/// What both SQL stores offer the code they share about their rows: the model and layout, the
/// store's identifier, its SQL dialect, and rows read on the store's executor.
package protocol RelationalRowStore: Actor {
    /// The model the store's rows follow.
    nonisolated var model: ManagedObjectModel { get }
    /// The store's table layout.
    nonisolated var schema: StoreSchema { get }
    /// The store's identifier (its metadata's UUID), part of its objects' IDs.
    nonisolated var identifier: String { get }
    /// How the store's database spells the predicates and sorts ``FetchQuery`` translates.
    nonisolated var dialect: any SQLDialect { get }

    /// How many rows a scan of a table reads at a time.
    static var fetchBatchSize: Int { get }

    /// The rows with these references, in their order; missing ones are left out.
    func rows(for references: [RowReference]) throws -> [StoreRow]

    /// A batch of an entity's rows in key order, after a primary key.
    ///
    /// - Complexity: O(`limit` · log *n*); memory is bounded by `limit`.
    func rows(of entity: String, includingSubentities: Bool, after primaryKey: Int64, limit: Int) throws -> [StoreRow]

    /// The rows a request matches, sorted, with its offset and limit applied
    /// (``/TernCore/PersistentStore/fetch(_:)`` on the store's executor).
    ///
    /// - Complexity: Proportional to the number of rows of the entities involved.
    func fetch(_ request: StoreFetchRequest) throws -> [StoreRow]

    /// A page of a request read by one SQL statement with keyset pagination, rows packed, or nil
    /// when the predicate or a sort does not translate to SQL.
    ///
    /// - Complexity: O(`size` · log *n*) when the database can seek to the position.
    func fetchPackedPage(
        _ request: StoreFetchRequest, after position: StoreFetchPosition?, size: Int
    ) throws -> PackedFetchPage?
}

extension RelationalRowStore {
    /// The object ID of a row of this store.
    package nonisolated func objectID(_ reference: RowReference) -> ObjectID {
        ObjectID(entityName: reference.entityName, storeIdentifier: identifier, primaryKey: reference.primaryKey)
    }

    /// The error a save throws when the database reports that writing a row broke a unique
    /// index: a constraint conflict with one failure, about the row.
    ///
    /// - Parameters:
    ///   - reference: The row being written.
    ///   - reported: What the database reported (`SQLiteError`, `PostgreSQLError`), kept as the
    ///     underlying error; its message names the index, never a value.
    ///   - message: The database's message.
    ///   - path: The store file, if any.
    package nonisolated func constraintConflict(
        of reference: RowReference, reported: any Error, message: String, path: String?
    ) -> TernError {
        var failure = TernError(
            .constraintConflict, "another \(reference.entityName) has the same unique values (\(message))",
            entity: reference.entityName, path: path)
        failure.objectID = objectID(reference)
        return TernError(
            .constraintConflict, "the save would break a uniqueness constraint; change the values or merge the objects",
            objectID: nil, failures: [failure], underlyingError: reported)
    }

    /// Calls `body` with each row of the request's entity that matches its predicate, evaluated
    /// in Swift, in key order, reading ``fetchBatchSize`` rows at a time.
    ///
    /// - Throws: What reading the rows or evaluating the predicate throws.
    /// - Complexity: O(*n*) rows read; memory is bounded by the batch size.
    package func forEachMatch(of request: StoreFetchRequest, _ body: (StoreRow) -> Void) throws {
        var last: Int64 = 0
        while true {
            let batch = try rows(
                of: request.entityName, includingSubentities: request.includesSubentities, after: last,
                limit: Self.fetchBatchSize)
            for row in batch where try request.predicate?.evaluate(with: StoreRowValues(row: row, store: self)) ?? true
            {
                body(row)
            }
            guard batch.count == Self.fetchBatchSize, let key = batch.last?.reference.primaryKey else { return }
            last = key
        }
    }
}

/// A row seen through key paths, for predicates and sorts evaluated in Swift: related rows are
/// read from the store.
package struct StoreRowValues<Store: RelationalRowStore>: PredicateEvaluable {
    /// The row.
    package let row: StoreRow
    /// The store. Values are made and used only on its executor (inside a fetch), which
    /// `assumeIsolated` checks when related rows are read.
    package let store: Store

    /// A row of a store.
    package init(row: StoreRow, store: Store) {
        self.row = row
        self.store = store
    }

    /// The value at a key path of the row: an attribute, a related row's, or the row's identity.
    ///
    /// - Throws: `TernError` with code `invalidPredicate` for a key path the model does not have.
    package func predicateValue(forKeyPath keyPath: String) throws(TernError) -> PredicateValue {
        let store = self.store
        let resolver = KeyPathResolver<StoreRow>(
            model: store.model, entityName: \.reference.entityName,
            identity: { row in .uri(store.objectID(row.reference).uriRepresentation) },
            attribute: { row, name in row.attributes[name] },
            related: { row, name in
                let references = (row.toOne[name].map { [$0] } ?? []) + (row.toMany[name] ?? [])
                return store.assumeIsolated { store in (try? store.rows(for: references)) ?? [] }
            })
        return try resolver.value(of: row, at: keyPath)
    }
}
