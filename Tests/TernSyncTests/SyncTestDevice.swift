import ChefsBook
import Foundation
import TernCore
import TernPostgreSQL
import TernSQLite
import TernSync
import TernTestSupport
import TernTool
import Testing

/// One device of a sync test: a Chef's Book store and its engine.
struct SyncTestDevice {
    let store: SQLiteStore
    let engine: SyncEngine

    /// A new device store (version 4 unless told), seeded with the starter recipes when asked.
    init(
        _ name: String, in directory: TemporaryDirectory, server: String, seeded: Bool, version: Int = 4,
        pageSize: Int = 500, resolver: SyncConflictResolver = .laterWriteWins
    ) async throws {
        let chefsBook = try ChefsBook.model()
        let model = chefsBook.versions[version - 1].model
        let url = directory.url.appendingPathComponent("\(name).sqlite")
        _ = try SQLiteStore(at: url, model: model)
        if seeded { _ = try await ChefsBook.seedStarterRecipes(into: url, model: chefsBook) }
        try self.init(opening: url, server: server, pageSize: pageSize, resolver: resolver)
    }

    /// An existing device store, opened for sync.
    init(
        opening url: URL, server: String, olderModels: [ManagedObjectModel] = [], pageSize: Int = 500,
        resolver: SyncConflictResolver = .laterWriteWins
    ) throws {
        store = try SQLiteStore(at: url, configuration: SyncEngine.storeConfiguration)
        engine = SyncEngine(
            store: store, server: try SyncServer(location: server), olderModels: olderModels,
            conflictResolver: resolver, pageSize: pageSize)
    }

    /// Runs `body` in a context on the device store and saves.
    func edit(_ body: @Sendable @escaping (isolated ObjectContext) async throws -> Void) async throws {
        let coordinator = PersistentStoreCoordinator(model: store.model)
        try await coordinator.addStore(store)
        let context = ObjectContext(coordinator: coordinator)
        try await context.perform { context in
            try await body(context)
            try await context.save()
        }
    }

    /// Inserts recipes (uid `<prefix>-<n>`) with some steps each, in one save.
    func addRecipes(_ count: Int, prefix: String, steps: Int = 2) async throws {
        try await edit { context in
            for index in 0..<count {
                let recipe = context.insert("Recipe")
                recipe[attribute: "uid"] = .string("\(prefix)-\(index)")
                recipe[attribute: "title"] = .string("\(prefix) \(index)")
                for step in 0..<steps {
                    let item = context.insert("Step")
                    item[attribute: "text"] = .string("step \(step) of \(index)")
                    recipe.add(item, to: "steps")
                }
            }
        }
    }

    /// The recipe with a uid.
    static func recipe(_ uid: String, in context: isolated ObjectContext) async throws -> ManagedObject {
        let request = FetchRequest(
            entityName: "Recipe", predicate: try FetchPredicate("uid == %@", arguments: [.value(.string(uid))]))
        return try #require(try await context.fetch(request).first)
    }

    /// A recipe's stored values.
    func recipeValues(_ uid: String) async throws -> [String: AttributeValue] {
        let request = StoreFetchRequest(
            entityName: "Recipe", predicate: try FetchPredicate("uid == %@", arguments: [.value(.string(uid))]))
        return try #require(try await store.fetch(request).first).attributes
    }

    /// `tern export --global-ids` of the store: what every device must agree on, byte for byte.
    func export() async throws -> String {
        let output = CapturedOutput()
        let status = await Tern.run(
            ["export", store.url.path, "--global-ids", "--quiet"], environment: ToolEnvironment(output: output))
        try #require(status == 0, "tern export failed: \(output.standardError)")
        return output.standardOutput
    }

    /// How many objects of an entity the store holds.
    func count(_ entity: String) async throws -> Int {
        try await store.count(StoreFetchRequest(entityName: entity))
    }
}

/// Syncs every device twice over (so each sees the others' pushes), then checks that they all
/// export identical data (keyed by global identifier); returns that export.
@discardableResult
func converge(_ devices: [SyncTestDevice]) async throws -> String {
    for _ in 0..<2 {
        for device in devices { _ = try await device.engine.sync() }
    }
    let first = try await devices[0].export()
    #expect(first.contains("\"Recipe\": ["))
    for device in devices.dropFirst() {
        let other = try await device.export()
        #expect(
            other == first,
            "\(device.store.url.lastPathComponent) exports other data than \(devices[0].store.url.lastPathComponent)")
    }
    return first
}
