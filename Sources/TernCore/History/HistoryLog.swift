package import Foundation

/// A persistent history kept as values: what ``InMemoryStore`` records, and the rules every
/// store follows to turn a save into a ``HistoryTransaction`` (changed properties of updates,
/// tombstones of deletes).
package struct HistoryLog: Sendable, Hashable {
    /// The recorded transactions, oldest first.
    package private(set) var transactions: [HistoryTransaction] = []
    /// The number of the last transaction recorded, even if it was purged since.
    package private(set) var lastNumber: Int64 = 0

    /// Creates an empty history.
    package init() {}

    // MARK: - Recording

    /// Records a save.
    ///
    /// - Parameters:
    ///   - changes: The change set that was applied.
    ///   - previous: The rows as they were before the save, for the updated and deleted rows.
    ///   - model: The store's model.
    ///   - storeIdentifier: The store's UUID.
    ///   - date: When the save was committed.
    /// - Complexity: O(*c* · *p*) for *c* changed rows of *p* properties.
    package mutating func record(
        _ changes: StoreChangeSet, previous: [RowReference: StoreRow], model: ManagedObjectModel,
        storeIdentifier: String, date: Date = Date()
    ) {
        guard !changes.isEmpty else { return }
        lastNumber += 1
        let id = { (reference: RowReference) in
            ObjectID(
                entityName: reference.entityName, storeIdentifier: storeIdentifier, primaryKey: reference.primaryKey)
        }
        var recorded: [HistoryChange] = changes.inserted.map {
            HistoryChange(objectID: id($0.reference), changeType: .insert)
        }
        for row in changes.updated {
            let properties = previous[row.reference].map { Self.changedProperties(from: $0, to: row, model: model) }
            if properties?.isEmpty == true { continue }
            recorded.append(
                HistoryChange(objectID: id(row.reference), changeType: .update, updatedProperties: properties))
        }
        for reference in changes.deleted.keys.sorted() {
            let tombstone = previous[reference].map { Self.tombstone(of: $0, model: model) } ?? [:]
            recorded.append(HistoryChange(objectID: id(reference), changeType: .delete, tombstone: tombstone))
        }
        transactions.append(
            HistoryTransaction(
                token: HistoryToken(storeIdentifier: storeIdentifier, transactionNumber: lastNumber), timestamp: date,
                author: changes.author, contextName: changes.contextName,
                bundleIdentifier: Self.bundleIdentifier, processName: Self.processName, changes: recorded))
    }

    // MARK: - Reading and purging

    /// The transactions a request asks for, oldest first.
    ///
    /// - Parameters:
    ///   - request: What to fetch.
    ///   - storeIdentifier: The store's UUID, which the request's token must name.
    /// - Throws: ``TernError/Code/invalidHistoryToken`` for another store's token.
    /// - Complexity: O(*t* + *c*) in the number of transactions and changes looked at.
    package func fetch(_ request: HistoryFetchRequest, storeIdentifier: String) throws -> [HistoryTransaction] {
        try request.token?.check(belongsTo: storeIdentifier)
        var result: [HistoryTransaction] = []
        for transaction in transactions {
            if let limit = request.fetchLimit, result.count >= limit { break }
            if let kept = request.filtered(transaction) { result.append(kept) }
        }
        return result
    }

    /// Removes the transactions up to and including the token's.
    ///
    /// - Parameters:
    ///   - token: The last transaction to remove.
    ///   - storeIdentifier: The store's UUID, which the token must name.
    /// - Returns: How many transactions were removed.
    /// - Throws: ``TernError/Code/invalidHistoryToken`` for another store's token.
    package mutating func delete(before token: HistoryToken, storeIdentifier: String) throws -> Int {
        try token.check(belongsTo: storeIdentifier)
        let count = transactions.prefix { $0.token.transactionNumber <= token.transactionNumber }.count
        transactions.removeFirst(count)
        return count
    }

    /// The token of the last transaction recorded, or nil before the first.
    package func currentToken(storeIdentifier: String) -> HistoryToken? {
        lastNumber == 0 ? nil : HistoryToken(storeIdentifier: storeIdentifier, transactionNumber: lastNumber)
    }

    // MARK: - Rules shared by every store

    /// The names of the properties whose values differ between two states of a row: attributes,
    /// to-one destinations, and to-many destinations (in order for ordered relationships, as sets
    /// otherwise). An absent value and an empty to-many are the same.
    ///
    /// - Complexity: O(*p* + *r* log *r*) for *p* properties and *r* references.
    package static func changedProperties(from old: StoreRow, to new: StoreRow, model: ManagedObjectModel) -> Set<
        String
    > {
        var names: Set<String> = []
        for name in Set(old.attributes.keys).union(new.attributes.keys)
        where old.attributes[name] != new.attributes[name] {
            names.insert(name)
        }
        for name in Set(old.toOne.keys).union(new.toOne.keys) where old.toOne[name] != new.toOne[name] {
            names.insert(name)
        }
        for name in Set(old.toMany.keys).union(new.toMany.keys) {
            let before = old.toMany[name] ?? []
            let after = new.toMany[name] ?? []
            let isOrdered = model.relationship(named: name, inEntity: new.reference.entityName)?.isOrdered ?? false
            if isOrdered ? before != after : Set(before) != Set(after) { names.insert(name) }
        }
        return names
    }

    /// The values a deleted row keeps in history: its attributes marked
    /// ``AttributeDescription/preservesValueInHistoryOnDeletion``, except those stored externally
    /// (Core Data does not keep those either).
    package static func tombstone(of row: StoreRow, model: ManagedObjectModel) -> [String: AttributeValue] {
        var values: [String: AttributeValue] = [:]
        for attribute in preservedAttributes(of: row.reference.entityName, model: model) {
            if let value = row.attributes[attribute.name] { values[attribute.name] = value }
        }
        return values
    }

    /// The attributes of an entity (own and inherited) whose values deletes keep, sorted by name.
    package static func preservedAttributes(of entityName: String, model: ManagedObjectModel) -> [AttributeDescription]
    {
        model.allAttributes(of: entityName).filter {
            $0.preservesValueInHistoryOnDeletion && !$0.isTransient && !$0.allowsExternalBinaryDataStorage
        }
    }

    /// The bundle identifier recorded with each transaction.
    package static var bundleIdentifier: String? { Bundle.main.bundleIdentifier }
    /// The process name recorded with each transaction.
    package static var processName: String { ProcessInfo.processInfo.processName }
}
