import Foundation
import TernCore
import TernPostgreSQL
import TernSQLite
import TernSync

/// `tern sync STORE --server URI [--model MODEL] [--resync] [--page-size N] [--json]`: pushes a SQLite store's local
/// changes to a PostgreSQL sync server and pulls the other devices' (docs/Sync.md).
struct SyncCommand: Command {
    /// The device store.
    static let store = ArgumentDefinition.positional("STORE", help: "The device's SQLite store file.")
    /// The server.
    static let server = ArgumentDefinition.option(
        "server", value: "URI",
        help: "The PostgreSQL server holding the change log (a postgres:// URI; schema=NAME picks a schema).")
    /// The model to open the store with.
    static let model = ArgumentDefinition.option(
        "model", value: "MODEL", help: "The model to open the store with (default: the model cached in the store).")
    /// Pull the whole server state again.
    static let resync = ArgumentDefinition.flag(
        "resync",
        help: "Pushes local changes, then pulls the whole server state again and deletes the local objects "
            + "the server no longer has: for a device told to resync after the server purged its history.")
    /// Objects or transactions per round trip.
    static let pageSize = ArgumentDefinition.option(
        "page-size", value: "N",
        help: "Objects or local transactions per server round trip and local transaction (default 500, at least 1).")

    /// The command's name, arguments and help.
    static let configuration = CommandConfiguration(
        name: "sync",
        abstract: "Pushes a store's local changes to a PostgreSQL sync server and pulls the others'.",
        discussion: """
            The store's first sync turns its persistent history and global object identifiers on
            and pushes every object as its initial state. Each later sync pushes the transactions
            saved since the last push, in one server transaction, then applies the objects other
            devices changed in one local transaction. A property takes its last write in server
            order; deletes propagate; an object whose uniqueness key (or, without one, whose
            content) matches an object another device pushed first is merged into it, so seeding
            the same data on two devices makes no duplicates. A run that is interrupted converges
            when run again. A store whose model is older than the one some changes were written
            with refuses to pull them (exit 1): migrate it, then sync again.

            Pushes and pulls travel in pages of --page-size objects or transactions (500 by
            default), each page in one server round trip and one local transaction, so memory
            stays bounded; an interrupted run resumes after the last page it finished.

            A server may purge the history every device has pulled. A device that had not pulled
            it yet is told to resync (exit 1, nothing pulled; its local changes were pushed): run
            the same command with --resync, which pulls the whole server state again and deletes
            the local objects the server no longer has. Local edits are kept.

            --json prints {"pushed": {"transactions": INT, "changes": INT, "merged": INT},
            "pulled": {"objects": INT, "inserted": INT, "updated": INT, "deleted": INT, "merged": INT}}.
            """,
        arguments: [store, server, model, resync, pageSize, .json],
        examples: [
            "tern sync Recipes.sqlite --server postgresql://localhost/kitchen",
            "tern sync Recipes.sqlite --server 'postgresql://sync@db.example.com/recipes?schema=family' --json",
            "tern sync Recipes.sqlite --server postgresql://localhost/kitchen --resync --page-size 100",
        ])

    /// The store as typed.
    var storePath: String
    /// The server's URI.
    var serverURI: String
    /// The model choice, if any.
    var selection: ModelSelection?
    /// Whether to pull the whole server state again.
    var resyncs: Bool
    /// Objects or transactions per page.
    var pageSize: Int
    /// Whether to print JSON.
    var json: Bool

    /// Makes the command from its parsed command line.
    init(_ arguments: ParsedArguments) throws(ValidationError) {
        storePath = try arguments.requiredValue(of: Self.store)
        guard let server = arguments.value(of: Self.server) else {
            throw ValidationError("missing --server URI; give the PostgreSQL sync server")
        }
        serverURI = server
        selection = try ModelSelection.parse(Self.model, from: arguments)
        resyncs = arguments.isSet(Self.resync)
        pageSize = 500
        if let text = arguments.value(of: Self.pageSize) {
            guard let size = Int(text), size >= 1 else {
                throw ValidationError("--page-size takes a whole number of at least 1, not '\(text)'")
            }
            pageSize = size
        }
        json = arguments.isSet(.json)
    }

    /// Opens the store for sync, syncs and prints the summary.
    func run(in context: CommandContext) async throws {
        let file = StoreFile(storePath, environment: context.environment)
        guard try file.kind() == .sqlite else {
            throw CommandFailure("\(storePath) is not a SQLite store; only SQLite stores sync (convert it first)")
        }
        let model = try selection?.model(for: file, in: context, fallback: "sync without --model")
        // The server is reached first, so that a wrong URI leaves the store as it was.
        let server: SyncServer
        do {
            server = try SyncServer(location: serverURI)
        } catch {
            let shown = (try? PostgreSQLLocation(serverURI).description) ?? "the --server URI"
            throw CommandFailure(
                "cannot reach the sync server at \(shown): \(StoreFile.message(of: error))",
                details: ["nothing was synced; the store is unchanged"])
        }
        let summary: SyncSummary
        do {
            let store = try SQLiteStore(at: file.url, model: model, configuration: SyncEngine.storeConfiguration)
            let engine = SyncEngine(store: store, server: server, pageSize: pageSize)
            summary = try await resyncs ? engine.resync() : engine.sync()
        } catch let error as SyncError where error.code == .resyncNeeded {
            throw CommandFailure(
                "the server purged changes this device has not pulled; run the same command with --resync "
                    + "to pull the whole state again (tern sync STORE --server URI --resync)",
                details: ["local changes were pushed; nothing was pulled"])
        } catch {
            throw CommandFailure("cannot sync \(storePath): \(StoreFile.message(of: error))")
        }
        if json {
            context.printJSON([
                "pushed": .object([
                    "transactions": .integer(Int64(summary.pushedTransactions)),
                    "changes": .integer(Int64(summary.pushedChanges)),
                    "merged": .integer(Int64(summary.mergedOnServer)),
                ]),
                "pulled": .object([
                    "objects": .integer(Int64(summary.pulledObjects)), "inserted": .integer(Int64(summary.inserted)),
                    "updated": .integer(Int64(summary.updated)), "deleted": .integer(Int64(summary.deleted)),
                    "merged": .integer(Int64(summary.mergedLocally)),
                ]),
            ])
            return
        }
        context.print(summary.description)
    }
}
