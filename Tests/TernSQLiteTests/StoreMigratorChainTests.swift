import Foundation
import TernCore
import TernFormats
import TernMigration
import TernRelational
import TernTestSupport
import Testing

@testable import TernSQLite

/// Turns `minutes` (an integer) into text such as "25 min": the Swift policy of the v4 → v5 step.
struct MinutesAsText: EntityMigrationPolicy {
    func createDestinationInstances(
        forSource source: RowReference, mapping: EntityMapping, manager: any MigrationManager
    )
        throws(MigrationError)
    {
        try DefaultMigrationPolicy.createInstance(forSource: source, mapping: mapping, manager: manager)
        guard let destination = manager.destinationInstances(forMapping: mapping.name, sourceInstances: [source]).first,
            case .value(.integer(let minutes)?) = try manager.sourceValue(forKeyPath: ["minutes"], of: source)
        else { return }
        try manager.setDestinationValue(.string("\(minutes) min"), forAttribute: "minutes", of: destination)
    }
}

@Suite struct StoreMigratorChainTests {
    /// Five versions of a recipe model; v5 turns `minutes` into text, which needs the custom step.
    static func recipes() throws -> VersionedModel {
        try RecipeVersions.model(breaking: true)
    }

    static let customStep = #"""
        {"source": "v4", "destination": "v5", "passes": [{"name": "Only", "entityMappings": [
          {"name": "RecipeToRecipe", "kind": "custom", "source": "Recipe", "destination": "Recipe", "policy": "MinutesAsText",
           "attributes": {"heading": "$source.title", "servings": "$source.servings", "notes": "$source.notes"},
           "relationships": {"ingredients": "destinationInstances(\"IngredientToIngredient\", $source.ingredients)"}},
          {"name": "IngredientToIngredient", "kind": "copy", "source": "Ingredient", "destination": "Ingredient"}]}]}
        """#

    @Test(arguments: ["v1", "v2", "v3", "v4"])
    func migratesEveryOlderVersionToTheNewestInOneCall(version: String) async throws {
        let model = try Self.recipes()
        let directory = try TemporaryDirectory()
        let url = directory.path("Recipes.sqlite")
        try await MigrationStores.make(
            at: url, model: try #require(model.version(named: version)).model, rows: RecipeVersions.rows(for: version))
        var options = MigrationOptions(batchSize: 2)
        options.policies.register(MinutesAsText(), named: "MinutesAsText")
        let mapping = try StepMapping(jsonData: Data(Self.customStep.utf8))
        let report = try await SQLiteStoreMigrator().migrateStore(
            at: url, model: model, mappings: [mapping], options: options)
        let kinds = report.plan.steps.map { "\($0.from)→\($0.to):\($0.kind.rawValue)" }
        #expect(kinds == (version == "v4" ? [] : ["\(version)→v4:inferred"]) + ["v4→v5:mapping"])

        let v5 = model.versions[4].model
        #expect(v5.isCompatible(with: try SQLiteStore.metadata(at: url)))
        let recipes = try await MigrationStores.rows(of: "Recipe", at: url, model: v5)
        #expect(
            recipes.map { $0.attributes["heading"] } == [.string("Recipe 1"), .string("Recipe 2"), .string("Recipe 3")])
        #expect(recipes.map { $0.attributes["minutes"] } == [.string("10 min"), .string("20 min"), .string("30 min")])
        let servings: [AttributeValue?] =
            version >= "v3" ? [.integer(1), .integer(2), .integer(3)] : Array(repeating: .integer(2), count: 3)
        #expect(recipes.map { $0.attributes["servings"] } == servings)
        let notes: [AttributeValue?] =
            version >= "v4" ? [.string("note 1"), .string("note 2"), .string("note 3")] : [nil, nil, nil]
        #expect(recipes.map { $0.attributes["notes"] } == notes)
        let ingredients = try await MigrationStores.rows(of: "Ingredient", at: url, model: v5)
        #expect(ingredients.count == (version >= "v3" ? 6 : 0))
        // Each ingredient keeps its name, quantity and recipe; each recipe lists its two ingredients.
        for ingredient in ingredients {
            // Keys are renumbered; the name keeps the original key.
            guard case .string(let name)? = ingredient.attributes["name"], let key = Int(name.dropFirst()) else {
                Issue.record("an ingredient lost its name")
                continue
            }
            #expect(ingredient.attributes["quantity"] == (version >= "v4" ? .double(Double(key) / 2) : nil))
            let recipe = try #require(recipes.first { $0.reference == ingredient.toOne["recipe"] })
            #expect(recipe.attributes["heading"] == .string("Recipe \(key / 10)"))
            #expect(recipe.toMany["ingredients"]?.contains(ingredient.reference) == true)
        }
        #expect(recipes.allSatisfy { ($0.toMany["ingredients"]?.count ?? 0) == (version >= "v3" ? 2 : 0) })
        let names = version >= "v3" ? ["I11", "I12", "I21", "I22", "I31", "I32"] : []
        #expect(Set(ingredients.map { $0.attributes["name"] }) == Set(names.map { .string($0) }))
        let journal = MigrationJournal(metadata: try SQLiteStore.metadata(at: url))
        #expect(journal.entries.map { "\($0.from)→\($0.to)" } == report.plan.steps.map { "\($0.from)→\($0.to)" })
    }

    @Test func noticesAnEditedMappingThatAlreadyRan() async throws {
        let model = try Self.recipes()
        let directory = try TemporaryDirectory()
        let url = directory.path("Recipes.sqlite")
        try await MigrationStores.make(at: url, model: model.versions[3].model, rows: RecipeVersions.rows(for: "v4"))
        var options = MigrationOptions()
        options.policies.register(MinutesAsText(), named: "MinutesAsText")
        let mapping = try StepMapping(jsonData: Data(Self.customStep.utf8))
        try await SQLiteStoreMigrator().migrateStore(at: url, model: model, mappings: [mapping], options: options)
        // Put the journal on a fresh v4 store, as if the store had gone back, and edit the mapping.
        let journal = try SQLiteStore.metadata(at: url).applicationKeys[MigrationJournal.journalKey]
        let again = directory.path("Again.sqlite")
        try await MigrationStores.make(at: again, model: model.versions[3].model, rows: RecipeVersions.rows(for: "v4"))
        var metadata = try SQLiteStore.metadata(at: again)
        metadata.applicationKeys[MigrationJournal.journalKey] = journal
        try SQLiteStore.setMetadata(metadata, at: again)
        let edited = try StepMapping(
            jsonData: Data(
                Self.customStep.replacingOccurrences(of: "$source.notes", with: "uppercase($source.notes)").utf8))
        let report = try await SQLiteStoreMigrator().migrateStore(
            at: again, model: model, mappings: [edited], options: options)
        #expect(report.editedMappings == ["v4 → v5"])
        let untouched = try SQLiteStoreMigrator().plan(forStoreAt: url, model: model)
        #expect(untouched.isEmpty)
    }
}
