import ChefsBook
import Foundation
import TernCore
import TernMigration
import TernSQLite
import TernStores
import TernSync
import TernTestSupport
import Testing

/// Synced stores migrated to the next model versions keep their objects' global identities and
/// sync state, and go on syncing without duplicates (a real PostgreSQL server).
@Suite(.enabled(if: PostgreSQLTestServer.isAvailable, PostgreSQLTestServer.skipComment))
struct SyncMigrationTests {
    /// The `_id`s of an export's records of an entity.
    static func identifiers(of entity: String, in export: String) -> Set<String> {
        var found: Set<String> = []
        for line in export.split(separator: "\n") where line.hasPrefix("{\"_id\":\"\(entity)/") {
            if let end = line.dropFirst(8).firstIndex(of: "\"") {
                found.insert(String(line[line.index(line.startIndex, offsetBy: 8)..<end]))
            }
        }
        return found
    }

    /// Migrates a store file to a version of the Chef's Book model.
    static func migrate(_ url: URL, to version: Int, strategy: MigrationStrategy) async throws {
        let model = try ChefsBook.model()
        try await StoreMigrator().migrateStore(
            at: .file(url), model: model, to: ChefsBook.versionNames[version - 1],
            mappings: try ChefsBook.mappings(for: model),
            options: MigrationOptions(policies: ChefsBook.policies, strategy: strategy))
    }

    @Test func migratedDevicesKeepTheirIdentitiesAndSyncWithoutDuplicates() async throws {
        let directory = try TemporaryDirectory()
        let server = try PostgreSQLTestServer.freshStoreURL(prefix: "sync")
        let chefsBook = try ChefsBook.model()
        let older = chefsBook.versions.map(\.model)
        let aURL = directory.url.appendingPathComponent("a.sqlite")
        let bURL = directory.url.appendingPathComponent("b.sqlite")
        try await ChefsBook.createLegacyStore(at: aURL, model: chefsBook, version: 2)
        _ = try SQLiteStore(at: bURL, model: older[1])
        let recipes: Set<String>
        let ingredients: Set<String>
        do {
            let a = try SyncTestDevice(opening: aURL, server: server)
            let b = try SyncTestDevice(opening: bURL, server: server)
            let export = try await converge([a, b])
            recipes = Self.identifiers(of: "Recipe", in: export)
            ingredients = Self.identifiers(of: "Ingredient", in: export)
            #expect(recipes.count == ChefsBook.legacyRecipes.count)
            #expect(!ingredients.isEmpty)
        }
        // A migrates in place to version 3 (inferred) and syncs; B, still on version 2, refuses to pull.
        try await Self.migrate(aURL, to: 3, strategy: .inPlace)
        do {
            let a = try SyncTestDevice(opening: aURL, server: server, olderModels: [older[1]])
            let export = try await a.export()
            #expect(Self.identifiers(of: "Recipe", in: export) == recipes)
            #expect(Self.identifiers(of: "Ingredient", in: export) == ingredients)
            try await a.edit { context in
                let recipe = try #require(try await context.fetch(FetchRequest(entityName: "Recipe")).first)
                recipe[attribute: "uid"] = .string("first-on-3")
            }
            _ = try await a.engine.sync()
            let b = try SyncTestDevice(opening: bURL, server: server)
            let error = await #expect(throws: SyncError.self) { try await b.engine.sync() }
            #expect(error?.code == .unknownModelVersion)
        }
        // B migrates too, rebuilt beside; both converge on the same objects.
        try await Self.migrate(bURL, to: 3, strategy: .rebuild)
        do {
            let a = try SyncTestDevice(opening: aURL, server: server, olderModels: [older[1]])
            let b = try SyncTestDevice(opening: bURL, server: server, olderModels: [older[1]])
            #expect(Self.identifiers(of: "Recipe", in: try await b.export()) == recipes)
            let export = try await converge([a, b])
            #expect(Self.identifiers(of: "Recipe", in: export) == recipes)
            #expect(Self.identifiers(of: "Ingredient", in: export) == ingredients)
            #expect(export.contains("\"uid\":\"first-on-3\""))
        }
        // Then both take the mapped step to version 4, which makes Step objects from each recipe's
        // method on each device: the server matches B's steps with A's by content.
        try await Self.migrate(aURL, to: 4, strategy: .automatic)
        try await Self.migrate(bURL, to: 4, strategy: .automatic)
        let a = try SyncTestDevice(opening: aURL, server: server, olderModels: [older[1], older[2]])
        let b = try SyncTestDevice(opening: bURL, server: server, olderModels: [older[1], older[2]])
        let stepsOnA = try await a.count("Step")
        #expect(stepsOnA > 0)
        let export = try await converge([a, b])
        #expect(Self.identifiers(of: "Recipe", in: export) == recipes)
        #expect(Self.identifiers(of: "Ingredient", in: export) == ingredients)
        #expect(try await b.count("Step") == stepsOnA)
        #expect(try await b.count("Recipe") == recipes.count)
    }
    /// Deletes a device saved but had not pushed when its store migrated travel through the
    /// migration (in place, rebuilt beside, mapped) and reach the other devices.
    @Test func deletesNotPushedBeforeAMigrationArePushedAfterIt() async throws {
        let directory = try TemporaryDirectory()
        let server = try PostgreSQLTestServer.freshStoreURL(prefix: "sync")
        let chefsBook = try ChefsBook.model()
        let older = chefsBook.versions.map(\.model)
        var urls: [URL] = []
        for name in ["a", "b", "c"] {
            let url = directory.url.appendingPathComponent("\(name).sqlite")
            try await ChefsBook.createLegacyStore(at: url, model: chefsBook, version: 2)
            urls.append(url)
        }
        func devices(_ olderModels: [ManagedObjectModel]) throws -> [SyncTestDevice] {
            try urls.map { try SyncTestDevice(opening: $0, server: server, olderModels: olderModels) }
        }
        // Version 4 calls a recipe's name its title.
        func nameKey(_ device: SyncTestDevice) -> String {
            device.store.model.allAttributes(of: "Recipe").contains { $0.name == "title" } ? "title" : "name"
        }
        func titles(on device: SyncTestDevice) async throws -> [String] {
            let key = nameKey(device)
            return try await device.store.fetch(StoreFetchRequest(entityName: "Recipe")).compactMap { row in
                if case .string(let title)? = row.attributes[key] { title } else { nil }
            }.sorted()
        }
        func deleteRecipe(_ index: Int, on device: SyncTestDevice) async throws -> String {
            let title = try #require(try await titles(on: device).dropFirst(index).first)
            let key = nameKey(device)
            try await device.edit { context in
                let request = FetchRequest(
                    entityName: "Recipe",
                    predicate: try FetchPredicate("\(key) == %@", arguments: [.value(.string(title))]))
                context.delete(try #require(try await context.fetch(request).first))
            }
            return title
        }
        var gone: [String] = []
        let recipes: Int
        do {
            let all = try devices([])
            try await converge(all)
            recipes = try await all[0].count("Recipe")
            // B deletes a recipe, then migrates in place before it syncs; C deletes another, then
            // migrates rebuilt beside.
            gone.append(try await deleteRecipe(0, on: all[1]))
            gone.append(try await deleteRecipe(1, on: all[2]))
        }
        try await Self.migrate(urls[0], to: 3, strategy: .inPlace)
        try await Self.migrate(urls[1], to: 3, strategy: .inPlace)
        try await Self.migrate(urls[2], to: 3, strategy: .rebuild)
        do {
            let all = try devices([older[1]])
            try await converge(all)
            for device in all {
                let left = try await titles(on: device)
                for title in gone { #expect(!left.contains(title), "\(title) came back") }
            }
            // A deletes one more, then every device takes the mapped step to version 4.
            gone.append(try await deleteRecipe(0, on: all[0]))
        }
        for url in urls { try await Self.migrate(url, to: 4, strategy: .automatic) }
        let all = try devices([older[1], older[2]])
        try await converge(all)
        for device in all {
            let left = try await titles(on: device)
            #expect(left.count == recipes - 3)
            for title in gone { #expect(!left.contains(title), "\(title) came back") }
        }
    }
}
