import ChefsBook
import Foundation
import TernCore
import TernPostgreSQL
import TernSQLite
import TernSync
import TernTestSupport
import Testing

/// Device stores syncing through a real PostgreSQL server (a throwaway cluster, or `TERN_PG_URL`).
/// After every scenario all devices export identical data (`tern export --global-ids`).
@Suite(.enabled(if: PostgreSQLTestServer.isAvailable, PostgreSQLTestServer.skipComment))
struct SyncEngineTests {
    @Test func seededDevicesMergeWithoutDuplicates() async throws {
        let directory = try TemporaryDirectory()
        let server = try PostgreSQLTestServer.freshStoreURL(prefix: "sync")
        let a = try await SyncTestDevice("a", in: directory, server: server, seeded: true)
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
        #expect(first.pushedTransactions == 3)  // the initial state, taken after the edit: a page per entity
        // A edits a starter recipe; B, seeding later, must not bring the starter value back.
        try await a.edit { context in
            try await SyncTestDevice.recipe("tomato-soup", in: context)[attribute: "servings"] = .integer(12)
        }
        _ = try await a.engine.sync()
        let b = try await SyncTestDevice("b", in: directory, server: server, seeded: true)
        let summary = try await b.engine.sync()
        #expect(summary.mergedOnServer > 0)
        try await converge([a, b])
        #expect(try await b.count("Recipe") == starterRecipes + 1)
        #expect(try await b.count("Ingredient") == starterIngredients + 1)
        #expect(try await b.count("Step") == starterSteps)
        #expect(try await a.count("Recipe") == starterRecipes + 1)
        #expect(try await b.recipeValues("tomato-soup")["servings"] == .integer(12))
    }

    @Test func concurrentEditsAndDeletesConverge() async throws {
        let directory = try TemporaryDirectory()
        let server = try PostgreSQLTestServer.freshStoreURL(prefix: "sync")
        let a = try await SyncTestDevice("a", in: directory, server: server, seeded: true)
        let b = try await SyncTestDevice("b", in: directory, server: server, seeded: true)
        let c = try await SyncTestDevice("c", in: directory, server: server, seeded: false)
        try await converge([a, b, c])
        let recipes = try await c.count("Recipe")
        // Both edit the same recipe offline; B pushes last, so its title wins, and A's servings stay.
        try await a.edit { context in
            let recipe = try await SyncTestDevice.recipe("tomato-soup", in: context)
            recipe[attribute: "title"] = .string("Soup by A")
            recipe[attribute: "servings"] = .integer(9)
        }
        try await b.edit { context in
            let recipe = try await SyncTestDevice.recipe("tomato-soup", in: context)
            recipe[attribute: "title"] = .string("Soup by B")
        }
        _ = try await a.engine.sync()
        _ = try await b.engine.sync()
        try await converge([a, b, c])
        let soup = try await c.recipeValues("tomato-soup")
        #expect(soup["title"] == .string("Soup by B"))
        #expect(soup["servings"] == .integer(9))
        // A delete on C (cascading to ingredients and steps) reaches every device.
        let ingredients = try await a.count("Ingredient")
        try await c.edit { context in
            context.delete(try await SyncTestDevice.recipe("lemon-tart", in: context))
        }
        try await converge([a, b, c])
        #expect(try await a.count("Recipe") == recipes - 1)
        #expect(try await b.count("Recipe") == recipes - 1)
        #expect(try await b.count("Ingredient") < ingredients)
    }

    @Test func rerunAfterInterruptedPushAndPullConverges() async throws {
        let directory = try TemporaryDirectory()
        let server = try PostgreSQLTestServer.freshStoreURL(prefix: "sync")
        let a = try await SyncTestDevice("a", in: directory, server: server, seeded: true)
        let b = try await SyncTestDevice("b", in: directory, server: server, seeded: false)
        _ = try await a.engine.sync()
        // A push whose token was never recorded (a kill after the server committed) is sent again: no-op.
        try await a.edit { context in
            try await SyncTestDevice.recipe("tomato-soup", in: context)[attribute: "servings"] = .integer(3)
        }
        let pushedBefore = try #require(try await a.store.syncState(forKey: "pushed"))
        _ = try await a.engine.push()
        try await a.store.setSyncState(["pushed": pushedBefore])
        let again = try await a.engine.push()
        #expect(again.pushedTransactions == 0)
        // A pull whose cursor was forgotten applies the same state again: harmless.
        _ = try await b.engine.pull()
        try await b.store.setSyncState(["pulled": "0"])
        try await converge([a, b])
        #expect(try await b.count("Recipe") == a.count("Recipe"))
    }

    @Test func olderModelDeviceRefusesToPull() async throws {
        let directory = try TemporaryDirectory()
        let server = try PostgreSQLTestServer.freshStoreURL(prefix: "sync")
        let a = try await SyncTestDevice("a", in: directory, server: server, seeded: true)
        _ = try await a.engine.sync()
        let old = try await SyncTestDevice("old", in: directory, server: server, seeded: false, version: 3)
        let error = await #expect(throws: SyncError.self) { try await old.engine.sync() }
        #expect(error?.code == .unknownModelVersion)
        #expect(try await old.count("Recipe") == 0)
    }

    @Test func changesMadeOfflineMergeTheSameWayLater() async throws {
        let directory = try TemporaryDirectory()
        let server = try PostgreSQLTestServer.freshStoreURL(prefix: "sync")
        let a = try await SyncTestDevice("a", in: directory, server: server, seeded: true)
        let b = try await SyncTestDevice("b", in: directory, server: server, seeded: false)
        try await converge([a, b])
        // A goes offline and saves three times; B keeps syncing meanwhile.
        try await a.edit { context in
            try await SyncTestDevice.recipe("tomato-soup", in: context)[attribute: "title"] = .string("Offline soup")
        }
        try await a.edit { context in
            context.delete(try await SyncTestDevice.recipe("lemon-tart", in: context))
            let recipe = context.insert("Recipe")
            recipe[attribute: "uid"] = .string("offline-1")
            recipe[attribute: "title"] = .string("Written on a plane")
        }
        try await a.edit { context in
            try await SyncTestDevice.recipe("offline-1", in: context)[attribute: "servings"] = .integer(1)
        }
        try await b.edit { context in
            let soup = try await SyncTestDevice.recipe("tomato-soup", in: context)
            soup[attribute: "title"] = .string("Online soup")
            soup[attribute: "servings"] = .integer(6)
            try await SyncTestDevice.recipe("lemon-tart", in: context)[attribute: "title"] = .string("Tart, edited")
        }
        _ = try await b.engine.sync()
        // A comes back: its offline writes reach the server after B's, so they win property by
        // property; B's other property stays; A's delete is final although B edited the tart.
        let summary = try await a.engine.sync()
        #expect(summary.pushedTransactions == 3)
        try await converge([a, b])
        let soup = try await b.recipeValues("tomato-soup")
        #expect(soup["title"] == .string("Offline soup"))
        #expect(soup["servings"] == .integer(6))
        #expect(try await b.recipeValues("offline-1")["servings"] == .integer(1))
        let tart = try await b.store.count(
            StoreFetchRequest(entityName: "Recipe", predicate: try FetchPredicate("uid == 'lemon-tart'")))
        #expect(tart == 0)
    }

    @Test func theSameRecordCreatedOfflineOnTwoDevicesIsOneObject() async throws {
        let directory = try TemporaryDirectory()
        let server = try PostgreSQLTestServer.freshStoreURL(prefix: "sync")
        let a = try await SyncTestDevice("a", in: directory, server: server, seeded: false)
        let b = try await SyncTestDevice("b", in: directory, server: server, seeded: false)
        try await converge([a, b])
        for (device, title, ingredient) in [(a, "Crêpes (A)", "flour"), (b, "Crêpes (B)", "sugar")] {
            try await device.edit { context in
                let recipe = context.insert("Recipe")
                recipe[attribute: "uid"] = .string("crepes")
                recipe[attribute: "title"] = .string(title)
                let item = context.insert("Ingredient")
                item[attribute: "name"] = .string(ingredient)
                recipe.add(item, to: "ingredients")
                let shared = context.insert("Ingredient")
                shared[attribute: "name"] = .string("egg")
                recipe.add(shared, to: "ingredients")
            }
        }
        _ = try await a.engine.sync()
        let merged = try await b.engine.sync()
        #expect(merged.mergedOnServer == 2)  // the recipe by its uid, the egg by its content
        try await converge([a, b])
        #expect(try await a.count("Recipe") == 1)
        #expect(try await b.recipeValues("crepes")["title"] == .string("Crêpes (B)"))  // pushed last
        // One egg, and both devices' own ingredients, on the one recipe.
        #expect(try await a.count("Ingredient") == 3)
        let names = try await b.store.fetch(StoreFetchRequest(entityName: "Ingredient")).compactMap { row -> String? in
            guard case .string(let name)? = row.attributes["name"], row.toOne["recipe"] != nil else { return nil }
            return name
        }
        #expect(names.sorted() == ["egg", "flour", "sugar"])
    }

    @Test func firstPushAndPullsTravelInPages() async throws {
        let directory = try TemporaryDirectory()
        let server = try PostgreSQLTestServer.freshStoreURL(prefix: "sync")
        let a = try await SyncTestDevice("a", in: directory, server: server, seeded: true, pageSize: 4)
        try await a.addRecipes(15, prefix: "bulk", steps: 3)
        for index in 0..<6 {
            try await a.edit { context in
                try await SyncTestDevice.recipe("bulk-\(index)", in: context)[attribute: "servings"] = .integer(
                    Int64(index))
            }
        }
        let objects = try await a.count("Recipe") + a.count("Ingredient") + a.count("Step")
        let pushed = try await a.engine.push()
        // The snapshot in pages of 4 objects, then the 6 edits... which the snapshot already holds:
        // they come after the snapshot's token only if made later, so here the snapshot is all.
        #expect(pushed.pushedTransactions >= (objects + 3) / 4)
        let b = try await SyncTestDevice("b", in: directory, server: server, seeded: false, pageSize: 3)
        let pulled = try await b.engine.pull()
        #expect(pulled.pulledObjects == objects)
        #expect(try await b.count("Step") == a.count("Step"))
        // Later edits travel a few transactions per page.
        for index in 0..<7 {
            try await a.edit { context in
                try await SyncTestDevice.recipe("bulk-\(index)", in: context)[attribute: "title"] = .string(
                    "Paged \(index)")
            }
        }
        let later = try await a.engine.push()
        #expect(later.pushedTransactions == 7)
        try await converge([a, b])
        #expect(try await b.recipeValues("bulk-6")["title"] == .string("Paged 6"))
    }
}
