import Foundation
import TernCore
import Testing

@Suite struct ModelBuilderTests {
    @Test func buildsTheRecipeExample() throws {
        let model = try ManagedObjectModel {
            Entity("Recipe") {
                Attribute("title", .string).required()
                Attribute("servings", .integer16).default(.integer(2)).range(1...100)
                Relationship("ingredients", to: "Ingredient", inverse: "recipe").toMany().cascade()
                Unique("title")
            }
            Entity("Ingredient") {
                Attribute("name", .string)
                Relationship("recipe", to: "Recipe", inverse: "ingredients")
            }
        }
        #expect(model.entities.map(\.name) == ["Ingredient", "Recipe"])
        let recipe = try #require(model.entity(named: "Recipe"))
        #expect(recipe.attributes.map(\.name) == ["servings", "title"])
        #expect(recipe.attribute(named: "title")?.isOptional == false)
        let servings = try #require(recipe.attribute(named: "servings"))
        #expect(servings.defaultValue == .integer(2))
        #expect(servings.minimum == .integer(1) && servings.maximum == .integer(100))
        let ingredients = try #require(recipe.relationship(named: "ingredients"))
        #expect(ingredients.isToMany && ingredients.maxCount == 0 && ingredients.deleteRule == .cascade)
        #expect(recipe.uniquenessConstraints == [["title"]])
        let back = try #require(model.relationship(named: "recipe", inEntity: "Ingredient"))
        #expect(!back.isToMany && back.maxCount == 1 && back.deleteRule == .nullify && back.isOptional)
    }

    @Test func buildsTheSampleModelExactly() throws {
        let model = try ManagedObjectModel(versionIdentifiers: ["1"]) {
            Entity("Car") {
                Attribute("color", .transformable).transformed(by: "ColorTransformer", valueClassName: "Color")
                Attribute("currentDrivingSpeed", .integer64).transient().default(.integer(0))
                Attribute("maker", .string)
                Attribute("markedForDeletionAsOf", .date)
                Attribute("model", .string)
                Attribute("numberPlate", .string).required()
                Relationship("owner", to: "Person", inverse: "cars")
                Unique("numberPlate")
            }
            Entity("ExpensiveSportCar", parent: "SportCar") {
                Attribute("isLimitedEdition", .boolean).default(.bool(false))
            }
            Entity("Person") {
                Attribute("firstName", .string)
                Attribute("id", .uuid).required().preservedAfterDeletion()
                Attribute("isDriving", .boolean).required().transient().default(.bool(false))
                Attribute("lastName", .string)
                Attribute("updatedAt", .date).required()
                Relationship("cars", to: "Car", inverse: "owner").toMany()
                Unique("firstName", "lastName")
            }
            Entity("SportCar", parent: "Car")
        }
        #expect(model == FixtureModels.sampleModelV1)
        #expect(model.entityVersionHashes == FixtureModels.sampleModelV1.entityVersionHashes)
    }

    @Test func supportsConditionsLoopsAndModelMembers() throws {
        let withTimestamps = true
        let model = try ManagedObjectModel {
            Entity("Note") {
                Attribute("text", .string)
                if withTimestamps {
                    Attribute("created", .date)
                } else {
                    Attribute("legacy", .string)
                }
                for index in 1...3 {
                    Attribute("tag\(index)", .string)
                }
                FetchedProperty("siblings", fetching: "Note", where: "text == $FETCH_SOURCE.text")
                FetchIndex("byText", on: "text", "created")
            }
            Entity("Base").abstract()
            Configuration("Cloud", entities: "Note")
            FetchRequestTemplate(name: "all", entityName: "Note")
        }
        let note = try #require(model.entity(named: "Note"))
        #expect(note.attributes.map(\.name) == ["created", "tag1", "tag2", "tag3", "text"])
        #expect(note.fetchedProperties.map(\.name) == ["siblings"])
        #expect(note.fetchIndexes.first?.elements.map(\.property) == ["text", "created"])
        #expect(model.entity(named: "Base")?.isAbstract == true)
        #expect(model.configurations == [Configuration(name: "Cloud", entityNames: ["Note"])])
        #expect(model.fetchRequestTemplates.map(\.name) == ["all"])
    }

    @Test func modifiersSetTheirFields() {
        let attribute = Attribute("photo", .binary).externalStorage().indexed().renamed(from: "image")
            .versionHashModifier("2").userInfo("key", "value").range(0...1_000)
        #expect(attribute.allowsExternalBinaryDataStorage && attribute.isIndexed)
        #expect(attribute.renamingIdentifier == "image" && attribute.versionHashModifier == "2")
        #expect(attribute.userInfo == ["key": "value"])
        #expect(attribute.minimum == .integer(0) && attribute.maximum == .integer(1_000))
        #expect(Attribute("rating", .double).range(0...5).maximum == .double(5))
        #expect(Attribute("price", .decimal).range(0.5...9.5).minimum == .decimal(Decimal(0.5)))
        #expect(Attribute("count", .integer64).derived(from: "count:(items)").isDerived)

        let steps = Relationship("steps", to: "Step").toMany(ordered: true).count(1...20).deny()
        #expect(steps.isOrdered && steps.minCount == 1 && steps.maxCount == 20 && steps.deleteRule == .deny)
        #expect(Relationship("tags", to: "Tag").toMany().count(2...).maxCount == 0)
        #expect(Relationship("tag", to: "Tag").required().optional().isOptional)

        let entity = Entity("Car").abstract().renamed(from: "Auto").versionHashModifier("x").represented(
            by: "CarObject")
        #expect(entity.isAbstract && entity.renamingIdentifier == "Auto")
        #expect(entity.versionHashModifier == "x" && entity.representedClassName == "CarObject")
    }

    @Test func buildingValidates() {
        #expect {
            try ManagedObjectModel {
                Entity("Recipe") { Relationship("ingredients", to: "Ingredient").toMany() }
            }
        } throws: { error in
            let error = error as? TernError
            return error?.code == .invalidModel && error?.entityName == "Recipe"
                && error?.propertyName == "ingredients" && error?.message.contains("Ingredient") == true
        }
    }

    @Test func buildsVersionedModels() throws {
        let notes = try VersionedModel("Notes", current: "v1") {
            ModelVersion("v1", versionIdentifiers: ["1"]) { Entity("Note") { Attribute("text", .string) } }
            ModelVersion("v2") {
                Entity("Note") {
                    Attribute("text", .string)
                    Attribute("created", .date)
                }
            }
        }
        #expect(notes.versions.map(\.name) == ["v1", "v2"])
        #expect(notes.currentVersion.name == "v1")
        #expect(notes.version(named: "v1")?.model.versionIdentifiers == ["1"])
        let latest = try VersionedModel("Notes") {
            ModelVersion("a") {}
            ModelVersion("b") {}
        }
        #expect(latest.currentVersionName == "b")
    }

    @Test func versionedModelBuilderRejectsMistakes() {
        #expect(throws: TernError.self) { try VersionedModel("Empty") {} }
        #expect(throws: TernError.self) {
            try VersionedModel("Twice") {
                ModelVersion("a") {}
                ModelVersion("a") {}
            }
        }
        #expect(throws: TernError.self) { try VersionedModel("NoCurrent", current: "z") { ModelVersion("a") {} } }
        #expect {
            try VersionedModel("Broken") {
                ModelVersion("good") { Entity("A") }
                ModelVersion("bad") { Entity("B", parent: "Missing") }
            }
        } throws: { error in
            (error as? TernError)?.message.contains("'bad'") == true && (error as? TernError)?.entityName == "B"
        }
    }
}
