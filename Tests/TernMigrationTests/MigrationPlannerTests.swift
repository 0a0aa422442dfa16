import Foundation
import TernCore
import TernMigration
import TernTestSupport
import Testing

@Suite struct MigrationPlannerTests {
    /// Five versions of a recipe model; `breaking` makes v5 turn `minutes` into text, which cannot be inferred.
    static func recipes(breaking: Bool = false) throws -> VersionedModel {
        try RecipeVersions.model(breaking: breaking)
    }

    func hashes(_ model: VersionedModel, _ version: String) throws -> [String: Data] {
        try #require(model.version(named: version)).model.entityVersionHashes
    }

    @Test(arguments: ["v1", "v2", "v3", "v4"])
    func infersEveryOlderVersionStraightToTheNewest(version: String) throws {
        let model = try Self.recipes()
        let plan = try MigrationPlanner(model: model).plan(storeHashes: hashes(model, version))
        #expect(plan.source == version && plan.destination == "v5")
        #expect(plan.isExecutable)
        let step = try #require(plan.steps.first)
        #expect(plan.steps.count == 1)
        #expect(step.from == version && step.to == "v5" && step.kind == .inferred)
        let mapping = try #require(step.mappings.first)
        try mapping.validate(
            source: try #require(model.version(named: version)).model, destination: model.versions[4].model)
        let heading = mapping.entityMapping(named: "RecipeToRecipe")?.attributeMappings.first { $0.name == "heading" }
        #expect(heading?.valueExpression == .source(keyPath: [version == "v1" ? "name" : "title"]))
    }

    @Test func listsTheChangesOfAStep() throws {
        let model = try Self.recipes()
        let plan = try MigrationPlanner(model: model).plan(storeHashes: hashes(model, "v1"))
        let changes = try #require(plan.steps.first).changes.map(\.summary)
        #expect(changes.contains("rename attribute Recipe.name to heading"))
        #expect(changes.contains("change Recipe.minutes from Integer 16 to Integer 64"))
        #expect(changes.contains("add entity Ingredient"))
        #expect(changes.contains("add attribute Recipe.servings"))
        #expect(plan.description.hasPrefix("Migration from v1 to v5 in 1 step(s):\n  1. v1 → v5 (inferred)\n"))
    }

    @Test func leavesAStoreAtTheTargetAlone() throws {
        let model = try Self.recipes()
        let plan = try MigrationPlanner(model: model).plan(storeHashes: hashes(model, "v5"))
        #expect(plan.isEmpty && plan.source == "v5")
        #expect(plan.description == "The store is already at version v5; nothing to migrate.")
        let partial = try MigrationPlanner(model: model).plan(storeHashes: hashes(model, "v2"), to: "v3")
        #expect(partial.steps.map { "\($0.from)→\($0.to)" } == ["v2→v3"])
    }

    @Test func refusesToDowngrade() throws {
        let model = try Self.recipes()
        #expect {
            _ = try MigrationPlanner(model: model).plan(storeHashes: hashes(model, "v4"), to: "v2")
        } throws: { error in
            guard let error = error as? MigrationError, error.code == .downgradeRefused else { return false }
            return error.message.hasPrefix("The store was written by v4, which is newer than v2; Tern never downgrades")
        }
    }

    @Test func namesTheClosestVersionOfAnUnknownStore() throws {
        let model = try Self.recipes()
        var storeHashes = try hashes(model, "v3")
        storeHashes["Ingredient"] = Data(repeating: 1, count: 32)
        #expect {
            _ = try MigrationPlanner(model: model).plan(storeHashes: storeHashes)
        } throws: { error in
            guard let error = error as? MigrationError, error.code == .unknownSourceVersion else { return false }
            return error.versionName == "v3" && error.message.contains("the closest is v3, which differs in Ingredient")
        }
        #expect(throws: MigrationError.self) {
            try MigrationPlanner(model: model).plan(storeHashes: storeHashes, to: "v9")
        }
    }

    @Test func refusesTheDirectStepWithoutWalkingAGuessedOrder() throws {
        var model = try Self.recipes(breaking: true)
        model.hasExplicitOrder = false
        let plan = try MigrationPlanner(model: model).plan(storeHashes: hashes(model, "v1"))
        #expect(plan.steps.map { "\($0.from)→\($0.to)" } == ["v1→v5"])
        #expect(plan.steps.map(\.kind) == [.inferred])
        #expect(!plan.isExecutable)
        do {
            try plan.requireExecutable()
            Issue.record("the plan must not be executable")
        } catch {
            #expect(error.code == .notInferable)
            #expect(!error.failures.isEmpty)
            #expect(error.failures.allSatisfy { $0.versionName == "v1 → v5" })
            #expect(
                error.failures.contains { $0.entityName == "Recipe" && $0.message.contains("string($source.minutes)") })
        }
    }

    @Test func walksTheChainWhenTheDirectInferenceIsImpossibleInAnExplicitOrder() throws {
        let model = try Self.recipes(breaking: true)
        #expect(model.hasExplicitOrder)
        let plan = try MigrationPlanner(model: model).plan(storeHashes: hashes(model, "v1"))
        #expect(plan.steps.map { "\($0.from)→\($0.to)" } == ["v1→v2", "v2→v3", "v3→v4", "v4→v5"])
        #expect(plan.steps.map(\.kind) == [.inferred, .inferred, .inferred, .inferred])
        #expect(!plan.isExecutable)
        #expect(plan.steps.prefix(3).allSatisfy { $0.problems.isEmpty })
        do {
            try plan.requireExecutable()
            Issue.record("the plan must not be executable")
        } catch {
            #expect(error.code == .notInferable)
            let failure = try #require(error.failures.first)
            #expect(failure.versionName == "v4 → v5")
            #expect(failure.message.contains("integer") == false)
            #expect(failure.message.contains("string($source.minutes)"))
        }
    }

    @Test func usesARegisteredMappingAndInfersAroundIt() throws {
        let model = try Self.recipes(breaking: true)
        let v4 = model.versions[3].model
        let v5 = model.versions[4].model
        var inferred = MappingInference(from: v4, to: v5).mapping
        let index = try #require(inferred.entityMappings.firstIndex { $0.name == "RecipeToRecipe" })
        inferred.entityMappings[index].attributeMappings.append(
            PropertyMapping("minutes", try ValueExpression("concat(string($source.minutes), ' min')")))
        let step = StepMapping(from: "v4", to: "v5", passes: [inferred])
        let plan = try MigrationPlanner(model: model, mappings: [step]).plan(storeHashes: hashes(model, "v1"))
        #expect(plan.steps.map { "\($0.from)→\($0.to)" } == ["v1→v4", "v4→v5"])
        #expect(plan.steps.map(\.kind) == [.inferred, .mapping])
        #expect(plan.isExecutable)
        #expect(
            plan.steps[1].changes.map(\.summary).contains("pass Inferred: transform Recipe → Recipe (RecipeToRecipe)"))

        let fromV4 = try MigrationPlanner(model: model, mappings: [step]).plan(storeHashes: hashes(model, "v4"))
        #expect(fromV4.steps.map(\.kind) == [.mapping])

        // A mapping names the chain, so a guessed order walks it as well.
        var guessed = model
        guessed.hasExplicitOrder = false
        let walked = try MigrationPlanner(model: guessed, mappings: [step]).plan(storeHashes: hashes(model, "v1"))
        #expect(walked.steps.map { "\($0.from)→\($0.to)" } == ["v1→v4", "v4→v5"])
        #expect(walked.steps.map(\.kind) == [.inferred, .mapping])
        #expect(walked.isExecutable)
    }

    @Test func rejectsARegisteredMappingThatDoesNotFit() throws {
        let model = try Self.recipes()
        let broken = StepMapping(
            from: "v4", to: "v5",
            passes: [
                MappingModel(
                    name: "Broken",
                    entityMappings: [
                        EntityMapping(
                            kind: .transform, source: "Recipe", destination: "Recipe",
                            attributes: [PropertyMapping("heading", try ValueExpression("$source.titel"))])
                    ])
            ])
        #expect {
            _ = try MigrationPlanner(model: model, mappings: [broken]).plan(storeHashes: hashes(model, "v1"))
        } throws: { error in
            guard let error = error as? MigrationError, error.code == .invalidMapping else { return false }
            let failure = error.failures.first
            return failure?.mappingName == "RecipeToRecipe" && failure?.propertyName == "heading"
                && failure?.position == 0 && failure?.message.contains("Recipe has no property 'titel'") == true
        }
    }

    @Test func encodesThePlanAsTernPlanPrintsIt() throws {
        let model = try Self.recipes(breaking: true)
        let plan = try MigrationPlanner(model: model).plan(storeHashes: hashes(model, "v3"))
        let encoder = JSONEncoder()
        encoder.outputFormatting = [.sortedKeys]
        let data = try encoder.encode(plan)
        let object = try #require(try JSONSerialization.jsonObject(with: data) as? [String: Any])
        #expect(object["source"] as? String == "v3" && object["destination"] as? String == "v5")
        let steps = try #require(object["steps"] as? [[String: Any]])
        #expect(steps.map { $0["kind"] as? String } == ["inferred", "inferred"])
        #expect(Set(steps[0].keys) == ["from", "to", "kind", "changes", "problems", "warnings"])
        #expect((steps[0]["changes"] as? [String])?.contains("add attribute Recipe.notes") == true)
        #expect((steps[1]["problems"] as? [String])?.count == 1)
        let decoded = try JSONDecoder().decode(MigrationPlan.self, from: data)
        #expect(decoded.steps.map(\.changes.count) == plan.steps.map(\.changes.count))
        #expect(decoded.description == plan.description)
    }
}
