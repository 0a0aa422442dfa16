import Foundation
import TernCore
import TernPostgreSQL
import TernSQLite

extension SyncEngine {
    // MARK: - Pull

    /// Applies the state of the objects changed on the server after the pull cursor, in one
    /// local transaction authored ``author`` that also advances the cursor.
    ///
    /// The pull downloads ``pageSize`` objects at a time and keeps each page aside in the store
    /// (`TERNSYNC_INCOMING`, its own small transaction, so that a killed download resumes where it
    /// stopped); then it applies every page in one SQLite transaction, a page at a time, and
    /// commits once with the new cursor: no intermediate state is ever visible, and a kill
    /// leaves the old state. Objects merged on the server (an insert that matched another
    /// object's key) are merged here too: the local object takes the owner's identifier, or is
    /// deleted when the owner is already present. Deleted objects are deleted; other objects take
    /// the server's values. A reference to an object of a later page is kept aside and set when
    /// that object's page is applied. Objects whose last change this device pushed itself, with
    /// nothing from other devices it has not seen, are not sent back.
    ///
    /// - Returns: A summary with the pull counts.
    /// - Throws: ``SyncError`` with code `unknownModelVersion` before anything is applied when
    ///   the server holds changes written with a model this device does not know, or
    ///   `resyncNeeded` when the server purged changes this device has not pulled (call
    ///   ``resync()``); `SQLiteError` or `TernError`.
    /// - Complexity: O(*o*) for *o* changed server objects; memory O(``pageSize``).
    public func pull() async throws -> SyncSummary {
        try await requireSyncStore()
        let isResyncing = try await store.syncState(forKey: StateKey.resyncing) != nil
        return try await pullPages(collecting: isResyncing)
    }

    /// Pulls the whole server state again, then deletes the local objects the server no longer
    /// has, all in the pull's one transaction: the way back for a device the server purged past
    /// (``SyncError/Code/resyncNeeded``). Local changes are pushed first. A resync killed before
    /// it applied finishes with the next pull.
    ///
    /// - Returns: What changed.
    /// - Throws: As ``sync()``.
    /// - Complexity: O(*n*) for *n* objects; memory holds the server's identifiers (16 bytes each).
    public func resync() async throws -> SyncSummary {
        var summary = try await push()
        try await store.inSyncTransaction { store in
            try store.removeStagedSyncPages()
            try store.setSyncState([StateKey.pulled: "0", StateKey.resyncing: "1"], removing: [])
        }
        summary.add(try await pullPages(collecting: true))
        return summary
    }

    /// Downloads and stages the pages after the cursor, then applies them all in one transaction;
    /// when collecting (a resync), also deletes the local objects the server does not have.
    private func pullPages(collecting: Bool) async throws -> SyncSummary {
        try await requireSyncStore()
        let device = try await deviceIdentifier()
        let pulled =
            SyncPullCursor(try await store.syncState(forKey: StateKey.pulled) ?? "0") ?? SyncPullCursor(sequence: 0)
        var cursor = try await store.stagedSyncCursor().flatMap(SyncPullCursor.init) ?? pulled
        let encoder = JSONEncoder()
        while true {
            let batch = try await server.pull(after: cursor, limit: pageSize, excluding: collecting ? nil : device)
            if batch.needsResync {
                throw SyncError(
                    .resyncNeeded,
                    "The server purged changes this device has not pulled (it last pulled server transaction "
                        + "\(cursor.sequence)); call SyncEngine.resync() to pull the whole state again.")
            }
            if let (_, seq) = batch.modelDigests.filter({ !knownModelDigests.contains($0.key) }).min(by: {
                $0.value < $1.value
            }) {
                throw SyncError(
                    .unknownModelVersion,
                    "The server holds changes (from server transaction \(seq) on) written with a model version this "
                        + "store's model does not know; migrate the store to the newer model version, then sync again.")
            }
            if batch.cursor != cursor || !batch.objects.isEmpty || !batch.aliases.isEmpty {
                try await store.stageSyncPage(try encoder.encode(batch), cursor: batch.cursor.description)
            }
            cursor = batch.cursor
            if batch.isComplete { break }
        }
        let summary = try await store.inSyncTransaction { store in
            try self.applyStagedPages(in: store, collecting: collecting)
        }
        try await server.recordPulled(device: device, sequence: cursor.sequence)
        return summary
    }

    /// Applies every staged page in order (inside the pull's transaction), removes them, and,
    /// when collecting, deletes the local objects no page named.
    private func applyStagedPages(in store: isolated any SyncableStore, collecting: Bool) throws -> SyncSummary {
        var summary = SyncSummary()
        var seen: Set<UUID> = []
        let decoder = JSONDecoder()
        var next = try store.stagedSyncPage(after: 0)
        while let current = next {
            next = try store.stagedSyncPage(after: current.number)
            let batch = try decoder.decode(SyncPullBatch.self, from: current.page)
            if collecting { for state in batch.objects where !state.isDeleted { seen.insert(state.object) } }
            try apply(batch, isLastPage: next == nil, in: store, into: &summary)
        }
        try store.removeStagedSyncPages()
        guard collecting else { return summary }
        for entity in store.model.entities where !entity.isAbstract {
            var last: UUID?
            while true {
                let identities = try store.globalIdentities(ofEntity: entity.name, after: last, limit: pageSize)
                guard let final = identities.last?.identifier else { break }
                var changes = StoreChangeSet(author: Self.author, contextName: "tern.sync")
                for identity in identities where !seen.contains(identity.identifier) {
                    if let row = try store.rows(for: [identity.reference]).first {
                        changes.deleted[identity.reference] = row.version
                    }
                }
                if !changes.deleted.isEmpty {
                    summary.deleted += changes.deleted.count
                    try store.saveSynced(changes, identifiers: [:], renamed: [:], state: [:], removing: [])
                }
                last = final
            }
        }
        try store.setSyncState([:], removing: [StateKey.resyncing])
        return summary
    }

    /// Applies one staged page inside the pull's transaction, with the new cursor.
    private func apply(
        _ batch: SyncPullBatch, isLastPage: Bool, in store: isolated any SyncableStore, into summary: inout SyncSummary
    ) throws {
        let model = store.model
        var local = LocalIdentities()
        var rows = PendingRows()
        var renamed: [UUID: UUID] = [:]
        var deletedRows: [RowReference: Int64] = [:]
        // Merged objects: take the owner's identifier, or go when the owner is here already.
        for (alias, owner) in batch.aliases.sorted(by: { $0.key.uuidString < $1.key.uuidString }) {
            guard let reference = try local.reference(of: alias, in: store) else { continue }
            if try local.reference(of: owner, in: store) != nil {
                if let row = try store.rows(for: [reference]).first { deletedRows[reference] = row.version }
                local.forget(alias)
            } else {
                renamed[alias] = owner
                local.rename(alias, to: owner, reference: reference)
            }
            summary.mergedLocally += 1
        }
        // New objects get keys first, so that relationships can point at them.
        var identifiers: [RowReference: UUID] = [:]
        var missing: [SyncObjectState] = []
        for state in batch.objects where !state.isDeleted {
            if try local.reference(of: state.object, in: store) == nil, !local.isDeleted(state.object) {
                missing.append(state)
            }
        }
        for (entity, states) in Dictionary(grouping: missing, by: \.entity).sorted(by: { $0.key < $1.key })
        where model.entity(named: entity) != nil {
            let keys = try store.newPrimaryKeys(forEntity: entity, count: states.count)
            for (state, key) in zip(states, keys) {
                let reference = RowReference(entityName: entity, primaryKey: key)
                identifiers[reference] = state.object
                local.insert(state.object, reference: reference)
            }
        }
        let page = PageStates(batch)
        var pending: [String: String] = [:]
        var listedOrders: [(owner: RowReference, relationship: String, listed: [UUID])] = []
        for state in batch.objects {
            guard let entity = model.entity(named: state.entity) else { continue }
            guard let reference = try local.reference(of: state.object, in: store) else { continue }
            if state.isDeleted {
                if deletedRows[reference] == nil, let row = try store.rows(for: [reference]).first {
                    deletedRows[reference] = row.version
                    summary.deleted += 1
                }
                continue
            }
            let isNew = identifiers[reference] != nil
            var row =
                isNew
                ? StoreRow(reference: reference)
                : try store.rows(for: [reference]).first ?? StoreRow(reference: reference)
            for attribute in model.allAttributes(of: entity.name) where !attribute.isTransient {
                guard let text = state.attributes[attribute.name] else { continue }
                row.attributes[attribute.name] = text.flatMap(SyncValueCoding.decode)
            }
            for relationship in model.allRelationships(of: entity.name) where !relationship.isTransient {
                let key = StateKey.pendingPrefix + state.object.uuidString + "/" + relationship.name
                if relationship.isToMany, let inverse = inverseToOne(of: relationship) {
                    // One-to-many: the members' to-one relationships decide; the list gives the order.
                    guard let listed = state.toMany[relationship.name] else { continue }
                    listedOrders.append((reference, relationship.name, listed))
                    let current = try localIdentifiers(row.toMany[relationship.name] ?? [], in: store)
                    var members: [RowReference] = []
                    let memberEntities = Set(
                        [relationship.destinationEntityName]
                            + model.allSubentities(of: relationship.destinationEntityName).map(\.name))
                    for member in page.members(
                        of: state.object, listed: listed, current: current, inverse: inverse, entities: memberEntities)
                    {
                        if let target = try local.reference(of: member, in: store) { members.append(target) }
                    }
                    row.toMany[relationship.name] = members.filter { deletedRows[$0] == nil }
                    // Members of later pages: their own to-one sets them; the order is set when all are here.
                    for member in listed where !page.deleted.contains(member) {
                        if try local.reference(of: member, in: store) == nil, !local.isDeleted(member) {
                            pending[key] = listed.map(\.uuidString).joined(separator: ",")
                            break
                        }
                    }
                } else if relationship.isToMany {
                    guard let destinations = state.toMany[relationship.name] else { continue }
                    var references: [RowReference] = []
                    var isComplete = true
                    for destination in destinations where !page.deleted.contains(destination) {
                        if let target = try local.reference(of: destination, in: store) {
                            if deletedRows[target] == nil { references.append(target) }
                        } else if !local.isDeleted(destination) {
                            isComplete = false
                        }
                    }
                    row.toMany[relationship.name] = references
                    if !isComplete { pending[key] = destinations.map(\.uuidString).joined(separator: ",") }
                } else if let destination = state.toOne[relationship.name] {
                    var target: RowReference?
                    if let destination, !page.deleted.contains(destination) {
                        target = try local.reference(of: destination, in: store)
                        if target == nil, !local.isDeleted(destination) { pending[key] = destination.uuidString }
                    }
                    row.toOne[relationship.name] = target.flatMap { deletedRows[$0] == nil ? $0 : nil }
                }
            }
            rows.set(row, isNew: isNew)
            if isNew { summary.inserted += 1 } else { summary.updated += 1 }
        }
        // References kept aside by earlier pages whose objects are here now (or, on the last page, never will be).
        let resolved = try resolvePending(
            isLastPage: isLastPage, rows: &rows, local: &local, in: store, deletedRows: deletedRows, skipping: pending)
        // Rows read from the store before this page's writes list stale members: fix them.
        rows.reconcileMembers(model: model) { inverseToOne(of: $0) }
        // Members in the server's listed order, then the others as they were.
        for (owner, name, listed) in listedOrders {
            guard var row = rows.row(for: owner), let members = row.toMany[name], members.count > 1 else { continue }
            var position: [RowReference: Int] = [:]
            for (index, identifier) in listed.enumerated() {
                if let member = try local.reference(of: identifier, in: store), position[member] == nil {
                    position[member] = index
                }
            }
            let ordered = members.enumerated().sorted { first, second in
                (position[first.element] ?? listed.count + first.offset)
                    < (position[second.element] ?? listed.count + second.offset)
            }.map(\.element)
            if ordered != members {
                row.toMany[name] = ordered
                rows.set(row, isNew: rows.isNew(owner))
            }
        }
        var changes = StoreChangeSet(author: Self.author, contextName: "tern.sync")
        (changes.inserted, changes.updated) = rows.changes()
        changes.deleted = deletedRows
        summary.pulledObjects += batch.objects.count
        try store.saveSynced(
            changes, identifiers: identifiers, renamed: renamed,
            state: pending.merging([StateKey.pulled: batch.cursor.description]) { _, new in new }, removing: resolved)
    }

    /// The to-one relationship on the other side of a to-many relationship, if it has one.
    private func inverseToOne(of relationship: RelationshipDescription) -> String? {
        guard let name = relationship.inverseName,
            let inverse = store.model.allRelationships(of: relationship.destinationEntityName).first(where: {
                $0.name == name
            }),
            !inverse.isToMany
        else { return nil }
        return name
    }

    /// The global identifiers of local rows.
    private func localIdentifiers(_ references: [RowReference], in store: isolated any SyncableStore) throws -> [UUID] {
        var identifiers: [UUID] = []
        for reference in references {
            if let identity = try store.globalIdentity(of: reference) { identifiers.append(identity.identifier) }
        }
        return identifiers
    }

    /// Sets the references earlier pages kept aside whose destinations are known now (all of
    /// them on the last page); returns the state keys to remove.
    private func resolvePending(
        isLastPage: Bool, rows: inout PendingRows, local: inout LocalIdentities, in store: isolated any SyncableStore,
        deletedRows: [RowReference: Int64], skipping written: [String: String]
    ) throws -> [String] {
        var resolved: [String] = []
        for (key, value) in try store.syncStates(withPrefix: StateKey.pendingPrefix).sorted(by: { $0.key < $1.key })
        where written[key] == nil {
            let parts = key.dropFirst(StateKey.pendingPrefix.count).split(separator: "/", maxSplits: 1).map(String.init)
            guard parts.count == 2, let object = UUID(uuidString: parts[0]) else {
                resolved.append(key)
                continue
            }
            var targets: [RowReference] = []
            var isComplete = true
            for destination in value.split(separator: ",").compactMap({ UUID(uuidString: String($0)) }) {
                if let target = try local.reference(of: destination, in: store) {
                    if deletedRows[target] == nil { targets.append(target) }
                } else if !local.isDeleted(destination) {
                    isComplete = false
                }
            }
            guard isComplete || isLastPage else { continue }
            resolved.append(key)
            guard let reference = try local.reference(of: object, in: store), deletedRows[reference] == nil,
                let relationship = store.model.allRelationships(of: reference.entityName).first(where: {
                    $0.name == parts[1]
                })
            else { continue }
            var row: StoreRow
            if let known = rows.row(for: reference) {
                row = known
            } else if let stored = try store.rows(for: [reference]).first {
                row = stored
            } else {
                continue
            }
            if relationship.isToMany, let inverse = inverseToOne(of: relationship) {
                // One-to-many: the listed order, among the objects whose to-one points here now.
                var members: [RowReference] = []
                for target in targets {
                    let memberRow: StoreRow? =
                        if let known = rows.row(for: target) { known } else {
                            try store.rows(for: [target]).first
                        }
                    if memberRow?.toOne[inverse] == reference { members.append(target) }
                }
                let others = (row.toMany[relationship.name] ?? []).filter { !members.contains($0) }
                row.toMany[relationship.name] = members + others
            } else if relationship.isToMany {
                row.toMany[relationship.name] = targets
            } else {
                row.toOne[relationship.name] = targets.first
                // An owner this page rewrites lists its members itself: add this one.
                if let owner = targets.first, var ownerRow = rows.row(for: owner),
                    let inverse = relationship.inverseName,
                    ownerRow.toMany[inverse].map({ !$0.contains(reference) }) ?? false
                {
                    ownerRow.toMany[inverse, default: []].append(reference)
                    rows.set(ownerRow, isNew: rows.isNew(owner))
                }
            }
            rows.set(row, isNew: rows.isNew(reference))
        }
        return resolved
    }
}

/// The rows a pull page writes, in the order first set.
struct PendingRows {
    private var rows: [RowReference: (row: StoreRow, isNew: Bool)] = [:]
    private var order: [RowReference] = []

    /// Sets a row (replacing an earlier version of it).
    mutating func set(_ row: StoreRow, isNew: Bool) {
        if rows[row.reference] == nil { order.append(row.reference) }
        rows[row.reference] = (row, isNew || (rows[row.reference]?.isNew ?? false))
    }

    /// The row set for a reference, if any.
    func row(for reference: RowReference) -> StoreRow? { rows[reference]?.row }

    /// Whether the row set for a reference is a new one.
    func isNew(_ reference: RowReference) -> Bool { rows[reference]?.isNew ?? false }

    /// Makes every one-to-many list of these rows agree with the to-one side of these rows: a
    /// row pointing at an owner is among its members, a row pointing elsewhere is not. (A row
    /// read from the store before the page is written lists its members as they were.)
    mutating func reconcileMembers(model: ManagedObjectModel, inverse: (RelationshipDescription) -> String?) {
        var pointing: [RowReference: [String: [RowReference]]] = [:]
        for reference in order {
            for (name, target) in rows[reference]?.row.toOne ?? [:] {
                pointing[target, default: [:]][name, default: []].append(reference)
            }
        }
        for reference in order {
            guard var entry = rows[reference] else { continue }
            var isChanged = false
            for relationship in model.allRelationships(of: reference.entityName) where relationship.isToMany {
                guard let name = inverse(relationship) else { continue }
                let entities = Set(
                    [relationship.destinationEntityName]
                        + model.allSubentities(of: relationship.destinationEntityName).map(\.name))
                let before = entry.row.toMany[relationship.name] ?? []
                var members = before.filter { member in
                    guard let row = rows[member]?.row else { return true }
                    return row.toOne[name] == reference
                }
                for member in pointing[reference]?[name] ?? []
                where entities.contains(member.entityName) && !members.contains(member) {
                    members.append(member)
                }
                if members != before {
                    entry.row.toMany[relationship.name] = members
                    isChanged = true
                }
            }
            if isChanged { rows[reference] = entry }
        }
    }

    /// The inserted and updated rows.
    func changes() -> (inserted: [StoreRow], updated: [StoreRow]) {
        let all = order.compactMap { rows[$0] }
        return (all.filter(\.isNew).map(\.row), all.filter { !$0.isNew }.map(\.row))
    }
}

/// What one pull page says about its objects, for one-to-many relationships.
struct PageStates {
    /// The page's live objects' to-one destinations: object → relationship → destination.
    let toOne: [UUID: [String: UUID?]]
    /// The page's live objects' entities.
    let entities: [UUID: String]
    /// The page's deleted objects.
    let deleted: Set<UUID>

    /// Indexes a page.
    init(_ batch: SyncPullBatch) {
        var toOne: [UUID: [String: UUID?]] = [:]
        var entities: [UUID: String] = [:]
        var deleted: Set<UUID> = []
        for state in batch.objects {
            if state.isDeleted {
                deleted.insert(state.object)
            } else {
                toOne[state.object] = state.toOne
                entities[state.object] = state.entity
            }
        }
        (self.toOne, self.entities, self.deleted) = (toOne, entities, deleted)
    }

    /// The members of an object's one-to-many relationship after the page: those whose to-one
    /// (`inverse`) points at it, where the page says so, else the current local members; in the
    /// server's listed order, then the others by identifier.
    func members(of owner: UUID, listed: [UUID], current: [UUID], inverse: String, entities memberEntities: Set<String>)
        -> [UUID]
    {
        let currentSet = Set(current)
        let extra = toOne.compactMap { object, relationships in
            relationships[inverse] == .some(owner) && memberEntities.contains(entities[object] ?? "") ? object : nil
        }
        var seen: Set<UUID> = []
        let candidates = (listed + (current + extra).sorted { $0.uuidString < $1.uuidString }).filter {
            seen.insert($0).inserted
        }
        return candidates.filter { member in
            if deleted.contains(member) { return false }
            if let relationships = toOne[member], memberEntities.contains(entities[member] ?? ""),
                let destination = relationships[inverse]
            {
                return destination == owner
            }
            return currentSet.contains(member)
        }
    }
}

/// The device's identifier-to-row map as a pull changes it, read through on demand.
struct LocalIdentities {
    /// Identifiers whose row is known (nil: none here) after this pull's changes.
    private var known: [UUID: RowReference?] = [:]
    /// Identifiers whose objects were deleted here.
    private var deleted: Set<UUID> = []

    /// The live row an identifier names here, if any.
    mutating func reference(of identifier: UUID, in store: isolated any SyncableStore) throws -> RowReference? {
        if let entry = known[identifier] { return entry }
        let identity = try store.globalIdentity(withIdentifier: identifier)
        if identity?.isDeleted == true { deleted.insert(identifier) }
        let reference = identity?.isDeleted == false ? identity?.reference : nil
        known[identifier] = .some(reference)
        return reference
    }

    /// Whether the identifier names an object deleted here (a delete is final).
    func isDeleted(_ identifier: UUID) -> Bool { deleted.contains(identifier) }

    /// Records a rename.
    mutating func rename(_ old: UUID, to new: UUID, reference: RowReference) {
        known[old] = .some(nil)
        known[new] = .some(reference)
    }

    /// Records that an identifier no longer names a row.
    mutating func forget(_ identifier: UUID) { known[identifier] = .some(nil) }

    /// Records a new row.
    mutating func insert(_ identifier: UUID, reference: RowReference) { known[identifier] = .some(reference) }
}
