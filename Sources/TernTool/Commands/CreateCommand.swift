import Foundation
import TernCore
import TernPostgreSQL
import TernSQLite
import TernStores

/// `tern create STORE --model MODEL [--version V] [--type sqlite|binary|xml|postgres] [--history]`: a
/// new, empty store for a model version.
struct CreateCommand: Command {
    /// The store file to create.
    static let store = ArgumentDefinition.positional(
        "STORE", help: "The store file to create, or a postgres:// URL with --type postgres; it must not exist.")
    /// The model to create the store for.
    static let model = ArgumentDefinition.option(
        "model", value: "MODEL", isRequired: true, help: ModelSelection.modelHelp)
    /// The store type.
    static let type = ArgumentDefinition.option(
        "type", value: "TYPE", help: "The store type: sqlite (the default), binary, xml or postgres.")
    /// Whether the store records persistent history.
    static let history = ArgumentDefinition.flag(
        "history", help: "Records persistent history from the first save (SQLite stores; see 'tern history').")

    /// The command's name, arguments and help.
    static let configuration = CommandConfiguration(
        name: "create",
        abstract: "Creates a new, empty store for a model version.",
        discussion: """
            The store is laid out as Core Data lays out a store for that model (Z_PRIMARYKEY,
            Z_METADATA, Z_MODELCACHE and one table per inheritance root), and its metadata records
            the version's entity hashes, so Core Data opens it with the same model. The version is
            the model's current one unless --version names another. An existing file is never
            overwritten.

            With --history the store gets Core Data's persistent-history tables (ATRANSACTION,
            ACHANGE, ATRANSACTIONSTRING), and every later save, by Tern or by Core Data, records a
            transaction there; 'tern history' lists them. Only SQLite stores record history.
            """,
        arguments: [store, model, ModelSelection.version, ModelSelection.order, type, history],
        examples: [
            "tern create Recipes.sqlite --model Recipes.xcdatamodeld",
            "tern create Old.sqlite --model Recipes.xcdatamodeld --version \"Recipes 2\"",
            "tern create Synced.sqlite --model Recipes.xcdatamodeld --history",
            "tern create postgres://localhost/recipes?schema=app --model Recipes.xcdatamodeld --type postgres",
        ])

    /// The store as typed.
    var storePath: String
    /// The model and version to create it for.
    var selection: ModelSelection
    /// The store type.
    var kind: StoreFile.Kind
    /// Whether the store records persistent history.
    var recordsHistory: Bool

    /// Makes the command from its parsed command line.
    init(_ arguments: ParsedArguments) throws(ValidationError) {
        storePath = try arguments.requiredValue(of: Self.store)
        guard let selection = try ModelSelection.parse(Self.model, from: arguments) else {
            throw ValidationError("missing option \(Self.model.label)")
        }
        self.selection = selection
        let typeName = arguments.value(of: Self.type) ?? StoreFile.Kind.sqlite.rawValue
        guard let kind = StoreFile.Kind(rawValue: typeName) else {
            let names = StoreFile.Kind.allCases.map(\.rawValue).joined(separator: ", ")
            throw ValidationError("unknown store type '\(typeName)'; use one of: \(names)")
        }
        self.kind = kind
        recordsHistory = arguments.isSet(Self.history)
    }

    /// Creates the store and says what it made.
    func run(in context: CommandContext) async throws {
        guard let storeKind = kind.storeKind else {
            throw CommandFailure("\(kind.rawValue) stores are not supported yet; use --type sqlite, binary or xml")
        }
        if recordsHistory && kind != .sqlite {
            throw CommandFailure(
                "\(kind.rawValue) stores do not record persistent history; use --type sqlite with --history")
        }
        let store = StoreFile(storePath, environment: context.environment)
        if kind == .postgres || store.isPostgreSQL {
            try await createPostgreSQL(store, in: context)
            return
        }
        guard !FileManager.default.fileExists(atPath: store.url.path) else {
            throw CommandFailure("a file already exists at \(storePath); remove it or choose another path")
        }
        let model = try selection.read(in: context)
        let version = model.currentVersion
        let uuid: String
        do {
            uuid = try await StoreFiles.create(at: store.url, kind: storeKind, model: version.model).identifier
            if recordsHistory {
                var configuration = SQLiteConfiguration()
                configuration.recordsHistory = true
                _ = try SQLiteStore(at: store.url, model: version.model, configuration: configuration)
            }
        } catch {
            throw CommandFailure("cannot create the store at \(storePath): \(StoreFile.message(of: error))")
        }
        let history = recordsHistory ? ", recording history" : ""
        context.print(
            "created \(storePath): \(kind.rawValue) store for \(model.name) version \(version.name), uuid \(uuid)\(history)"
        )
    }

    /// Creates a PostgreSQL store, named by its `postgres://` URL.
    ///
    /// - Throws: ``CommandFailure`` when the argument is a file path, the type is not postgres,
    ///   a store already exists there, or the server refuses.
    private func createPostgreSQL(_ store: StoreFile, in context: CommandContext) async throws {
        guard store.isPostgreSQL else {
            throw CommandFailure(
                "a postgres store is named by a postgres:// URL, not a file path; use --type sqlite, binary or xml for a file"
            )
        }
        guard kind == .postgres else {
            throw CommandFailure("\(store.displayName) is a PostgreSQL URL; use --type postgres")
        }
        if recordsHistory {
            throw CommandFailure("postgres stores do not record persistent history; use --type sqlite with --history")
        }
        if (try? PostgreSQLStore.metadata(at: storePath)) != nil {
            throw CommandFailure("a store already exists at \(store.displayName); destroy it or choose another schema")
        }
        let model = try selection.read(in: context)
        let version = model.currentVersion
        let uuid: String
        do {
            uuid = try StoreFiles.openPostgreSQL(storePath, model: version.model).identifier
        } catch {
            throw CommandFailure("cannot create the store at \(store.displayName): \(StoreFile.message(of: error))")
        }
        context.print(
            "created \(store.displayName): postgres store for \(model.name) version \(version.name), uuid \(uuid)")
    }
}
