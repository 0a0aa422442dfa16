public import TernCore

/// Five versions of a recipe model for migration tests: v2 renames `name` to `title` and widens
/// `minutes`, v3 adds `servings` (required, default 2) and ingredients, v4 adds `notes`,
/// `quantity` and orders the ingredients, v5 renames `title` to `heading` and widens (or, when
/// breaking, turns into text) `minutes`.
///
/// ```swift
/// let recipes = try RecipeVersions.model()
/// ```
public enum RecipeVersions {
    /// The five versions.
    ///
    /// - Parameter breaking: Whether v5 turns `minutes` into text, which cannot be inferred.
    /// - Throws: `TernError` if the model is invalid.
    public static func model(breaking: Bool = false) throws -> VersionedModel {
        try VersionedModel("Recipes") {
            ModelVersion("v1") {
                Entity("Recipe") {
                    Attribute("name", .string)
                    Attribute("minutes", .integer16)
                }
            }
            ModelVersion("v2") {
                Entity("Recipe") {
                    Attribute("title", .string).renamed(from: "name")
                    Attribute("minutes", .integer32)
                }
            }
            ModelVersion("v3") {
                Entity("Recipe") {
                    Attribute("title", .string)
                    Attribute("minutes", .integer32)
                    Attribute("servings", .integer16).required().default(.integer(2))
                    Relationship("ingredients", to: "Ingredient", inverse: "recipe").toMany()
                }
                Entity("Ingredient") {
                    Attribute("name", .string)
                    Relationship("recipe", to: "Recipe", inverse: "ingredients")
                }
            }
            ModelVersion("v4") {
                Entity("Recipe") {
                    Attribute("title", .string)
                    Attribute("minutes", .integer32)
                    Attribute("servings", .integer16).required().default(.integer(2))
                    Attribute("notes", .string)
                    Relationship("ingredients", to: "Ingredient", inverse: "recipe").toMany(ordered: true)
                }
                Entity("Ingredient") {
                    Attribute("name", .string)
                    Attribute("quantity", .double)
                    Relationship("recipe", to: "Recipe", inverse: "ingredients")
                }
            }
            ModelVersion("v5") {
                Entity("Recipe") {
                    Attribute("heading", .string).renamed(from: "title")
                    Attribute("minutes", breaking ? .string : .integer64)
                    Attribute("servings", .integer16).required().default(.integer(2))
                    Attribute("notes", .string)
                    Relationship("ingredients", to: "Ingredient", inverse: "recipe").toMany(ordered: true)
                }
                Entity("Ingredient") {
                    Attribute("name", .string)
                    Attribute("quantity", .double)
                    Relationship("recipe", to: "Recipe", inverse: "ingredients")
                }
            }
        }
    }

    /// Three recipes in a version's shape, with two ingredients each from v3 on (listed in reverse key order).
    public static func rows(for version: String) -> [StoreRow] {
        let titleKey = version == "v1" ? "name" : "title"
        var rows: [StoreRow] = []
        for index in 1...3 {
            let recipe = RowReference(entityName: "Recipe", primaryKey: Int64(index))
            var attributes: [String: AttributeValue] = [
                titleKey: .string("Recipe \(index)"), "minutes": .integer(Int64(index * 10)),
            ]
            var toMany: [String: [RowReference]] = [:]
            if version >= "v3" {
                attributes["servings"] = .integer(Int64(index))
                let ingredients = [2, 1].map {
                    RowReference(entityName: "Ingredient", primaryKey: Int64(index * 10 + $0))
                }
                toMany["ingredients"] = ingredients
                for ingredient in ingredients {
                    var values: [String: AttributeValue] = ["name": .string("I\(ingredient.primaryKey)")]
                    if version >= "v4" { values["quantity"] = .double(Double(ingredient.primaryKey) / 2) }
                    rows.append(
                        StoreRow(reference: ingredient, version: 1, attributes: values, toOne: ["recipe": recipe]))
                }
            }
            if version >= "v4" { attributes["notes"] = .string("note \(index)") }
            rows.append(StoreRow(reference: recipe, version: 1, attributes: attributes, toMany: toMany))
        }
        return rows
    }
}
