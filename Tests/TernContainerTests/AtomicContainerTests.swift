import ChefsBook
import Foundation
import TernContainer
import TernCore
import TernMigration
import TernSQLite
import TernStores
import TernTestSupport
import Testing

/// Containers whose store description is a binary or XML store: an older store migrates on load,
/// and a binary store killed in the middle of its migration is always the old or the new one.
@Suite struct AtomicContainerTests {
    /// A version 1 Chef's Book store of a type, made from the legacy SQLite store.
    static func plantVersion1Store(at url: URL, kind: StoreKind, home: ChefsBookHome) async throws {
        let legacy = home.root.appendingPathComponent("Legacy-\(UUID().uuidString).sqlite")
        try await home.plantLegacyStore(at: legacy, version: 1)
        let source = try StoreFiles.open(at: legacy, model: home.model.versions[0].model, isReadOnly: true)
        try FileManager.default.createDirectory(at: url.deletingLastPathComponent(), withIntermediateDirectories: true)
        _ = try await StoreFiles.copy(source, to: url, kind: kind)
        try StoreFiles.destroy(at: legacy)
    }

    @Test(arguments: [StoreKind.binary, .xml])
    func aContainerLoadsAnOlderAtomicStore(kind: StoreKind) async throws {
        let home = try ChefsBookHome()
        let url = home.root.appendingPathComponent("Library/Recipes.store")
        try await Self.plantVersion1Store(at: url, kind: kind, home: home)
        var description = try ChefsBook.storeDescription(in: home.root, model: home.model)
        (description.url, description.kind, description.legacyLocations) = (url, kind, [])
        let container = PersistentContainer(name: "ChefsBook", model: home.model, storeDescriptions: [description])
        let events = try await home.load(container)
        #expect(events.contains(.migrated(store: url, steps: 3)))
        #expect(try StoreFiles.kind(ofStoreAt: url) == kind)
        #expect(home.model.version(matching: try StoreFiles.metadata(at: url))?.name == "ChefsBook 4")
        let summaries = try await ChefsBook.summaries(in: container.mainContext)
        #expect(summaries.map(\.title) == ChefsBook.legacyRecipes.map(\.name).sorted())
        for legacy in ChefsBook.legacyRecipes {
            let summary = try #require(summaries.first { $0.title == legacy.name })
            #expect(summary.stepCount == legacy.method.split(separator: "\n").count)
            #expect(summary.ingredientCount == legacy.ingredients.split(separator: "\n").count)
        }
        #expect(try home.leftovers(besides: url).isEmpty)
    }

    @Test func aKilledBinaryMigrationLeavesTheOldStoreOrTheNewOne() async throws {
        let helper = try #require(CrashHarness.builtExecutable(named: "tern-crash-helper"), "build the package first")
        let home = try ChefsBookHome()
        let template = home.root.appendingPathComponent("Template.binary")
        try await Self.plantVersion1Store(at: template, kind: .binary, home: home)
        let original = try Data(contentsOf: template)
        let url = home.root.appendingPathComponent("Store/Recipes.binary")
        let expected = ChefsBook.legacyRecipes.count
        let model = home.model
        let report = try await CrashHarness(name: "binary migration", iterations: CrashHarness.iterations(short: 8))
            .run(
                reset: {
                    try? FileManager.default.removeItem(at: url.deletingLastPathComponent())
                    try FileManager.default.createDirectory(
                        at: url.deletingLastPathComponent(), withIntermediateDirectories: true)
                    try original.write(to: url)
                },
                launch: { try CrashHarness.launch(helper, ["migrate", url.path]) },
                check: { _ in
                    let version = model.version(matching: try StoreFiles.metadata(at: url))?.name
                    let state: String
                    if version == "ChefsBook 1" {
                        guard try Data(contentsOf: url) == original else {
                            throw CrashHarness.Failure("the old store changed")
                        }
                        state = "old"
                    } else if version == "ChefsBook 4" {
                        state = "new"
                    } else {
                        throw CrashHarness.Failure("the store is at \(version ?? "no known version")")
                    }
                    // Running the migration again finishes the job and removes what the kill left.
                    try await StoreMigrator().migrateStore(
                        at: .file(url), model: model, mappings: try ChefsBook.mappings(for: model),
                        options: MigrationOptions(policies: ChefsBook.policies))
                    let store = try StoreFiles.open(at: url, model: model.currentVersion.model, isReadOnly: true)
                    let coordinator = PersistentStoreCoordinator(model: model.currentVersion.model)
                    try await coordinator.addStore(store)
                    let summaries = try await ChefsBook.summaries(in: ObjectContext(coordinator: coordinator))
                    guard summaries.count == expected,
                        try FileManager.default.contentsOfDirectory(atPath: url.deletingLastPathComponent().path) == [
                            "Recipes.binary"
                        ]
                    else {
                        throw CrashHarness.Failure(
                            "after the \(state) state, the rerun did not end with one complete store")
                    }
                    return state
                })
        #expect(report.finishedState == "new")
    }
}
