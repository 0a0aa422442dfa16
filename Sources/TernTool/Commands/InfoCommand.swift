import Foundation
import TernCore
import TernFormats
import TernStores

/// `tern info STORE [--model MODEL] [--json]`: a store's type, UUID, metadata, entity version
/// hashes and object counts; with a model, which version wrote it and whether it needs migrating.
struct InfoCommand: Command {
    /// The store to describe.
    static let store = ArgumentDefinition.positional("STORE", help: StoreFile.help)
    /// The model to compare the store with.
    static let model = ArgumentDefinition.option("model", value: "MODEL", help: ModelSelection.modelHelp)

    /// The command's name, arguments and help.
    static let configuration = CommandConfiguration(
        name: "info",
        abstract: "Shows a store's type, UUID, metadata, entity version hashes and object counts.",
        discussion: """
            With --model, also finds the model version whose entity hashes match the store's (the
            version that wrote it) and says whether the store needs a migration to the model's
            current version (--version picks another). Counts are per entity, subentities not
            included, under the model's entity names when a model is given (an entity renamed
            through its renaming identifier is counted under its new name). The store is opened
            read-only.

            --json prints {"type": "sqlite", "uuid": STRING, "hashes": {ENTITY: BASE64},
            "metadata": {KEY: VALUE}, "matchingVersion": NAME|null, "matchingVersions": [NAME],
            "needsMigration": BOOL|null, "counts": {ENTITY: INT}, "warnings": [STRING]}; warnings
            are those of reading the model (also on stderr); metadata keys are Core Data's
            (NSStoreModelVersionHashes…), data is base64 and dates are ISO 8601.

            Versions with identical entity hashes are told apart by the store's version identifiers
            (NSStoreModelVersionIdentifiers). When they still cannot be, every candidate is named:
            matchingVersions lists them all and matchingVersion is null. Migrating from any of them
            is the same.
            """,
        arguments: [store, model, ModelSelection.version, ModelSelection.order, .json],
        examples: [
            "tern info Recipes.sqlite",
            "tern info Recipes.sqlite --model Recipes.xcdatamodeld --json | jq .needsMigration",
        ])

    /// The store as typed.
    var storePath: String
    /// The model to compare with, if given.
    var selection: ModelSelection?
    /// Whether to print JSON.
    var json: Bool

    /// Makes the command from its parsed command line.
    init(_ arguments: ParsedArguments) throws(ValidationError) {
        storePath = try arguments.requiredValue(of: Self.store)
        selection = try ModelSelection.parse(Self.model, from: arguments)
        json = arguments.isSet(.json)
    }

    /// Reads the store (and model) and prints what it found.
    func run(in context: CommandContext) async throws {
        let store = StoreFile(storePath, environment: context.environment)
        let kind = try store.kind()
        let metadata = try store.metadata()
        var matching: [String] = []
        var needsMigration: Bool?
        var target: String?
        var namingModel: ManagedObjectModel?
        var warnings: [String] = []
        if let selection {
            let (model, modelWarnings) = try selection.readCollectingWarnings(in: context)
            warnings = modelWarnings.map(\.description)
            let candidates = model.versions(matching: metadata)
            matching = candidates.map(\.name)
            needsMigration = !model.currentVersion.model.isCompatible(with: metadata)
            target = model.currentVersionName
            namingModel = (candidates.last ?? model.currentVersion).model
        }
        let counts = try await store.objectCounts(model: namingModel)
        if json {
            context.printJSON([
                "type": .string(kind.rawValue),
                "uuid": .string(metadata.uuid),
                "hashes": .object(metadata.versionHashes.mapValues { .string($0.base64EncodedString()) }),
                "metadata": Self.metadataDocument(metadata),
                "matchingVersion": matching.count == 1 ? .string(matching[0]) : .null,
                "matchingVersions": .array(matching.map(JSONValue.string)),
                "needsMigration": needsMigration.map(JSONValue.bool) ?? .null,
                "counts": .object(counts.mapValues { .integer(Int64($0)) }),
                "warnings": .array(warnings.map(JSONValue.string)),
            ])
            return
        }
        context.print("store: \(storePath)")
        context.print("type: \(kind.rawValue)")
        context.print("uuid: \(metadata.uuid)")
        if !metadata.versionIdentifiers.isEmpty {
            context.print("version identifiers: \(metadata.versionIdentifiers.joined(separator: ", "))")
        }
        if let target, let needsMigration {
            context.print("written by model version: \(Self.describe(matching))")
            context.print("needs migration to \(target): \(needsMigration ? "yes" : "no")")
        }
        context.print("entities:")
        let names = Set(metadata.versionHashes.keys).union(counts.keys).sorted()
        let width = names.map(\.count).max() ?? 0
        for name in names {
            let hash = metadata.versionHashes[name]?.base64EncodedString() ?? "(no hash)"
            let count = counts[name].map { "\($0) object\($0 == 1 ? "" : "s")" } ?? ""
            context.print("  \(name)\(String(repeating: " ", count: width - name.count))  \(hash)  \(count)")
        }
    }

    // MARK: - Rendering

    /// The versions that may have written the store, as a person reads them.
    static func describe(_ candidates: [String]) -> String {
        switch candidates.count {
        case 0: "none of the model's versions"
        case 1: candidates[0]
        default:
            "one of \(candidates.joined(separator: ", ")) (their entity hashes are identical and the store's "
                + "version identifiers do not tell them apart; migrating from any of them is the same)"
        }
    }

    /// The store's metadata as JSON, under Core Data's key names.
    static func metadataDocument(_ metadata: StoreMetadata) -> JSONValue {
        var members = metadata.applicationKeys.mapValues(json(for:))
        members[StoreFiles.modelCacheKey] = nil  // the model of a binary or XML store: large and not metadata to read
        members["NSStoreType"] = .string(metadata.storeType)
        members["NSStoreUUID"] = .string(metadata.uuid)
        members["NSStoreModelVersionHashes"] = .object(
            metadata.versionHashes.mapValues { .string($0.base64EncodedString()) })
        members["NSStoreModelVersionIdentifiers"] = .array(metadata.versionIdentifiers.map(JSONValue.string))
        members["NSStoreModelVersionHashesVersion"] = .integer(Int64(metadata.hashesVersion))
        members["NSStoreModelVersionChecksumKey"] = .string(metadata.modelChecksum)
        members["NSStoreModelVersionHashesDigest"] = .string(metadata.hashesDigest)
        members["NSPersistenceFrameworkVersion"] = metadata.frameworkVersion.map { .integer(Int64($0)) } ?? .null
        return .object(members)
    }

    /// A property-list value as JSON: data as base64, dates as ISO 8601.
    static func json(for value: PropertyListValue) -> JSONValue {
        switch value {
        case .string(let text): .string(text)
        case .integer(let number): .integer(number)
        case .real(let number): .double(number)
        case .bool(let flag): .bool(flag)
        case .date(let date): .date(date)
        case .data(let bytes): .string(bytes.base64EncodedString())
        case .array(let elements): .array(elements.map(json(for:)))
        case .dictionary(let members): .object(members.mapValues(json(for:)))
        }
    }
}
