import Foundation
import TernCore
import TernSQLite
import TernStores

/// `tern convert STORE DEST --type sqlite|binary|xml [--model MODEL]`: copies a store to another
/// place and type, keeping its objects' primary keys, relationships and metadata.
struct ConvertCommand: Command {
    /// The store to copy.
    static let store = ArgumentDefinition.positional("STORE", help: StoreFile.help)
    /// Where the copy goes.
    static let destination = ArgumentDefinition.positional(
        "DEST", help: "The new store file, which must not exist, or a postgres:// URL whose schema holds no store.")
    /// The new store's type.
    static let type = ArgumentDefinition.option(
        "type", value: "TYPE", isRequired: true, help: "The new store's type: sqlite, binary, xml or postgres.")
    /// The model to read the store with.
    static let model = ArgumentDefinition.option(
        "model", value: "MODEL",
        help: "The model to read the store with (default: the model the store records).")

    /// The command's name, arguments and help.
    static let configuration = CommandConfiguration(
        name: "convert",
        abstract: "Copies a store to another place and type.",
        discussion: """
            The store is opened read-only and its objects are copied in batches, with their
            primary keys and primary-key counters (so object IDs stay valid and no deleted
            object's key is handed out again), relationships and the store's metadata (UUID,
            version hashes and application keys). A SQLite copy records the model in Z_MODELCACHE,
            a binary or XML copy in its metadata. Core Data's history tables are not copied (they
            are not part of the model), and a SQLite copy computes derived attributes again with
            its triggers. An existing destination is never overwritten. A PostgreSQL store is
            named by its connection URL (postgres://user@host/db?schema=s), as a source or with
            --type postgres as the destination; rows stream in batches both ways. Progress (rows
            read; a SQLite or PostgreSQL copy reads the source twice) shows on stderr.
            """,
        arguments: [store, destination, type, model, ModelSelection.version, ModelSelection.order, .progress, .quiet],
        examples: [
            "tern convert Recipes.sqlite Recipes.ternbin --type binary",
            "tern convert Recipes.xml Recipes.sqlite --type sqlite --model Recipes.xcdatamodeld",
            "tern convert Recipes.sqlite 'postgres://app@db/recipes?schema=kitchen' --type postgres",
        ])

    /// The store as typed.
    var storePath: String
    /// The destination as typed.
    var destinationPath: String
    /// The new store's type.
    var kind: StoreFile.Kind
    /// The model to read the store with, if given.
    var selection: ModelSelection?

    /// Makes the command from its parsed command line.
    init(_ arguments: ParsedArguments) throws(ValidationError) {
        storePath = try arguments.requiredValue(of: Self.store)
        destinationPath = try arguments.requiredValue(of: Self.destination)
        let typeName = try arguments.requiredValue(of: Self.type)
        guard let kind = StoreFile.Kind(rawValue: typeName), kind.storeKind != nil else {
            throw ValidationError("unknown store type '\(typeName)'; use one of: sqlite, binary, xml, postgres")
        }
        self.kind = kind
        selection = try ModelSelection.parse(Self.model, from: arguments)
    }

    /// Copies the store and says what it made.
    func run(in context: CommandContext) async throws {
        let file = StoreFile(storePath, environment: context.environment)
        let sourceKind = try file.kind()
        let target = StoreFile(destinationPath, environment: context.environment)
        let destination = target.url
        guard target.isPostgreSQL == (kind == .postgres) else {
            throw CommandFailure("a postgres store goes to a postgres:// URL, and only there; check DEST and --type")
        }
        guard target.isPostgreSQL || !FileManager.default.fileExists(atPath: destination.path) else {
            throw CommandFailure("a file already exists at \(destinationPath); remove it or choose another path")
        }
        let model = try selection?.model(for: file, in: context, fallback: "convert without --model")
        let count: Int
        let progress = Progress(totalUnitCount: 0)
        do {
            let bar = context.progressBar("converting", for: progress)
            defer { bar.finish() }
            if target.isPostgreSQL || file.isPostgreSQL {
                let source = try file.open(model: model, isReadOnly: true)
                let copy =
                    try await target.isPostgreSQL
                    ? StoreFiles.copy(source, toPostgreSQL: destinationPath, progress: progress)
                    : StoreFiles.copy(source, to: destination, kind: kind.storeKind ?? .sqlite, progress: progress)
                var total = 0
                for entity in copy.model.entities where !entity.isAbstract {
                    var request = StoreFetchRequest(entityName: entity.name)
                    request.includesSubentities = false
                    total += try await copy.count(request)
                }
                count = total
            } else {
                count = Int(
                    try await StoreFiles.convert(
                        storeAt: file.url, model: model, to: destination, kind: kind.storeKind ?? .sqlite,
                        progress: progress))
            }
        } catch {
            throw CommandFailure(
                "cannot convert \(file.displayName) to \(target.displayName): \(StoreFile.message(of: error))")
        }
        context.print(
            "converted \(file.displayName) (\(sourceKind.rawValue)) to \(target.displayName) (\(kind.rawValue)): "
                + "\(count) object\(count == 1 ? "" : "s")")
    }
}
