import Foundation
import TernCore
import TernFormats

/// The model a command works with: the `MODEL` path (positional or `--model`), `--version` and
/// `--order`, which several commands share, and how the model is read from them.
struct ModelSelection: Sendable {
    /// The model's path as typed.
    var path: String
    /// The version to use as current, if not the bundle's.
    var versionName: String?
    /// The migration order, if given.
    var order: [String]?

    /// `--version NAME`: the version to use instead of the current one.
    static let version = ArgumentDefinition.option(
        "version", value: "NAME",
        help: "Uses this version instead of the current one (.xccurrentversion).")
    /// `--order LIST`: the migration order of the versions.
    static let order = ArgumentDefinition.option(
        "order", value: "LIST",
        help: "Version names oldest first, comma-separated (default: natural sort, current version last); "
            + "plan and migrate walk only an order given here.")

    /// The help line for a `MODEL` path, whether positional or `--model`.
    static let modelHelp = "An .xcdatamodeld or .momd bundle, or one .xcdatamodel or .mom."

    /// Reads the model path, `--version` and `--order` from a command line.
    ///
    /// - Parameters:
    ///   - argument: The `MODEL` positional or the `--model` option.
    ///   - arguments: The parsed command line.
    /// - Returns: The selection, or nil when the model was not given.
    /// - Throws: ``ValidationError`` when `--order` has an empty name, or `--version` or `--order`
    ///   is given without a model.
    static func parse(
        _ argument: ArgumentDefinition, from arguments: ParsedArguments
    ) throws(ValidationError) -> ModelSelection? {
        let versionName = arguments.value(of: version)
        let order = try Self.order(from: arguments)
        guard let path = arguments.value(of: argument) else {
            if versionName != nil || order != nil {
                throw ValidationError("--version and --order need \(argument.displayName); give the model too")
            }
            return nil
        }
        return ModelSelection(path: path, versionName: versionName, order: order)
    }

    /// Reads the model, prints its warnings on stderr (one `warning:` line each), and makes the
    /// chosen version, when given, its current version.
    ///
    /// - Parameter context: Where relative paths start and warnings go.
    /// - Returns: The model, with the chosen version current.
    /// - Throws: ``CommandFailure`` when the model cannot be read (a meaningless model among
    ///   others) or has no such version.
    func read(in context: CommandContext) throws(CommandFailure) -> VersionedModel {
        try readCollectingWarnings(in: context).0
    }

    /// Reads the model and prints its warnings on stderr, returning them too.
    ///
    /// - Parameter context: Where relative paths start and warnings go.
    /// - Returns: The model, with the chosen version current, and what was read leniently.
    /// - Throws: ``CommandFailure`` when the model cannot be read or has no such version.
    func readCollectingWarnings(in context: CommandContext) throws(CommandFailure) -> (
        VersionedModel, [ModelReadingWarning]
    ) {
        let (model, warnings) = try Self.read(
            path, order: order, version: versionName, environment: context.environment)
        for warning in warnings { context.warn(warning.description) }
        return (model, warnings)
    }

    /// The model to open a store with: the `--version` chosen, else the version whose entity
    /// hashes match the store's metadata.
    ///
    /// - Parameters:
    ///   - file: The store.
    ///   - context: Where relative paths start and the model's warnings go.
    ///   - fallback: How to go on without the model, for the error message (`export without --model`).
    /// - Returns: The model of the chosen or matching version.
    /// - Throws: ``CommandFailure`` when the model cannot be read or none of its versions wrote the store.
    func model(for file: StoreFile, in context: CommandContext, fallback: String) throws(CommandFailure)
        -> ManagedObjectModel
    {
        let versions = try read(in: context)
        if versionName != nil { return versions.currentVersion.model }
        guard let version = versions.version(matching: try file.metadata()) else {
            throw CommandFailure("none of the model's versions wrote this store; migrate it, or \(fallback)")
        }
        return version.model
    }

    // MARK: - Non public

    /// The names a `--order` list gives, in order.
    ///
    /// - Throws: ``ValidationError`` when a name is empty.
    private static func order(from arguments: ParsedArguments) throws(ValidationError) -> [String]? {
        guard let list = arguments.value(of: order) else { return nil }
        let names = list.split(separator: ",", omittingEmptySubsequences: false)
            .map { $0.trimmingCharacters(in: .whitespaces) }
        guard !names.contains(where: \.isEmpty) else {
            throw ValidationError("--order has an empty version name; list names separated by commas, like \"v1,v2\"")
        }
        return names
    }

    /// Reads a versioned model and its warnings, and makes `versionName`, when given, its
    /// current version.
    private static func read(
        _ path: String, order: [String]?, version versionName: String?, environment: ToolEnvironment
    ) throws(CommandFailure) -> (VersionedModel, [ModelReadingWarning]) {
        let url = environment.url(forPath: path)
        var model: VersionedModel
        var warnings: [ModelReadingWarning] = []
        do {
            model = try XcodeModel.readVersionedModel(at: url, order: order, warnings: &warnings)
        } catch {
            guard FileManager.default.fileExists(atPath: url.path) else {
                throw CommandFailure(
                    "no model exists at \(path); give an .xcdatamodeld bundle or an .xcdatamodel folder")
            }
            // A model with several problems lists them on detail lines under the summary.
            let lines = error.message.split(separator: "\n").map(String.init)
            throw CommandFailure(
                "cannot read the model at \(path): \(lines.first ?? error.message)", details: Array(lines.dropFirst()))
        }
        if let versionName {
            guard model.version(named: versionName) != nil else {
                let names = model.versions.map(\.name).joined(separator: ", ")
                throw CommandFailure("the model has no version named '\(versionName)'; use one of: \(names)")
            }
            model.currentVersionName = versionName
        }
        return (model, warnings)
    }
}
