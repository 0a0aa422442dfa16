import ChefsBook
import Foundation
import TernCore
import TernFormats
import TernMigration
import TernSQLite

/// `tern demo [DIR]`: the Chef's Book walk-through, on the same library calls an app makes.
struct DemoCommand: Command {
    /// Where to run the story.
    static let directory = ArgumentDefinition.positional(
        "DIR", isRequired: false, help: "The folder to play the story in; a new temporary folder when omitted.")

    /// The command's name, arguments and help.
    static let configuration = CommandConfiguration(
        name: "demo",
        abstract: "Walks through the Chef's Book story: a store found, moved, migrated v1 → v4 and seeded.",
        discussion: """
            Version 1 of a recipe app kept its store in Documents. Version 4 keeps it in
            Library/Application Support, and its model changed three times on the way: ingredients
            and times moved out of text (a custom step), a rename with a renaming identifier and a
            unique uid (inferred), and steps split out of the method (a custom step). The demo makes
            the version 1 store, finds it, forecasts the migration, migrates it into its new place
            (the old store is removed only once the new one is complete and on disk), merges the
            starter recipes without duplicates (twice, to show it changes nothing the second
            time), checks the result and prints the recipes. The Chef's Book model and policies
            are in Examples/ChefsBook.
            """,
        arguments: [directory, .progress, .quiet],
        examples: ["tern demo", "tern demo /tmp/chefs-book"])

    /// The folder as typed, if any.
    var directoryPath: String?

    /// Makes the command from its parsed command line.
    init(_ arguments: ParsedArguments) throws(ValidationError) {
        directoryPath = arguments.value(of: Self.directory)
    }

    /// Plays the story.
    func run(in context: CommandContext) async throws {
        let root = try makeRoot(in: context)
        let model = try ChefsBook.model()
        let documents = root.appendingPathComponent("Documents/Recipes.sqlite")
        let library = root.appendingPathComponent("Library/Application Support/Recipes.sqlite")
        let legacyPlaces = [documents, root.appendingPathComponent("Library/Recipes.sqlite")]

        context.print("Chef's Book demo in \(root.path)")
        context.print("")
        context.print("1. Version 1 of the app saved its recipes in Documents.")
        try FileManager.default.createDirectory(at: documents.deletingLastPathComponent(), withIntermediateDirectories: true)
        try await ChefsBook.createLegacyStore(at: documents, model: model)
        for recipe in ChefsBook.legacyRecipes {
            context.print("   \(recipe.name): \(recipe.preparationTime) + \(recipe.cookingTime), ingredients and method as text")
        }

        context.print("")
        context.print("2. Version 4 starts and looks for its store.")
        let found = try locate(current: library, legacy: legacyPlaces, model: model, in: context)

        context.print("")
        context.print("3. The forecast, before anything is touched:")
        let mappings = try ChefsBook.mappings(for: model)
        let plan = try StoreMigrator().plan(forStoreAt: found, model: model, mappings: mappings)
        for line in plan.description.split(separator: "\n") { context.print("   \(line)") }

        context.print("")
        context.print("4. Migrating \(plan.source) → \(plan.destination) into Library/Application Support.")
        try FileManager.default.createDirectory(at: library.deletingLastPathComponent(), withIntermediateDirectories: true)
        let progress = Progress(totalUnitCount: 1)
        let bar = context.progressBar("migrating", for: progress)
        let report: MigrationReport
        do {
            defer { bar.finish() }
            report = try await StoreMigrator().migrateStore(
                at: found, model: model, mappings: mappings,
                options: MigrationOptions(destination: library, policies: ChefsBook.policies), progress: progress)
        }
        let objects = report.objectsPerStep.map(String.init).joined(separator: ", ")
        context.print("   \(report.plan.steps.count) steps, objects read per step: \(objects)")
        try Self.removeStoreFiles(of: found)
        context.print("   the new store is complete and on disk; the old one in Documents is removed")

        context.print("")
        context.print("5. Merging the starter recipes (keyed by uid).")
        let first = try await ChefsBook.seedStarterRecipes(into: library, model: model)
        context.print("   first launch:  \(first.inserted) inserted, \(first.matched) already there (merged, not duplicated)")
        let second = try await ChefsBook.seedStarterRecipes(into: library, model: model)
        context.print("   second launch: \(second.inserted) inserted, \(second.matched) already there")

        context.print("")
        context.print("6. Checking the store.")
        try await verify(library, model: model, in: context)

        context.print("")
        context.print("7. The recipes:")
        let summaries = try await ChefsBook.summaries(ofStoreAt: library, model: model)
        let width = max(5, summaries.map(\.title.count).max() ?? 0)
        context.print("   " + "title".padding(toLength: width, withPad: " ", startingAt: 0) + "  ingredients  steps  minutes  uid")
        for summary in summaries {
            let title = summary.title.padding(toLength: width, withPad: " ", startingAt: 0)
            let ingredients = String(summary.ingredientCount).leftPadded(to: 11)
            let steps = String(summary.stepCount).leftPadded(to: 5)
            let minutes = String(summary.totalMinutes).leftPadded(to: 7)
            context.print("   \(title)  \(ingredients)  \(steps)  \(minutes)  \(summary.uid ?? "-")")
        }
    }

    // MARK: - Non public

    /// The folder to play in: DIR (created if needed, and it must hold no earlier run), or a new temporary folder.
    private func makeRoot(in context: CommandContext) throws -> URL {
        guard let directoryPath else {
            let root = FileManager.default.temporaryDirectory.appendingPathComponent("tern-demo-\(UUID().uuidString)")
            try FileManager.default.createDirectory(at: root, withIntermediateDirectories: true)
            return root
        }
        let root = context.environment.url(forPath: directoryPath)
        for place in ["Documents", "Library"] where FileManager.default.fileExists(atPath: root.appendingPathComponent(place).path) {
            throw CommandFailure("\(directoryPath) already holds a \(place) folder from an earlier run; give an empty or new folder")
        }
        try FileManager.default.createDirectory(at: root, withIntermediateDirectories: true)
        return root
    }

    /// Finds the store: the current place first, then the legacy places in order of preference.
    private func locate(current: URL, legacy: [URL], model: VersionedModel, in context: CommandContext) throws -> URL {
        let candidates = [current] + legacy
        for candidate in candidates {
            guard FileManager.default.fileExists(atPath: candidate.path) else {
                context.print("   \(relative(candidate)): nothing")
                continue
            }
            let metadata = try SQLiteStore.metadata(at: candidate)
            let version = model.version(matching: metadata)?.name ?? "no known version"
            context.print("   \(relative(candidate)): a store written by \(version)")
            return candidate
        }
        throw CommandFailure("no Chef's Book store was found")
    }

    /// Verifies the store as `tern verify` does: integrity, key counters, references, required
    /// values and uniqueness.
    private func verify(_ url: URL, model: VersionedModel, in context: CommandContext) async throws {
        let metadata = try SQLiteStore.metadata(at: url)
        guard model.currentVersion.model.isCompatible(with: metadata) else {
            throw CommandFailure("the migrated store does not match \(model.currentVersionName)")
        }
        let report = try await StoreVerifier.verify(storeAt: url, model: model.currentVersion.model)
        guard report.problems.isEmpty else {
            throw CommandFailure(
                "the migrated store has \(report.problems.count) problem(s)", details: report.problems.map(\.message))
        }
        context.print("   written by \(model.version(matching: metadata)?.name ?? "?"); \(report.objectCount) objects checked, no problems")
    }

    /// The path of a place relative to the demo folder, for narration.
    private func relative(_ url: URL) -> String {
        let components = url.pathComponents.suffix(url.pathComponents.contains("Application Support") ? 3 : 2)
        return components.joined(separator: "/")
    }

    /// Removes a store's main file and its sidecars (`-wal`, `-shm`, `-journal`, `.<name>_SUPPORT`).
    static func removeStoreFiles(of url: URL) throws {
        let folder = url.deletingLastPathComponent()
        let names = ["", "-wal", "-shm", "-journal"].map { url.lastPathComponent + $0 } + [".\(url.deletingPathExtension().lastPathComponent)_SUPPORT"]
        for name in names {
            let path = folder.appendingPathComponent(name).path
            if FileManager.default.fileExists(atPath: path) { try FileManager.default.removeItem(atPath: path) }
        }
    }
}

extension String {
    /// The string padded with spaces on the left to a width.
    fileprivate func leftPadded(to width: Int) -> String {
        String(repeating: " ", count: max(0, width - count)) + self
    }
}
