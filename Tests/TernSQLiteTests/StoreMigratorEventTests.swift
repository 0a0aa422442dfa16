import Foundation
import Synchronization
import TernCore
import TernMigration
import TernTestSupport
import Testing

@testable import TernSQLite

/// What a migration reports while it runs (events, progress), what it cleans up, and what a
/// cancellation leaves.
@Suite struct StoreMigratorEventTests {
    /// A v3 recipe store (three recipes, six ingredients) in a folder of its own.
    static func recipeStore(in directory: TemporaryDirectory) async throws -> URL {
        let url = directory.path("Recipes.sqlite")
        let model = try RecipeVersions.model(breaking: true)
        try await MigrationStores.make(
            at: url, model: try #require(model.version(named: "v3")?.model), rows: RecipeVersions.rows(for: "v3"))
        return url
    }

    /// Options and the v4 → v5 mapping with its Swift policy.
    static func customStep() throws -> (MigrationOptions, StepMapping) {
        var options = MigrationOptions(batchSize: 2)
        options.policies.register(MinutesAsText(), named: "MinutesAsText")
        return (options, try StepMapping(jsonData: Data(StoreMigratorChainTests.customStep.utf8)))
    }

    /// An event without its payload's details, for comparing sequences.
    static func summary(_ event: MigrationEvent) -> String {
        switch event {
        case .cleanedUp(let files): "cleanedUp \(files.count)"
        case .planned(let plan): "planned \(plan.steps.count)"
        case .editedMapping(let from, let to): "edited \(from)→\(to)"
        case .stepStarted(let index, let from, let to, let kind): "step \(index) \(from)→\(to) \(kind.rawValue)"
        case .entityMappingStarted(let step, let mapping, let objects): "mapping \(step) \(mapping) \(objects)"
        case .entityMappingRanAsSQL(let step, let mapping): "as SQL \(step) \(mapping)"
        case .relationshipsSetAsSQL(let step, let mapping): "relationships as SQL \(step) \(mapping)"
        case .stepFinished(let index): "finished step \(index)"
        case .replaced: "replaced"
        case .finished: "finished"
        case .waitingForMigrationLock: "waiting"
        }
    }

    @Test func theEventsArriveInOrderAsAnAsyncSequence() async throws {
        let directory = try TemporaryDirectory()
        let url = try await Self.recipeStore(in: directory)
        let (options, mapping) = try Self.customStep()
        var events: [String] = []
        var report: MigrationReport?
        for try await event in SQLiteStoreMigrator().events(
            migratingStoreAt: url, model: try RecipeVersions.model(breaking: true), mappings: [mapping],
            options: options)
        {
            events.append(Self.summary(event))
            if case .finished(let finished) = event { report = finished }
        }
        // Two steps built beside (a chain with a mapping), each entity mapping with its object count,
        // and the mapping that ran as SQL.
        #expect(
            events == [
                "planned 2",
                "step 0 v3→v4 inferred", "mapping 0 IngredientToIngredient 6", "mapping 0 RecipeToRecipe 3",
                "finished step 0",
                "step 1 v4→v5 mapping", "mapping 1 RecipeToRecipe 3", "mapping 1 IngredientToIngredient 6",
                // RecipeToRecipe has a custom policy; IngredientToIngredient compiles to SQL.
                "as SQL 1 IngredientToIngredient", "finished step 1",
                "replaced", "finished",
            ])
        #expect(report?.objectsPerStep == [9, 9])
    }

    @Test func aFailingMigrationEndsTheSequenceWithItsError() async throws {
        let directory = try TemporaryDirectory()
        let url = try await Self.recipeStore(in: directory)
        let (_, mapping) = try Self.customStep()
        var events: [String] = []
        // The policy is not registered: the mapped step fails, the store stays at v3.
        await #expect(throws: MigrationError.self) {
            for try await event in SQLiteStoreMigrator().events(
                migratingStoreAt: url, model: try RecipeVersions.model(breaking: true), mappings: [mapping])
            {
                events.append(Self.summary(event))
            }
        }
        #expect(events.first == "planned 2" && !events.contains("finished"))
        #expect(
            try SQLiteStoreMigrator().plan(forStoreAt: url, model: try RecipeVersions.model(breaking: true)).source
                == "v3")
    }

    @Test func progressCountsStepsAndEachStepsObjects() async throws {
        let directory = try TemporaryDirectory()
        let url = try await Self.recipeStore(in: directory)
        let (options, mapping) = try Self.customStep()
        let progress = Progress(totalUnitCount: 0)
        let fractions = FractionRecorder()
        let observed = ProgressBox(progress)
        try await SQLiteStoreMigrator().migrateStore(
            at: url, model: try RecipeVersions.model(breaking: true), mappings: [mapping], options: options,
            progress: progress,
            onEvent: { event in
                if case .stepFinished = event { fractions.record(observed.progress.fractionCompleted) }
            })
        #expect(progress.totalUnitCount == 2 && progress.completedUnitCount == 2)
        // Half done after the first of two steps: each step completes when all its objects are read.
        #expect(fractions.values == [0.5, 1])
    }

    @Test func inPlaceStepsReportTheirObjectsAndProgress() async throws {
        let directory = try TemporaryDirectory()
        let url = directory.path("Recipes.sqlite")
        let model = try RecipeVersions.model()
        try await MigrationStores.make(at: url, model: model.versions[0].model, rows: RecipeVersions.rows(for: "v1"))
        let progress = Progress(totalUnitCount: 0)
        let recorder = EventRecorder()
        let report = try await SQLiteStoreMigrator().migrateStore(
            at: url, model: model, to: "v3", progress: progress, onEvent: { recorder.record($0) })
        // v1 → v3 infers in one step, run in place.
        #expect(report.inPlaceSteps == [0] && report.objectsPerStep == [3])
        #expect(
            recorder.events.map(Self.summary) == [
                "planned 1", "step 0 v1→v3 inferred", "mapping 0 RecipeToRecipe 3", "finished step 0", "finished",
            ])
        #expect(progress.totalUnitCount == 1 && progress.completedUnitCount == 1 && progress.fractionCompleted == 1)
    }

    @Test func leftoverTemporaryFilesAreRemovedOnTheNextRun() async throws {
        let directory = try TemporaryDirectory()
        let url = try await Self.recipeStore(in: directory)
        // What a migration killed while building a step leaves beside the store.
        let leftovers = [".Recipes.sqlite.migrating-0-0F2D.sqlite", ".Recipes.sqlite.migrating-0-0F2D.sqlite-journal"]
        for name in leftovers { try Data("partial".utf8).write(to: directory.path(name)) }
        try Data("other".utf8).write(to: directory.path(".Other.sqlite.migrating-0-1.sqlite"))
        let recorder = EventRecorder()
        let report = try await SQLiteStoreMigrator().migrateStore(
            at: url, model: try RecipeVersions.model(breaking: true), to: "v4", onEvent: { recorder.record($0) })
        #expect(report.cleanedUpFiles == leftovers)
        #expect(recorder.events.first.map(Self.summary) == "cleanedUp 2")
        let names = try FileManager.default.contentsOfDirectory(atPath: directory.url.path)
        #expect(!names.contains { leftovers.contains($0) })
        // Another store's files are not touched.
        #expect(names.contains(".Other.sqlite.migrating-0-1.sqlite"))
        // With nothing left to migrate, a run still cleans up.
        try Data("partial".utf8).write(to: directory.path(leftovers[0]))
        let again = try await SQLiteStoreMigrator().migrateStore(
            at: url, model: try RecipeVersions.model(breaking: true), to: "v4")
        #expect(again.plan.isEmpty && again.cleanedUpFiles == [leftovers[0]])
    }

    /// Every file of a folder, by name.
    static func snapshot(_ directory: TemporaryDirectory) throws -> [String: Data] {
        var files: [String: Data] = [:]
        for name in try FileManager.default.contentsOfDirectory(atPath: directory.url.path) {
            files[name] = try Data(contentsOf: directory.path(name))
        }
        return files
    }

    @Test(arguments: [MigrationStrategy.inPlace, .rebuild])
    func aCancelledMigrationLeavesTheStoreByteForByte(_ strategy: MigrationStrategy) async throws {
        let directory = try TemporaryDirectory()
        let url = directory.path("Recipes.sqlite")
        let model = try RecipeVersions.model()
        let rows = (1...3_000).map { key in
            StoreRow(
                reference: RowReference(entityName: "Recipe", primaryKey: Int64(key)),
                attributes: ["name": .string("recipe \(key)")])
        }
        try await MigrationStores.make(at: url, model: model.versions[0].model, rows: rows)
        let before = try Self.snapshot(directory)
        // The migration runs in a task of its own, cancelled as it starts on the objects.
        let migration = Task {
            try await SQLiteStoreMigrator().migrateStore(
                at: url, model: model, options: MigrationOptions(batchSize: 100, strategy: strategy),
                onEvent: { event in
                    if case .entityMappingStarted = event { withUnsafeCurrentTask { $0?.cancel() } }
                })
        }
        let error = await #expect(throws: MigrationError.self) { try await migration.value }
        #expect(error?.code == .cancelled)
        #expect(try Self.snapshot(directory) == before)
    }
}

/// Collects fractions of a progress from the migration's callback.
final class FractionRecorder: Sendable {
    private let storage = Mutex<[Double]>([])

    /// Records a fraction.
    func record(_ fraction: Double) { storage.withLock { $0.append(fraction) } }

    /// The fractions so far.
    var values: [Double] { storage.withLock { $0 } }
}
