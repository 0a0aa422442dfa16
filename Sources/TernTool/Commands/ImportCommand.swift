import Foundation
import TernCore
import TernFormats
import TernSQLite
import TernStores

/// `tern import STORE --model MODEL FILE [--entity E] [--format tsv|csv|json] [--unique-by a,b] [--json]`:
/// loads records into a SQLite, binary, XML or PostgreSQL store, all or nothing, updating objects whose
/// uniqueness key matches (see `docs/Import.md`).
struct ImportCommand: Command {
    /// The store to import into.
    static let store = ArgumentDefinition.positional("STORE", help: StoreFile.help)
    /// The record file.
    static let file = ArgumentDefinition.positional("FILE", help: "The TSV, CSV or JSON file of records.")
    /// The model the store was written with.
    static let model = ArgumentDefinition.option(
        "model", value: "MODEL", isRequired: true, help: ModelSelection.modelHelp)
    /// The entity of the records.
    static let entity = ArgumentDefinition.option(
        "entity", value: "E", help: "The records' entity (required for tsv, csv and a JSON array).")
    /// The file's format.
    static let format = ArgumentDefinition.option(
        "format", value: "tsv|csv|json", help: "The record format (default: from the file's extension).")
    /// The matching key.
    static let uniqueBy = ArgumentDefinition.option(
        "unique-by", value: "a,b",
        help: "Attributes that identify an object of --entity (default: its uniqueness constraint).")

    /// The command's name, arguments and help.
    static let configuration = CommandConfiguration(
        name: "import",
        abstract: "Loads records from TSV, CSV or JSON into a store, all or nothing.",
        discussion: """
            A record whose uniqueness key (the entity's uniqueness constraint in the model, or
            --unique-by) matches an existing object updates that object with the values the record
            gives; keys absent from a record are left as they are. Importing the same file twice
            creates no duplicates. TSV and CSV have a header row of attribute names (and
            relationship.attribute columns such as recipe.uid); an empty field is null. JSON is an
            array of records, or an object keyed by entity name; nested objects create or update
            related objects. A bad record is reported by line and column, and nothing is imported.
            The store may be SQLite, binary or XML (its type is read from its contents), or a
            PostgreSQL store named by its postgres:// URL (one transaction); a binary or XML store
            is written again as a whole, atomically. --json prints {"file": PATH,
            "inserted": N, "updated": N, "deleted": N, "entities": {ENTITY: {"inserted": N,
            "updated": N, "deleted": N}}}.
            """,
        arguments: [
            store, file, model, ModelSelection.version, ModelSelection.order, entity, format, uniqueBy, .json,
            .progress,
            .quiet,
        ],
        examples: [
            "tern import Recipes.sqlite --model ChefsBook.xcdatamodeld StarterRecipes.json",
            "tern import Recipes.sqlite --model ChefsBook.xcdatamodeld recipes.tsv --entity Recipe --unique-by uid",
            "tern import 'postgres://app@db/recipes?schema=kitchen' --model ChefsBook.xcdatamodeld StarterRecipes.json",
        ])

    /// The store as typed.
    var storePath: String
    /// The record file as typed.
    var filePath: String
    /// The model.
    var selection: ModelSelection
    /// The import options, with the format still nil when it comes from the extension.
    var entityName: String?
    /// The format given, if any.
    var recordFormat: RecordImportOptions.Format?
    /// The matching attributes given, if any.
    var uniqueAttributes: [String]?
    /// Whether to print the summary as JSON.
    var json = false

    /// Makes the command from its parsed command line.
    init(_ arguments: ParsedArguments) throws(ValidationError) {
        storePath = try arguments.requiredValue(of: Self.store)
        filePath = try arguments.requiredValue(of: Self.file)
        json = arguments.isSet(.json)
        guard let selection = try ModelSelection.parse(Self.model, from: arguments) else {
            throw ValidationError("missing option \(Self.model.label)")
        }
        self.selection = selection
        entityName = arguments.value(of: Self.entity)
        if let name = arguments.value(of: Self.format) {
            guard let format = RecordImportOptions.Format(rawValue: name) else {
                throw ValidationError("unknown format '\(name)'; use tsv, csv or json")
            }
            recordFormat = format
        } else {
            guard let format = RecordImportOptions.Format(pathExtensionOf: URL(fileURLWithPath: filePath)) else {
                throw ValidationError(
                    "cannot tell the format from the name \(filePath); give --format tsv, csv or json")
            }
            recordFormat = format
        }
        if let list = arguments.value(of: Self.uniqueBy) {
            let names = list.split(separator: ",", omittingEmptySubsequences: false).map {
                $0.trimmingCharacters(in: .whitespaces)
            }
            guard !names.contains(where: \.isEmpty) else {
                throw ValidationError("--unique-by has an empty name; list attributes separated by commas")
            }
            guard entityName != nil else {
                throw ValidationError("--unique-by needs --entity; name the entity it applies to")
            }
            uniqueAttributes = names
        }
        if recordFormat != .json, entityName == nil {
            throw ValidationError("a \(recordFormat?.rawValue ?? "") file holds one entity; name it with --entity")
        }
    }

    /// Opens the store, imports the file in one save and prints the counts.
    func run(in context: CommandContext) async throws {
        let storeFile = StoreFile(storePath, environment: context.environment)
        let kind = try storeFile.kind()
        let fileURL = context.environment.url(forPath: filePath)
        guard FileManager.default.fileExists(atPath: fileURL.path) else {
            throw CommandFailure("no file exists at \(filePath); check the path")
        }
        let versions = try selection.read(in: context)
        let model: ManagedObjectModel
        if selection.versionName != nil {
            model = versions.currentVersion.model
        } else {
            guard let version = versions.version(matching: try storeFile.metadata()) else {
                throw CommandFailure("none of the model's versions wrote this store; migrate it first")
            }
            model = version.model
        }
        try check(model)
        let options = RecordImportOptions(
            format: recordFormat ?? .json, entityName: entityName, uniqueBy: uniqueAttributes)
        let objects: ObjectContext
        do {
            let store =
                try kind == .postgres
                ? storeFile.open(model: model, isReadOnly: false)
                : StoreFiles.open(at: storeFile.url, kind: kind.storeKind, model: model)
            let coordinator = PersistentStoreCoordinator(model: model)
            try await coordinator.addStore(store, versions: versions)
            objects = ObjectContext(coordinator: coordinator)
        } catch {
            throw CommandFailure("cannot open the store at \(storeFile.displayName): \(StoreFile.message(of: error))")
        }
        let progress = Progress(totalUnitCount: 0)
        let bar = context.progressBar("importing", for: progress)
        let summary: RecordImportSummary
        do {
            defer { bar.finish() }
            summary = try await objects.importRecords(from: fileURL, options: options, progress: progress)
        } catch let error as RecordError {
            var failure = error
            failure.path = filePath
            throw CommandFailure("\(failure); nothing was imported")
        }
        let entities = Set(summary.inserted.keys).union(summary.updated.keys).union(summary.deleted.keys).sorted()
        guard !json else {
            func counts(inserted: Int, updated: Int, deleted: Int) -> JSONValue {
                .object([
                    "inserted": .integer(Int64(inserted)), "updated": .integer(Int64(updated)),
                    "deleted": .integer(Int64(deleted)),
                ])
            }
            var document: [String: JSONValue] = ["file": .string(filePath)]
            if case .object(let totals) = counts(
                inserted: summary.insertedCount, updated: summary.updatedCount, deleted: summary.deletedCount)
            {
                document.merge(totals) { first, _ in first }
            }
            document["entities"] = .object(
                Dictionary(
                    uniqueKeysWithValues: entities.map { name in
                        (
                            name,
                            counts(
                                inserted: summary.inserted[name] ?? 0, updated: summary.updated[name] ?? 0,
                                deleted: summary.deleted[name] ?? 0)
                        )
                    }))
            context.printJSON(.object(document))
            return
        }
        context.print(
            "imported \(filePath): \(summary.insertedCount) inserted, \(summary.updatedCount) updated"
                + (summary.deletedCount > 0 ? ", \(summary.deletedCount) deleted" : ""))
        for name in entities {
            context.print(
                "  \(name): \(summary.inserted[name] ?? 0) inserted, \(summary.updated[name] ?? 0) updated"
                    + ((summary.deleted[name] ?? 0) > 0 ? ", \(summary.deleted[name] ?? 0) deleted" : ""))
        }
    }

    /// Checks `--entity` and `--unique-by` against the model before reading the file.
    private func check(_ model: ManagedObjectModel) throws(CommandFailure) {
        guard let entityName else { return }
        guard model.entity(named: entityName) != nil else {
            let names = model.entities.map(\.name).joined(separator: ", ")
            throw CommandFailure("the model has no entity named '\(entityName)'; use one of: \(names)")
        }
        let attributes = Set(model.allAttributes(of: entityName).map(\.name))
        for name in uniqueAttributes ?? [] where !attributes.contains(name) {
            throw CommandFailure("\(entityName) has no attribute named '\(name)' for --unique-by; check the name")
        }
    }
}
