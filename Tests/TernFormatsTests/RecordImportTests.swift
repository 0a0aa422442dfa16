import Foundation
import TernCore
import TernFormats
import TernTestSupport
import Testing

/// Importing records into a context: conversion, upsert, idempotence, nesting and all-or-nothing.
@Suite struct RecordImportTests {
    static let root = URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent()
        .deletingLastPathComponent()
    static let example = root.appendingPathComponent("Examples/ChefsBook")

    func context() throws -> ObjectContext {
        let versions = try XcodeModel.readVersionedModel(
            at: Self.example.appendingPathComponent("ChefsBook.xcdatamodeld"))
        let model = versions.currentVersion.model
        let coordinator = PersistentStoreCoordinator(model: model)
        return ObjectContext(coordinator: coordinator)
    }

    func context(adding store: InMemoryStore) async throws -> ObjectContext {
        let coordinator = PersistentStoreCoordinator(model: store.model)
        try await coordinator.addStore(store)
        return ObjectContext(coordinator: coordinator)
    }

    func store() throws -> InMemoryStore {
        let versions = try XcodeModel.readVersionedModel(
            at: Self.example.appendingPathComponent("ChefsBook.xcdatamodeld"))
        return InMemoryStore(model: versions.currentVersion.model)
    }

    func count(_ entity: String, in context: ObjectContext) async throws -> Int {
        try await context.count(for: FetchRequest(entityName: entity))
    }

    func recipe(_ uid: String, in context: ObjectContext) async throws -> [String: AttributeValue] {
        let request = FetchRequest(
            entityName: "Recipe", predicate: .compare(.keyPath("uid"), .equalTo, .constant(.string(uid))))
        return try await context.fetchDictionaries(request).first ?? [:]
    }

    @Test func starterDataImportsTwiceWithoutDuplicates() async throws {
        let store = try store()
        let url = Self.example.appendingPathComponent("StarterRecipes.json")
        let first = try await context(adding: store).importRecords(
            from: url, options: RecordImportOptions(format: .json))
        #expect(first.inserted["Recipe"] == 8 && first.updatedCount == 0)
        let context = try await context(adding: store)
        let counts = [
            try await count("Recipe", in: context), try await count("Ingredient", in: context),
            try await count("Step", in: context),
        ]
        #expect(counts[0] == 8 && counts[1] > 8 && counts[2] > 8)
        let second = try await context.importRecords(from: url, options: RecordImportOptions(format: .json))
        #expect(second.insertedCount == 0 && second.deletedCount == 0)
        #expect(second.updated["Recipe"] == 8 && second.updatedCount == first.insertedCount)
        let after = [
            try await count("Recipe", in: context), try await count("Ingredient", in: context),
            try await count("Step", in: context),
        ]
        #expect(after == counts)
        let request = FetchRequest(
            entityName: "Recipe", predicate: .compare(.keyPath("uid"), .equalTo, .constant(.string("CB-0001"))))
        let steps = try await context.perform { context in
            try await context.fetch(request).first?.objects(for: "steps").map { $0[attribute: "text"] } ?? []
        }
        #expect(steps.first == .string("Chop the onion and garlic."))
        #expect(steps.count == 4)
    }

    @Test func upsertUpdatesGivenKeysAndLeavesAbsentOnes() async throws {
        let store = try store()
        let tmp = try TemporaryDirectory()
        let full = tmp.path("full.tsv")
        try "uid\ttitle\tservings\tcookingTime\nA\tSoup\t4\t30\nB\tSalad\t2\t0\n".write(
            to: full, atomically: true, encoding: .utf8)
        let options = RecordImportOptions(format: .tsv, entityName: "Recipe")
        _ = try await context(adding: store).importRecords(from: full, options: options)
        let partial = tmp.path("partial.tsv")
        try "uid\tservings\nA\t6\n".write(to: partial, atomically: true, encoding: .utf8)
        let context = try await context(adding: store)
        let summary = try await context.importRecords(from: partial, options: options)
        #expect(summary.inserted.isEmpty && summary.updated == ["Recipe": 1])
        let soup = try await recipe("A", in: context)
        #expect(
            soup["servings"] == .integer(6) && soup["title"] == .string("Soup") && soup["cookingTime"] == .integer(30))
        #expect(try await count("Recipe", in: context) == 2)
    }

    @Test func uniqueByOverridesTheConstraint() async throws {
        let store = try store()
        let tmp = try TemporaryDirectory()
        let url = tmp.path("r.csv")
        try "title,servings,uid\nSoup,4,\nSoup,5,\n".write(to: url, atomically: true, encoding: .utf8)
        let byTitle = RecordImportOptions(format: .csv, entityName: "Recipe", uniqueBy: ["title"])
        let summary = try await context(adding: store).importRecords(from: url, options: byTitle)
        #expect(summary.inserted == ["Recipe": 1])
        let context = try await context(adding: store)
        #expect(try await count("Recipe", in: context) == 1)
        let plain = try await context.importRecords(
            from: url, options: RecordImportOptions(format: .csv, entityName: "Recipe"))
        #expect(plain.inserted == ["Recipe": 2])
    }

    @Test func badRowAtTheEndLeavesTheStoreUntouched() async throws {
        let store = try store()
        let tmp = try TemporaryDirectory()
        let url = tmp.path("big.tsv")
        var text = "uid\ttitle\tservings\n"
        for index in 0..<3_000 { text += "u\(index)\tRecipe \(index)\t\(index % 12 + 1)\n" }
        text += "bad\tLast\t99999\n"
        try text.write(to: url, atomically: true, encoding: .utf8)
        let context = try await context(adding: store)
        await #expect(throws: RecordError.self) {
            _ = try await context.importRecords(
                from: url, options: RecordImportOptions(format: .tsv, entityName: "Recipe"))
        }
        do {
            _ = try await context.importRecords(
                from: url, options: RecordImportOptions(format: .tsv, entityName: "Recipe"))
        } catch let error as RecordError {
            #expect(error.line == 3_002 && error.column == 3 && error.code == .invalidValue)
            #expect(error.message.contains("Recipe.servings") && !error.description.contains("99999"))
        }
        #expect(try await count("Recipe", in: context) == 0)
        #expect(await context.hasChanges == false)
    }

    @Test func batchesSavedAsTheyAreReadSurviveALaterBadRowAndImportAgainWithoutDuplicates() async throws {
        let store = try store()
        let tmp = try TemporaryDirectory()
        let url = tmp.path("big.tsv")
        var text = "uid\ttitle\tservings\n"
        for index in 0..<1_200 { text += "u\(index)\tRecipe \(index)\t\(index % 12 + 1)\n" }
        try (text + "bad\tLast\t99999\n").write(to: url, atomically: true, encoding: .utf8)
        var options = RecordImportOptions(format: .tsv, entityName: "Recipe")
        options.batchSize = 400
        options.savesEachBatch = true
        let context = try await context(adding: store)
        await #expect(throws: RecordError.self) { _ = try await context.importRecords(from: url, options: options) }
        #expect(try await count("Recipe", in: context) == 1_200)
        #expect(await context.hasChanges == false)

        try (text + "last\tLast\t4\n").write(to: url, atomically: true, encoding: .utf8)
        let summary = try await context.importRecords(from: url, options: options)
        #expect(summary.inserted == ["Recipe": 1] && summary.updated == ["Recipe": 1_200])
        #expect(try await count("Recipe", in: context) == 1_201)
    }

    @Test(arguments: [MergePolicy.objectTrumps, .storeTrumps, .rollback, .error])
    func mergePolicyDecidesBetweenARecordAndAnObjectAlreadySaved(_ policy: MergePolicy) async throws {
        let store = try store()
        let context = try await context(adding: store)
        try await context.perform { context in
            for (name, quantity) in [("salt", nil), ("pepper", "lots")] as [(String, String?)] {
                let ingredient = context.insert("Ingredient")
                ingredient[attribute: "name"] = .string(name)
                ingredient[attribute: "quantity"] = quantity.map(AttributeValue.string)
            }
            try await context.save()
        }
        let tmp = try TemporaryDirectory()
        let url = tmp.path("ingredients.tsv")
        try "name\tquantity\nsalt\ta pinch\npepper\ta little\nsugar\t1 tbsp\n".write(
            to: url, atomically: true, encoding: .utf8)
        var options = RecordImportOptions(format: .tsv, entityName: "Ingredient", uniqueBy: ["name"])
        options.mergePolicy = policy
        if policy == .error {
            await #expect(throws: RecordError.self) { _ = try await context.importRecords(from: url, options: options) }
            #expect(try await count("Ingredient", in: context) == 2)
            return
        }
        _ = try await context.importRecords(from: url, options: options)
        let rows = try await context.fetchDictionaries(
            FetchRequest(entityName: "Ingredient", sortDescriptors: [FetchSort(key: "name")]))
        let quantities = rows.map { $0["quantity"] }
        switch policy {
        case .objectTrumps: #expect(quantities == [.string("a little"), .string("a pinch"), .string("1 tbsp")])
        case .storeTrumps: #expect(quantities == [.string("lots"), .string("a pinch"), .string("1 tbsp")])
        default: #expect(quantities == [.string("lots"), nil, .string("1 tbsp")])
        }
    }

    @Test func valuesConvertByType() {
        #expect(RecordValue.text("YES").attributeValue(for: .boolean) == .some(.bool(true)))
        #expect(RecordValue.text("0").attributeValue(for: .boolean) == .some(.bool(false)))
        #expect(RecordValue.text("maybe").attributeValue(for: .boolean) == nil)
        #expect(RecordValue.text("40000").attributeValue(for: .integer16) == nil)
        #expect(
            RecordValue.number("1.25").attributeValue(for: .decimal) == .some(.decimal(Decimal(string: "1.25") ?? 0)))
        #expect(RecordValue.text("1.2x").attributeValue(for: .decimal) == nil)
        #expect(
            RecordValue.number("0").attributeValue(for: .date) == .some(.date(Date(timeIntervalSinceReferenceDate: 0))))
        #expect(
            RecordValue.text("2001-01-01T00:00:01.500Z").attributeValue(for: .date)
                == .some(.date(Date(timeIntervalSinceReferenceDate: 1.5))))
        #expect(RecordValue.text("AQI=").attributeValue(for: .binary) == .some(.data(Data([1, 2]))))
        #expect(RecordValue.text("not a uuid").attributeValue(for: .uuid) == nil)
        #expect(RecordValue.text("relative").attributeValue(for: .uri) == nil)
        #expect(RecordValue.null.attributeValue(for: .string) == .some(nil))
    }

    @Test func referencesByKeyAndById() async throws {
        let store = try store()
        let tmp = try TemporaryDirectory()
        let recipes = tmp.path("r.json")
        try
            #"{"Recipe": [{"_id": "r1", "uid": "X", "title": "Toast", "steps": ["s2", "s1"]}], "Step": [{"_id": "s1", "text": "one"}, {"_id": "s2", "text": "two"}]}"#
            .write(to: recipes, atomically: true, encoding: .utf8)
        _ = try await context(adding: store).importRecords(from: recipes, options: RecordImportOptions(format: .json))
        let ingredients = tmp.path("i.tsv")
        try "name\trecipe.uid\nbread\tX\n".write(to: ingredients, atomically: true, encoding: .utf8)
        let context = try await context(adding: store)
        _ = try await context.importRecords(
            from: ingredients, options: RecordImportOptions(format: .tsv, entityName: "Ingredient"))
        let (steps, ingredientNames) = try await context.perform { context in
            let toast = try await context.fetch(FetchRequest(entityName: "Recipe")).first
            return (
                toast?.objects(for: "steps").map { $0[attribute: "text"] } ?? [],
                toast?.objects(for: "ingredients").map { $0[attribute: "name"] } ?? []
            )
        }
        #expect(steps == [.string("two"), .string("one")])
        #expect(ingredientNames == [.string("bread")])
        let missing = tmp.path("m.tsv")
        try "name\trecipe.uid\nbutter\tNOPE\n".write(to: missing, atomically: true, encoding: .utf8)
        await #expect(throws: RecordError.self) {
            _ = try await context.importRecords(
                from: missing, options: RecordImportOptions(format: .tsv, entityName: "Ingredient"))
        }
        #expect(try await count("Ingredient", in: context) == 1)
    }
}
