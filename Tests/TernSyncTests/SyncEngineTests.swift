import ChefsBook
import Foundation
import TernCore
import TernPostgreSQL
import TernSQLite
import TernSync
import TernTestSupport
import Testing

/// Device stores syncing through a real PostgreSQL server (a throwaway cluster, or `TERN_PG_URL`).
@Suite(.enabled(if: PostgreSQLTestServer.isAvailable, PostgreSQLTestServer.skipComment))
struct SyncEngineTests {
    /// One device: a Chef's Book store (version 4) and its engine.
    struct Device {
        let store: SQLiteStore
        let engine: SyncEngine

        /// A new device store, seeded with the starter recipes when asked.
        init(_ name: String, in directory: TemporaryDirectory, server: String, seeded: Bool, version: Int = 4) async throws {
            let chefsBook = try ChefsBook.model()
            let model = chefsBook.versions[version - 1].model
            let url = directory.url.appendingPathComponent("\(name).sqlite")
            _ = try SQLiteStore(at: url, model: model)
            if seeded { _ = try await ChefsBook.seedStarterRecipes(into: url, model: chefsBook) }
            store = try SQLiteStore(at: url, model: model, configuration: SyncEngine.storeConfiguration)
            engine = SyncEngine(store: store, server: try SyncServer(location: server))
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

        /// The recipe with a uid.
        static func recipe(_ uid: String, in context: isolated ObjectContext) async throws -> ManagedObject {
            let request = FetchRequest(
                entityName: "Recipe", predicate: try FetchPredicate("uid == %@", arguments: [.value(.string(uid))]))
            return try #require(try await context.fetch(request).first)
        }

        /// Every object by global identifier, relationships as identifiers: what every device must agree on.
        func contents() async throws -> [String: String] {
            var contents: [String: String] = [:]
            for entity in store.model.entities {
                for row in try await store.fetch(StoreFetchRequest(entityName: entity.name)) {
                    let identity = try #require(try await store.globalIdentity(of: row.reference))
                    var fields = row.attributes.sorted { $0.key < $1.key }.map { "\($0.key)=\($0.value)" }
                    for (name, target) in row.toOne.sorted(by: { $0.key < $1.key }) {
                        fields.append("\(name)->\(try await store.globalIdentity(of: target)?.identifier.uuidString ?? "?")")
                    }
                    for (name, targets) in row.toMany.sorted(by: { $0.key < $1.key }) {
                        var ids: [String] = []
                        for target in targets { ids.append(try await store.globalIdentity(of: target)?.identifier.uuidString ?? "?") }
                        let ordered = store.model.allRelationships(of: entity.name).first { $0.name == name }?.isOrdered ?? false
                        fields.append("\(name)->[\((ordered ? ids : ids.sorted()).joined(separator: ","))]")
                    }
                    contents[identity.identifier.uuidString] = entity.name + " " + fields.joined(separator: " ")
                }
            }
            return contents
        }

        /// How many objects of an entity the store holds.
        func count(_ entity: String) async throws -> Int {
            try await store.count(StoreFetchRequest(entityName: entity))
        }
    }

    /// Syncs every device twice over (so each sees the others' pushes), then checks they agree.
    func converge(_ devices: [Device]) async throws {
        for _ in 0..<2 {
            for device in devices { _ = try await device.engine.sync() }
        }
        let first = try await devices[0].contents()
        for device in devices.dropFirst() {
            #expect(try await device.contents() == first)
        }
    }

    @Test func seededDevicesMergeWithoutDuplicates() async throws {
        let directory = try TemporaryDirectory()
        let server = try PostgreSQLTestServer.freshStoreURL(prefix: "sync")
        let a = try await Device("a", in: directory, server: server, seeded: true)
        let starterRecipes = try await a.count("Recipe")
        let starterIngredients = try await a.count("Ingredient")
        let starterSteps = try await a.count("Step")
        #expect(starterRecipes > 0)
        try await a.edit { context in
            let recipe = context.insert("Recipe")
            recipe[attribute: "uid"] = .string("A-1")
            recipe[attribute: "title"] = .string("Pancakes")
            let ingredient = context.insert("Ingredient")
            ingredient[attribute: "name"] = .string("flour")
            recipe.add(ingredient, to: "ingredients")
        }
        let first = try await a.engine.sync()
        #expect(first.pushedTransactions == 1)  // the initial state, taken after the edit
        let b = try await Device("b", in: directory, server: server, seeded: true)
        let summary = try await b.engine.sync()
        #expect(summary.mergedOnServer > 0)
        try await converge([a, b])
        #expect(try await b.count("Recipe") == starterRecipes + 1)
        #expect(try await b.count("Ingredient") == starterIngredients + 1)
        #expect(try await b.count("Step") == starterSteps)
        #expect(try await a.count("Recipe") == starterRecipes + 1)
    }

    @Test func concurrentEditsAndDeletesConverge() async throws {
        let directory = try TemporaryDirectory()
        let server = try PostgreSQLTestServer.freshStoreURL(prefix: "sync")
        let a = try await Device("a", in: directory, server: server, seeded: true)
        let b = try await Device("b", in: directory, server: server, seeded: true)
        let c = try await Device("c", in: directory, server: server, seeded: false)
        try await converge([a, b, c])
        let recipes = try await c.count("Recipe")
        // Both edit the same recipe offline; B pushes last, so its title wins, and A's servings stay.
        try await a.edit { context in
            let recipe = try await Device.recipe("tomato-soup", in: context)
            recipe[attribute: "title"] = .string("Soup by A")
            recipe[attribute: "servings"] = .integer(9)
        }
        try await b.edit { context in
            let recipe = try await Device.recipe("tomato-soup", in: context)
            recipe[attribute: "title"] = .string("Soup by B")
        }
        _ = try await a.engine.sync()
        _ = try await b.engine.sync()
        try await converge([a, b, c])
        let title = try await c.store.fetch(
            StoreFetchRequest(entityName: "Recipe", predicate: try FetchPredicate("uid == 'tomato-soup'"))
        ).first?.attributes
        #expect(title?["title"] == .string("Soup by B"))
        #expect(title?["servings"] == .integer(9))
        // A delete on C (cascading to ingredients and steps) reaches every device.
        let ingredients = try await a.count("Ingredient")
        try await c.edit { context in
            context.delete(try await Device.recipe("lemon-tart", in: context))
        }
        try await converge([a, b, c])
        #expect(try await a.count("Recipe") == recipes - 1)
        #expect(try await b.count("Recipe") == recipes - 1)
        #expect(try await b.count("Ingredient") < ingredients)
    }

    @Test func rerunAfterInterruptedPushAndPullConverges() async throws {
        let directory = try TemporaryDirectory()
        let server = try PostgreSQLTestServer.freshStoreURL(prefix: "sync")
        let a = try await Device("a", in: directory, server: server, seeded: true)
        let b = try await Device("b", in: directory, server: server, seeded: false)
        _ = try await a.engine.sync()
        // A push whose token was never recorded (a kill after the server committed) is sent again: no-op.
        try await a.edit { context in
            try await Device.recipe("tomato-soup", in: context)[attribute: "servings"] = .integer(3)
        }
        let pushedBefore = try #require(try await a.store.syncState(forKey: "pushed"))
        _ = try await a.engine.push()
        try await a.store.setSyncState(["pushed": pushedBefore])
        let again = try await a.engine.push()
        #expect(again.pushedTransactions == 0)
        // A pull that is interrupted leaves nothing; here, one pull then a forgotten token: applying again is harmless.
        _ = try await b.engine.pull()
        try await b.store.setSyncState(["pulled": "0"])
        try await converge([a, b])
        #expect(try await b.count("Recipe") == a.count("Recipe"))
    }

    @Test func olderModelDeviceRefusesToPull() async throws {
        let directory = try TemporaryDirectory()
        let server = try PostgreSQLTestServer.freshStoreURL(prefix: "sync")
        let a = try await Device("a", in: directory, server: server, seeded: true)
        _ = try await a.engine.sync()
        let old = try await Device("old", in: directory, server: server, seeded: false, version: 3)
        let error = await #expect(throws: SyncError.self) { try await old.engine.sync() }
        #expect(error?.code == .unknownModelVersion)
        #expect(try await old.count("Recipe") == 0)
    }
}
