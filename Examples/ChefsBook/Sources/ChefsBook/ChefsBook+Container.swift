public import Foundation
public import TernContainer
public import TernCore

extension ChefsBook {
    // MARK: - Where the app kept its store

    /// The places the Chef's Book kept its store over the years, under a root folder (the app's
    /// home in the demo and the tests).
    public struct Locations: Sendable, Hashable {
        /// Where version 4 keeps the store: `Library/Application Support/Recipes.sqlite`.
        public var current: URL
        /// Where version 1 kept it: `Documents/Recipes.sqlite` (it showed up in iTunes file sharing).
        public var documents: URL
        /// Where version 2 kept it: `Library/Recipes.sqlite`.
        public var library: URL
        /// Where a version that shared its store with an extension kept it: an app-group container.
        public var appGroup: URL

        /// The legacy places, in order of preference.
        public var legacy: [URL] { [documents, library, appGroup] }

        /// The places under a root folder.
        ///
        /// - Parameter root: The app's home folder.
        public init(root: URL) {
            current = root.appendingPathComponent("Library/Application Support/Recipes.sqlite")
            documents = root.appendingPathComponent("Documents/Recipes.sqlite")
            library = root.appendingPathComponent("Library/Recipes.sqlite")
            appGroup = root.appendingPathComponent("Shared/AppGroup/group.com.example.chefsbook/Recipes.sqlite")
        }
    }

    /// The store description of version 4 of the app: the current and legacy places, the
    /// mappings and policies of the model's custom steps, and the starter data.
    ///
    /// ```swift
    /// let model = try ChefsBook.model()
    /// let description = try ChefsBook.storeDescription(in: home, model: model, seed: .records(starter, RecordImportOptions(format: .json)))
    /// let container = PersistentContainer(name: "ChefsBook", model: model, storeDescriptions: [description])
    /// try await container.loadStores()
    /// ```
    ///
    /// - Parameters:
    ///   - root: The app's home folder.
    ///   - model: The Chef's Book model.
    ///   - seed: The starter data, if any.
    /// - Returns: The description.
    /// - Throws: `MigrationError` if a mapping does not parse (a bug).
    public static func storeDescription(in root: URL, model: VersionedModel, seed: StoreDescription.Seed? = nil) throws
        -> StoreDescription
    {
        let locations = Locations(root: root)
        var description = StoreDescription(url: locations.current)
        description.legacyLocations = locations.legacy
        description.migration = .automatic(mappings: try mappings(for: model), policies: policies)
        description.seed = seed
        return description
    }

    // MARK: - Starter data as a record file

    /// ``starterRecipes`` as a JSON record file (`{"Recipe": [...]}` with nested ingredients and
    /// ordered steps), for seeding with ``TernContainer/StoreDescription/Seed/records(_:_:)``.
    ///
    /// - Returns: The file's contents.
    /// - Throws: `EncodingError` (never, for these values).
    public static func starterRecordsJSON() throws -> Data {
        struct File: Encodable {
            var recipes: [Record]
            enum CodingKeys: String, CodingKey { case recipes = "Recipe" }
        }
        struct Record: Encodable {
            var uid: String
            var title: String
            var servings: Int64
            var preparationTime: Int64
            var cookingTime: Int64
            var ingredients: [Ingredient]
            var steps: [Step]
        }
        struct Ingredient: Encodable {
            var name: String
            var quantity: String
        }
        struct Step: Encodable { var text: String }
        let file = File(
            recipes: starterRecipes.map { recipe in
                Record(
                    uid: recipe.uid, title: recipe.title, servings: recipe.servings,
                    preparationTime: recipe.preparationTime, cookingTime: recipe.cookingTime,
                    ingredients: recipe.ingredients.map { Ingredient(name: $0.name, quantity: $0.quantity) },
                    steps: recipe.steps.map { Step(text: $0) })
            })
        let encoder = JSONEncoder()
        encoder.outputFormatting = [.prettyPrinted, .sortedKeys]
        return try encoder.encode(file)
    }
}
