import ChefsBook
import Foundation
import TernContainer
import TernCore
import TernFormats
import TernMigration
import TernSQLite
import TernStores

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
            the version 1 store, forecasts the migration, and loads version 4's PersistentContainer,
            the same library calls an app makes: it finds the store, moves it into its new place,
            migrates it (the old store is removed only once the new one is complete and on disk) and
            merges the starter recipes without duplicates. A second launch changes nothing. Then
            it checks the result and prints the recipes. The Chef's Book model and policies
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
        let places = ChefsBook.Locations(root: root)

        context.print("Chef's Book demo in \(root.path)")
        context.print("")
        context.print("1. Version 1 of the app saved its recipes in Documents.")
        try FileManager.default.createDirectory(
            at: places.documents.deletingLastPathComponent(), withIntermediateDirectories: true)
        try await ChefsBook.createLegacyStore(at: places.documents, model: model)
        for recipe in ChefsBook.legacyRecipes {
            context.print(
                "   \(recipe.name): \(recipe.preparationTime) + \(recipe.cookingTime), ingredients and method as text")
        }
        // Version 4's app bundle ships its starter recipes as a JSON record file.
        let starter = root.appendingPathComponent("ChefsBook.app/StarterRecipes.json")
        try FileManager.default.createDirectory(
            at: starter.deletingLastPathComponent(), withIntermediateDirectories: true)
        try ChefsBook.starterRecordsJSON().write(to: starter)
        let description = try ChefsBook.storeDescription(
            in: root, model: model, seed: .records(starter, RecordImportOptions(format: .json)))

        context.print("")
        context.print("2. Version 4 starts; its container looks for the store, the current place first.")
        var found: URL?
        for place in [places.current] + places.legacy where found == nil {
            guard FileManager.default.fileExists(atPath: place.path) else {
                context.print("   \(relative(place)): nothing")
                continue
            }
            let version = model.version(matching: try SQLiteStore.metadata(at: place))?.name ?? "no known version"
            context.print("   \(relative(place)): a store written by \(version)")
            found = place
        }
        guard let found else { throw CommandFailure("no Chef's Book store was found") }

        context.print("")
        context.print("3. The forecast, before anything is touched:")
        let plan = try StoreMigrator().plan(
            forStoreAt: .file(found), model: model, mappings: description.migration.mappings)
        for line in plan.description.split(separator: "\n") { context.print("   \(line)") }

        context.print("")
        context.print("4. Loading the container: it moves the store to Library/Application Support, migrates")
        context.print("   it \(plan.source) → \(plan.destination) and merges the starter recipes.")
        let container = PersistentContainer(
            name: "ChefsBook", model: model, storeDescriptions: [description], mainContextQueue: .private)
        for event in try await load(container, in: context) { narrate(event, in: context) }

        context.print("")
        context.print("5. Launching again: nothing is moved, migrated or imported twice.")
        let again = PersistentContainer(
            name: "ChefsBook", model: model, storeDescriptions: [description], mainContextQueue: .private)
        for event in try await load(again, showingProgress: false, in: context) { narrate(event, in: context) }

        context.print("")
        context.print("6. Checking the store.")
        try await verify(places.current, model: model, in: context)

        context.print("")
        context.print("7. The recipes:")
        let summaries = try await ChefsBook.summaries(in: again.mainContext)
        let width = max(5, summaries.map(\.title.count).max() ?? 0)
        context.print(
            "   " + "title".padding(toLength: width, withPad: " ", startingAt: 0) + "  ingredients  steps  minutes  uid"
        )
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
        for place in ["Documents", "Library"]
        where FileManager.default.fileExists(atPath: root.appendingPathComponent(place).path) {
            throw CommandFailure(
                "\(directoryPath) already holds a \(place) folder from an earlier run; give an empty or new folder")
        }
        try FileManager.default.createDirectory(at: root, withIntermediateDirectories: true)
        return root
    }

    /// Loads a container's stores, its migration progress driving a progress bar (unless the
    /// load is known to have nothing to migrate); returns the other events, to narrate.
    private func load(
        _ container: PersistentContainer, showingProgress: Bool = true, in context: CommandContext
    ) async throws -> [ContainerEvent] {
        let stream = container.events()
        let progress = Progress(totalUnitCount: 1000)
        let box = ProgressReference(progress)
        let collector = Task {
            var events: [ContainerEvent] = []
            for await event in stream {
                if case .progress(_, let phase, let fraction) = event {
                    if phase == .migrating { box.progress.completedUnitCount = Int64(fraction * 1000) }
                    continue
                }
                events.append(event)
                if case .ready = event { break }
                if case .failed = event { break }
            }
            return events
        }
        // The container reports a fraction only: the bar shows it without counts.
        let bar = showingProgress ? context.progressBar("migrating", for: progress, showsCounts: false) : nil
        defer { bar?.finish() }
        do {
            try await container.loadStores()
        } catch {
            collector.cancel()
            throw error
        }
        return await collector.value
    }

    /// A line about a container event, for the ones worth telling.
    private func narrate(_ event: ContainerEvent, in context: CommandContext) {
        switch event {
        case .foundLegacyStore(let place, let version):
            context.print("   found \(relative(place)), written by \(version ?? "no known version")")
        case .migrated(_, let steps):
            context.print("   migrated in \(steps) steps, on the copy in its new place")
        case .movedStore(let from, let to):
            context.print("   moved to \(relative(to)); \(relative(from)) removed once the copy was on disk")
        case .legacyStoreNotRemoved(let place, _, _):
            context.print("   \(relative(place)) could not be removed: kept as a stray older copy")
        case .strayLegacyStore(let place, _):
            context.print("   \(relative(place)) is a stray older copy: left alone")
        case .recoveredInterruptedMove(let from, _, let completed):
            context.print("   an interrupted move from \(relative(from)) was \(completed ? "finished" : "undone")")
        case .seeded(_, _, true):
            context.print("   starter recipes: already there (the store records the starter file's digest)")
        case .seeded(_, let summary, false):
            let inserted = summary.inserted["Recipe"] ?? 0
            let merged = summary.updated["Recipe"] ?? 0
            context.print(
                "   starter recipes (keyed by uid): \(inserted) inserted, \(merged) already there (merged, not duplicated)"
            )
        case .ready:
            context.print("   ready")
        default:
            break
        }
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
        context.print(
            "   written by \(model.version(matching: metadata)?.name ?? "?"); \(report.objectCount) objects checked, no problems"
        )
    }

    /// The path of a place relative to the demo folder, for narration.
    private func relative(_ url: URL) -> String {
        let components = url.pathComponents.suffix(url.pathComponents.contains("Application Support") ? 3 : 2)
        return components.joined(separator: "/")
    }
}

extension String {
    /// The string padded with spaces on the left to a width.
    fileprivate func leftPadded(to width: Int) -> String {
        String(repeating: " ", count: max(0, width - count)) + self
    }
}
