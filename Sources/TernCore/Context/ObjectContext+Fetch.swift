/// Fetching objects, IDs, dictionaries and counts.
extension ObjectContext {
    // MARK: - Fetching

    /// The objects matching a request, loaded, with their relationships' destinations prefetched.
    ///
    /// With ``FetchRequest/includesPendingChanges`` (the default), unsaved inserts, updates and
    /// deletes count: a deleted object is left out, an inserted one that matches is included.
    ///
    /// ```swift
    /// let recipes = try await context.fetch(FetchRequest(entityName: "Recipe"))
    /// ```
    ///
    /// - Parameter request: What to fetch.
    /// - Returns: The objects, in the requested order.
    /// - Throws: When a store cannot be read.
    /// - Complexity: One store read for the rows and one per level of prefetched relationships.
    public func fetch(_ request: FetchRequest) async throws -> [ManagedObject] {
        let objects = try await fetchObjects(request)
        try await prefetch(request, for: objects)
        return objects
    }

    /// The objects matching a request, as instances of a registered class.
    ///
    /// - Parameters:
    ///   - request: What to fetch.
    ///   - type: The class registered for the request's entity.
    /// - Returns: The objects; objects of another class are left out.
    /// - Throws: When a store cannot be read.
    public func fetch<T: ManagedObject>(_ request: FetchRequest, as type: T.Type) async throws -> [T] {
        try await fetch(request).compactMap { $0 as? T }
    }

    /// The IDs of the objects matching a request, without making objects when no unsaved change
    /// is involved.
    ///
    /// - Parameter request: What to fetch.
    /// - Returns: The IDs, in the requested order.
    /// - Throws: When a store cannot be read.
    public func fetchObjectIDs(_ request: FetchRequest) async throws -> [ObjectID] {
        if needsPendingChanges(request) { return try await fetchObjects(request).map(\.objectID) }
        return try await fetchStates(request.storeRequest).map(\.id)
    }

    /// The attribute values of the matching objects as saved, one dictionary per object.
    ///
    /// Unsaved changes are not seen, as in Core Data's dictionary fetches. Nil values are absent.
    ///
    /// - Parameter request: What to fetch; ``FetchRequest/propertiesToFetch`` names the attributes.
    /// - Returns: One dictionary per object, in the requested order.
    /// - Throws: When a store cannot be read.
    /// - Complexity: One store read; with one store, ``PersistentStore/fetchValues(_:)`` (SQLite
    ///   reads only the chosen columns).
    public func fetchDictionaries(_ request: FetchRequest) async throws -> [[String: AttributeValue]] {
        var storeRequest = request.storeRequest
        storeRequest.propertiesToFetch = request.propertiesToFetch
        let stores = coordinator.affectedStores(forEntity: request.entityName)
        if parent == nil, stores.count == 1 { return try await stores[0].fetchValues(storeRequest) }
        let dictionaries = try await fetchStates(storeRequest).map(\.attributes.dictionary)
        guard let wanted = request.propertiesToFetch.map(Set.init) else { return dictionaries }
        return dictionaries.map { AttributeValue.projecting($0, onto: wanted) }
    }

    /// How many objects a request matches.
    ///
    /// - Parameter request: What to count.
    /// - Returns: The number of objects, after offset and limit.
    /// - Throws: When a store cannot be read.
    public func count(for request: FetchRequest) async throws -> Int {
        if needsPendingChanges(request) { return try await fetchObjects(request).count }
        if let parent { return try await parent.countForChild(request.storeRequest) }
        var total = 0
        for store in coordinator.affectedStores(forEntity: request.entityName) {
            total += try await store.count(request.storeRequest)
        }
        return total
    }

    /// Walks the objects matching a request batch by batch, keeping at most two batches in memory.
    ///
    /// Each batch is one page read from the store (``PersistentStore/fetchPage(_:after:size:)``):
    /// its rows are turned into objects, handed to `body` and let go, so memory is bounded by the
    /// batch size, not by the number of matches. With the SQLite store, the next page is read
    /// while `body` handles the current one; what `body` throws still ends the walk with that
    /// error, and a failed read is reported after `body` returns. Unsaved changes are not seen: objects with
    /// unsaved changes are handed over with those changes, but what matches is what was saved.
    ///
    /// Pages follow each other by keyset pagination: a batch holds the objects that come after
    /// the last one of the previous batch in the request's order (sort descriptors, then primary
    /// key), as saved when the batch is read. So an object saved between batches is seen if it
    /// sorts after the current position, a deleted one is not seen any more, and an object whose
    /// sort keys change may be seen twice or not at all. With several stores, each store's
    /// objects come in order, one store after the other. In a child context the parent's
    /// matches are read at once, then handed over in batches.
    ///
    /// ```swift
    /// var request = FetchRequest(entityName: "Recipe")
    /// request.fetchBatchSize = 500
    /// try await context.forEachBatch(of: request) { recipes in
    ///     for recipe in recipes { total += recipe["servings"] ?? 0 }
    /// }
    /// ```
    ///
    /// - Parameters:
    ///   - request: What to fetch; ``FetchRequest/fetchBatchSize`` sets the batch size.
    ///   - body: Called once per non-empty batch, in order.
    /// - Throws: When a store cannot be read, what `body` throws, or `CancellationError` when the
    ///   task is cancelled (checked before each batch).
    /// - Complexity: One store read per batch, or per several batches smaller than about 4,096
    ///   rows; memory proportional to the larger of the batch size and that page.
    public func forEachBatch(of request: FetchRequest, _ body: ([ManagedObject]) throws -> Void) async throws {
        let size = request.fetchBatchSize > 0 ? request.fetchBatchSize : 100
        if let parent {
            let states = try await parent.statesForChild(request.storeRequest)
            for start in stride(from: 0, to: states.count, by: size) {
                try Task.checkCancellation()
                try deliverBatch(states[start..<min(start + size, states.count)], body)
            }
            return
        }
        for store in coordinator.affectedStores(forEntity: request.entityName) {
            var position: StoreFetchPosition?
            if let packed = store as? any PackedRowReading {
                guard let end = try await forEachPackedBatch(of: request.storeRequest, in: packed, size: size, body)
                else { continue }
                position = end
            }
            // The store's general path, or where the packed one stopped.
            while true {
                let page = try await store.fetchPage(request.storeRequest, after: position, size: size)
                position = page.next
                guard !page.rows.isEmpty else { break }
                try Task.checkCancellation()
                try deliverBatch(page.rows.lazy.map { self.state(of: $0, in: store.identifier) }, body)
                if position == nil { break }
            }
        }
    }

    // MARK: - Non public

    /// Walks a store's matches in packed pages, reading each page while `body` handles the
    /// batches of the previous one.
    ///
    /// Small batches share a page of about ``packedPageRows`` rows: each page read costs a trip
    /// to the store's executor and back, which would otherwise weigh as much as reading a
    /// thousand rows.
    ///
    /// - Returns: nil when every page was read; else where to go on with the store's general
    ///   path (the store declined a packed page).
    private func forEachPackedBatch(
        of request: StoreFetchRequest, in store: any PackedRowReading, size: Int,
        _ body: ([ManagedObject]) throws -> Void
    ) async throws -> StoreFetchPosition?? {
        let pageSize = size * max(1, Self.packedPageRows / size)
        guard var page = try await store.fetchPackedPage(request, after: nil, size: pageSize) else { return .some(nil) }
        // The batch before the current one: let go only once this batch's objects are made, so
        // that its memory is reused for them rather than handed back to the system and taken
        // again for each batch.
        var previous: [ManagedObject] = []
        while !page.rows.isEmpty {
            guard let position = page.next else {
                try deliverBatches(of: page.rows, size: size, in: store.identifier, after: &previous, body)
                return nil
            }
            // The next page is read on the store's executor meanwhile, one page ahead at most. A
            // detached task, so that the read starts at once: a child task would start on this
            // context's executor, busy until the batches are handed over.
            let ahead = Task.detached(priority: Task.currentPriority) {
                try await store.fetchPackedPage(request, after: position, size: pageSize)
            }
            do {
                try deliverBatches(of: page.rows, size: size, in: store.identifier, after: &previous, body)
            } catch {
                // As when the pages are read one after the other, `body`'s error wins; the read is
                // cancelled and awaited, so that nothing of the walk outlives it.
                ahead.cancel()
                _ = try? await ahead.value
                throw error
            }
            let next = try await withTaskCancellationHandler {
                try await ahead.value
            } onCancel: {
                ahead.cancel()
            }
            guard let next else { return .some(position) }
            page = next
        }
        return nil
    }

    /// About how many rows a packed page holds when batches are smaller: whole batches, at
    /// least one.
    static let packedPageRows = 4_096

    /// Hands the rows of a packed page to `body` in batches of `size`.
    private func deliverBatches(
        of rows: [PackedRow], size: Int, in storeIdentifier: String, after previous: inout [ManagedObject],
        _ body: ([ManagedObject]) throws -> Void
    ) throws {
        for start in stride(from: rows.startIndex, to: rows.endIndex, by: size) {
            try Task.checkCancellation()
            let batch = start..<min(start + size, rows.endIndex)
            try deliverBatch(packed: rows, batch, in: storeIdentifier, after: &previous, body)
        }
    }

    /// Makes the objects of a batch of packed store rows, `rows[batch]`, and hands them to
    /// `body`.
    ///
    /// `previous` holds the batch before, let go once this batch's objects are made; afterwards
    /// it holds this batch.
    private func deliverBatch(
        packed rows: [PackedRow], _ batch: Range<Int>, in storeIdentifier: String,
        after previous: inout [ManagedObject],
        _ body: ([ManagedObject]) throws -> Void
    ) throws {
        let graph = self.graph
        guard graph.canDeferFiling else {
            previous = []
            try deliverBatch(rows[batch], body) { row, _ in graph.adopt(self.state(of: row, in: storeIdentifier)) }
            return
        }
        var objects: [ManagedObject] = []
        objects.reserveCapacity(batch.count)
        // By index: each row is read in place (the page may be shared with the read that
        // returned it), never copied whole.
        for index in batch { objects.append(graph.pendingObject(for: rows, at: index, inStore: storeIdentifier)) }
        previous = []
        graph.deferFiling(objects)
        defer {
            endBatch(&objects, wasEmpty: true)
            previous = objects
        }
        try body(objects)
    }

    /// Makes the objects of a batch of states and hands them to `body`.
    private func deliverBatch(_ states: some Collection<ObjectState>, _ body: ([ManagedObject]) throws -> Void) throws {
        let graph = self.graph
        try deliverBatch(states, body) { state, lazily in lazily ? graph.pendingObject(for: state) : graph.adopt(state)
        }
    }

    /// Makes the objects of a batch of rows with `make` and hands them to `body`; the objects
    /// `body` lets go leave the registry as they go away.
    ///
    /// When the registry is empty, the objects are made without filing them (`make`'s second
    /// argument is true): the graph files them only if something looks the registry up or
    /// changes an object during `body`. When nothing did, only those still alive afterwards are
    /// filed, so a batch nobody kept never reaches the registry.
    private func deliverBatch<Rows: Collection>(
        _ rows: Rows, _ body: ([ManagedObject]) throws -> Void, make: (Rows.Element, Bool) -> ManagedObject
    ) throws {
        let lazily = graph.canDeferFiling
        var objects: [ManagedObject] = []
        objects.reserveCapacity(rows.count)
        for row in rows { objects.append(make(row, lazily)) }
        if lazily { graph.deferFiling(objects) }
        defer { endBatch(&objects, wasEmpty: lazily) }
        try body(objects)
    }

    /// Files the objects of a batch that stay alive, or drops the batch from the registry when
    /// nothing holds its objects any more.
    private func endBatch(_ objects: inout [ManagedObject], wasEmpty: Bool) {
        guard wasEmpty else { return }
        // Taking an element for writing copies the array when `body` kept it: then every object
        // has two owners and counts as kept.
        if graph.takePendingBatch() {
            for index in objects.indices where !isKnownUniquelyReferenced(&objects[index]) {
                graph.file(objects[index])
            }
            return
        }
        guard graph.registered.count == objects.count else { return }
        // The registry holds this batch's objects only. When nothing else holds them (`body`
        // kept none, nor the array), they all go now: the registry is emptied in one go
        // instead of one removal per object as each goes away.
        for index in objects.indices where !isKnownUniquelyReferenced(&objects[index]) { return }
        for object in objects { object.isUnregistered = true }
        graph.registered.removeAll(keepingCapacity: true)
    }

    /// Whether unsaved changes of the context can change the request's result.
    func needsPendingChanges(_ request: FetchRequest) -> Bool {
        guard request.includesPendingChanges else { return false }
        let kinds = request.includesSubentities ? graph.schema(for: request.entityName).kinds : [request.entityName]
        return graph.changed.values.contains { kinds.contains($0.schema.name) }
    }

    /// The objects matching a request, with pending changes applied, without prefetching.
    func fetchObjects(_ request: FetchRequest) async throws -> [ManagedObject] {
        let overlay = needsPendingChanges(request)
        var storeRequest = request.storeRequest
        if overlay {
            storeRequest.offset = 0
            storeRequest.limit = nil
        }
        var objects = try await fetchStates(storeRequest).map(materialize)
        guard overlay else { return objects }
        let kinds = request.includesSubentities ? graph.schema(for: request.entityName).kinds : [request.entityName]
        objects.removeAll { $0.isDeleted || ($0.isLoaded && $0.hasChanges) }
        let changed = graph.changed.values.filter {
            !$0.isDeleted && $0.isLoaded && $0.hasChanges && kinds.contains($0.schema.name)
        }
        objects += try changed.filter { try request.predicate?.evaluate(with: $0) ?? true }
            .sorted {
                ($0.objectID.primaryKey ?? .max, $0.objectID.description) < (
                    $1.objectID.primaryKey ?? .max, $1.objectID.description
                )
            }
        objects = try FetchSort.sorted(objects, by: request.sortDescriptors)
        let first = min(request.fetchOffset, objects.count)
        let last = request.fetchLimit.map { min(first + $0, objects.count) } ?? objects.count
        return Array(objects[first..<last])
    }

    /// The object for a state just read: made or refreshed from it unless it has changes.
    func materialize(_ state: ObjectState) -> ManagedObject {
        graph.rowCache[state.id] = state
        let object = graph.object(for: state.id)
        if !object.isLoaded || (!object.hasChanges && object.snapshot != state) {
            graph.fulfill(object, with: state)
        }
        return object
    }

    /// Loads the destinations of the prefetched relationships into the row cache.
    func prefetch(_ request: FetchRequest, for objects: [ManagedObject]) async throws {
        guard !objects.isEmpty else { return }
        let paths =
            request.relationshipKeyPathsForPrefetching
            ?? objects[0].schema.relationships.values.filter { !$0.isTransient }.map(\.name)
        for path in paths {
            var frontier = objects.filter(\.isLoaded).map(\.state)
            for name in path.split(separator: ".").map(String.init) {
                let ids = Set(frontier.flatMap { ($0.toMany[name] ?? []) + ($0.toOne[name].map { [$0] } ?? []) })
                let missing = ids.filter {
                    graph.rowCache[$0] == nil && !(graph.registeredObject(for: $0)?.isLoaded ?? false)
                }
                for state in try await loadStates(Array(missing)) { graph.rowCache[state.id] = state }
                frontier = ids.compactMap {
                    graph.registeredObject(for: $0).flatMap { $0.isLoaded ? $0.state : nil } ?? graph.rowCache[$0]
                }
            }
        }
    }

    /// Reads states from the parent context or the stores.
    func fetchStates(_ request: StoreFetchRequest) async throws -> [ObjectState] {
        if let parent { return try await parent.statesForChild(request) }
        let stores = coordinator.affectedStores(forEntity: request.entityName)
        if stores.count == 1 {
            if let packed = stores[0] as? any PackedRowReading, let rows = try await packed.fetchPacked(request) {
                return rows.map { state(of: $0, in: stores[0].identifier) }
            }
            return try await stores[0].fetch(request).map { state(of: $0, in: stores[0].identifier) }
        }
        var wide = request
        wide.offset = 0
        wide.limit = request.limit.map { $0 + request.offset }
        var states: [ObjectState] = []
        for store in stores {
            states += try await store.fetch(wide).map { state(of: $0, in: store.identifier) }
        }
        states = try FetchSort.sorted(states.map(StateValues.init), by: request.sortDescriptors).map(\.state)
        let first = min(request.offset, states.count)
        let last = request.limit.map { min(first + $0, states.count) } ?? states.count
        return Array(states[first..<last])
    }

    /// The state of a row read from a store.
    func state(of row: StoreRow, in storeIdentifier: String) -> ObjectState {
        let graph = self.graph
        return ObjectState(row: row, keys: graph.schema(for: row.reference.entityName).attributeKeys) {
            graph.objectID(of: $0, inStore: storeIdentifier)
        }
    }

    /// The state of a packed row read from a store.
    func state(of row: PackedRow, in storeIdentifier: String) -> ObjectState {
        let graph = self.graph
        return ObjectState(packed: row, keys: graph.schema(for: row.reference.entityName).attributeKeys) {
            graph.objectID(of: $0, inStore: storeIdentifier)
        }
    }

    /// Reads the states of objects by ID from the parent context or their stores.
    func loadStates(_ ids: [ObjectID]) async throws -> [ObjectState] {
        guard !ids.isEmpty else { return [] }
        if let parent { return try await parent.statesForChild(ids) }
        var byStore: [String: [RowReference]] = [:]
        for id in ids {
            if let store = id.storeIdentifier, let reference = id.rowReference {
                byStore[store, default: []].append(reference)
            }
        }
        var states: [ObjectState] = []
        for (identifier, references) in byStore {
            guard let store = coordinator.store(withIdentifier: identifier) else { continue }
            states += try await store.rows(for: references).map { state(of: $0, in: identifier) }
        }
        return states
    }

    // MARK: - Serving child contexts

    func statesForChild(_ request: StoreFetchRequest) async throws -> [ObjectState] {
        var fetch = FetchRequest(
            entityName: request.entityName, predicate: request.predicate, sortDescriptors: request.sortDescriptors)
        fetch.includesSubentities = request.includesSubentities
        fetch.fetchOffset = request.offset
        fetch.fetchLimit = request.limit
        return try await fetchObjects(fetch).map(\.state)
    }

    func statesForChild(_ ids: [ObjectID]) async throws -> [ObjectState] {
        var unknown: [ObjectID] = []
        var states: [ObjectID: ObjectState] = [:]
        for id in ids {
            if let object = graph.registeredObject(for: id), object.isLoaded {
                if !object.isDeleted {
                    // Keep the ID the child asked with, which may be a temporary one saved since.
                    var state = object.state
                    state.id = id
                    states[id] = state
                }
            } else {
                unknown.append(id)
            }
        }
        let requested = Dictionary(unknown.map { (graph.canonical($0), $0) }) { first, _ in first }
        for var state in try await loadStates(Array(requested.keys)) {
            state.id = requested[state.id] ?? state.id
            states[state.id] = state
        }
        return ids.compactMap { states[$0] }
    }

    func countForChild(_ request: StoreFetchRequest) async throws -> Int {
        try await statesForChild(request).count
    }
}
