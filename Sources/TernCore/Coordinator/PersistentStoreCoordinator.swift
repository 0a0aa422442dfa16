public import Foundation
import Synchronization

/// Connects contexts to stores: one model, any number of stores. Core Data's
/// `NSPersistentStoreCoordinator`.
///
/// Each store is added under an optional configuration of the model: a store added with a
/// configuration holds that configuration's entities, one added without holds every entity.
/// New objects of an entity go to the first store that holds it; fetches read every store that
/// holds it (``affectedStores(forEntity:)``).
///
/// ```swift
/// let coordinator = PersistentStoreCoordinator(model: model)
/// try await coordinator.addStore(InMemoryStore(model: model))
/// let context = ObjectContext(coordinator: coordinator)
/// ```
///
/// ## Topics
///
/// ### Adding and removing stores
/// - ``addStore(_:configuration:versions:)``
/// - ``removeStore(_:)``
///
/// ### Finding stores
/// - ``stores``
/// - ``store(at:)``
/// - ``store(withIdentifier:)``
///
/// ### Routing entities
/// - ``store(forEntity:)``
/// - ``affectedStores(forEntity:)``
public final class PersistentStoreCoordinator: Sendable {
    /// The model of every object the coordinator hands out.
    public let model: ManagedObjectModel

    private let state = Mutex(State())

    /// Creates a coordinator without stores.
    ///
    /// - Parameter model: The model of the objects.
    public init(model: ManagedObjectModel) {
        self.model = model
    }

    // MARK: - Adding and removing stores

    /// Adds a store after checking that it was written with this coordinator's model.
    ///
    /// - Parameters:
    ///   - store: The store to add.
    ///   - configuration: The model configuration whose entities the store holds; nil for all.
    ///   - versions: The app's versioned model, used to name the version that wrote an
    ///     incompatible store.
    /// - Throws: ``TernError/Code/incompatibleStore`` when the store's version hashes do not
    ///   match the model (the message names the version that wrote it, when `versions` knows it);
    ///   ``TernError/Code/invalidModel`` when the configuration does not exist; any error of
    ///   reading the store's metadata.
    public func addStore(
        _ store: any PersistentStore, configuration: String? = nil, versions: VersionedModel? = nil
    ) async throws {
        if let configuration, !model.configurations.contains(where: { $0.name == configuration }) {
            throw TernError(.invalidModel, "the model has no configuration named \(configuration)")
        }
        let metadata = try await store.metadata()
        guard model.isCompatible(with: metadata) else {
            let writer = versions?.version(matching: metadata).map { "version \($0.name) of the model" }
            let place = store.location?.path ?? "store \(store.identifier)"
            throw TernError(
                .incompatibleStore,
                "the store at \(place) was written by \(writer ?? "no known version of the model"); migrate it first",
                path: store.location?.path)
        }
        state.withLock { state in
            if !state.entries.contains(where: { $0.store === store }) {
                state.entries.append(Entry(store: store, configuration: configuration))
            }
        }
    }

    /// Removes a store; contexts stop reading and writing it.
    ///
    /// - Parameter store: A store added before; other stores are ignored.
    public func removeStore(_ store: any PersistentStore) {
        state.withLock { $0.entries.removeAll { $0.store === store } }
    }

    // MARK: - Looking up stores

    /// The stores, in the order they were added.
    public var stores: [any PersistentStore] {
        state.withLock { $0.entries.map(\.store) }
    }

    /// The store whose file is at that location.
    ///
    /// - Parameter url: A store file.
    /// - Returns: The store, or nil when no added store has that file.
    public func store(at url: URL) -> (any PersistentStore)? {
        let path = url.standardizedFileURL.path
        return stores.first { $0.location?.standardizedFileURL.path == path }
    }

    /// The store with that UUID.
    ///
    /// - Parameter identifier: A store UUID.
    public func store(withIdentifier identifier: String) -> (any PersistentStore)? {
        stores.first { $0.identifier == identifier }
    }

    /// The configuration a store was added with.
    ///
    /// - Parameter store: An added store.
    /// - Returns: The configuration's name, or nil when the store holds every entity.
    public func configuration(of store: any PersistentStore) -> String? {
        state.withLock { $0.entries.first { $0.store === store }?.configuration }
    }

    /// The store that new objects of an entity go to: the first one that holds it.
    ///
    /// - Parameter entityName: An entity.
    /// - Returns: The store, or nil when no store holds the entity.
    public func store(forEntity entityName: String) -> (any PersistentStore)? {
        affectedStores(forEntity: entityName).first
    }

    /// The stores that may hold objects of an entity, in the order they were added.
    ///
    /// - Parameter entityName: An entity.
    /// - Returns: The stores added without a configuration or with one that lists the entity.
    public func affectedStores(forEntity entityName: String) -> [any PersistentStore] {
        let entries = state.withLock { $0.entries }
        return entries.filter { entry in
            guard let name = entry.configuration else { return true }
            return model.configurations.first { $0.name == name }?.entityNames.contains(entityName) ?? false
        }.map(\.store)
    }

    // MARK: - Non public

    struct Entry {
        let store: any PersistentStore
        let configuration: String?
    }

    struct Observer {
        weak var context: ObjectContext?
    }

    struct State {
        var entries: [Entry] = []
        var observers: [Observer] = []
    }

    /// Registers a context to hear about saves of other contexts.
    func addObserver(_ context: ObjectContext) {
        state.withLock { state in
            state.observers.removeAll { $0.context == nil }
            if !state.observers.contains(where: { $0.context === context }) {
                state.observers.append(Observer(context: context))
            }
        }
    }

    /// Hands a save's changes to every other registered context, waiting until each has merged.
    func broadcast(_ changes: ContextDidSave, from source: ObjectContext) async {
        let contexts = state.withLock { $0.observers.compactMap(\.context) }
        for context in contexts where context !== source {
            await context.mergeAutomatically(changes)
        }
    }
}
