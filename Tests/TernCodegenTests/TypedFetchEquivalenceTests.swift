import Foundation
import TernCore
import TernSQLite
import TernTestSupport
import Testing

/// Typed predicates and sort descriptors over the plugin's Kitchen classes give the same fetch
/// predicates, and the same objects in the same order, as the string predicates they stand for:
/// in SQL on the SQLite store, and evaluated in memory on the in-memory store.
@Suite struct TypedFetchEquivalenceTests {
    /// A typed predicate, the string predicate it stands for, and whether the conversion is that
    /// very predicate (else it only selects the same objects, as `??` does).
    struct Case: Sendable, CustomStringConvertible {
        var typed: Predicate<Dish>
        var format: String
        var arguments: [FetchPredicate.Argument] = []
        var isExact = true
        var description: String { format }
    }

    static let cutoff = Date(timeIntervalSinceReferenceDate: 700_000_000)
    static let link = URL(string: "https://example.com/soup")
    static let code = UUID(uuidString: "6F9619FF-8B86-D011-B42D-00C04FC964FF")

    static var cases: [Case] {
        let names: [String?] = ["Tomato Soup", "Toast"]
        let cutoff = Self.cutoff
        let link = Self.link
        let code = Self.code
        return [
            Case(typed: #Predicate { $0.name?.starts(with: "T") == true }, format: "name BEGINSWITH 'T'"),
            Case(
                typed: #Predicate { ($0.name ?? "").starts(with: "T") }, format: "name BEGINSWITH 'T'", isExact: false),
            Case(typed: #Predicate { $0.servings > 2 && $0.isVegan }, format: "servings > 2 AND isVegan == YES"),
            Case(typed: #Predicate { !$0.isVegan || $0.servings == 1 }, format: "NOT isVegan == YES OR servings == 1"),
            Case(typed: #Predicate { $0.rating == nil || $0.rating! < 3.5 }, format: "rating == nil OR rating < 3.5"),
            Case(typed: #Predicate { $0.chef?.name == "Ann" }, format: "chef.name == 'Ann'"),
            Case(
                typed: #Predicate { $0.ingredients.contains { $0.name == "salt" } },
                format: "ANY ingredients.name == 'salt'"),
            Case(typed: #Predicate { $0.steps.count >= 2 }, format: "steps.@count >= 2"),
            Case(
                typed: #Predicate { names.contains($0.name) }, format: "name IN %@",
                arguments: [.values([.string("Tomato Soup"), .string("Toast")])]),
            Case(
                typed: #Predicate { $0.cookedAt != nil && $0.cookedAt! > cutoff },
                format: "cookedAt != nil AND cookedAt > %@",
                arguments: [.value(.date(cutoff))]),
            Case(typed: #Predicate { ($0.price ?? 0) > 5 }, format: "price > 5", isExact: false),
            Case(
                typed: #Predicate { $0.default?.contains("o") != true },
                format: "default == nil OR NOT default CONTAINS 'o'"),
            Case(
                typed: #Predicate { $0.default?.contains("o") == false },
                format: "default != nil AND NOT default CONTAINS 'o'"),
            Case(
                typed: #Predicate { $0.default?.starts(with: "S") ?? true },
                format: "default == nil OR default BEGINSWITH 'S'"),
            Case(typed: #Predicate { $0.calories == nil }, format: "calories == nil"),
            Case(typed: #Predicate { $0.contextProperty == "kitchen" }, format: "context == 'kitchen'"),
            Case(
                typed: #Predicate { $0.link == link }, format: "link == %@", arguments: [.value(link.map { .uri($0) })]),
            Case(
                typed: #Predicate { $0.code == code }, format: "code == %@", arguments: [.value(code.map { .uuid($0) })]
            ),
            Case(typed: #Predicate { $0.weight >= 1.5 && $0.weight < 3 }, format: "weight >= 1.5 AND weight < 3.0"),
        ]
    }

    /// The order of every fetch: by name, then by servings, most first.
    static let sortBy = [
        SortDescriptor(\Dish.name, comparator: .lexical), SortDescriptor(\Dish.servings, order: .reverse),
    ]
    static let sorts = [FetchSort(key: "name"), FetchSort(key: "servings", ascending: false)]

    @Test(arguments: Self.cases)
    func typedPredicatesConvertToTheirStringPredicates(_ test: Case) throws {
        let converted = try Dish.fetchRequest(predicate: test.typed, sortBy: Self.sortBy).fetchRequest()
        #expect(converted.entityName == "Dish")
        #expect(converted.sortDescriptors == Self.sorts)
        if test.isExact {
            #expect(converted.predicate == (try FetchPredicate(test.format, arguments: test.arguments)))
        }
    }

    @Test(arguments: StoreKind.allCases)
    func typedFetchesFindWhatStringFetchesFind(in kind: StoreKind) async throws {
        let folder = try TemporaryDirectory()
        let context = try await Self.kitchen(kind, in: folder)
        let cases = Self.cases
        let checked = try await context.perform { context in
            var checked = 0
            for test in cases {
                let typed = try await context.fetch(Dish.fetchRequest(predicate: test.typed, sortBy: Self.sortBy))
                let string = try await context.fetch(
                    FetchRequest(
                        entityName: "Dish", predicate: try FetchPredicate(test.format, arguments: test.arguments),
                        sortDescriptors: Self.sorts))
                #expect(typed.map(\.objectID) == string.map(\.objectID), "\(test.format) on \(kind)")
                let expected = try string.filter { try test.typed.evaluate($0 as! Dish) }
                #expect(typed.map(\.objectID) == expected.map(\.objectID), "\(test.format) evaluated by Foundation")
                if !typed.isEmpty && typed.count < 8 { checked += 1 }
            }
            return checked
        }
        // Most cases select some of the dishes, not none or all.
        #expect(checked >= cases.count - 3)
    }

    @Test(arguments: StoreKind.allCases)
    func subentitiesFetchWithInheritedProperties(in kind: StoreKind) async throws {
        let folder = try TemporaryDirectory()
        let context = try await Self.kitchen(kind, in: folder)
        try await context.perform { context in
            let typed = try await context.fetch(
                Dessert.fetchRequest(
                    predicate: #Predicate { $0.sweetness > 3 && $0.servings >= 1 },
                    sortBy: [SortDescriptor(\.sweetness)]))
            let string = try await context.fetch(
                FetchRequest(
                    entityName: "Dessert", predicate: try FetchPredicate("sweetness > 3 AND servings >= 1"),
                    sortDescriptors: [FetchSort(key: "sweetness")]))
            #expect(typed.map(\.name) == ["Lemon Tart", "Chocolate Cake"])
            #expect(typed.map(\.objectID) == string.map(\.objectID))
            // Dishes include desserts, as subentities are fetched by default.
            var dishes = Dish.fetchRequest(predicate: #Predicate { $0.servings >= 1 })
            #expect(try await context.count(for: dishes) == 8)
            dishes.includesSubentities = false
            #expect(try await context.count(for: dishes) == 6)
        }
    }

    // MARK: - The kitchen

    enum StoreKind: String, CaseIterable, Sendable {
        case sqlite, memory
    }

    /// A context on a store of the current Kitchen version, holding eight dishes (two of them
    /// desserts), their chefs, ingredients and steps.
    static func kitchen(_ kind: StoreKind, in folder: TemporaryDirectory) async throws -> ObjectContext {
        let model = KitchenModel.current
        let coordinator = PersistentStoreCoordinator(model: model)
        switch kind {
        case .sqlite: try await coordinator.addStore(try SQLiteStore(at: folder.path("Kitchen.sqlite"), model: model))
        case .memory: try await coordinator.addStore(InMemoryStore(model: model))
        }
        let context = ObjectContext(coordinator: coordinator)
        let link = Self.link
        let code = Self.code
        try await context.perform { context in
            let ann = context.insert(Chef.self)
            ann.name = "Ann"
            let bob = context.insert(Chef.self)
            bob.name = "Bob"
            let dishes: [(String, Int16, Bool, Double?, String?, Decimal?, String?)] = [
                ("Tomato Soup", 4, true, 4.5, "Soup of the day", 6.5, "kitchen"),
                ("Toast", 1, true, nil, nil, nil, nil),
                ("Tart Tatin", 6, false, 3.0, "Sunday", 12, "bakery"),
                ("Green Salad", 2, true, 2.0, "Side", 4, nil),
                ("Roast Lamb", 6, false, 5.0, nil, 30, "kitchen"),
                ("Omelette", 1, false, 3.5, "Quick", 5, nil),
            ]
            for (index, (name, servings, vegan, rating, note, price, place)) in dishes.enumerated() {
                let dish = context.insert(Dish.self)
                dish.name = name
                dish.servings = servings
                dish.isVegan = vegan
                dish.rating = rating
                dish.default = note
                dish.price = price
                dish.contextProperty = place
                dish.calories = index.isMultiple(of: 2) ? Int64(100 * index) : nil
                dish.weight = Float(index) * 0.75
                dish.cookedAt = Self.cutoff.addingTimeInterval(Double(index - 2) * 86_400)
                dish.link = index == 0 ? link : nil
                dish.code = index == 2 ? code : nil
                dish.chef = index.isMultiple(of: 2) ? ann : index == 5 ? nil : bob
                for ingredient in ["salt", "pepper", "butter"].prefix(index % 4) {
                    let item = context.insert(Item.self)
                    item.name = ingredient
                    dish.addToIngredients(item)
                }
                for text in ["Prepare", "Cook", "Serve"].prefix(index % 4) {
                    let step = context.insert(Instruction.self)
                    step.text = text
                    dish.addToSteps(step)
                }
            }
            for (name, sweetness) in [("Chocolate Cake", 9), ("Lemon Tart", 5)] as [(String, Int32)] {
                let dessert = context.insert(Dessert.self)
                dessert.name = name
                dessert.servings = 8
                dessert.sweetness = sweetness
                dessert.chef = bob
            }
            try await context.save()
        }
        return ObjectContext(coordinator: coordinator)
    }
}
