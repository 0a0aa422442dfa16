import ChefsBook
import Foundation
import TernContainer
import TernCore
import TernRelational
import TernSQLite
import TernTestSupport
import Testing

/// `removeDuplicates` on a Chef's Book store into which a sync planted duplicates.
@Suite struct DeduplicationTests {
    /// Loads the seeded Chef's Book, drops the `uid` unique index (as a sync engine's store has
    /// none) and plants, for every recipe, a bare copy with the same uid; Tomato Soup gets a
    /// second copy with two ingredients of its own.
    static func plantedStore() async throws -> ChefsBookHome {
        let home = try ChefsBookHome()
        try await home.plantLegacyStore(at: home.locations.documents, version: 1)
        try await home.load(try home.container(seed: try home.starterSeed(), queue: .private))
        let connection = try Connection(path: home.locations.current.path, configuration: SQLiteConfiguration())
        try connection.execute(#"DROP INDEX "Z_Recipe_UNIQUE_uid""#)
        let version = home.model.currentVersion.model
        let coordinator = PersistentStoreCoordinator(model: version)
        try await coordinator.addStore(try SQLiteStore(at: home.locations.current, model: version))
        // Each context checks uniqueness among its own objects only, so each copy is saved from a
        // context that holds no other recipe with its uid.
        let originals = try await ObjectContext(coordinator: coordinator).perform { context in
            try await context.fetch(FetchRequest(entityName: "Recipe")).map {
                ($0[attribute: "uid"], $0[attribute: "title"])
            }
        }
        try await ObjectContext(coordinator: coordinator).perform { context in
            for (uid, title) in originals {
                let copy = context.insert("Recipe")
                copy[attribute: "uid"] = uid
                copy[attribute: "title"] = title
            }
            try await context.save()
        }
        try await ObjectContext(coordinator: coordinator).perform { context in
            let synced = context.insert("Recipe")
            synced[attribute: "uid"] = .string("tomato-soup")
            synced[attribute: "title"] = .string("Tomato Soup (synced)")
            for name in ["tomatoes", "basil"] {
                let ingredient = context.insert("Ingredient")
                ingredient[attribute: "name"] = .string(name)
                synced.add(ingredient, to: "ingredients")
            }
            try await context.save()
        }
        return home
    }

    @Test func duplicatesMergeIntoTheNewestWithRelationshipsRepointed() async throws {
        let home = try await Self.plantedStore()
        let container = try home.container(seed: nil, queue: .private)
        try await home.load(container)
        let before = try await ChefsBook.summaries(in: container.mainContext)
        #expect(before.count == 11)
        let ingredientsBefore = try await count("Ingredient", in: container.mainContext)

        let report = try await container.removeDuplicates(
            of: "Recipe", uniqueBy: ["uid"], keeping: .newest, batchSize: 2)
        #expect(report.groupCount == 5)
        #expect(report.removedCount == 6)

        let after = try await ChefsBook.summaries(in: container.mainContext)
        #expect(after.count == 5)
        #expect(Set(after.compactMap(\.uid)).count == 5)
        for summary in after {
            let original = try #require(before.first { $0.uid == summary.uid && $0.stepCount > 0 })
            #expect(summary.stepCount == original.stepCount, "\(summary.title): steps re-pointed to the winner")
            if summary.uid == "tomato-soup" {
                // The synced copy won and had ingredients: the others' owned ingredients went with them.
                #expect(summary.title == "Tomato Soup (synced)")
                #expect(summary.ingredientCount == 2)
            } else {
                #expect(summary.ingredientCount == original.ingredientCount, "\(summary.title): ingredients re-pointed")
            }
        }
        let tomatoIngredients = try #require(before.first { $0.title == "Tomato Soup" }).ingredientCount
        #expect(try await count("Ingredient", in: container.mainContext) == ingredientsBefore - tomatoIngredients)
        let soup = try #require(after.first { $0.uid == "tomato-soup" })
        let others = after.filter { $0.uid != "tomato-soup" }.map { $0.stepCount + $0.ingredientCount }.reduce(0, +)
        #expect(report.repointedCount == others + soup.stepCount)

        // No duplicate is left: the unique index can be built again.
        let connection = try Connection(path: home.locations.current.path, configuration: SQLiteConfiguration())
        try connection.execute(#"CREATE UNIQUE INDEX "Z_Recipe_UNIQUE_uid" ON "ZRECIPE" ("ZUID")"#)
        let again = try await container.removeDuplicates(of: "Recipe", uniqueBy: ["uid"])
        #expect(again == DeduplicationReport())
    }

    @Test func aCustomPolicyPicksTheWinnerAndTheOldestKeepsTheOriginals() async throws {
        let home = try await Self.plantedStore()
        let container = try home.container(seed: nil, queue: .private)
        try await home.load(container)
        let longestTitle = DuplicateWinner.custom { candidates in
            let titles = candidates.map { candidate -> Int in
                if case .string(let title)? = candidate.values["title"] { title.count } else { 0 }
            }
            return candidates[titles.firstIndex(of: titles.max() ?? 0) ?? 0].objectID
        }
        let report = try await container.removeDuplicates(of: "Recipe", uniqueBy: ["uid"], keeping: longestTitle)
        #expect(report.groupCount == 5 && report.removedCount == 6)
        let titles = try await ChefsBook.summaries(in: container.mainContext).map(\.title)
        #expect(titles.contains("Tomato Soup (synced)"))

        let oldest = try await Self.plantedStore()
        let second = try oldest.container(seed: nil, queue: .private)
        try await oldest.load(second)
        let before = try await ChefsBook.summaries(in: second.mainContext).filter { $0.stepCount > 0 }
        let kept = try await second.removeDuplicates(of: "Recipe", uniqueBy: ["uid"], keeping: .oldest)
        #expect(kept.removedCount == 6)
        #expect(kept.repointedCount == 0, "the originals own their ingredients and steps already")
        #expect(try await ChefsBook.summaries(in: second.mainContext) == before)
    }
}
