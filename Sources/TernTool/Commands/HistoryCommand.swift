import Foundation
import TernCore
import TernStores

/// `tern history STORE [--after TOKEN] [--json]`: the transactions a store recorded in its
/// persistent history.
struct HistoryCommand: Command {
    /// The store to read.
    static let store = ArgumentDefinition.positional("STORE", help: StoreFile.help)
    /// The token to start after.
    static let after = ArgumentDefinition.option(
        "after", value: "TOKEN",
        help: "Lists only the transactions after this one (a token printed by an earlier run).")

    /// The command's name, arguments and help.
    static let configuration = CommandConfiguration(
        name: "history",
        abstract: "Lists the transactions a store recorded in its persistent history.",
        discussion: """
            Each transaction is one save: its token, when it was committed, its author and context
            name (the saving context's transactionAuthor and name), the process that saved, and
            the objects it inserted, updated (with the properties that changed) and deleted (with
            the values of attributes marked "preserve after deletion"). Both the history Tern
            records and the history Core Data records (NSPersistentHistoryTrackingKey) are read.
            The store is opened read-only. Stores record history when created with
            'tern create --history'; binary and XML stores never do, and the command fails on
            them and on stores without history.

            Tokens look like 12@<store UUID>. Pass the last one to --after to see only what was
            saved since; the last line of the text output (and "lastToken" in JSON) is the store's
            latest token, also when nothing is listed.

            --json prints {"transactions": [{"token": STRING, "timestamp": ISO 8601, "author":
            STRING|null, "contextName": STRING|null, "bundleIdentifier": STRING|null,
            "processName": STRING|null, "changes": [{"type": "insert"|"update"|"delete",
            "object": "Entity/p<key>", "entity": NAME, "primaryKey": INT, "updatedProperties":
            [NAME]|null, "tombstone": {ATTRIBUTE: VALUE}}]}], "lastToken": STRING|null}; values are
            written as 'tern export' writes them.
            """,
        arguments: [store, after, .json],
        examples: [
            "tern history Recipes.sqlite",
            "tern history Recipes.sqlite --after 12@C9CB0B35-ED6A-4042-BE5C-1B911AC00B2A --json | jq '.transactions[].author'",
        ])

    /// The store as typed.
    var storePath: String
    /// The token to start after, if given.
    var token: HistoryToken?
    /// Whether to print JSON.
    var json: Bool

    /// Makes the command from its parsed command line.
    init(_ arguments: ParsedArguments) throws(ValidationError) {
        storePath = try arguments.requiredValue(of: Self.store)
        if let text = arguments.value(of: Self.after) {
            guard let token = HistoryToken(text) else {
                throw ValidationError("'\(text)' is not a history token; tokens look like 12@<store UUID>")
            }
            self.token = token
        }
        json = arguments.isSet(.json)
    }

    /// Reads the history and prints it.
    func run(in context: CommandContext) async throws {
        let file = StoreFile(storePath, environment: context.environment)
        guard try file.kind() != .postgres else {
            throw CommandFailure(
                "PostgreSQL stores do not record persistent history; 'tern sync' keeps its change log on the server")
        }
        let transactions: [HistoryTransaction]
        let last: HistoryToken?
        do {
            let store = try StoreFiles.open(at: file.url, model: nil, isReadOnly: true)
            transactions = try await store.fetchHistory(HistoryFetchRequest(after: token))
            last = try await store.currentHistoryToken()
        } catch {
            throw CommandFailure("cannot read the history of \(storePath): \(StoreFile.message(of: error))")
        }
        if json {
            context.printJSON([
                "transactions": .array(transactions.map(Self.document)), "lastToken": .string(last?.description),
            ])
            return
        }
        for transaction in transactions {
            var header = "transaction \(transaction.token)  \(Self.timestamp(transaction.timestamp))"
            if let author = transaction.author { header += "  author \(author)" }
            if let name = transaction.contextName { header += "  context \(name)" }
            if let process = transaction.processName { header += "  process \(process)" }
            context.print(header)
            for change in transaction.changes { context.print("  " + Self.line(change)) }
        }
        let listed = "\(transactions.count) transaction\(transactions.count == 1 ? "" : "s")"
        context.print("\(listed)\(token.map { " after \($0)" } ?? ""); latest token: \(last?.description ?? "none")")
    }

    // MARK: - Rendering

    /// A change as one line of text.
    static func line(_ change: HistoryChange) -> String {
        let object = "\(change.objectID.entityName)/p\(change.objectID.primaryKey ?? 0)"
        switch change.changeType {
        case .insert:
            return "inserted \(object)"
        case .update:
            let properties = change.updatedProperties.map { " (\($0.sorted().joined(separator: ", ")))" } ?? ""
            return "updated \(object)\(properties)"
        case .delete:
            let kept = change.tombstone.sorted { $0.key < $1.key }.map { "\($0.key)=\(RecordFormat.text($0.value))" }
            return "deleted \(object)\(kept.isEmpty ? "" : " (kept: \(kept.joined(separator: ", ")))")"
        }
    }

    /// A transaction as the JSON document `--json` prints.
    static func document(_ transaction: HistoryTransaction) -> JSONValue {
        .object([
            "token": .string(transaction.token.description),
            "timestamp": .date(transaction.timestamp),
            "author": .string(transaction.author),
            "contextName": .string(transaction.contextName),
            "bundleIdentifier": .string(transaction.bundleIdentifier),
            "processName": .string(transaction.processName),
            "changes": .array(
                transaction.changes.map { change in
                    .object([
                        "type": .string(["insert", "update", "delete"][change.changeType.rawValue]),
                        "object": .string("\(change.objectID.entityName)/p\(change.objectID.primaryKey ?? 0)"),
                        "entity": .string(change.objectID.entityName),
                        "primaryKey": .integer(change.objectID.primaryKey ?? 0),
                        "updatedProperties": change.updatedProperties.map { .array($0.sorted().map(JSONValue.string)) }
                            ?? .null,
                        "tombstone": .object(change.tombstone.mapValues(RecordFormat.jsonValue)),
                    ])
                }),
        ])
    }

    /// A timestamp as ISO 8601 UTC with milliseconds.
    static func timestamp(_ date: Date) -> String {
        date.formatted(Date.ISO8601FormatStyle(includingFractionalSeconds: true))
    }
}
