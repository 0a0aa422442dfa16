public import Foundation
public import TernCore
import TernSQLite

extension ChefsBook {
    /// One line of the recipe table the walk-through ends with.
    public struct RecipeSummary: Sendable, Hashable {
        /// The recipe's title.
        public var title: String
        /// Its stable identifier.
        public var uid: String?
        /// How many ingredients it has.
        public var ingredientCount: Int
        /// How many steps it has.
        public var stepCount: Int
        /// Preparation plus cooking time, in minutes.
        public var totalMinutes: Int64
    }

    /// Creates a version 1 or version 2 store at `url` holding ``legacyRecipes``, as the first
    /// and second app releases would have: version 1 keeps times, ingredients and method as text;
    /// version 2 has `Ingredient` objects and times in minutes.
    ///
    /// - Parameters:
    ///   - url: Where to create the SQLite store; the folder must exist and the file must not.
    ///   - model: The Chef's Book model.
    ///   - version: 1 or 2.
    ///   - copies: How many times each legacy recipe is written (copies after the first get a
    ///     number in their name), to make stores of any size.
    /// - Throws: Store and validation errors.
    public static func createLegacyStore(at url: URL, model: VersionedModel, version: Int = 1, copies: Int = 1)
        async throws
    {
        precondition(version == 1 || version == 2, "legacy stores are of version 1 or 2")
        let versionModel = model.versions[version - 1].model
        let store = try SQLiteStore(at: url, model: versionModel)
        let coordinator = PersistentStoreCoordinator(model: versionModel)
        try await coordinator.addStore(store)
        let context = ObjectContext(coordinator: coordinator)
        try await context.perform { context in
            for copy in 1...max(1, copies) {
                for legacy in legacyRecipes {
                    let recipe = context.insert("Recipe")
                    recipe[attribute: "name"] = .string(copy == 1 ? legacy.name : "\(legacy.name) \(copy)")
                    recipe[attribute: "servings"] = .integer(legacy.servings)
                    recipe[attribute: "method"] = .string(legacy.method)
                    if version == 1 {
                        recipe[attribute: "preparationTime"] = .string(legacy.preparationTime)
                        recipe[attribute: "cookingTime"] = .string(legacy.cookingTime)
                        recipe[attribute: "ingredients"] = .string(legacy.ingredients)
                        continue
                    }
                    recipe[attribute: "preparationTime"] = .integer(minutes(fromText: legacy.preparationTime) ?? 0)
                    recipe[attribute: "cookingTime"] = .integer(minutes(fromText: legacy.cookingTime) ?? 0)
                    for line in lines(of: legacy.ingredients) {
                        let parts = line.split(separator: ":", maxSplits: 1).map {
                            $0.trimmingCharacters(in: .whitespaces)
                        }
                        let ingredient = context.insert("Ingredient")
                        ingredient[attribute: "name"] = .string(parts[0])
                        ingredient[attribute: "quantity"] = parts.count > 1 ? .string(parts[1]) : nil
                        recipe.add(ingredient, to: "ingredients")
                    }
                }
                if copy % 200 == 0 { try await context.save() }
            }
            try await context.save()
        }
    }

    /// Seeds ``starterRecipes`` into a version 4 store without duplicates: a recipe whose `uid`
    /// already exists is updated in place (its ingredients and steps are left as they are),
    /// the others are inserted with their ingredients and steps.
    ///
    /// Seeding twice, or seeding a store that already holds the same recipes (the second-device
    /// case), changes nothing the second time.
    ///
    /// - Parameters:
    ///   - url: A version 4 SQLite store.
    ///   - model: The Chef's Book model.
    /// - Returns: How many recipes were inserted and how many matched existing ones.
    /// - Throws: Store and validation errors; nothing is saved then.
    public static func seedStarterRecipes(into url: URL, model: VersionedModel) async throws -> (
        inserted: Int, matched: Int
    ) {
        let version = model.currentVersion.model
        let coordinator = PersistentStoreCoordinator(model: version)
        try await coordinator.addStore(try SQLiteStore(at: url, model: version))
        let context = ObjectContext(coordinator: coordinator)
        return try await context.perform { context in
            // On a conflict with a concurrent writer, the seeded values win property by property.
            context.mergePolicy = .objectTrumps
            let uids: [String?] = starterRecipes.map(\.uid)
            let existing = try await context.fetch(Recipe.fetchRequest(predicate: #Predicate { uids.contains($0.uid) }))
            var byUID: [String: Recipe] = [:]
            for recipe in existing {
                if let uid = recipe.uid { byUID[uid] = recipe }
            }
            var inserted = 0
            for starter in starterRecipes {
                let recipe: Recipe
                if let match = byUID[starter.uid] {
                    recipe = match
                } else {
                    recipe = context.insert(Recipe.self)
                    recipe.uid = starter.uid
                    for item in starter.ingredients {
                        let ingredient = context.insert(Ingredient.self)
                        ingredient.name = item.name
                        ingredient.quantity = item.quantity
                        recipe.addToIngredients(ingredient)
                    }
                    for (index, text) in starter.steps.enumerated() {
                        let step = context.insert(Step.self)
                        step.text = text
                        recipe.insertIntoSteps(step, at: index)
                    }
                    inserted += 1
                }
                // Setting a value equal to the current one changes nothing, so a second seeding
                // leaves the recipe unchanged.
                recipe.title = starter.title
                recipe.servings = Int16(starter.servings)
                recipe.preparationTime = Int32(starter.preparationTime)
                recipe.cookingTime = Int32(starter.cookingTime)
            }
            try await context.save()
            return (inserted, existing.count)
        }
    }

    /// The recipes of a version 4 store with their ingredient and step counts, sorted by title.
    ///
    /// - Parameters:
    ///   - url: A version 4 SQLite store.
    ///   - model: The Chef's Book model.
    /// - Returns: One summary per recipe.
    /// - Throws: Store errors.
    public static func summaries(ofStoreAt url: URL, model: VersionedModel) async throws -> [RecipeSummary] {
        let version = model.currentVersion.model
        let coordinator = PersistentStoreCoordinator(model: version)
        try await coordinator.addStore(
            try SQLiteStore(at: url, model: version, configuration: SQLiteConfiguration(isReadOnly: true)))
        return try await summaries(in: ObjectContext(coordinator: coordinator))
    }

    /// The recipes a context sees, with their ingredient and step counts, sorted by title.
    ///
    /// - Parameter context: A context on a version 4 store, such as a container's main context.
    /// - Returns: One summary per recipe.
    /// - Throws: Store errors.
    public static func summaries(in context: ObjectContext) async throws -> [RecipeSummary] {
        try await context.perform { context in
            // A lexical comparison, as the store sorts: Apple's Foundation would otherwise pick a
            // localized one for a String key path, which no store can run.
            let recipes = try await context.fetch(
                Recipe.fetchRequest(sortBy: [SortDescriptor(\.title, comparator: .lexical)]))
            return recipes.map { recipe in
                RecipeSummary(
                    title: recipe.title ?? "", uid: recipe.uid, ingredientCount: recipe.ingredients.count,
                    stepCount: recipe.steps.count,
                    totalMinutes: Int64(recipe.preparationTime) + Int64(recipe.cookingTime))
            }
        }
    }
}
