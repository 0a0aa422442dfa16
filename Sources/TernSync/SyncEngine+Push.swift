import Foundation
import TernCore
import TernPostgreSQL
import TernSQLite

extension SyncEngine {
    // MARK: - Push

    /// Sends the local transactions after the last pushed one to the server, in one server
    /// transaction, then records the new token. The first push sends every object as the
    /// device's initial state.
    ///
    /// - Returns: A summary with the push counts.
    /// - Throws: ``SyncError``, `PostgreSQLError` or `SQLiteError`; a failed push is sent again
    ///   by the next run (the server ignores transactions it already has).
    /// - Complexity: O(*c*) for *c* local changes (O(*n*) objects on the first push).
    public func push() async throws -> SyncSummary {
        try await requireSyncStore()
        let device = try await deviceIdentifier()
        let digest = store.model.versionHashesDigest
        var transactions: [SyncPushTransaction] = []
        var after: HistoryToken?
        if let text = try await store.syncState(forKey: StateKey.pushed) {
            after = HistoryToken(text)
        } else {
            // First push: the initial state, then the history after the moment it was taken.
            let snapshotText: String
            if let known = try await store.syncState(forKey: StateKey.snapshot) {
                snapshotText = known
            } else {
                snapshotText = try await store.currentHistoryToken()?.description ?? "-"
                try await store.setSyncState([StateKey.snapshot: snapshotText])
            }
            after = HistoryToken(snapshotText)
            let changes = try await snapshot()
            if !changes.isEmpty {
                transactions.append(
                    SyncPushTransaction(device: device, localNumber: 0, author: nil, modelDigest: digest, changes: changes))
            }
        }
        var last = after
        for transaction in try await store.fetchHistory(HistoryFetchRequest(after: after)) {
            last = transaction.token
            guard transaction.author != Self.author else { continue }
            let changes = try await changes(of: transaction)
            guard !changes.isEmpty else { continue }
            transactions.append(
                SyncPushTransaction(
                    device: device, localNumber: transaction.token.transactionNumber, author: transaction.author,
                    modelDigest: digest, changes: changes))
        }
        var summary = SyncSummary()
        if !transactions.isEmpty {
            let result = try await server.push(transactions)
            (summary.pushedTransactions, summary.pushedChanges, summary.mergedOnServer) =
                (result.transactions, result.changes, result.merged)
        }
        try await store.setSyncState([StateKey.pushed: last?.description ?? "-"])
        return summary
    }

    /// Every object of the store, as inserts.
    private func snapshot() async throws -> [SyncChange] {
        var changes: [SyncChange] = []
        var seen: Set<RowReference> = []
        for entity in store.model.entities where !entity.isAbstract {
            for row in try await store.fetch(StoreFetchRequest(entityName: entity.name))
            where seen.insert(row.reference).inserted {
                if let change = try await change(of: row, kind: .insert, properties: nil) { changes.append(change) }
            }
        }
        return changes
    }

    /// The changes of one history transaction, with the current values of what it changed.
    private func changes(of transaction: HistoryTransaction) async throws -> [SyncChange] {
        var changes: [SyncChange] = []
        for change in transaction.changes {
            guard let reference = change.objectID.rowReference else { continue }
            switch change.changeType {
            case .delete:
                guard let identity = try await store.globalIdentity(of: reference) else { continue }
                changes.append(SyncChange(object: identity.identifier, entity: reference.entityName, kind: .delete))
            case .insert, .update:
                // A row deleted since is skipped: its delete follows.
                guard let row = try await store.rows(for: [reference]).first else { continue }
                let kind: SyncChange.Kind = change.changeType == .insert ? .insert : .update
                let properties = kind == .insert ? nil : change.updatedProperties
                if let pushed = try await self.change(of: row, kind: kind, properties: properties) { changes.append(pushed) }
            }
        }
        return changes
    }

    /// A row as a change: its values (all, or the named properties), relationships as identifiers.
    private func change(of row: StoreRow, kind: SyncChange.Kind, properties: Set<String>?) async throws -> SyncChange? {
        guard let identity = try await store.globalIdentity(of: row.reference) else { return nil }
        let model = store.model
        let entity = row.reference.entityName
        var change = SyncChange(object: identity.identifier, entity: entity, kind: kind)
        for attribute in model.allAttributes(of: entity) where !attribute.isTransient {
            guard properties?.contains(attribute.name) ?? true else { continue }
            change.attributes[attribute.name] = .some(row.attributes[attribute.name].map(SyncValueCoding.encode))
        }
        for relationship in model.allRelationships(of: entity) where !relationship.isTransient {
            guard properties?.contains(relationship.name) ?? true else { continue }
            if relationship.isToMany {
                var destinations: [UUID] = []
                for reference in row.toMany[relationship.name] ?? [] {
                    if let identity = try await store.globalIdentity(of: reference) { destinations.append(identity.identifier) }
                }
                change.toMany[relationship.name] = destinations
            } else if let reference = row.toOne[relationship.name] {
                change.toOne[relationship.name] = .some(try await store.globalIdentity(of: reference)?.identifier)
            } else {
                change.toOne[relationship.name] = .some(nil)
            }
        }
        if kind == .insert {
            change.uniqueKey = model.entity(named: entity)?.uniquenessConstraints.first
        }
        return change
    }
}
