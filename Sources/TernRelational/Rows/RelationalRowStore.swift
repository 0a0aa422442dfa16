package import TernCore

/// What both SQL stores offer the code they share about their rows: the model, the store's
/// identifier, and rows read by reference on the store's executor.
package protocol RelationalRowStore: Actor {
    /// The model the store's rows follow.
    nonisolated var model: ManagedObjectModel { get }
    /// The store's identifier (its metadata's UUID), part of its objects' IDs.
    nonisolated var identifier: String { get }

    /// The rows with these references, in their order; missing ones are left out.
    func rows(for references: [RowReference]) throws -> [StoreRow]
}

extension RelationalRowStore {
    /// The object ID of a row of this store.
    package nonisolated func objectID(_ reference: RowReference) -> ObjectID {
        ObjectID(entityName: reference.entityName, storeIdentifier: identifier, primaryKey: reference.primaryKey)
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
