public import Foundation
import Synchronization
public import TernCore

/// The store life cycle of an app in one object: Core Data's `NSPersistentContainer`.
///
/// A container is made from a name, a versioned model and store descriptions. ``loadStores()``
/// finds each store (its current location, else its legacy locations in order of preference),
/// moves a legacy store into place crash-safely, migrates it to the current model version, adds
/// it to the coordinator and imports its starter data, off the caller's executor. Progress and
/// the outcome arrive as ``ContainerEvent``s through ``events()`` and as a
/// ``didLoadStoresNotification``, so that a user interface can refetch.
///
/// The ``mainContext`` runs on the main actor by default (pass `.private` on a server or in a
/// tool without a main run loop); it merges the saves of ``newBackgroundContext()`` contexts as
/// they happen, so its objects show them without a refetch.
///
/// ```swift
/// var description = StoreDescription(url: support.appendingPathComponent("Recipes.sqlite"))
/// description.legacyLocations = [documents.appendingPathComponent("Recipes.sqlite")]
/// let container = PersistentContainer(name: "Recipes", model: model, storeDescriptions: [description])
/// try await container.loadStores()
/// try await container.performBackgroundTask { context in
///     context.insert("Recipe")[attribute: "title"] = .string("Soup")
///     try await context.save()
/// }
/// ```
///
/// ## Topics
///
/// ### Loading
/// - ``loadStores()``
/// - ``events()``
/// - ``didLoadStoresNotification``
///
/// ### Contexts
/// - ``mainContext``
/// - ``newBackgroundContext()``
/// - ``performBackgroundTask(_:)``
///
/// ### Repairs
/// - ``removeDuplicates(of:uniqueBy:keeping:batchSize:)``
public final class PersistentContainer: Sendable {
    /// The container's name, used in messages and notifications.
    public let name: String
    /// The app's versioned model; stores are migrated to its current version.
    public let model: VersionedModel
    /// The stores, loaded in this order.
    public let storeDescriptions: [StoreDescription]
    /// The coordinator of every context of the container, with the current model version.
    public let coordinator: PersistentStoreCoordinator
    /// The context for user interface code; it merges background saves automatically.
    public let mainContext: ObjectContext

    private let listeners = Mutex<[UUID: AsyncStream<ContainerEvent>.Continuation]>([:])
    private let loadedStores = Mutex<[any PersistentStore]?>(nil)

    /// Creates a container; nothing is read until ``loadStores()``.
    ///
    /// - Parameters:
    ///   - name: The container's name.
    ///   - model: The app's versioned model.
    ///   - storeDescriptions: The stores to load.
    ///   - mainContextQueue: Where ``mainContext`` runs: `.main` (the main actor, the default, for
    ///     apps) or `.private` (its own executor, for servers and tools whose main thread does not
    ///     run the main actor's queue).
    public init(
        name: String, model: VersionedModel, storeDescriptions: [StoreDescription],
        mainContextQueue: ContextQueue = .main
    ) {
        self.name = name
        self.model = model
        self.storeDescriptions = storeDescriptions
        self.coordinator = PersistentStoreCoordinator(model: model.currentVersion.model)
        self.mainContext = ObjectContext(coordinator: coordinator, queue: mainContextQueue)
    }

    deinit {
        for continuation in listeners.withLock({ $0.values }) { continuation.finish() }
    }

    // MARK: - Loading

    /// Loads every store: finds, moves, migrates, opens and seeds it, then reports
    /// ``ContainerEvent/ready`` (or ``ContainerEvent/failed(store:message:)``) and posts
    /// ``didLoadStoresNotification``.
    ///
    /// For each description, in order:
    /// 1. A move that a crash interrupted is finished or undone (see ``ContainerEvent/recoveredInterruptedMove(from:to:completed:)``).
    /// 2. A store at the current location is used; a legacy store found too is reported as a
    ///    stray and left alone. Otherwise the first legacy store found is copied to the current
    ///    location, migrated there, and removed only once the copy is complete and on disk (a
    ///    legacy store that cannot be removed, say in a read-only folder, is kept and reported
    ///    once with ``ContainerEvent/legacyStoreNotRemoved(at:current:reason:)``).
    ///    With neither, a bundled seed store is copied.
    /// 3. The store is migrated to the current model version if needed (SQLite stores), opened
    ///    and added to the coordinator.
    /// 4. Starter records are imported, with upsert, when the seed file is new to the store.
    ///
    /// The work runs off the caller's executor, so calling it from the main actor does not block
    /// the UI. Once it has succeeded, calling it again returns the same stores (and reports
    /// ``ContainerEvent/ready`` again); call it once at a time.
    ///
    /// - Returns: The stores, in the order of ``storeDescriptions``.
    /// - Throws: The first error, after a ``ContainerEvent/failed(store:message:)`` event; stores
    ///   loaded before it stay added.
    /// - Complexity: O(*n*) in the size of stores that are moved, migrated or seeded; O(1) otherwise.
    @concurrent
    @discardableResult
    public func loadStores() async throws -> [any PersistentStore] {
        if let loaded = loadedStores.withLock({ $0 }) {
            // Loaded before: nothing to find or move; tell the caller again that the stores are ready.
            post(.ready)
            return loaded
        }
        await mainContext.setAutomaticallyMergesChanges(true)
        var stores: [any PersistentStore] = []
        for description in storeDescriptions {
            let loader = StoreLoader(
                description: description, model: model, coordinator: coordinator,
                emit: { [weak self] in self?.post($0) })
            do {
                stores.append(try await loader.load())
            } catch {
                let event = ContainerEvent.failed(store: description.url, message: "\(error)")
                post(event)
                notify(event)
                throw error
            }
        }
        loadedStores.withLock { $0 = stores }
        post(.ready)
        notify(.ready)
        return stores
    }

    /// The container's events from now on: moves, migrations, progress, seeding, and ``ContainerEvent/ready``.
    ///
    /// Subscribe before calling ``loadStores()`` to see every event.
    ///
    /// - Returns: A new stream; it ends when the container goes away.
    public func events() -> AsyncStream<ContainerEvent> {
        let (stream, continuation) = AsyncStream.makeStream(of: ContainerEvent.self)
        let key = UUID()
        listeners.withLock { $0[key] = continuation }
        continuation.onTermination = { [weak self] _ in
            _ = self?.listeners.withLock { $0.removeValue(forKey: key) }
        }
        return stream
    }

    /// Posted on `NotificationCenter.default` when ``loadStores()`` finishes, with the container
    /// as the object and the final event (``ContainerEvent/ready`` or
    /// ``ContainerEvent/failed(store:message:)``) under ``eventUserInfoKey``.
    public static let didLoadStoresNotification = Notification.Name("TernPersistentContainerDidLoadStores")

    /// The `userInfo` key of the ``ContainerEvent`` in a ``didLoadStoresNotification``.
    public static let eventUserInfoKey = "event"

    // MARK: - Contexts

    /// A new context on its own executor, for work off the main actor; its saves reach the
    /// stores and are merged into ``mainContext``.
    ///
    /// - Returns: The context.
    public func newBackgroundContext() -> ObjectContext {
        ObjectContext(coordinator: coordinator)
    }

    /// Runs code in a new background context.
    ///
    /// - Parameter body: The code; save inside it to keep its changes.
    /// - Returns: What `body` returns.
    /// - Throws: What `body` throws.
    public func performBackgroundTask<T: Sendable>(
        _ body: @Sendable (isolated ObjectContext) async throws -> T
    ) async throws -> T {
        try await newBackgroundContext().perform(body)
    }

    // MARK: - Non public

    private func post(_ event: ContainerEvent) {
        for continuation in listeners.withLock({ $0.values }) { continuation.yield(event) }
    }

    private func notify(_ event: ContainerEvent) {
        NotificationCenter.default.post(
            name: Self.didLoadStoresNotification, object: self, userInfo: [Self.eventUserInfoKey: event])
    }
}

extension ObjectContext {
    /// Sets ``automaticallyMergesChanges`` from outside the context.
    fileprivate func setAutomaticallyMergesChanges(_ value: Bool) {
        automaticallyMergesChanges = value
    }
}
