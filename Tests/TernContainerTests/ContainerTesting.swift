import ChefsBook
import Foundation
import Synchronization
import TernContainer
import TernCore
import TernFormats
import TernSQLite
import TernTestSupport
import Testing

/// An app home for the Chef's Book, with helpers to load its container and read what it holds.
struct ChefsBookHome {
    let directory: TemporaryDirectory
    let model: VersionedModel
    var root: URL { directory.url }
    var locations: ChefsBook.Locations { ChefsBook.Locations(root: root) }

    init() throws {
        directory = try TemporaryDirectory()
        model = try ChefsBook.model()
    }

    /// The starter recipes as the JSON file the app bundle ships.
    func starterFile() throws -> URL {
        let url = root.appendingPathComponent("Bundle/StarterRecipes.json")
        if !FileManager.default.fileExists(atPath: url.path) {
            try FileManager.default.createDirectory(
                at: url.deletingLastPathComponent(), withIntermediateDirectories: true)
            try ChefsBook.starterRecordsJSON().write(to: url)
        }
        return url
    }

    /// Writes a legacy store of version 1 or 2 at a place.
    func plantLegacyStore(at url: URL, version: Int, copies: Int = 1) async throws {
        try FileManager.default.createDirectory(at: url.deletingLastPathComponent(), withIntermediateDirectories: true)
        try await ChefsBook.createLegacyStore(at: url, model: model, version: version, copies: copies)
    }

    /// The starter JSON as a seed.
    func starterSeed() throws -> StoreDescription.Seed {
        .records(try starterFile(), RecordImportOptions(format: .json))
    }

    /// A container of the app.
    func container(seed: StoreDescription.Seed?, queue: ContextQueue = .main) throws -> PersistentContainer {
        let description = try ChefsBook.storeDescription(in: root, model: model, seed: seed)
        return PersistentContainer(
            name: "ChefsBook", model: model, storeDescriptions: [description], mainContextQueue: queue)
    }

    /// Loads a container and returns the events it reported, up to `.ready`.
    @discardableResult
    func load(_ container: PersistentContainer) async throws -> [ContainerEvent] {
        let stream = container.events()
        try await container.loadStores()
        var events: [ContainerEvent] = []
        for await event in stream {
            events.append(event)
            if event == .ready { break }
        }
        return events
    }

    /// The model version that wrote the current store.
    func currentVersion() throws -> String? {
        model.version(matching: try SQLiteStore.metadata(at: locations.current))?.name
    }

    /// The journal of a move to the current place (present only while a move is under way).
    var moveJournal: URL {
        locations.current.deletingLastPathComponent().appendingPathComponent(".Recipes.sqlite.tern-move")
    }

    /// Writes the journal a move from `source` to the current place leaves when a crash stops it in `phase`.
    func writeMoveJournal(from source: URL, phase: String) throws {
        let record =
            #"{"source":"\#(source.path)","destination":"\#(locations.current.path)","phase":"\#(phase)","removesSource":true}"#
        try Data(record.utf8).write(to: moveJournal)
    }

    /// The names of the files in a folder, without the store's own `-wal`/`-shm` files and its lock file.
    func leftovers(besides url: URL) throws -> [String] {
        let names = try FileManager.default.contentsOfDirectory(atPath: url.deletingLastPathComponent().path)
        let own = ["", "-wal", "-shm"].map { url.lastPathComponent + $0 } + [".\(url.lastPathComponent).tern-lock"]
        return names.filter { !own.contains($0) }.sorted()
    }

    /// Every legacy recipe and starter recipe, each once: what every legacy situation ends with.
    static var expectedTitles: [String] {
        Set(ChefsBook.legacyRecipes.map(\.name) + ChefsBook.starterRecipes.map(\.title)).sorted()
    }
}

/// The number of objects of an entity a context sees.
func count(_ entityName: String, in context: ObjectContext) async throws -> Int {
    try await context.perform { try await $0.count(for: FetchRequest(entityName: entityName)) }
}

/// Checks the recipes of a container: each expected title once, unique uids, and the legacy
/// recipes' ingredients and steps; no ingredient or step without a recipe.
func expectRecipes(in container: PersistentContainer, titles: [String]) async throws {
    let summaries = try await ChefsBook.summaries(in: container.mainContext)
    #expect(summaries.map(\.title) == titles)
    let uids = summaries.compactMap(\.uid)
    #expect(uids.count == summaries.count && Set(uids).count == uids.count)
    for legacy in ChefsBook.legacyRecipes {
        guard let summary = summaries.first(where: { $0.title == legacy.name }) else { continue }
        #expect(summary.stepCount == legacy.method.split(separator: "\n").count, "\(legacy.name) steps")
        #expect(
            summary.ingredientCount == legacy.ingredients.split(separator: "\n").count, "\(legacy.name) ingredients")
    }
    #expect(try await count("Ingredient", in: container.mainContext) == summaries.map(\.ingredientCount).reduce(0, +))
    #expect(try await count("Step", in: container.mainContext) == summaries.map(\.stepCount).reduce(0, +))
}

/// What the seeding reported, when it imported records.
func seedSummary(in events: [ContainerEvent]) -> RecordImportSummary? {
    for case .seeded(_, let summary, false) in events { return summary }
    return nil
}
