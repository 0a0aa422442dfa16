/// The rows of a store kept in memory, with the logic every in-memory-backed store shares:
/// selecting with predicates and sorts, applying change sets with version and uniqueness
/// checks, and handing out primary keys.
///
/// ``InMemoryStore`` and ``AtomicStore`` keep one behind a lock; being a value type, a save
/// applies its changes to a copy and keeps it only when every check passed.
package struct RowTable: Sendable, Hashable {
    /// The store's metadata.
    package var metadata: StoreMetadata
    /// Rows by concrete entity, then primary key.
    package var rows: [String: [Int64: StoreRow]] = [:]
    /// The last primary key handed out, by inheritance root.
    package var lastKeys: [String: Int64] = [:]
    /// Whether new keys are unique across the whole table rather than within each root.
    package var sharesKeysAcrossEntities = false

    /// Creates an empty table.
    ///
    /// - Parameter metadata: The store's metadata.
    package init(metadata: StoreMetadata) {
        self.metadata = metadata
    }

    /// Creates a table holding rows, making sure no key already used is handed out again.
    ///
    /// - Parameters:
    ///   - metadata: The store's metadata.
    ///   - rows: The rows.
    ///   - lastKeys: The last primary key handed out by inheritance root, as recorded.
    ///   - model: The model, to find the inheritance root of each row's entity.
    /// - Complexity: O(*n*) in the number of rows.
    package init(metadata: StoreMetadata, rows: [StoreRow], lastKeys: [String: Int64], model: ManagedObjectModel) {
        self.metadata = metadata
        self.lastKeys = lastKeys
        var roots: [String: String] = [:]
        for row in rows {
            let entity = row.reference.entityName
            self.rows[entity, default: [:]][row.reference.primaryKey] = row
            let root = roots[entity] ?? model.rootEntity(of: entity)?.name ?? entity
            roots[entity] = root
            self.lastKeys[root] = max(self.lastKeys[root] ?? 0, row.reference.primaryKey)
        }
    }

    /// Every row, ordered by reference.
    ///
    /// - Complexity: O(*n* log *n*) in the number of rows.
    package var allRows: [StoreRow] {
        rows.values.flatMap(\.values).sorted { $0.reference < $1.reference }
    }

    /// The row with that reference.
    package func row(for reference: RowReference) -> StoreRow? {
        rows[reference.entityName]?[reference.primaryKey]
    }

    // MARK: - Reading

    /// The rows matching a request, sorted, with offset and limit applied.
    ///
    /// - Parameters:
    ///   - request: What to fetch.
    ///   - model: The store's model.
    ///   - storeIdentifier: The store's UUID, for object IDs in predicates.
    /// - Throws: ``TernError/Code/objectNotFound`` for an unknown entity, or a predicate's error.
    /// - Complexity: O(*n* log *n*) in the number of rows of the entities involved.
    package func select(
        _ request: StoreFetchRequest, model: ManagedObjectModel, storeIdentifier: String
    ) throws -> [StoreRow] {
        let names = try entityNames(of: request, model: model)
        var matches = names.flatMap { rows[$0]?.values.map { $0 } ?? [] }.sorted { $0.reference < $1.reference }
        func values(_ row: StoreRow) -> RowValues {
            RowValues(row: row, table: self, model: model, storeIdentifier: storeIdentifier)
        }
        if let predicate = request.predicate {
            matches = try matches.filter { try predicate.evaluate(with: values($0)) }
        }
        return try request.ordered(matches.map(values)).map(\.row)
    }

    /// One page of the rows matching a request, after a position (keyset pagination).
    ///
    /// - Parameters:
    ///   - request: What to fetch; its offset applies to the first page, its limit to all.
    ///   - position: Where the previous page ended, or nil for the first page.
    ///   - size: The most rows to return.
    ///   - model: The store's model.
    ///   - storeIdentifier: The store's UUID, for object IDs in predicates.
    /// - Throws: As ``select(_:model:storeIdentifier:)``.
    /// - Complexity: O(*n* log *n*) in the number of rows of the entities involved, per page.
    package func page(
        _ request: StoreFetchRequest, after position: StoreFetchPosition?, size: Int, model: ManagedObjectModel,
        storeIdentifier: String
    ) throws -> StoreFetchPage {
        var all = request
        all.offset = 0
        all.limit = nil
        let sorted = try select(all, model: model, storeIdentifier: storeIdentifier).map {
            RowValues(row: $0, table: self, model: model, storeIdentifier: storeIdentifier)
        }
        return try request.page(of: sorted, after: position, size: size, row: \.row)
    }

    /// The number of rows matching a request, after offset and limit.
    ///
    /// - Complexity: O(*n*) in the number of rows of the entities involved.
    package func count(
        _ request: StoreFetchRequest, model: ManagedObjectModel, storeIdentifier: String
    ) throws -> Int {
        guard request.predicate == nil else {
            var unsorted = request
            unsorted.sortDescriptors = []
            return try select(unsorted, model: model, storeIdentifier: storeIdentifier).count
        }
        // Without a predicate every row of the entities matches: counted without copying or sorting them.
        let total = try entityNames(of: request, model: model).reduce(0) { $0 + (rows[$1]?.count ?? 0) }
        let afterOffset = max(0, total - request.offset)
        return request.limit.map { min($0, afterOffset) } ?? afterOffset
    }

    /// The entities a request reads: its entity, and its subentities when it includes them.
    ///
    /// - Throws: ``TernError/Code/objectNotFound`` when the model has no such entity.
    private func entityNames(of request: StoreFetchRequest, model: ManagedObjectModel) throws -> [String] {
        guard model.entity(named: request.entityName) != nil else {
            throw TernError(
                .objectNotFound, "the model has no entity \(request.entityName); check the fetch request",
                entity: request.entityName)
        }
        var names = [request.entityName]
        if request.includesSubentities { names += model.allSubentities(of: request.entityName).map(\.name) }
        return names
    }

    // MARK: - Writing

    /// Reserves primary keys, shared by the entity's inheritance root.
    ///
    /// - Parameters:
    ///   - entity: The concrete entity of the new rows.
    ///   - count: How many keys.
    ///   - model: The store's model, to find the inheritance root.
    /// - Returns: `count` consecutive new keys.
    /// - Throws: ``TernError/Code/objectNotFound`` when the model has no such entity.
    package mutating func newPrimaryKeys(
        forEntity entity: String, count: Int, model: ManagedObjectModel
    ) throws -> [Int64] {
        guard let root = model.rootEntity(of: entity)?.name else {
            throw TernError(.objectNotFound, "the model has no entity \(entity)", entity: entity)
        }
        let first = (sharesKeysAcrossEntities ? lastKeys.values.max() ?? 0 : lastKeys[root, default: 0]) + 1
        lastKeys[root] = first + Int64(count) - 1
        return (0..<Int64(count)).map { first + $0 }
    }

    /// Raises the last keys handed out to at least `keys` (by inheritance root), never lowering one.
    ///
    /// - Parameter keys: The last primary key handed out, by inheritance root.
    package mutating func raiseLastKeys(to keys: [String: Int64]) {
        for (root, key) in keys where key > lastKeys[root] ?? 0 { lastKeys[root] = key }
    }

    /// Applies a change set; on a thrown error the table is left half-changed, so apply it to a
    /// copy and keep the copy only on success.
    ///
    /// - Parameters:
    ///   - changes: The rows to insert, update and delete.
    ///   - model: The store's model, for uniqueness constraints.
    ///   - storeIdentifier: The store's UUID, for the object IDs of failures.
    /// - Returns: The new version of each inserted and updated row.
    /// - Throws: ``TernError/Code/mergeConflict`` on a version mismatch,
    ///   ``TernError/Code/constraintConflict`` on a broken uniqueness constraint or a reused key.
    /// - Complexity: O(*c* + *u*) where *c* is the size of the change set and *u* the number of
    ///   rows of the constrained entities it touches.
    package mutating func apply(
        _ changes: StoreChangeSet, model: ManagedObjectModel, storeIdentifier: String
    ) throws -> StoreSaveResult {
        func objectID(_ reference: RowReference) -> ObjectID {
            ObjectID(
                entityName: reference.entityName, storeIdentifier: storeIdentifier, primaryKey: reference.primaryKey)
        }
        var conflicts: [TernError] = []
        func check(_ reference: RowReference, readAt version: Int64) {
            let current = row(for: reference)
            guard current?.version != version else { return }
            let what = current == nil ? "was deleted" : "changed (version \(version) was read)"
            conflicts.append(
                TernError(.mergeConflict, "\(reference) \(what) since it was read", objectID: objectID(reference)))
        }
        for row in changes.updated { check(row.reference, readAt: row.version) }
        for (reference, version) in changes.deleted { check(reference, readAt: version) }
        if !conflicts.isEmpty {
            throw TernError(
                .mergeConflict,
                "\(conflicts.count) row(s) changed in the store since they were read; refresh them or pick a merge policy",
                objectID: nil, failures: conflicts)
        }
        var result = StoreSaveResult()
        for (reference, _) in changes.deleted {
            rows[reference.entityName]?[reference.primaryKey] = nil
        }
        for var row in changes.updated {
            row.version += 1
            rows[row.reference.entityName, default: [:]][row.reference.primaryKey] = row
            result.newVersions[row.reference] = row.version
        }
        var reused: [TernError] = []
        for var row in changes.inserted {
            if self.row(for: row.reference) != nil {
                reused.append(
                    TernError(
                        .constraintConflict, "primary key \(row.reference) is already used",
                        objectID: objectID(row.reference)))
            }
            row.version = 1
            rows[row.reference.entityName, default: [:]][row.reference.primaryKey] = row
            result.newVersions[row.reference] = row.version
            // Rows inserted with keys of their own (a copied store) must never be handed out again.
            let root = model.rootEntity(of: row.reference.entityName)?.name ?? row.reference.entityName
            lastKeys[root] = max(lastKeys[root] ?? 0, row.reference.primaryKey)
        }
        let touched = Set(changes.inserted.map(\.reference) + changes.updated.map(\.reference))
        let failures = reused + uniquenessFailures(touching: touched, model: model, objectID: objectID)
        if !failures.isEmpty {
            throw TernError(
                .constraintConflict,
                "the save would break \(failures.count) uniqueness constraint(s); change the values or merge the objects",
                objectID: nil, failures: failures)
        }
        return result
    }

    // MARK: - Non public

    private func uniquenessFailures(
        touching touched: Set<RowReference>, model: ManagedObjectModel, objectID: (RowReference) -> ObjectID
    ) -> [TernError] {
        var declaring: Set<String> = []
        for entityName in Set(touched.map(\.entityName)) {
            for entity in [model.entity(named: entityName)].compactMap({ $0 }) + model.ancestors(of: entityName)
            where !entity.uniquenessConstraints.isEmpty {
                declaring.insert(entity.name)
            }
        }
        var failures: [TernError] = []
        for name in declaring.sorted() {
            guard let entity = model.entity(named: name) else { continue }
            let names = [name] + model.allSubentities(of: name).map(\.name)
            let candidates = names.flatMap { rows[$0]?.values.map { $0 } ?? [] }
            for constraint in entity.uniquenessConstraints {
                func failure(_ reference: RowReference) -> TernError {
                    TernError(
                        .constraintConflict, "another \(name) has the same \(constraint.joined(separator: ", "))",
                        objectID: objectID(reference), property: constraint.joined(separator: ","))
                }
                var seen: [[AnyHashable]: RowReference] = [:]
                for row in candidates.sorted(by: { $0.reference < $1.reference }) {
                    guard let key = Self.uniquenessKey(of: row, for: constraint) else { continue }
                    if seen[key] != nil, touched.contains(row.reference) {
                        failures.append(failure(row.reference))
                    } else if let other = seen[key], touched.contains(other), !touched.contains(row.reference) {
                        failures.append(failure(other))
                    } else if seen[key] == nil {
                        seen[key] = row.reference
                    }
                }
            }
        }
        return failures
    }

    /// The values of a constraint's properties, or nil when one is nil (nils never collide).
    private static func uniquenessKey(of row: StoreRow, for constraint: [String]) -> [AnyHashable]? {
        var key: [AnyHashable] = []
        for property in constraint {
            if let value = row.attributes[property] {
                key.append(value)
            } else if let reference = row.toOne[property] {
                key.append(reference)
            } else {
                return nil
            }
        }
        return key
    }
}
