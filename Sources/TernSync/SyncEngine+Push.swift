import Foundation
import TernCore
import TernPostgreSQL
import TernSQLite

extension SyncEngine {
    // MARK: - Push

    /// Sends the local transactions after the last pushed one to the server, ``pageSize`` at a
    /// time, each page in one server transaction followed by the new token. The first push (and
    /// the first after a migration) sends every object as the device's state first, a page of
    /// objects at a time, recording its progress, so that a kill resumes where it stopped.
    ///
    /// - Returns: A summary with the push counts.
    /// - Throws: ``SyncError``, `PostgreSQLError` or `SQLiteError`; a failed push is sent again
    ///   by the next run (the server ignores transactions it already has).
    /// - Complexity: O(*c*) for *c* local changes (O(*n*) objects for a snapshot); memory
    ///   O(``pageSize``) transactions or objects.
    public func push() async throws -> SyncSummary {
        try await requireSyncStore()
        let device = try await deviceIdentifier()
        let basedOn = SyncPullCursor(try await store.syncState(forKey: StateKey.pulled) ?? "0")?.sequence ?? 0
        let resolve = conflictResolver.isDefault ? nil : conflictResolver.handler
        var summary = SyncSummary()
        let pushed = try await store.syncState(forKey: StateKey.pushed)
        let resnapshot = try await store.syncState(forKey: StateKey.resnapshot).flatMap(Int64.init)
        if pushed == nil || resnapshot != nil {
            try await pushSnapshot(number: resnapshot ?? 0, device: device, basedOn: basedOn, into: &summary)
        }
        var after = (try await store.syncState(forKey: StateKey.pushed)).flatMap(HistoryToken.init)
        while true {
            var request = HistoryFetchRequest(after: after)
            request.fetchLimit = pageSize
            let page = try await store.fetchHistory(request)
            guard let last = page.last?.token else { break }
            var transactions: [SyncPushTransaction] = []
            var changeCount = 0
            for transaction in page where transaction.author != Self.author {
                var header = SyncPushTransaction(
                    device: device, localNumber: transaction.token.transactionNumber, author: transaction.author,
                    modelDigest: store.model.versionHashesDigest, changes: [], basedOn: basedOn)
                if transaction.changes.count > pageSize {
                    try await send(transactions, resolve: resolve, into: &summary)
                    (transactions, changeCount) = ([], 0)
                    try await sendInParts(transaction, header: header, resolve: resolve, into: &summary)
                    continue
                }
                header.changes = try await changes(of: transaction.changes)
                guard !header.changes.isEmpty else { continue }
                transactions.append(header)
                changeCount += header.changes.count
                if changeCount >= pageSize {
                    try await send(transactions, resolve: resolve, into: &summary)
                    (transactions, changeCount) = ([], 0)
                }
            }
            try await send(transactions, resolve: resolve, into: &summary)
            try await store.setSyncState([StateKey.pushed: last.description])
            after = last
            if page.count < pageSize { break }
        }
        return summary
    }

    /// Sends transactions to the server and counts them.
    private func send(
        _ transactions: [SyncPushTransaction], resolve: SyncServer.ConflictHandler?, into summary: inout SyncSummary
    ) async throws {
        guard !transactions.isEmpty else { return }
        summary.addPushed(try await server.push(transactions, resolve: resolve))
    }

    /// Sends one local transaction of more than ``pageSize`` changes in parts of ``pageSize``;
    /// the server records it whole when the last part arrives.
    private func sendInParts(
        _ transaction: HistoryTransaction, header: SyncPushTransaction, resolve: SyncServer.ConflictHandler?,
        into summary: inout SyncSummary
    ) async throws {
        let count = transaction.changes.count
        for (number, start) in stride(from: 0, to: count, by: pageSize).enumerated() {
            var part = header
            part.changes = try await changes(of: Array(transaction.changes[start..<min(start + pageSize, count)]))
            summary.addPushed(
                try await server.push(part: part, number: number, isLast: start + pageSize >= count, resolve: resolve))
        }
    }

    /// Pushes every object (and, after a migration, every delete the server may not know), a
    /// page at a time, as snapshot transactions numbered `-(number << 32 + page)`; records its
    /// progress after each page and, at the end, the history token it started at as pushed.
    private func pushSnapshot(number: Int64, device: UUID, basedOn: Int64, into summary: inout SyncSummary) async throws
    {
        let token: String
        if let known = try await store.syncState(forKey: StateKey.snapshot) {
            token = known
        } else {
            token = try await store.currentHistoryToken()?.description ?? "-"
            try await store.setSyncState([StateKey.snapshot: token])
        }
        let entities = snapshotOrder()
        var cursor = SnapshotCursor(try await store.syncState(forKey: StateKey.snapshotCursor) ?? "")
        // Deletes travel only after a migration: before the first push the server knows none of them.
        let phases = number == 0 ? [false] : [false, true]
        while cursor.entity < entities.count {
            let entity = entities[cursor.entity]
            let deleted = phases[min(cursor.phase, phases.count - 1)]
            let identities = try await store.globalIdentities(
                ofEntity: entity, after: cursor.last, limit: pageSize, deleted: deleted)
            if let last = identities.last?.identifier {
                var changes: [SyncChange] = []
                if deleted {
                    changes = identities.map { SyncChange(object: $0.identifier, entity: entity, kind: .delete) }
                } else {
                    for row in try await store.rows(for: identities.map(\.reference)) {
                        guard var change = try await change(of: row, kind: .insert, properties: nil) else { continue }
                        // Before the first sync (nothing pushed or pulled), a row saved again after its insert carries edits.
                        change.isEdited = number == 0 && basedOn == 0 && row.version > 1
                        changes.append(change)
                    }
                }
                let transaction = SyncPushTransaction(
                    device: device, localNumber: -(number << 32 + cursor.page), author: nil,
                    modelDigest: store.model.versionHashesDigest, changes: changes, basedOn: basedOn, isSnapshot: true)
                try await send([transaction], resolve: nil, into: &summary)
                cursor.page += 1
                cursor.last = last
            }
            if identities.count < pageSize {
                cursor.last = nil
                cursor.phase += 1
                if cursor.phase >= phases.count { (cursor.entity, cursor.phase) = (cursor.entity + 1, 0) }
            }
            try await store.setSyncState([StateKey.snapshotCursor: cursor.description])
        }
        try await store.setSyncState(
            [StateKey.pushed: token], removing: [StateKey.snapshot, StateKey.snapshotCursor, StateKey.resnapshot])
    }

    /// The concrete entities in the order a snapshot pushes them: those with a uniqueness key
    /// first, then each entity after the destinations of its to-one relationships where it can
    /// be, so that the server matches content with the owners' final identifiers (by name
    /// otherwise).
    private func snapshotOrder() -> [String] {
        let model = store.model
        let concrete = model.entities.filter { !$0.isAbstract }.sorted { $0.name < $1.name }
        var placed: [String] = concrete.filter { !$0.uniquenessConstraints.isEmpty }.map(\.name)
        var remaining = concrete.filter { $0.uniquenessConstraints.isEmpty }.map(\.name)
        while !remaining.isEmpty {
            let next =
                remaining.firstIndex { name in
                    model.allRelationships(of: name).allSatisfy { relationship in
                        relationship.isToMany || relationship.destinationEntityName == name
                            || !remaining.contains(relationship.destinationEntityName)
                    }
                } ?? 0
            placed.append(remaining.remove(at: next))
        }
        return placed
    }

    /// Changes of a history transaction, with the current values of what they changed.
    private func changes(of historyChanges: [HistoryChange]) async throws -> [SyncChange] {
        var changes: [SyncChange] = []
        for change in historyChanges {
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
                if let pushed = try await self.change(of: row, kind: kind, properties: properties) {
                    changes.append(pushed)
                }
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
                    if let identity = try await store.globalIdentity(of: reference) {
                        destinations.append(identity.identifier)
                    }
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

/// How far a snapshot push got: `<page>/<entity index>/<phase>/<last identifier or ->`.
struct SnapshotCursor: CustomStringConvertible {
    /// The next page's number.
    var page: Int64 = 0
    /// The index of the entity being pushed, in name order.
    var entity = 0
    /// 0: live objects; 1: deletes.
    var phase = 0
    /// The last identifier pushed of that entity and phase.
    var last: UUID?

    /// Reads a cursor; an empty or unreadable text is the start.
    init(_ text: String) {
        let parts = text.split(separator: "/").map(String.init)
        guard parts.count == 4, let page = Int64(parts[0]), let entity = Int(parts[1]), let phase = Int(parts[2]) else {
            return
        }
        (self.page, self.entity, self.phase, last) = (page, entity, phase, UUID(uuidString: parts[3]))
    }

    /// The text form.
    var description: String { "\(page)/\(entity)/\(phase)/\(last?.uuidString ?? "-")" }
}
