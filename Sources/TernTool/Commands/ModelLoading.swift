import Foundation
import TernCore
import TernFormats

/// The model arguments several commands share (`MODEL`, `--model`, `--version`, `--order`) and
/// how a model is read from them.
enum ModelLoading {
    /// `--version NAME`: the version to use instead of the current one.
    static let version = ArgumentDefinition.option(
        "version", value: "NAME",
        help: "Uses this version instead of the current one (.xccurrentversion).")
    /// `--order LIST`: the migration order of the versions.
    static let order = ArgumentDefinition.option(
        "order", value: "LIST",
        help: "Version names oldest first, comma-separated (default: natural sort, current version last).")

    /// The help line for a `MODEL` path, whether positional or `--model`.
    static let modelHelp = "An .xcdatamodeld bundle or a single .xcdatamodel folder."

    /// The names a `--order` list gives, in order.
    ///
    /// - Throws: ``ValidationError`` when a name is empty.
    static func order(from arguments: ParsedArguments) throws(ValidationError) -> [String]? {
        guard let list = arguments.value(of: order) else { return nil }
        let names = list.split(separator: ",", omittingEmptySubsequences: false)
            .map { $0.trimmingCharacters(in: .whitespaces) }
        guard !names.contains(where: \.isEmpty) else {
            throw ValidationError("--order has an empty version name; list names separated by commas, like \"v1,v2\"")
        }
        return names
    }

    /// Reads a versioned model and makes `versionName`, when given, its current version.
    ///
    /// - Parameters:
    ///   - path: The path the user gave.
    ///   - order: The migration order, or nil for the default.
    ///   - versionName: The version to make current, or nil to keep the bundle's.
    ///   - environment: Where relative paths start.
    /// - Returns: The model, with the chosen version current.
    /// - Throws: ``CommandFailure`` when the model cannot be read or has no such version.
    static func read(
        _ path: String, order: [String]?, version versionName: String?, environment: ToolEnvironment
    ) throws(CommandFailure) -> VersionedModel {
        let url = environment.url(forPath: path)
        var model: VersionedModel
        do {
            model = try XcodeModel.readVersionedModel(at: url, order: order)
        } catch {
            guard FileManager.default.fileExists(atPath: url.path) else {
                throw CommandFailure(
                    "no model exists at \(path); give an .xcdatamodeld bundle or an .xcdatamodel folder")
            }
            throw CommandFailure("cannot read the model at \(path): \(error.message)")
        }
        if let versionName {
            guard model.version(named: versionName) != nil else {
                let names = model.versions.map(\.name).joined(separator: ", ")
                throw CommandFailure("the model has no version named '\(versionName)'; use one of: \(names)")
            }
            model.currentVersionName = versionName
        }
        return model
    }
}
