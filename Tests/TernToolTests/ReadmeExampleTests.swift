import ChefsBook
import Foundation
import TernCore
import TernFormats
import TernSQLite
import TernTestSupport
import Testing

/// The README's Swift example, run as written (with the Chef's Book model as `Recipes`).
@Suite struct ReadmeExampleTests {
    @Test func swiftTourRunsAsWritten() async throws {
        let folder = try TemporaryDirectory()
        try XcodeModel.write(try ChefsBook.model(), to: folder.path("Recipes.xcdatamodeld"))
        // An old store, so that the example's migration has work to do.
        try await ChefsBook.createLegacyStore(at: folder.path("Recipes.sqlite"), model: try ChefsBook.model())
        let titles = try await Self.tour(in: folder.url)
        #expect(titles == [.string("Tomato Soup"), .string("Tomato Soup")])
    }

    /// The README's code, with paths inside `folder`.
    static func tour(in folder: URL) async throws -> [AttributeValue?] {
        // An Xcode model bundle, every version of it, in migration order.
        let recipes = try XcodeModel.readVersionedModel(at: folder.appendingPathComponent("Recipes.xcdatamodeld"))

        // A store written by any earlier version of the app: migrate it first (a no-op when current).
        let url = folder.appendingPathComponent("Recipes.sqlite")
        if FileManager.default.fileExists(atPath: url.path) {
            try await StoreMigrator().migrateStore(
                at: url, model: recipes, mappings: try ChefsBook.mappings(for: recipes),
                options: MigrationOptions(policies: ChefsBook.policies))
        }

        // A coordinator over a SQLite store in Core Data's layout, and a context on its own executor.
        let model = recipes.currentVersion.model
        let coordinator = PersistentStoreCoordinator(model: model)
        try await coordinator.addStore(try SQLiteStore(at: url, model: model))
        let context = ObjectContext(coordinator: coordinator)

        return try await context.perform { context in
            let soup = context.insert("Recipe")
            soup[attribute: "title"] = .string("Tomato Soup")
            soup[attribute: "uid"] = .string("tomato-soup-2")
            try await context.save()

            let request = FetchRequest(
                entityName: "Recipe", predicate: try FetchPredicate("title BEGINSWITH[c] %@", arguments: ["tomato"]),
                sortDescriptors: [FetchSort(key: "title")])
            return try await context.fetch(request).map { $0[attribute: "title"] }
        }
    }
}
