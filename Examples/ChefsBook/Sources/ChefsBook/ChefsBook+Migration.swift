import Foundation
public import TernCore
public import TernMigration

extension ChefsBook {
    // MARK: - Mappings

    /// The explicit steps of the Chef's Book: 1 → 2 and 3 → 4 are custom; 2 → 3 is inferred.
    ///
    /// - Parameter model: The Chef's Book model (``model()``).
    /// - Returns: The two step mappings, bound to the model's versions.
    /// - Throws: `MigrationError` if a value expression does not parse (a bug).
    public static func mappings(for model: VersionedModel) throws -> [StepMapping] {
        let versions = model.versions.map(\.model)
        let splitIngredients = MappingModel(
            name: "SplitIngredients", source: versions[0], destination: versions[1],
            entityMappings: [
                EntityMapping(
                    name: "RecipeToRecipe", kind: .custom, source: "Recipe", destination: "Recipe",
                    policy: SplitIngredientsPolicy.name)
            ])
        let splitSteps = MappingModel(
            name: "SplitSteps", source: versions[2], destination: versions[3],
            entityMappings: [
                EntityMapping(
                    name: "RecipeToRecipe", kind: .custom, source: "Recipe", destination: "Recipe",
                    policy: SplitStepsPolicy.name),
                EntityMapping(
                    kind: .transform, source: "Ingredient", destination: "Ingredient",
                    attributes: [
                        PropertyMapping("name", try ValueExpression("$source.name")),
                        PropertyMapping("quantity", try ValueExpression("$source.quantity")),
                    ],
                    relationships: [
                        PropertyMapping(
                            "recipe", try ValueExpression(#"destinationInstances("RecipeToRecipe", $source.recipe)"#))
                    ]),
            ])
        return [
            StepMapping(from: versionNames[0], to: versionNames[1], passes: [splitIngredients]),
            StepMapping(from: versionNames[2], to: versionNames[3], passes: [splitSteps]),
        ]
    }

    /// The custom migration policies the mappings name.
    public static var policies: MigrationPolicyRegistry {
        var registry = MigrationPolicyRegistry()
        registry.register(SplitIngredientsPolicy(), named: SplitIngredientsPolicy.name)
        registry.register(SplitStepsPolicy(), named: SplitStepsPolicy.name)
        return registry
    }

    // MARK: - Text conversions

    /// Reads a version 1 time text as minutes: "45 mins", "1 hr 5 mins", "2 hours", "90".
    ///
    /// - Parameter text: The text.
    /// - Returns: The minutes, or nil when the text holds no number.
    /// - Complexity: O(*n*) in the length of the text.
    public static func minutes(fromText text: String) -> Int64? {
        var total: Int64 = 0
        var number: Int64?
        var sawNumber = false
        for word in text.lowercased().split(whereSeparator: { $0 == " " || $0 == "," }) {
            if let value = Int64(word) {
                if let pending = number { total += pending }
                number = value
                sawNumber = true
            } else if word.hasPrefix("h"), let value = number {
                total += value * 60
                number = nil
            } else if word.hasPrefix("m"), let value = number {
                total += value
                number = nil
            }
        }
        if let pending = number { total += pending }
        return sawNumber ? total : nil
    }

    /// The stable identifier of a recipe: its title in lower case, words joined by hyphens.
    ///
    /// - Parameter title: The recipe's title.
    /// - Returns: For example `"tomato-soup"` for `"Tomato Soup"`.
    public static func uid(forTitle title: String) -> String {
        title.lowercased().split(whereSeparator: { !$0.isLetter && !$0.isNumber }).joined(separator: "-")
    }

    /// The non-empty lines of a text block, trimmed.
    static func lines(of text: String?) -> [String] {
        (text ?? "").split(whereSeparator: \.isNewline)
            .map { $0.trimmingCharacters(in: .whitespaces) }
            .filter { !$0.isEmpty }
    }
}

/// Version 1 → 2: each recipe's ingredient lines ("flour: 200 g") become `Ingredient` objects, and
/// its time texts become integer minutes.
public struct SplitIngredientsPolicy: EntityMigrationPolicy {
    /// The name the mapping refers to.
    public static let name = "ChefsBook.SplitIngredients"

    /// Creates the policy.
    public init() {}

    /// Makes the version 2 recipe and its ingredients from a version 1 recipe.
    public func createDestinationInstances(
        forSource source: RowReference, mapping: EntityMapping, manager: any MigrationManager
    ) throws(MigrationError) {
        let recipe = try manager.insertDestinationInstance(ofEntity: "Recipe")
        for name in ["name", "servings", "method"] {
            try manager.setDestinationValue(try value(name, of: source, manager), forAttribute: name, of: recipe)
        }
        for name in ["preparationTime", "cookingTime"] {
            let minutes = try text(name, of: source, manager).flatMap(ChefsBook.minutes(fromText:)) ?? 0
            try manager.setDestinationValue(.integer(minutes), forAttribute: name, of: recipe)
        }
        var ingredients: [RowReference] = []
        for line in ChefsBook.lines(of: try text("ingredients", of: source, manager)) {
            let parts = line.split(separator: ":", maxSplits: 1).map { $0.trimmingCharacters(in: .whitespaces) }
            let ingredient = try manager.insertDestinationInstance(ofEntity: "Ingredient")
            try manager.setDestinationValue(.string(parts[0]), forAttribute: "name", of: ingredient)
            try manager.setDestinationValue(
                parts.count > 1 ? .string(parts[1]) : nil, forAttribute: "quantity", of: ingredient)
            ingredients.append(ingredient)
        }
        try manager.setDestinationRelationship("ingredients", of: recipe, to: ingredients)
        manager.associate(source: source, withDestination: recipe, mapping: mapping)
    }

    /// Nothing to do: the ingredients were related when they were made.
    public func createRelationships(
        forDestination destination: RowReference, mapping: EntityMapping, manager: any MigrationManager
    ) throws(MigrationError) {}
}

/// Version 3 → 4: each recipe's method lines become ordered `Step` objects; recipes without a
/// `uid` get one from their title.
public struct SplitStepsPolicy: EntityMigrationPolicy {
    /// The name the mapping refers to.
    public static let name = "ChefsBook.SplitSteps"

    /// Creates the policy.
    public init() {}

    /// Makes the version 4 recipe and its steps from a version 3 recipe.
    public func createDestinationInstances(
        forSource source: RowReference, mapping: EntityMapping, manager: any MigrationManager
    ) throws(MigrationError) {
        let recipe = try manager.insertDestinationInstance(ofEntity: "Recipe")
        for name in ["title", "servings", "preparationTime", "cookingTime"] {
            try manager.setDestinationValue(try value(name, of: source, manager), forAttribute: name, of: recipe)
        }
        let title = try text("title", of: source, manager) ?? ""
        let uid = try text("uid", of: source, manager) ?? ChefsBook.uid(forTitle: title)
        try manager.setDestinationValue(.string(uid), forAttribute: "uid", of: recipe)
        var steps: [RowReference] = []
        for line in ChefsBook.lines(of: try text("method", of: source, manager)) {
            let step = try manager.insertDestinationInstance(ofEntity: "Step")
            try manager.setDestinationValue(.string(line), forAttribute: "text", of: step)
            steps.append(step)
        }
        try manager.setDestinationRelationship("steps", of: recipe, to: steps)
        manager.associate(source: source, withDestination: recipe, mapping: mapping)
    }

    /// Nothing to do: the steps were related when they were made, and ingredients point back
    /// through their own mapping.
    public func createRelationships(
        forDestination destination: RowReference, mapping: EntityMapping, manager: any MigrationManager
    ) throws(MigrationError) {}
}

/// An attribute value of a source object.
private func value(_ name: String, of source: RowReference, _ manager: any MigrationManager) throws(MigrationError)
    -> AttributeValue?
{
    guard case .value(let value) = try manager.sourceValue(forKeyPath: [name], of: source) else { return nil }
    return value
}

/// A string attribute of a source object.
private func text(_ name: String, of source: RowReference, _ manager: any MigrationManager) throws(MigrationError)
    -> String?
{
    guard case .string(let text)? = try value(name, of: source, manager) else { return nil }
    return text
}
