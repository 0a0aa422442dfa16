import Foundation
import PackagePlugin

/// The `TernModelCodegen` build tool plugin: for each Core Data model among a target's files
/// (`.xcdatamodeld`, `.xcdatamodel`, `.momd`, `.mom`, as sources or resources), generates at build
/// time the Swift classes of its entities and the model's enum, as Xcode's code generation does.
///
/// ```swift
/// .target(
///     name: "Kitchen", dependencies: [.product(name: "TernCore", package: "Tern"), .product(name: "TernFormats", package: "Tern")],
///     resources: [.copy("Kitchen.xcdatamodeld")],
///     plugins: [.plugin(name: "TernModelCodegen", package: "Tern")])
/// ```
///
/// The generated code imports `TernCore` and `TernFormats`, so the target depends on both. The
/// tool reads the model with no network and no package outside Tern.
@main
struct TernModelCodegen: BuildToolPlugin {
    /// The model file extensions the plugin generates code for.
    static let modelExtensions: Set<String> = ["xcdatamodeld", "xcdatamodel", "momd", "mom"]

    func createBuildCommands(context: PluginContext, target: Target) async throws -> [Command] {
        guard let target = target as? SourceModuleTarget else { return [] }
        let tool = try context.tool(named: "tern-model-codegen")
        return target.sourceFiles
            .filter { Self.modelExtensions.contains($0.url.pathExtension) }
            .map { file in
                let name = file.url.deletingPathExtension().lastPathComponent
                let output = context.pluginWorkDirectoryURL.appending(path: "\(name)+TernModel.swift")
                return .buildCommand(
                    displayName: "Generating Swift classes from \(file.url.lastPathComponent)",
                    executable: tool.url, arguments: [file.url.path, output.path],
                    inputFiles: [file.url] + Self.files(in: file.url), outputFiles: [output])
            }
    }

    /// The files inside a model bundle or folder, so that editing any version regenerates the code.
    static func files(in folder: URL) -> [URL] {
        guard let walk = FileManager.default.enumerator(at: folder, includingPropertiesForKeys: [.isRegularFileKey])
        else {
            return []
        }
        return walk.compactMap { item in
            guard let url = item as? URL, (try? url.resourceValues(forKeys: [.isRegularFileKey]))?.isRegularFile == true
            else {
                return nil
            }
            return url
        }
    }
}
