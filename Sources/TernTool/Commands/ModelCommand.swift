import Foundation
import TernCore
import TernFormats

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
            "entities": {ENTITY: {"hash": BASE64, "parent": NAME|null, "abstract": BOOL}}}],
            "warnings": [{"code": CODE, "version": NAME|null, "entity": NAME|null, "property":
            NAME|null, "line": INT|null, "message": TEXT}]}.

            The model is read as Xcode's compiler (momc) reads it. A value it reads leniently
            (defaultValueString "NO" on an Integer 32 attribute is 0, "0.0" on a Boolean is NO)
            gives a warning, code lenientValue: on stderr as a 'warning:' line, and with --json
            in "warnings" too. A model without meaning (a relationship whose destination or
            inverse is missing, two entities or two properties of one entity with one name, a
            missing parent entity, an inheritance cycle) is refused with every problem and its
            line.
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
        let (model, warnings) = try selection.readCollectingWarnings(in: context)
        if json {
            context.printJSON(Self.document(for: model, warnings: warnings))
        } else {
            printText(for: model, in: context)
        }
    }

    // MARK: - Rendering

    /// The `--json` document for a model and the warnings of its reading.
    static func document(for model: VersionedModel, warnings: [ModelReadingWarning] = []) -> JSONValue {
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
        let warnings = warnings.map { warning -> JSONValue in
            [
                "code": .string(warning.code.rawValue), "version": .string(warning.versionName),
                "entity": .string(warning.entityName), "property": .string(warning.propertyName),
                "line": warning.line.map { .integer(Int64($0)) } ?? .null, "message": .string(warning.message),
            ]
        }
        return [
            "current": .string(model.currentVersionName), "versions": .array(versions), "warnings": .array(warnings),
        ]
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
