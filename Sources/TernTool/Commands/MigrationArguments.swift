import Foundation
import TernCore
import TernMigration
import TernStores

/// The arguments `plan` and `migrate` share: the store, `--model` with `--version`/`--order`,
/// `--to` and the `--mapping` files.
struct MigrationArguments: Sendable {
    /// The store to migrate.
    static let store = ArgumentDefinition.positional("STORE", help: StoreFile.help)
    /// The app's model.
    static let model = ArgumentDefinition.option("model", value: "MODEL", help: ModelSelection.modelHelp)
    /// The target version.
    static let target = ArgumentDefinition.option(
        "to", value: "V", help: "The version to migrate to (default: the model's current version).")
    /// Mapping files, repeatable.
    static let mapping = ArgumentDefinition.option(
        "mapping", value: "FILE", isRepeatable: true,
        help: "A mapping for one step: a JSON mapping file, an Xcode .xcmappingmodel or a compiled .cdm "
            + "(repeatable; several Xcode mapping models of one step are its passes, in order; see docs/MappingFormat.md)."
    )
    /// Where to look for the Xcode mapping model of the step, instead of beside the model.
    static let mappings = ArgumentDefinition.option(
        "mappings", value: "DIR",
        help: "The folder to look in for the Xcode mapping model of the step from the store's version to the target "
            + "(default: the model's folder).")
    /// Every shared definition, in help order.
    static let definitions = [store, model, ModelSelection.version, ModelSelection.order, target, mapping, mappings]

    /// The store as typed.
    var storePath: String
    /// The model.
    var selection: ModelSelection
    /// The target version, if given.
    var target: String?
    /// The mapping files as typed.
    var mappingPaths: [String]
    /// The `--mappings` folder as typed.
    var mappingsFolder: String?

    /// Reads the shared arguments.
    ///
    /// - Throws: ``ValidationError`` when the store or the model is missing.
    init(_ arguments: ParsedArguments) throws(ValidationError) {
        storePath = try arguments.requiredValue(of: Self.store)
        guard let selection = try ModelSelection.parse(Self.model, from: arguments) else {
            throw ValidationError("a migration needs the app's model; give it with --model")
        }
        self.selection = selection
        target = arguments.value(of: Self.target)
        mappingPaths = arguments.values(of: Self.mapping)
        mappingsFolder = arguments.value(of: Self.mappings)
    }

    /// The failure a migration error makes: its message, one detail line per change that needs
    /// a mapping and, when a direct step was refused for a model whose version order was guessed
    /// from names, a last line saying how a step-by-step migration would be allowed.
    ///
    /// - Parameters:
    ///   - error: The planner's or migrator's error.
    ///   - model: The model the migration used.
    /// - Returns: The failure to throw.
    /// - Complexity: O(*n*) in the number of failures.
    static func failure(_ error: MigrationError, model: VersionedModel) -> CommandFailure {
        var details = error.failures.map(\.description)
        if error.code == .notInferable, !model.hasExplicitOrder, model.versions.count > 2 {
            details.append(orderHint)
        }
        return CommandFailure(error.message, details: details)
    }

    /// How to migrate step by step when the direct step is refused and the order was guessed.
    static let orderHint =
        "tern infers one step straight from the store's version to the target, as Core Data does, and never walks "
        + "an order guessed from version names; to migrate step by step through the versions between, give their "
        + "order with --order (oldest first, comma-separated) or a --mapping for the intermediate steps"

    /// Reads the store's location, the model and the mappings: the `--mapping` files, and the
    /// Xcode mapping model found beside the model (or in `--mappings DIR`) for the step from the
    /// store's version to the target, as Core Data finds one in the app's bundle.
    ///
    /// - Throws: ``CommandFailure`` when the store is not a store Tern knows, or a mapping cannot
    ///   be read or used (naming the mapping model, entity mapping, property and expression).
    func load(in context: CommandContext) throws -> LoadedMigration {
        let store = StoreFile(storePath, environment: context.environment)
        _ = try store.kind()  // SQLite, binary and XML stores migrate; anything else fails here.
        let model = try selection.read(in: context)
        var loaded = LoadedMigration(store: store, model: model)
        for (mapping, paths) in try Self.mappings(at: mappingPaths, model: model, in: context) {
            loaded.add(mapping, origin: .option, paths: paths)
        }
        try discover(into: &loaded, in: context)
        return loaded
    }

    /// Reads mapping files: JSON files each one step, Xcode mapping models (`.xcmappingmodel`,
    /// `.cdm`) grouped by the step they map, as its passes in the order given.
    ///
    /// - Parameters:
    ///   - paths: The files as typed.
    ///   - model: The model the mapping models bind to.
    ///   - context: Where relative paths start.
    /// - Returns: Each step's mapping with the paths it was read from, in the order given.
    /// - Throws: ``CommandFailure`` naming the file, and for a mapping model its problems.
    static func mappings(at paths: [String], model: VersionedModel, in context: CommandContext) throws
        -> [(mapping: StepMapping, paths: [String])]
    {
        var result: [(mapping: StepMapping, paths: [String])] = []
        var xcode: [(versions: MappingOrigin.Step, paths: [String])] = []
        for path in paths {
            let url = context.environment.url(forPath: path)
            guard StepMapping.xcodeMappingExtensions.contains(url.pathExtension.lowercased()) else {
                do {
                    result.append((try StepMapping(contentsOf: url), [path]))
                } catch {
                    throw CommandFailure("cannot read the mapping file \(path): \(error.message)")
                }
                continue
            }
            let versions: (source: String, destination: String)
            do { versions = try StepMapping.xcodeMappingVersions(at: url, in: model) } catch {
                throw Self.unusable(path, error)
            }
            // The mapping models of one step are its passes, in the order given.
            let step = MappingOrigin.Step(from: versions.source, to: versions.destination)
            if let index = xcode.firstIndex(where: { $0.versions == step }) {
                xcode[index].paths.append(path)
            } else {
                xcode.append((step, [path]))
            }
        }
        for (_, paths) in xcode {
            result.append((try Self.xcodeStep(paths, model: model, in: context), paths))
        }
        return result
    }

    // MARK: - Non public

    /// Adds the Xcode mapping model of the direct step from the store's version to the target,
    /// found in `--mappings DIR` or beside the model, unless a `--mapping` starts at that version.
    private func discover(into loaded: inout LoadedMigration, in context: CommandContext) throws {
        let model = loaded.model
        let folder =
            mappingsFolder.map(context.environment.url(forPath:))
            ?? context.environment.url(forPath: selection.path).deletingLastPathComponent()
        let found = StepMapping.xcodeMappingModels(in: folder)
        guard !found.isEmpty, let hashes = try? loaded.store.metadata().versionHashes,
            let source = model.version(matchingHashes: hashes)?.name
        else { return }
        let target = self.target ?? model.currentVersionName
        guard source != target, !loaded.mappings.contains(where: { $0.sourceVersion == source }) else { return }
        let matching = found.filter { url in
            (try? StepMapping.xcodeMappingVersions(at: url, in: model)).map { $0 == (source, target) } ?? false
        }
        let base = mappingsFolder ?? (selection.path as NSString).deletingLastPathComponent
        let paths = matching.map {
            base.isEmpty ? $0.lastPathComponent : (base as NSString).appendingPathComponent($0.lastPathComponent)
        }
        guard matching.count <= 1 else {
            throw CommandFailure(
                "\(matching.count) mapping models in \(folder.path) map \(source) to \(target) (\(paths.joined(separator: ", "))); "
                    + "give the ones to use with --mapping, in the order they run")
        }
        guard let path = paths.first else { return }
        loaded.add(
            try Self.xcodeStep([path], model: model, in: context), origin: mappingsFolder == nil ? .model : .folder,
            paths: [path])
        context.note("using the mapping model \(path) for \(source) → \(target)")
    }

    /// The step of Xcode mapping models, checked against the policies the command line has: none.
    private static func xcodeStep(_ paths: [String], model: VersionedModel, in context: CommandContext) throws
        -> StepMapping
    {
        do {
            return try StepMapping(
                xcodeMappingModelsAt: paths.map(context.environment.url(forPath:)), in: model,
                policies: MigrationPolicyRegistry())
        } catch {
            throw unusable(paths.joined(separator: ", "), error)
        }
    }

    /// The failure of a mapping model that cannot be read or used: its message, one detail line per problem.
    private static func unusable(_ path: String, _ error: MigrationError) -> CommandFailure {
        var details = error.failures.map(\.description)
        if error.failures.contains(where: { $0.code == .unknownPolicy }) {
            details.append(
                "tern cannot run Swift policies; migrate such a store from your app with the policies registered "
                    + "(MigrationPolicyRegistry), or map it without them")
        }
        return CommandFailure("cannot use the mapping model \(path): \(error.message)", details: details)
    }
}

/// The store, the model and the mappings of a `plan` or `migrate` command line, with where
/// each mapping came from.
struct LoadedMigration {
    /// The store.
    var store: StoreFile
    /// The model.
    var model: VersionedModel
    /// The mappings, in the order given.
    var mappings: [StepMapping] = []
    /// Where each mapping came from, by its step.
    var origins: [MappingOrigin.Step: MappingOrigin] = [:]

    /// Adds a mapping and its origin.
    mutating func add(_ mapping: StepMapping, origin: MappingOrigin.Source, paths: [String]) {
        mappings.append(mapping)
        // A JSON file may name its versions by the passes' hashes only.
        let named =
            mapping.sourceVersion == nil || mapping.destinationVersion == nil
            ? (try? mapping.resolved(in: model)) : mapping
        if let from = named?.sourceVersion, let to = named?.destinationVersion {
            origins[MappingOrigin.Step(from: from, to: to)] = MappingOrigin(source: origin, paths: paths)
        }
    }
}

/// Where a step's mapping came from, as `tern plan --json` says it.
struct MappingOrigin: Sendable {
    /// A step, by its two versions.
    struct Step: Hashable, Sendable {
        var from: String
        var to: String
    }

    /// How the mapping was found.
    enum Source: String, Sendable {
        /// Given with `--mapping`.
        case option = "--mapping"
        /// Found in the `--mappings` folder.
        case folder = "--mappings"
        /// Found beside the model, as Core Data finds mapping models in the app's bundle.
        case model = "model folder"
    }

    /// How it was found.
    var source: Source
    /// The files, as typed or found.
    var paths: [String]
}
