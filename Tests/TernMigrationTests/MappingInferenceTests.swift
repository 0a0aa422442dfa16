import Foundation
import TernCore
import TernMigration
import Testing

@Suite struct MappingInferenceTests {
    func infer(_ source: ManagedObjectModel, _ destination: ManagedObjectModel, through: [ManagedObjectModel] = [])
        -> MappingInference
    {
        MappingInference(from: source, to: destination, through: through)
    }

    func expression(_ inference: MappingInference, _ mapping: String, _ property: String) -> String? {
        inference.mapping.entityMapping(named: mapping)?.propertyMappings.first { $0.name == property }?
            .valueExpression?.description
    }

    @Test func addsAndRemovesEntitiesAndProperties() throws {
        let v1 = try ManagedObjectModel {
            Entity("Recipe") {
                Attribute("title", .string)
                Attribute("notes", .string)
                Relationship("book", to: "Book", inverse: "recipes")
            }
            Entity("Book") { Relationship("recipes", to: "Recipe", inverse: "book").toMany() }
            Entity("Shelf") { Attribute("label", .string) }
        }
        let v2 = try ManagedObjectModel {
            Entity("Recipe") {
                Attribute("title", .string)
                Attribute("servings", .integer16).required().default(.integer(2))
                Relationship("tags", to: "Tag", inverse: "recipes").toMany()
            }
            Entity("Tag") {
                Attribute("name", .string)
                Relationship("recipes", to: "Recipe", inverse: "tags").toMany()
            }
        }
        let inference = infer(v1, v2)
        #expect(inference.isInferable)
        let changes = Set(inference.changes.map(\.summary))
        #expect(
            changes == [
                "add attribute Recipe.servings", "add relationship Recipe.tags", "add entity Tag",
                "remove entity Book", "remove entity Shelf", "remove attribute Recipe.notes",
                "remove relationship Recipe.book",
            ])
        let kinds = Dictionary(uniqueKeysWithValues: inference.mapping.entityMappings.map { ($0.name, $0.kind) })
        #expect(kinds == ["RecipeToRecipe": .transform, "AddTag": .add, "RemoveBook": .remove, "RemoveShelf": .remove])
        #expect(expression(inference, "RecipeToRecipe", "title") == "$source.title")
        #expect(expression(inference, "RecipeToRecipe", "servings") == nil)
        try inference.mapping.validate(source: v1, destination: v2)
    }

    @Test func copiesUnchangedEntities() throws {
        let v1 = try ManagedObjectModel {
            Entity("Note") { Attribute("text", .string) }
            Entity("Tag") { Attribute("name", .string) }
        }
        let v2 = try ManagedObjectModel {
            Entity("Note") { Attribute("text", .string) }
            Entity("Tag") { Attribute("name", .string).required().default(.string("")) }
        }
        let inference = infer(v1, v2)
        #expect(inference.mapping.entityMapping(named: "NoteToNote")?.kind == .copy)
        #expect(inference.mapping.entityMapping(named: "TagToTag")?.kind == .transform)
        #expect(expression(inference, "TagToTag", "name") == #"coalesce($source.name, "")"#)
        #expect(
            inference.changes.map(\.summary) == [
                "Tag.name becomes required; objects without a value get its default value"
            ])
    }

    @Test func renamesThroughRenamingIdentifiers() throws {
        let v1 = try ManagedObjectModel {
            Entity("ExpensiveCar") {
                Attribute("plate", .string)
                Relationship("owner", to: "Person")
            }
            Entity("Person") { Attribute("name", .string) }
        }
        let v2 = try ManagedObjectModel {
            Entity("LuxuryCar") {
                Attribute("numberPlate", .string).renamed(from: "plate")
                Relationship("driver", to: "Person").renamed(from: "owner")
            }
            .renamed(from: "ExpensiveCar")
            Entity("Person") { Attribute("name", .string) }
        }
        let inference = infer(v1, v2)
        #expect(inference.isInferable)
        #expect(
            inference.changes.map(\.summary) == [
                "rename entity ExpensiveCar to LuxuryCar", "rename attribute LuxuryCar.plate to numberPlate",
                "rename relationship LuxuryCar.owner to driver",
            ])
        #expect(expression(inference, "ExpensiveCarToLuxuryCar", "numberPlate") == "$source.plate")
        #expect(expression(inference, "ExpensiveCarToLuxuryCar", "driver") == "destinationInstances($source.owner)")
        #expect(inference.mapping.entityMapping(named: "PersonToPerson")?.kind == .copy)
    }

    @Test func followsChainsOfRenamesAcrossVersions() throws {
        let v1 = try ManagedObjectModel { Entity("Note") { Attribute("name", .string) } }
        let v2 = try ManagedObjectModel { Entity("Note") { Attribute("title", .string).renamed(from: "name") } }
        let v3 = try ManagedObjectModel { Entity("Note") { Attribute("heading", .string).renamed(from: "title") } }

        #expect(expression(infer(v1, v2), "NoteToNote", "title") == "$source.name")
        #expect(expression(infer(v2, v3), "NoteToNote", "heading") == "$source.title")
        let direct = infer(v1, v3, through: [v2])
        #expect(expression(direct, "NoteToNote", "heading") == "$source.name")
        #expect(direct.changes.map(\.summary) == ["rename attribute Note.name to heading"])
        try direct.mapping.validate(source: v1, destination: v3)

        // Without the version between them, v3's renaming identifier names nothing in v1.
        let blind = infer(v1, v3)
        #expect(Set(blind.changes.map(\.summary)) == ["add attribute Note.heading", "remove attribute Note.name"])
    }

    @Test func entityRenameChainsKeepTheirObjects() throws {
        let v1 = try ManagedObjectModel { Entity("Car") { Attribute("plate", .string) } }
        let v2 = try ManagedObjectModel { Entity("Auto") { Attribute("plate", .string) }.renamed(from: "Car") }
        let v3 = try ManagedObjectModel { Entity("Vehicle") { Attribute("plate", .string) }.renamed(from: "Auto") }
        let inference = infer(v1, v3, through: [v2])
        #expect(inference.mapping.entityMappings.map(\.name) == ["CarToVehicle"])
        #expect(inference.changes.map(\.summary) == ["rename entity Car to Vehicle"])
    }

    @Test func optionalBecomesRequiredWithADefaultFillsAndWithoutOneIsCheckedAgainstTheStore() throws {
        let v1 = try ManagedObjectModel {
            Entity("Person") {
                Attribute("nickname", .string)
                Attribute("age", .integer16)
            }
        }
        let v2 = try ManagedObjectModel {
            Entity("Person") {
                Attribute("nickname", .string).required()
                Attribute("age", .integer16).required().default(.integer(0))
            }
        }
        let inference = infer(v1, v2)
        #expect(expression(inference, "PersonToPerson", "age") == "coalesce($source.age, 0)")
        // As Core Data's lightweight migration: inferable; the store's values decide (checked by the store migrator).
        #expect(inference.isInferable)
        #expect(expression(inference, "PersonToPerson", "nickname") == "$source.nickname")
        #expect(
            inference.changes.map(\.summary).contains(
                "Person.nickname becomes required; every object must already have a value (checked before migrating)"))
        #expect(infer(v2, v1).isInferable)
        #expect(
            Set(infer(v2, v1).changes.map(\.summary)) == [
                "Person.nickname becomes optional", "Person.age becomes optional",
            ])
    }

    @Test func relationshipsWidenButDoNotNarrow() throws {
        let v1 = try ManagedObjectModel {
            Entity("Recipe") {
                Relationship("photo", to: "Photo", inverse: "recipe")
                Relationship("steps", to: "Step", inverse: "recipe").toMany()
            }
            Entity("Photo") { Relationship("recipe", to: "Recipe", inverse: "photo") }
            Entity("Step") { Relationship("recipe", to: "Recipe", inverse: "steps") }
        }
        let v2 = try ManagedObjectModel {
            Entity("Recipe") {
                Relationship("photo", to: "Photo", inverse: "recipe").toMany()
                Relationship("steps", to: "Step", inverse: "recipe").toMany(ordered: true)
            }
            Entity("Photo") { Relationship("recipe", to: "Recipe", inverse: "photo") }
            Entity("Step") { Relationship("recipe", to: "Recipe", inverse: "steps") }
        }
        let forward = infer(v1, v2)
        #expect(forward.isInferable)
        #expect(
            Set(forward.changes.map(\.summary)) == ["Recipe.photo becomes to-many", "Recipe.steps becomes ordered"])
        let back = infer(v2, v1)
        #expect(back.changes.map(\.summary).contains("Recipe.steps becomes unordered"))
        #expect(back.issues.map(\.propertyName) == ["photo"])
        #expect(back.issues.first?.message.contains("changes from to-many to to-one, which cannot be inferred") == true)
    }

    @Test func carriesNumbersAsCoreDataCarriesThem() throws {
        let v1 = try ManagedObjectModel {
            Entity("Sample") {
                Attribute("a", .integer16)
                Attribute("b", .integer32)
                Attribute("c", .float)
                Attribute("d", .integer32)
                Attribute("e", .integer64)
                Attribute("f", .integer64)
                Attribute("g", .double)
            }
        }
        let v2 = try ManagedObjectModel {
            Entity("Sample") {
                Attribute("a", .integer32)
                Attribute("b", .integer64)
                Attribute("c", .double)
                Attribute("d", .double)
                Attribute("e", .decimal)
                Attribute("f", .integer16)
                Attribute("g", .float)
            }
        }
        let inference = infer(v1, v2)
        #expect(
            Set(inference.changes.map(\.summary)) == [
                "change Sample.a from Integer 16 to Integer 32", "change Sample.b from Integer 32 to Integer 64",
                "change Sample.c from Float to Double", "change Sample.d from Integer 32 to Double",
                "change Sample.e from Integer 64 to Decimal",
                "change Sample.f from Integer 64 to Integer 16 "
                    + "(values outside Integer 16's range are counted before migrating and kept as stored)",
            ])
        // Double to Float has another storage of digits: not inferred.
        #expect(inference.issues.map(\.propertyName) == ["g"])
        #expect(inference.issues.first?.message.contains("double($source.g)") == true)
    }

    /// Types that keep an SQLite INTEGER carry the stored value either way, and integers and
    /// Booleans become floating-point numbers, as in Core Data's lightweight migration.
    @Test(arguments: [
        (AttributeType.boolean, AttributeType.integer16, false), (.integer32, .boolean, true),
        (.integer64, .integer32, true),
        (.boolean, .double, false), (.integer64, .float, false), (.boolean, .integer64, false),
    ])
    func infersTypeChangesOverTheSameStorage(from: AttributeType, to: AttributeType, countsValues: Bool) throws {
        let v1 = try ManagedObjectModel { Entity("Task") { Attribute("done", from) } }
        let v2 = try ManagedObjectModel { Entity("Task") { Attribute("done", to) } }
        let inference = infer(v1, v2)
        #expect(inference.isInferable, "\(inference.issues.map(\.message))")
        let summary = try #require(inference.changes.first { $0.kind == .changeType }?.summary)
        #expect(summary.hasPrefix("change Task.done from \(from.xcodeName) to \(to.xcodeName)"))
        #expect(summary.contains("counted before migrating") == countsValues)
        #expect(expression(inference, "TaskToTask", "done") == "$source.done")
    }

    @Test(arguments: [
        (AttributeType.string, AttributeType.integer32, "integer($source.cookingTime)"),
        (.string, .double, "double($source.cookingTime)"),
        (.integer32, .string, "string($source.cookingTime)"),
        (.date, .string, #"formatDate($source.cookingTime, "yyyy-MM-dd HH:mm")"#),
        (.string, .date, #"parseDate($source.cookingTime, "yyyy-MM-dd")"#),
        (.double, .date, "date($source.cookingTime)"),
        (.date, .double, "timeInterval($source.cookingTime)"),
        (.binary, .uuid, "a custom migration policy"),
    ])
    func explainsTypeChangesWithASuggestedMapping(from: AttributeType, to: AttributeType, suggestion: String) throws {
        let v1 = try ManagedObjectModel { Entity("Recipe") { Attribute("cookingTime", from) } }
        let v2 = try ManagedObjectModel { Entity("Recipe") { Attribute("cookingTime", to) } }
        let issues = infer(v1, v2).issues
        #expect(
            issues.map(\.message) == [
                "Recipe.cookingTime changes from \(from.xcodeName) to \(to.xcodeName), which cannot be inferred; "
                    + "add a mapping with an expression such as \(suggestion)"
            ])
        #expect(issues.first?.entityName == "Recipe" && issues.first?.propertyName == "cookingTime")
    }

    @Test func movesEntitiesAndPropertiesInTheTree() throws {
        let v1 = try ManagedObjectModel {
            Entity("Car") {
                Attribute("wheels", .integer16)
                Attribute("spoiler", .string)
            }
            Entity("SportCar", parent: "Car") { Attribute("topSpeed", .double) }
        }
        let v2 = try ManagedObjectModel {
            Entity("Vehicle") { Attribute("wheels", .integer16) }.abstract()
            Entity("Car", parent: "Vehicle")
            Entity("SportCar", parent: "Vehicle") {
                Attribute("spoiler", .string)
                Attribute("topSpeed", .double)
            }
        }
        let inference = infer(v1, v2)
        #expect(inference.isInferable)
        let changes = Set(inference.changes.map(\.summary))
        #expect(changes.contains("add entity Vehicle"))
        #expect(changes.contains("move entity Car from the root to under Vehicle"))
        #expect(changes.contains("move entity SportCar from under Car to under Vehicle"))
        #expect(changes.contains("move attribute wheels from Car to Vehicle"))
        #expect(changes.contains("move attribute spoiler from Car to SportCar"))
        #expect(!changes.contains { $0.hasPrefix("remove") })
        #expect(expression(inference, "SportCarToSportCar", "spoiler") == "$source.spoiler")
        #expect(expression(inference, "SportCarToSportCar", "wheels") == "$source.wheels")
        #expect(expression(inference, "CarToCar", "spoiler") == nil)
        #expect(inference.mapping.entityMapping(named: "AddVehicle") == nil)
        try inference.mapping.validate(source: v1, destination: v2)
    }

    @Test func explainsOtherChangesThatCannotBeInferred() throws {
        let v1 = try ManagedObjectModel {
            Entity("Car") {
                Attribute("plate", .string)
                Attribute("owner", .string)
            }
            Entity("Person") { Attribute("name", .string) }
        }
        let v2 = try ManagedObjectModel {
            Entity("Car") {
                Attribute("plate", .string)
                Attribute("vin", .string).required()
                Relationship("owner", to: "Person")
                Relationship("maker", to: "Maker").required()
            }.abstract()
            Entity("Person") { Attribute("name", .string) }
            Entity("Maker") { Attribute("name", .string) }
        }
        let inference = infer(v1, v2)
        let messages = inference.issues.map(\.message)
        #expect(messages.contains { $0.hasPrefix("Car.owner changes from an attribute to a relationship") })
        #expect(messages.contains { $0.hasPrefix("Car becomes abstract") })
        // Decided from the data, as Core Data does: refused when the store has Car objects.
        let changes = inference.changes.map(\.summary)
        #expect(
            changes.contains(
                "add attribute Car.vin, required without a default value (the store must have no Car objects; checked before migrating)"
            ))
        #expect(
            changes.contains(
                "add relationship Car.maker, required (the store must have no Car objects; checked before migrating)"))
        do {
            _ = try MappingModel.inferred(from: v1, to: v2)
            Issue.record("must not infer")
        } catch {
            #expect(error.code == .notInferable && error.failures.count == messages.count)
            #expect(error.description.contains("\n  Car.owner: Car.owner changes from an attribute to a relationship"))
        }
    }

    @Test func ignoresTransientProperties() throws {
        let v1 = try ManagedObjectModel { Entity("Car") { Attribute("speed", .integer64).transient() } }
        let v2 = try ManagedObjectModel { Entity("Car") { Attribute("speed", .string).transient() } }
        let inference = infer(v1, v2)
        #expect(inference.isInferable && inference.changes.isEmpty)
        #expect(inference.mapping.entityMapping(named: "CarToCar")?.kind == .copy)
    }
}
