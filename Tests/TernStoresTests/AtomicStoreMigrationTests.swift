import Foundation
import Synchronization
import TernCore
import TernMigration
import TernRelational
import TernSQLite
import TernStores
import TernTestSupport
import Testing

/// Migrations of binary and XML stores between model versions: inferred, mapped and chained
/// steps, changes of type, progress, cancellation and I/O faults during the swap.
@Suite struct AtomicStoreMigrationTests {
    /// The v4 → v5 step of the breaking recipe model as a JSON mapping: `minutes` becomes text.
    static let minutesAsText = #"""
        {"source": "v4", "destination": "v5", "passes": [{"name": "Only", "entityMappings": [
          {"name": "RecipeToRecipe", "kind": "transform", "source": "Recipe", "destination": "Recipe",
           "attributes": {"heading": "$source.title", "minutes": "concat(string($source.minutes), \" min\")",
                          "servings": "$source.servings", "notes": "$source.notes"},
           "relationships": {"ingredients": "destinationInstances(\"IngredientToIngredient\", $source.ingredients)"}},
          {"name": "IngredientToIngredient", "kind": "copy", "source": "Ingredient", "destination": "Ingredient"}]}]}
        """#

    /// Writes a store of a type with rows.
    static func make(_ url: URL, kind: StoreKind, model: ManagedObjectModel, rows: [StoreRow]) async throws {
        let store = try await StoreFiles.create(at: url, kind: kind, model: model)
        _ = try await store.save(StoreChangeSet(inserted: rows))
    }

    /// The rows of an entity, by primary key, read through a fresh read-only store.
    static func rows(of entity: String, at url: URL, model: ManagedObjectModel) async throws -> [StoreRow] {
        let store = try StoreFiles.open(at: url, model: model, isReadOnly: true)
        var request = StoreFetchRequest(entityName: entity)
        request.includesSubentities = false
        return try await store.fetch(request).sorted { $0.reference < $1.reference }
    }

    /// Checks that a store holds the three v5 recipes migrated from `version`.
    static func expectMigratedRecipes(at url: URL, from version: String, model: VersionedModel) async throws {
        let v5 = model.versions[4].model
        #expect(v5.isCompatible(with: try StoreFiles.metadata(at: url)))
        let recipes = try await rows(of: "Recipe", at: url, model: v5)
        #expect(recipes.map { $0.attributes["heading"] } == (1...3).map { .string("Recipe \($0)") })
        #expect(recipes.map { $0.attributes["minutes"] } == [.string("10 min"), .string("20 min"), .string("30 min")])
        let servings: [AttributeValue?] =
            version >= "v3" ? [.integer(1), .integer(2), .integer(3)] : Array(repeating: .integer(2), count: 3)
        #expect(recipes.map { $0.attributes["servings"] } == servings)
        let notes: [AttributeValue?] = version >= "v4" ? (1...3).map { .string("note \($0)") } : [nil, nil, nil]
        #expect(recipes.map { $0.attributes["notes"] } == notes)
        let ingredients = try await rows(of: "Ingredient", at: url, model: v5)
        #expect(ingredients.count == (version >= "v3" ? 6 : 0))
        for ingredient in ingredients {
            guard case .string(let name)? = ingredient.attributes["name"], let key = Int(name.dropFirst()) else {
                Issue.record("an ingredient lost its name")
                continue
            }
            #expect(ingredient.attributes["quantity"] == (version >= "v4" ? .double(Double(key) / 2) : nil))
            let recipe = try #require(recipes.first { $0.reference == ingredient.toOne["recipe"] })
            #expect(recipe.attributes["heading"] == .string("Recipe \(key / 10)"))
            #expect(recipe.toMany["ingredients"]?.contains(ingredient.reference) == true)
        }
    }

    static func breakingModelAndMapping() throws -> (VersionedModel, StepMapping) {
        (try RecipeVersions.model(breaking: true), try StepMapping(jsonData: Data(minutesAsText.utf8)))
    }

    static let olderVersions = ["v1", "v2", "v3", "v4"]

    @Test(arguments: [StoreKind.binary, .xml], olderVersions)
    func migratesEveryOlderVersionToTheNewestInOneCall(kind: StoreKind, version: String) async throws {
        let (model, mapping) = try Self.breakingModelAndMapping()
        let directory = try TemporaryDirectory()
        let url = directory.path("Recipes.store")
        try await Self.make(
            url, kind: kind, model: try #require(model.version(named: version)).model,
            rows: RecipeVersions.rows(for: version))
        let report = try await StoreMigrator().migrateStore(
            at: .file(url), model: model, mappings: [mapping], options: MigrationOptions(batchSize: 2))
        let kinds = report.plan.steps.map { "\($0.from)→\($0.to):\($0.kind.rawValue)" }
        #expect(kinds == (version == "v4" ? [] : ["\(version)→v4:inferred"]) + ["v4→v5:mapping"])
        #expect(try StoreFiles.kind(ofStoreAt: url) == kind)
        try await Self.expectMigratedRecipes(at: url, from: version, model: model)
        let journal = MigrationJournal(metadata: try StoreFiles.metadata(at: url))
        #expect(journal.entries.map { "\($0.from)→\($0.to)" } == report.plan.steps.map { "\($0.from)→\($0.to)" })
        // The migrated store opens without the model: it carries its own.
        #expect(try StoreFiles.open(at: url, model: nil, isReadOnly: true).model == model.versions[4].model)
        #expect(try FileManager.default.contentsOfDirectory(atPath: directory.url.path) == ["Recipes.store"])
    }

    @Test(arguments: [StoreKind.binary, .xml])
    func runsInferredChainsAndMultiPassMappings(kind: StoreKind) async throws {
        // Inferred: v1 → v5 of the non-breaking model is a chain of inferred steps.
        let model = try RecipeVersions.model()
        let directory = try TemporaryDirectory()
        let url = directory.path("Recipes.store")
        try await Self.make(url, kind: kind, model: model.versions[0].model, rows: RecipeVersions.rows(for: "v1"))
        let report = try await StoreMigrator().migrateStore(at: .file(url), model: model)
        #expect(report.plan.steps.allSatisfy { $0.kind == .inferred })
        #expect(report.objectsPerStep.allSatisfy { $0 == 3 })
        let recipes = try await Self.rows(of: "Recipe", at: url, model: model.versions[4].model)
        #expect(recipes.map { $0.attributes["heading"] } == (1...3).map { .string("Recipe \($0)") })
        #expect(recipes.map { $0.attributes["minutes"] } == [.integer(10), .integer(20), .integer(30)])

        // Multi-pass: the school model, a person attribute renamed in one pass and courses in the next.
        let school = try VersionedModel("School") {
            SchoolVersions.version("s1", personName: "name", courseName: "name")
            SchoolVersions.version("s2", personName: "fullName", courseName: "title")
        }
        let schoolURL = directory.path("School.store")
        try await Self.make(schoolURL, kind: kind, model: school.versions[0].model, rows: Self.schoolRows())
        let passes = #"""
            {"source": "s1", "destination": "s2", "passes": [
              {"name": "People", "entityMappings": [
                {"name": "PersonToPerson", "kind": "transform", "source": "Person", "destination": "Person",
                 "attributes": {"fullName": "uppercase($source.name)"}},
                {"name": "StudentToStudent", "kind": "transform", "source": "Student", "destination": "Student",
                 "attributes": {"fullName": "$source.name", "number": "$source.number"}}]},
              {"name": "Courses", "entityMappings": [
                {"name": "CourseToCourse", "kind": "transform", "source": "Course", "destination": "Course",
                 "attributes": {"title": "concat(\"Course \", $source.name)"}}]}]}
            """#
        let mapping = try StepMapping(jsonData: Data(passes.utf8))
        try await StoreMigrator().migrateStore(at: .file(schoolURL), model: school, mappings: [mapping])
        let people = try await Self.rows(of: "Person", at: schoolURL, model: school.versions[1].model)
        let students = try await Self.rows(of: "Student", at: schoolURL, model: school.versions[1].model)
        let courses = try await Self.rows(of: "Course", at: schoolURL, model: school.versions[1].model)
        #expect(people.map { $0.attributes["fullName"] } == [.string("ADA")])
        #expect(students.map { $0.attributes["fullName"] } == [.string("Bo")])
        #expect(students.map { $0.attributes["number"] } == [.integer(7)])
        #expect(courses.map { $0.attributes["title"] } == [.string("Course Maths")])
    }

    /// A person, a student and a course of the school model's first version.
    static func schoolRows() -> [StoreRow] {
        [
            StoreRow(
                reference: RowReference(entityName: "Person", primaryKey: 1), attributes: ["name": .string("Ada")]),
            StoreRow(
                reference: RowReference(entityName: "Student", primaryKey: 2),
                attributes: ["name": .string("Bo"), "number": .integer(7)]),
            StoreRow(
                reference: RowReference(entityName: "Course", primaryKey: 1), attributes: ["name": .string("Maths")]),
        ]
    }

    @Test func changesTypeOnTheWayAndLeavesTheSourceAsItWas() async throws {
        let (model, mapping) = try Self.breakingModelAndMapping()
        let directory = try TemporaryDirectory()
        let binary = directory.path("Recipes.binary")
        try await Self.make(binary, kind: .binary, model: model.versions[2].model, rows: RecipeVersions.rows(for: "v3"))
        let original = try Data(contentsOf: binary)
        for kind in [StoreKind.xml, .sqlite] {
            let destination = directory.path("Recipes-\(kind.rawValue).store")
            try await StoreMigrator().migrateStore(
                at: .file(binary), model: model, mappings: [mapping], kind: kind,
                options: MigrationOptions(destination: .file(destination)))
            #expect(try StoreFiles.kind(ofStoreAt: destination) == kind)
            try await Self.expectMigratedRecipes(at: destination, from: "v3", model: model)
            #expect(try Data(contentsOf: binary) == original)
        }
        // An existing destination is refused before anything is written.
        await #expect(throws: TernError.self) {
            try await StoreMigrator().migrateStore(
                at: .file(binary), model: model, mappings: [mapping], kind: .xml,
                options: MigrationOptions(destination: .file(directory.path("Recipes-\(StoreKind.xml.rawValue).store")))
            )
        }
        // In place into SQLite: the binary file is replaced by a SQLite store.
        try await StoreMigrator().migrateStore(at: .file(binary), model: model, mappings: [mapping], kind: .sqlite)
        #expect(try StoreFiles.kind(ofStoreAt: binary) == .sqlite)
        try await Self.expectMigratedRecipes(at: binary, from: "v3", model: model)
        // A SQLite store changes type only into a new file.
        await #expect(throws: TernError.self) {
            try await StoreMigrator().migrateStore(at: .file(binary), model: model, kind: .xml)
        }
    }

    @Test func reportsProgressAndEvents() async throws {
        let (model, mapping) = try Self.breakingModelAndMapping()
        let directory = try TemporaryDirectory()
        let url = directory.path("Recipes.xml")
        try await Self.make(url, kind: .xml, model: model.versions[2].model, rows: RecipeVersions.rows(for: "v3"))
        let progress = Progress(totalUnitCount: 1)
        let events = Mutex<[MigrationEvent]>([])
        try await StoreMigrator().migrateStore(
            at: .file(url), model: model, mappings: [mapping], options: MigrationOptions(batchSize: 2),
            progress: progress,
            onEvent: { event in events.withLock { $0.append(event) } })
        #expect(progress.totalUnitCount == 2)
        #expect(progress.completedUnitCount == 2)
        let seen = events.withLock { $0 }
        let started = seen.compactMap { event -> String? in
            guard case .entityMappingStarted(let step, let mapping, let objects) = event else { return nil }
            return "\(step) \(mapping) \(objects)"
        }
        #expect(started.contains("1 RecipeToRecipe 3"))
        #expect(started.contains("1 IngredientToIngredient 6"))
        guard case .finished? = seen.last, case .planned? = seen.first else {
            Issue.record("events start with the plan and end with the report: \(seen)")
            return
        }
        #expect(seen.contains(.replaced(url)))
    }

    @Test func aCancelledMigrationLeavesTheSourceByteForByte() async throws {
        let (model, mapping) = try Self.breakingModelAndMapping()
        let directory = try TemporaryDirectory()
        let url = directory.path("Recipes.binary")
        try await Self.make(url, kind: .binary, model: model.versions[0].model, rows: RecipeVersions.rows(for: "v1"))
        let original = try Data(contentsOf: url)
        let task = Task {
            withUnsafeCurrentTask { $0?.cancel() }
            try await StoreMigrator().migrateStore(at: .file(url), model: model, mappings: [mapping])
        }
        do {
            _ = try await task.value
            Issue.record("a cancelled migration finished")
        } catch let error as MigrationError {
            #expect(error.code == .cancelled)
        }
        #expect(try Data(contentsOf: url) == original)
        #expect(try FileManager.default.contentsOfDirectory(atPath: directory.url.path) == ["Recipes.binary"])
    }

    @Test func removesTheLeftoversOfAnInterruptedMigration() async throws {
        let model = try RecipeVersions.model()
        let directory = try TemporaryDirectory()
        let url = directory.path("Recipes.binary")
        try await Self.make(url, kind: .binary, model: model.versions[0].model, rows: RecipeVersions.rows(for: "v1"))
        let stray = ".Recipes.binary.tern-tmp-1234"
        try Data("half".utf8).write(to: directory.path(stray))
        let report = try await StoreMigrator().migrateStore(at: .file(url), model: model)
        #expect(report.cleanedUpFiles == [stray])
        #expect(try FileManager.default.contentsOfDirectory(atPath: directory.url.path) == ["Recipes.binary"])
    }

    @Test(arguments: [StoreKind.binary, .sqlite])
    func aFaultDuringTheSwapLeavesTheOldStoreOrTheNewOne(destination: StoreKind) async throws {
        let (model, mapping) = try Self.breakingModelAndMapping()
        let directory = try TemporaryDirectory()
        let url = directory.path("Recipes.binary")
        try await Self.make(url, kind: .binary, model: model.versions[0].model, rows: RecipeVersions.rows(for: "v1"))
        let original = try Data(contentsOf: url)
        let report = try await FaultSweep(name: "migrate binary → \(destination.rawValue)").run(
            reset: {
                for name in try FileManager.default.contentsOfDirectory(atPath: directory.url.path) {
                    try FileManager.default.removeItem(at: directory.path(name))
                }
                try original.write(to: url)
            },
            operation: {
                try await StoreMigrator().migrateStore(
                    at: .file(url), model: model, mappings: [mapping], kind: destination)
            },
            isTyped: { $0 is TernError || $0 is SQLiteError || $0 is MigrationError },
            check: { error in
                if try Data(contentsOf: url) == original {
                    // The old store: a rerun finishes the job.
                    try await StoreMigrator().migrateStore(
                        at: .file(url), model: model, mappings: [mapping], kind: destination)
                    try await Self.expectMigratedRecipes(at: url, from: "v1", model: model)
                    if error == nil { Issue.record("the migration reported success but left the old store") }
                    return "old"
                }
                try await Self.expectMigratedRecipes(at: url, from: "v1", model: model)
                return "new"
            })
        #expect(report.faults > 0)
        #expect(report.states["old", default: 0] > 0)
    }

    /// A SQLite store migrates into binary and XML stores through a temporary SQLite store (the
    /// steps stream; the destination's rows are read in pages and written once), with the same
    /// result as any other migration, the source untouched and no temporary file left.
    @Test(arguments: [StoreKind.binary, .xml], olderVersions)
    func aSQLiteStoreMigratesIntoAnAtomicOneThroughATemporarySQLiteStore(kind: StoreKind, version: String) async throws
    {
        let (model, mapping) = try Self.breakingModelAndMapping()
        let directory = try TemporaryDirectory()
        let sqlite = directory.path("Recipes.sqlite")
        try await Self.make(
            sqlite, kind: .sqlite, model: try #require(model.version(named: version)).model,
            rows: RecipeVersions.rows(for: version))
        let original = InterruptedWrite.files(of: sqlite)
        let destination = directory.path("Recipes.\(kind.rawValue)")
        let events = Mutex<[String]>([])
        let report = try await StoreMigrator().migrateStore(
            at: .file(sqlite), model: model, mappings: [mapping], kind: kind,
            options: MigrationOptions(destination: .file(destination), batchSize: 2),
            onEvent: { event in events.withLock { $0.append("\(event)".prefix(while: { $0 != "(" }).description) } })
        #expect(report.plan.destination == "v5")
        #expect(try StoreFiles.kind(ofStoreAt: destination) == kind)
        try await Self.expectMigratedRecipes(at: destination, from: version, model: model)
        #expect(InterruptedWrite.files(of: sqlite) == original)
        let names = try FileManager.default.contentsOfDirectory(atPath: directory.url.path).sorted()
        #expect(names == ["Recipes.\(kind.rawValue)", "Recipes.sqlite"])
        let seen = events.withLock { $0 }
        #expect(seen.first == "planned" && seen.last == "finished")
        #expect(seen.filter { $0 == "planned" }.count == 1 && seen.filter { $0 == "finished" }.count == 1)
        #expect(seen.contains("stepStarted"))
    }
}
