import ChefsBook
import Foundation
import Synchronization
import TernContainer
import TernCore
import TernFormats
import TernSQLite
import TernStores
import TernTestSupport
import Testing

/// The Chef's Book's store life cycle through a `PersistentContainer`: every legacy situation
/// ends at version 4 with the same recipes, no duplicates and no store left behind.
@Suite struct ChefsBookContainerTests {
    /// Where older app versions left their store.
    enum LegacySituation: String, CaseIterable, Sendable {
        case version1InDocuments, version2InLibrary, version1InAppGroup, version1AndVersion2
    }

    @Test(arguments: LegacySituation.allCases)
    func legacyStoreEndsAtVersion4WithTheSameRecipes(_ situation: LegacySituation) async throws {
        let home = try ChefsBookHome()
        let places = home.locations
        let moved: URL
        let version: String
        switch situation {
        case .version1InDocuments: (moved, version) = (places.documents, "ChefsBook 1")
        case .version2InLibrary: (moved, version) = (places.library, "ChefsBook 2")
        case .version1InAppGroup: (moved, version) = (places.appGroup, "ChefsBook 1")
        case .version1AndVersion2: (moved, version) = (places.documents, "ChefsBook 1")
        }
        try await home.plantLegacyStore(at: moved, version: version == "ChefsBook 1" ? 1 : 2)
        if situation == .version1AndVersion2 {
            // Documents is preferred; the Library store is a stray, reported and left alone.
            try await home.plantLegacyStore(at: places.library, version: 2)
        }
        let container = try home.container(seed: try home.starterSeed())
        let events = try await home.load(container)

        #expect(events.contains(.foundLegacyStore(at: moved, version: version)))
        #expect(events.contains(.movedStore(from: moved, to: places.current)))
        #expect(events.contains(.migrated(store: places.current, steps: version == "ChefsBook 1" ? 3 : 2)))
        #expect(events.contains(.progress(store: places.current, phase: .migrating, fraction: 1)))
        // Lemon Tart and Green Salad are new; Tomato Soup was a legacy recipe: merged, not duplicated.
        let summary = try #require(seedSummary(in: events))
        #expect(summary.inserted["Recipe"] == 2 && summary.updated["Recipe"] == 1)
        #expect(events.last == .ready)
        #expect(try home.currentVersion() == "ChefsBook 4")
        try await expectRecipes(in: container, titles: ChefsBookHome.expectedTitles)
        #expect(!FileManager.default.fileExists(atPath: moved.path))
        #expect(
            try home.leftovers(besides: moved).filter { $0 != "Application Support" }.isEmpty,
            "the legacy store's files are all removed")
        #expect(try home.leftovers(besides: places.current).isEmpty, "no journal or temporary file is left")
        if situation == .version1AndVersion2 {
            #expect(events.contains(.strayLegacyStore(at: places.library, current: places.current)))
            #expect(home.model.versions[1].model.isCompatible(with: try StoreFiles.metadata(at: places.library)))
        }
    }

    @Test func currentAndLegacyStoreBothPresentKeepsTheCurrentAndReportsTheStray() async throws {
        let home = try ChefsBookHome()
        let places = home.locations
        try await home.plantLegacyStore(at: places.documents, version: 1)
        try await home.load(try home.container(seed: nil))
        // An older app version, still installed on another device or restored from a backup, wrote again.
        try await home.plantLegacyStore(at: places.documents, version: 1, copies: 2)
        let stray = try Data(contentsOf: places.documents)

        let container = try home.container(seed: nil)
        let events = try await home.load(container)
        #expect(events.contains(.strayLegacyStore(at: places.documents, current: places.current)))
        #expect(!events.contains { if case .movedStore = $0 { true } else { false } })
        #expect(try Data(contentsOf: places.documents) == stray, "the stray store is neither merged nor deleted")
        try await expectRecipes(in: container, titles: ChefsBook.legacyRecipes.map(\.name).sorted())
    }

    @Test func bundledSeedStoreOfAnOlderVersionIsCopiedAndMigratedOnFirstLaunchOnly() async throws {
        let home = try ChefsBookHome()
        let seed = home.root.appendingPathComponent("Bundle/Seed.sqlite")
        try await home.plantLegacyStore(at: seed, version: 2)
        let bundled = try Data(contentsOf: seed)
        let events = try await home.load(try home.container(seed: .store(seed)))
        #expect(events.contains(.copiedSeedStore(from: seed, to: home.locations.current)))
        #expect(try home.currentVersion() == "ChefsBook 4")
        #expect(try Data(contentsOf: seed) == bundled, "the bundled store is never written")

        // Second launch: the store exists, the seed is not copied again, the user's data stays.
        let first = try home.container(seed: .store(seed), queue: .private)
        try await home.load(first)
        try await first.performBackgroundTask { context in
            let recipe = context.insert("Recipe")
            recipe[attribute: "title"] = .string("Toast")
            recipe[attribute: "uid"] = .string("toast")
            try await context.save()
        }
        let second = try home.container(seed: .store(seed))
        let again = try await home.load(second)
        #expect(!again.contains { if case .copiedSeedStore = $0 { true } else { false } })
        try await expectRecipes(in: second, titles: (ChefsBook.legacyRecipes.map(\.name) + ["Toast"]).sorted())
    }

    @Test func seedingTwiceOrIntoAStoreThatHasTheRecordsCreatesNoDuplicates() async throws {
        let home = try ChefsBookHome()
        let seed = try home.starterSeed()
        let first = try await home.load(try home.container(seed: seed))
        // 3 recipes, 12 ingredients, 11 steps.
        #expect(try #require(seedSummary(in: first)).inserted == ["Recipe": 3, "Ingredient": 12, "Step": 11])
        let second = try await home.load(try home.container(seed: seed))
        #expect(second.contains(.seeded(store: home.locations.current, summary: RecordImportSummary(), skipped: true)))

        // The second-device case: the store holds the records but not the seed's digest.
        var metadata = try StoreFiles.metadata(at: home.locations.current)
        #expect(metadata.applicationKeys.removeValue(forKey: "TernSeedDigest") != nil)
        try StoreFiles.setMetadata(metadata, at: home.locations.current)
        let container = try home.container(seed: seed)
        let third = try await home.load(container)
        let merged = try #require(seedSummary(in: third))
        #expect(merged.insertedCount == 0 && merged.updated == ["Recipe": 3, "Ingredient": 12, "Step": 11])
        let titles = ChefsBook.starterRecipes.map(\.title).sorted()
        try await expectRecipes(in: container, titles: titles)
        let summaries = try await ChefsBook.summaries(in: container.mainContext)
        #expect(
            summaries.map(\.ingredientCount)
                == titles.map { title in
                    ChefsBook.starterRecipes.first { $0.title == title }?.ingredients.count ?? -1
                })
    }

    @Test(arguments: [MergePolicy.objectTrumps, .storeTrumps])
    func theMergePolicyDecidesWhichValuesWinWhenSeedingMeetsEditedRecords(_ policy: MergePolicy) async throws {
        let home = try ChefsBookHome()
        let container = try home.container(seed: nil, queue: .private)
        try await home.load(container)
        try await container.performBackgroundTask { context in
            let recipe = context.insert("Recipe")
            recipe[attribute: "uid"] = .string("lemon-tart")
            recipe[attribute: "title"] = .string("Granny's Lemon Tart")
            try await context.save()
        }
        var options = RecordImportOptions(format: .json)
        options.mergePolicy = policy
        let seeded = try home.container(seed: .records(try home.starterFile(), options))
        try await home.load(seeded)
        let summaries = try await ChefsBook.summaries(in: seeded.mainContext)
        #expect(summaries.count == 3)
        let tart = try #require(summaries.first { $0.uid == "lemon-tart" })
        #expect(tart.title == (policy == .storeTrumps ? "Granny's Lemon Tart" : "Lemon Tart"))
        #expect(tart.stepCount == 4, "the seed fills what the store lacks under both policies")
    }

    @Test func tabSeparatedStarterFileSeedsInSavedBatchesWithoutDuplicates() async throws {
        let home = try ChefsBookHome()
        let tsv = URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent()
            .deletingLastPathComponent().appendingPathComponent("Examples/ChefsBook/StarterRecipes.tsv")
        var options = RecordImportOptions(format: .tsv, entityName: "Recipe")
        options.batchSize = 3
        options.savesEachBatch = true
        let rows = try String(contentsOf: tsv, encoding: .utf8).split(separator: "\n").count - 1
        for _ in 0..<2 {
            let container = try home.container(seed: .records(tsv, options))
            let events = try await home.load(container)
            #expect(events.contains(.progress(store: home.locations.current, phase: .seeding, fraction: 1)))
            #expect(try await count("Recipe", in: container.mainContext) == rows)
            var metadata = try StoreFiles.metadata(at: home.locations.current)
            metadata.applicationKeys["TernSeedDigest"] = nil
            try StoreFiles.setMetadata(metadata, at: home.locations.current)
        }
    }

    @Test func mainContextSeesBackgroundSavesWithoutARefetch() async throws {
        let home = try ChefsBookHome()
        let container = try home.container(seed: try home.starterSeed())
        let posted = Mutex<[ContainerEvent]>([])
        let observer = NotificationCenter.default.addObserver(
            forName: PersistentContainer.didLoadStoresNotification, object: container, queue: nil
        ) { notification in
            if let event = notification.userInfo?[PersistentContainer.eventUserInfoKey] as? ContainerEvent {
                posted.withLock { $0.append(event) }
            }
        }
        defer { NotificationCenter.default.removeObserver(observer) }
        try await home.load(container)
        #expect(posted.withLock { $0 } == [.ready])
        try await container.loadStores()
        #expect(container.coordinator.stores.count == 1, "loading again keeps the store already added")

        // The main context holds the salad, as a list on screen would, while a background
        // context changes it; the object shows the change without being fetched again.
        let request = FetchRequest(entityName: "Recipe", predicate: try FetchPredicate("uid == 'green-salad'"))
        try await container.mainContext.perform { context in
            let salad = try #require(try await context.fetch(request).first)
            #expect(salad[attribute: "servings"] == .integer(2))
            let id = salad.objectID
            try await container.performBackgroundTask { background in
                let same = try await background.object(with: id)
                same[attribute: "servings"] = .integer(6)
                same[attribute: "title"] = .string("Big Green Salad")
                let lettuce = try #require(same.objects(for: "ingredients").first)
                background.delete(lettuce)
                try await background.save()
            }
            #expect(salad[attribute: "servings"] == .integer(6))
            #expect(salad[attribute: "title"] == .string("Big Green Salad"))
            #expect(salad.objectIDs(for: "ingredients").count == 2)
        }
    }

    @Test func inMemoryStoreStartsEmptyAndIsSeeded() async throws {
        let home = try ChefsBookHome()
        try await home.plantLegacyStore(at: home.locations.documents, version: 1)
        var description = StoreDescription(url: home.root.appendingPathComponent("Preview"), kind: .inMemory)
        description.legacyLocations = home.locations.legacy
        description.seed = try home.starterSeed()
        let container = PersistentContainer(name: "Preview", model: home.model, storeDescriptions: [description])
        let events = try await home.load(container)
        #expect(!events.contains { if case .foundLegacyStore = $0 { true } else { false } })
        try await expectRecipes(in: container, titles: ChefsBook.starterRecipes.map(\.title).sorted())
        #expect(FileManager.default.fileExists(atPath: home.locations.documents.path), "legacy stores are not touched")
        #expect(!FileManager.default.fileExists(atPath: description.url.path))
    }

    @Test func loadingFailsWithAnEventAndANotificationWhenMigrationIsOff() async throws {
        let home = try ChefsBookHome()
        try await home.plantLegacyStore(at: home.locations.documents, version: 1)
        var description = try ChefsBook.storeDescription(in: home.root, model: home.model)
        description.migration = .none
        let container = PersistentContainer(name: "ChefsBook", model: home.model, storeDescriptions: [description])
        let stream = container.events()
        await #expect(throws: TernError.self) { try await container.loadStores() }
        var failed = false
        for await event in stream {
            if case .failed(let store, let message) = event {
                #expect(store == home.locations.current)
                #expect(message.contains("migration is off"))
                failed = true
                break
            }
        }
        #expect(failed)
        #expect(FileManager.default.fileExists(atPath: home.locations.documents.path), "the legacy store is kept")
        #expect(!FileManager.default.fileExists(atPath: home.locations.current.path), "the half-made copy is removed")
    }
}
