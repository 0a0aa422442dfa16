import ChefsBook
import Foundation
import TernContainer
import TernCore
import TernFormats
import TernMigration
import TernSQLite
import TernStores
import TernTestSupport
import Testing

/// The README's Swift example, run as written (with the Chef's Book model as `Recipes`).
@Suite struct ReadmeExampleTests {
    @Test func swiftTourRunsAsWritten() async throws {
        let folder = try TemporaryDirectory()
        // An old store, so that the example's migration has work to do.
        try await ChefsBook.createLegacyStore(at: folder.path("Recipes.sqlite"), model: try ChefsBook.model())
        let (titles, sameTitles) = try await Self.tour(in: folder.url)
        #expect(titles == ["Tomato Soup", "Tomato Soup"])
        #expect(sameTitles == [.string("Tomato Soup"), .string("Tomato Soup")])
    }

    /// The README's code, with paths inside `folder` (the Chef's Book's generated code as the
    /// app's: `RecipesModel` is `ChefsBookModel`).
    static func tour(in folder: URL) async throws -> ([String?], [AttributeValue?]) {
        typealias RecipesModel = ChefsBookModel
        // The app's target holds Recipes.xcdatamodeld and uses Tern's build plugin, which turns it into
        // Swift at build time, as Xcode's code generation does: the classes Recipe, Ingredient and Step,
        // and RecipesModel, which embeds every version of the model.
        let recipes = RecipesModel.versioned

        // A store written by any earlier version of the app: migrate it first (a no-op when current).
        let url = folder.appendingPathComponent("Recipes.sqlite")
        if FileManager.default.fileExists(atPath: url.path) {
            try await StoreMigrator().migrateStore(
                at: .file(url), model: recipes, mappings: try ChefsBook.mappings(for: recipes),
                options: MigrationOptions(policies: ChefsBook.policies))
        }

        // A coordinator over a SQLite store in Core Data's layout, and a context on its own executor.
        let model = recipes.currentVersion.model
        let coordinator = PersistentStoreCoordinator(model: model)
        try await coordinator.addStore(try SQLiteStore(at: url, model: model))
        let context = ObjectContext(coordinator: coordinator)

        let titles = try await context.perform { context in
            let soup = context.insert(Recipe.self)
            soup.title = "Tomato Soup"
            soup.uid = "tomato-soup-2"
            try await context.save()

            // A typed fetch: #Predicate and SortDescriptor, run in SQL like string predicates.
            let request = Recipe.fetchRequest(
                predicate: #Predicate { $0.title?.starts(with: "Tomato") == true },
                sortBy: [SortDescriptor(\.title, comparator: .lexical)])
            return try await context.fetch(request).map(\.title)  // [Recipe] → [String?]
        }

        // The string-keyed API stays, for tools and for models known only at run time.
        let sameTitles = try await context.perform { context in
            let request = FetchRequest(
                entityName: "Recipe", predicate: try FetchPredicate("title BEGINSWITH[c] %@", arguments: ["tomato"]),
                sortDescriptors: [FetchSort(key: "title")])
            return try await context.fetch(request).map { $0[attribute: "title"] }
        }
        return (titles, sameTitles)
    }

    @Test func containerTourRunsAsWritten() async throws {
        let folder = try TemporaryDirectory()
        let documents = folder.path("Documents")
        try FileManager.default.createDirectory(at: documents, withIntermediateDirectories: true)
        try await ChefsBook.createLegacyStore(
            at: documents.appendingPathComponent("Recipes.sqlite"), model: try ChefsBook.model())
        try ChefsBook.starterRecordsJSON().write(to: folder.path("StarterRecipes.json"))
        let (container, report) = try await Self.containerTour(home: folder.url, recipes: try ChefsBook.model())
        #expect(report == DeduplicationReport())
        #expect(!FileManager.default.fileExists(atPath: documents.appendingPathComponent("Recipes.sqlite").path))
        let titles = try await ChefsBook.summaries(in: container.mainContext).map(\.title)
        #expect(titles == ["Green Salad", "Lemon Tart", "Pancakes", "Slow Roast Lamb", "Toast", "Tomato Soup"])
    }

    /// The README's container code, with the app's home folder given.
    static func containerTour(home: URL, recipes: VersionedModel) async throws -> (
        PersistentContainer, DeduplicationReport
    ) {
        // Where the app keeps its store now, and where older versions left it, most likely first.
        var description = StoreDescription(
            url: home.appendingPathComponent("Library/Application Support/Recipes.sqlite"))
        description.legacyLocations = [home.appendingPathComponent("Documents/Recipes.sqlite")]
        description.migration = .automatic(mappings: try ChefsBook.mappings(for: recipes), policies: ChefsBook.policies)
        description.seed = .records(
            home.appendingPathComponent("StarterRecipes.json"), RecordImportOptions(format: .json))

        // Finds the store, moves a legacy one into place (crash-safely: a journal beside it), migrates
        // it, imports the starter records with upsert (no duplicates, however often it runs).
        let container = PersistentContainer(name: "Recipes", model: recipes, storeDescriptions: [description])
        let events = container.events()
        try await container.loadStores()
        for await event in events {
            print(event)  // foundLegacyStore, progress, migrated, movedStore, seeded, storeLoaded, ready
            if event == .ready { break }
        }

        // Background saves are merged into `container.mainContext` (on the main actor) as they happen.
        try await container.performBackgroundTask { context in
            let toast = context.insert("Recipe")
            toast[attribute: "title"] = .string("Toast")
            toast[attribute: "uid"] = .string("toast")
            try await context.save()
        }

        // Duplicates that a sync left: each group merged into its oldest object, relationships re-pointed.
        let report = try await container.removeDuplicates(of: "Recipe", uniqueBy: ["uid"], keeping: .oldest)
        return (container, report)
    }
}
