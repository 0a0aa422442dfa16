import Foundation
import TernCore

/// `tern model MODEL [--version NAME] [--order LIST] [--json]`: a model's versions in migration
/// order, the current one, and each version's entities with their version hashes and the
/// model checksum.
struct ModelCommand: Command {
    /// The model to describe.
    static let model = ArgumentDefinition.positional("MODEL", help: ModelSelection.modelHelp)

    /// The command's name, arguments and help.
    static let configuration = CommandConfiguration(
        name: "model",
        abstract: "Lists a model's versions with their entity version hashes and checksums.",
        discussion: """
            Versions are listed oldest first, in the order a progressive migration walks them. For
            each version: its model checksum (Core Data's NSStoreModelVersionChecksumKey) and each
            entity with its version hash (base64 of 32 bytes, as Core Data records it in a store's
            metadata), its parent entity and whether it is abstract.

            --json prints {"current": NAME, "versions": [{"name": NAME, "checksum": BASE64,
            "entities": {ENTITY: {"hash": BASE64, "parent": NAME|null, "abstract": BOOL}}}]}.
            """,
        arguments: [model, ModelSelection.version, ModelSelection.order, .json],
        examples: [
            "tern model Recipes.xcdatamodeld",
            "tern model Recipes.xcdatamodeld --json | jq -r '.versions[].name'",
            "tern model Recipes.xcdatamodeld --order \"Recipes,Recipes 2,Recipes 10\"",
        ])

    /// The model, version and order to show.
    var selection: ModelSelection
    /// Whether to print JSON.
    var json: Bool

    /// Makes the command from its parsed command line.
    init(_ arguments: ParsedArguments) throws(ValidationError) {
        guard let selection = try ModelSelection.parse(Self.model, from: arguments) else {
            throw ValidationError("missing argument \(Self.model.valueName)")
        }
        self.selection = selection
        json = arguments.isSet(.json)
    }

    /// Reads the model and prints its versions.
    func run(in context: CommandContext) async throws {
        let model = try selection.read(in: context.environment)
        if json {
            context.printJSON(Self.document(for: model))
        } else {
            printText(for: model, in: context)
        }
    }

    // MARK: - Rendering

    /// The `--json` document for a model.
    static func document(for model: VersionedModel) -> JSONValue {
        let versions = model.versions.map { version -> JSONValue in
            let hashes = version.model.entityVersionHashes
            var entities: [String: JSONValue] = [:]
            for entity in version.model.entities {
                entities[entity.name] = [
                    "hash": .string(hashes[entity.name]?.base64EncodedString()),
                    "parent": .string(entity.parentName),
                    "abstract": .bool(entity.isAbstract),
                ]
            }
            return [
                "name": .string(version.name),
                "checksum": .string(version.model.versionChecksum),
                "entities": .object(entities),
            ]
        }
        return ["current": .string(model.currentVersionName), "versions": .array(versions)]
    }

    // MARK: - Non public

    /// Prints the model as aligned text.
    private func printText(for model: VersionedModel, in context: CommandContext) {
        let count = model.versions.count
        context.print(
            "\(model.name): \(count) version\(count == 1 ? "" : "s") in migration order, "
                + "current \(model.currentVersionName)")
        for version in model.versions {
            let hashes = version.model.entityVersionHashes
            let width = version.model.entities.map(\.name.count).max() ?? 0
            context.print()
            context.print(version.name + (version.name == model.currentVersionName ? " (current)" : ""))
            context.print("  checksum \(version.model.versionChecksum)")
            for entity in version.model.entities {
                var notes: [String] = []
                if let parent = entity.parentName { notes.append("parent \(parent)") }
                if entity.isAbstract { notes.append("abstract") }
                let padding = String(repeating: " ", count: width - entity.name.count)
                let hash = hashes[entity.name]?.base64EncodedString() ?? "-"
                let suffix = notes.isEmpty ? "" : "  " + notes.joined(separator: ", ")
                context.print("  \(entity.name)\(padding)  \(hash)\(suffix)")
            }
        }
    }
}
