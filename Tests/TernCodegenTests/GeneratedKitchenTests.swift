import Foundation
import TernCore
import TernFormats
import TernSQLite
import TernTestSupport
import Testing

extension Dish {
    /// A property of the developer's own, which no store can filter or sort by.
    var shout: String { (name ?? "").uppercased() }
}

/// The classes the `TernModelCodegen` plugin generated for this target from `Kitchen.xcdatamodeld`
/// at build time, used as an app would use them.
@Suite struct GeneratedKitchenTests {
    static let bundle = URL(fileURLWithPath: #filePath).deletingLastPathComponent().appendingPathComponent(
        "Kitchen.xcdatamodeld")

    @Test func theEnumEmbedsEveryVersionOfTheModelFile() throws {
        let files = try XcodeModel.readVersionedModel(at: Self.bundle)
        #expect(KitchenModel.versioned == files)
        #expect(KitchenModel.versioned.versions.map(\.name) == ["Kitchen", "Kitchen 2"])
        #expect(KitchenModel.current == files.currentVersion.model)
        for version in files.versions {
            let hashes = version.model.entityVersionHashes.mapValues { $0.base64EncodedString() }
            #expect(KitchenModel.versionHashes[version.name] == hashes, "\(version.name)")
        }
    }

    @Test func classesStandForTheirEntities() {
        // Shelf's codegen is Manual/None: no class.
        #expect(Set(KitchenModel.classes.keys) == ["Chef", "Dessert", "Dish", "Instruction", "Item"])
        #expect(Dish.entityName == "Dish" && Dessert.entityName == "Dessert" && Chef.entityName == "Chef")
        #expect(KitchenModel.entityName(of: Dessert.self) == "Dessert")
        #expect(Dish.propertyName(for: \Dish.contextProperty) == "context")
        #expect(Dessert.propertyName(for: \Dessert.servings) == "servings")
        #expect(Dessert.propertyName(for: \Dessert.sweetness) == "sweetness")
        // Transient attributes and the developer's own properties are not stored.
        #expect(Dish.propertyName(for: \Dish.summary) == nil)
        #expect(Dish.propertyName(for: \Dish.shout) == nil)
        #expect(Item.propertyName(for: \Item.Shelf) == "Shelf")
    }

    @Test func propertiesReadAndWriteTheModelsValues() async throws {
        let folder = try TemporaryDirectory()
        let url = folder.path("Kitchen.sqlite")
        let model = KitchenModel.current
        let coordinator = PersistentStoreCoordinator(model: model)
        try await coordinator.addStore(try SQLiteStore(at: url, model: model))
        let written = try await ObjectContext(coordinator: coordinator).perform { context in
            let dish = context.insert(Dish.self)
            #expect(dish.servings == 2 && !dish.isVegan && dish.rating == nil && dish.weight == 0)
            dish.name = "Soup"
            dish.calories = 250
            dish.code = UUID(uuidString: "6F9619FF-8B86-D011-B42D-00C04FC964FF")
            dish.cookedAt = Date(timeIntervalSinceReferenceDate: 1_000)
            dish.default = "of the day"
            dish.isVegan = true
            dish.link = URL(string: "https://example.com")
            dish.notes = Data([1, 2, 3])
            dish.photo = Data([4])
            dish.price = Decimal(string: "6.25")
            dish.rating = 4.5
            dish.servings = 3
            dish.weight = 1.25
            dish.summary = "transient"
            let chef = context.insert(Chef.self)
            chef.name = "Ann"
            dish.chef = chef
            let salt = context.insert(Item.self)
            salt.name = "salt"
            let shelf = context.insert("Shelf")
            salt.Shelf = shelf
            dish.addToIngredients(salt)
            for text in ["cut", "boil", "serve"] {
                let step = context.insert(Instruction.self)
                step.text = text
                dish.addToSteps(step)
            }
            let taste = context.insert(Instruction.self)
            taste.text = "taste"
            dish.insertIntoSteps(taste, at: 2)
            dish.removeFromSteps(at: 0)
            let plate = context.insert(Instruction.self)
            plate.text = "plate"
            dish.replaceSteps(at: 2, with: plate)
            #expect(chef.dishes.map(\.objectID) == [dish.objectID] && salt.dish === dish)
            #expect(chef.greeting == "Chef Ann")
            try await context.save()
            return dish.objectID
        }
        try await ObjectContext(coordinator: coordinator).perform { context in
            let dishes = try await context.fetch(Dish.fetchRequest())
            let dish = try #require(dishes.first)
            #expect(dishes.count == 1 && dish.objectID == written)
            #expect(dish.name == "Soup" && dish.calories == 250 && dish.default == "of the day" && dish.isVegan)
            #expect(dish.code == UUID(uuidString: "6F9619FF-8B86-D011-B42D-00C04FC964FF"))
            #expect(dish.cookedAt == Date(timeIntervalSinceReferenceDate: 1_000))
            #expect(
                dish.link == URL(string: "https://example.com") && dish.notes == Data([1, 2, 3])
                    && dish.photo == Data([4]))
            #expect(
                dish.price == Decimal(string: "6.25") && dish.rating == 4.5 && dish.servings == 3 && dish.weight == 1.25
            )
            #expect(dish.summary == nil, "a transient attribute is not saved")
            #expect(dish.chef?.name == "Ann")
            #expect(dish.steps.map(\.text) == ["boil", "taste", "plate"])
            let salt = try #require(dish.ingredients.first)
            #expect(salt.name == "salt" && salt.Shelf?.entity.name == "Shelf")
            #expect(try await dish.veganDishes(in: context).map(\.objectID) == [written])
            let chef = try #require(dish.chef)
            #expect(try await chef.ownVeganDishes(in: context).map(\.objectID) == [written])
            let other = context.insert(Chef.self)
            #expect(try await other.ownVeganDishes(in: context).isEmpty)
            dish.removeFromIngredients(salt)
            #expect(dish.ingredients.isEmpty && salt.dish == nil)
        }
    }

    @Test func keyPathsWithoutAStoredPropertyAreRefused() throws {
        for request in [
            Dish.fetchRequest(predicate: #Predicate { $0.shout == "SOUP" }),
            Dish.fetchRequest(predicate: #Predicate { $0.summary == "x" }),
        ] {
            let error = #expect(throws: TernError.self) { try request.fetchRequest() }
            #expect(error?.code == .invalidPredicate && error?.entityName == "Dish")
            #expect(error?.message.contains("stands for no stored attribute or relationship of entity Dish") == true)
        }
        #expect(throws: TernError.self) { try Dish.fetchRequest(sortBy: [SortDescriptor(\.shout)]).fetchRequest() }
        // A sort through a relationship names no single property.
        #expect(throws: TernError.self) { try Item.fetchRequest(sortBy: [SortDescriptor(\.dish?.name)]).fetchRequest() }
        #expect(
            try Dish.fetchRequest(sortBy: [SortDescriptor(\.servings, order: .reverse)]).fetchRequest().sortDescriptors
                == [FetchSort(key: "servings", ascending: false)])
    }

    @Test func registrationCoversTheEntitiesTheContextsModelHas() async throws {
        // Version 1 has Dish only: the other classes are left out instead of stopping the program.
        let first = try #require(KitchenModel.versioned.versions.first).model
        let coordinator = PersistentStoreCoordinator(model: first)
        try await coordinator.addStore(InMemoryStore(model: first))
        await ObjectContext(coordinator: coordinator).perform { context in
            KitchenModel.register(in: context)
            let dish = context.insert("Dish")
            #expect(dish is Dish)
        }
    }
}
