import Foundation
import TernCore
import TernSQLite

/// `tern recover STORE`: rolls back what a writer that crashed or was killed left in a SQLite
/// store, so that read-only commands can open it.
struct RecoverCommand: Command {
    /// The store to recover.
    static let store = ArgumentDefinition.positional("STORE", help: StoreFile.help)

    /// The command's name, arguments and help.
    static let configuration = CommandConfiguration(
        name: "recover",
        abstract: "Rolls back the unfinished transaction a crashed writer left in a SQLite store.",
        discussion: """
            A writer that crashes or is killed in the middle of a transaction leaves a hot
            rollback journal (STORE-journal) or a write-ahead log whose index (STORE-shm) must be
            rebuilt. SQLite repairs this on the next read-write open; read-only commands (info,
            export, verify, convert's source, plan) never change their input, so they refuse such
            a store with an error that points here. This command opens the store read-write once,
            which rolls back the unfinished transaction (committed data is kept), and checks that
            it now opens read-only.

            It prints "recovered: …" when there was something to roll back and "ok: nothing to
            recover" otherwise, and exits 0. The store's folder must be writable: for a store in a
            read-only folder, copy it together with its -journal, -wal and -shm files to a
            writable folder and recover the copy.
            """,
        arguments: [store],
        examples: ["tern recover Recipes.sqlite"])

    /// The store as typed.
    var storePath: String

    /// Makes the command from its parsed command line.
    init(_ arguments: ParsedArguments) throws(ValidationError) {
        storePath = try arguments.requiredValue(of: Self.store)
    }

    /// Recovers the store and says whether it needed it.
    func run(in context: CommandContext) async throws {
        let file = StoreFile(storePath, environment: context.environment)
        guard try file.kind() == .sqlite else {
            context.print("ok: nothing to recover in \(storePath) (only SQLite stores keep a journal)")
            return
        }
        let recovered: Bool
        do {
            recovered = try SQLiteStore.recoverInterruptedWrite(at: file.url)
        } catch {
            throw CommandFailure("cannot recover the store at \(storePath): \(StoreFile.message(of: error))")
        }
        if recovered {
            context.print("recovered: rolled back the unfinished transaction a crashed writer left in \(storePath)")
        } else {
            context.print("ok: nothing to recover in \(storePath)")
        }
    }
}
