import Foundation
import TernCore
import TernPostgreSQL
import TernSQLite

/// `tern verify STORE [--model MODEL] [--json]`: checks a store's integrity and lists every
/// problem with its entity and primary key.
struct VerifyCommand: Command {
    /// The store to verify.
    static let store = ArgumentDefinition.positional("STORE", help: StoreFile.help)
    /// The model to verify the store against.
    static let model = ArgumentDefinition.option(
        "model", value: "MODEL",
        help: "The model to check the store against (default: the model cached in the store).")

    /// The command's name, arguments and help.
    static let configuration = CommandConfiguration(
        name: "verify",
        abstract: "Checks a store's integrity and lists every problem with its entity and primary key.",
        discussion: """
            Checks, in order: SQLite's integrity_check (when it fails, the other checks are
            skipped); each entity hierarchy's primary-key counter (Z_MAX) against its largest
            Z_PK; entity numbers (Z_ENT) of every row; to-one references and join-table rows that
            point nowhere; one-to-one relationships whose two sides disagree; required attributes
            and relationships without a value; to-many counts against their minimum and maximum;
            objects sharing the values of a uniqueness constraint; values their attribute's type
            cannot read; external data files that are missing. The store is opened read-only;
            without --model its own model cache is used.

            A clean store prints "ok: N objects checked, no problems" and exits 0. Otherwise the
            command exits 1 with "error: the store has N problems" on stderr and one line per
            problem under it: ENTITY/p<primary key>.PROPERTY (KIND): MESSAGE. At most 1000 problems
            are listed.

            Rows that Core Data reads all the same are warnings, not problems: a row of a table
            that belongs to one entity alone (a root without subentities) whose Z_ENT names
            another entity is read as that entity's object. Each is a line "warning:
            ENTITY/p<primary key> (entityNumberMismatch): MESSAGE" on stderr (after the problems'
            lines when there are problems; only in the JSON with --json); warnings alone leave
            the exit status 0.

            --json prints {"ok": BOOL, "objects": INT, "truncated": BOOL, "skipped": [KIND], "problems": [{"kind":
            STRING, "entity": NAME|null, "primaryKey": INT|null, "property": NAME|null, "message":
            STRING}], "warnings": [same as problems]} on stdout, also when problems are found
            (then the exit status is 1 and stderr has only the error line). Kinds: integrity, primaryKeyCounter, unknownEntity, entityHierarchy,
            danglingReference, inverseMismatch, missingValue, countOutOfRange,
            uniquenessViolation, unreadableValue, missingExternalData; warnings: entityNumberMismatch.

            A PostgreSQL store (a postgres:// URL) gets every check but SQLite's integrity_check
            and external data files, which do not apply to it: a note on stderr says so, and
            "skipped" in the JSON lists those kinds (empty for SQLite). Its checks read one
            snapshot, so other processes may write meanwhile. Binary and XML stores cannot be
            verified yet.
            """,
        arguments: [store, model, ModelSelection.version, ModelSelection.order, .json, .progress, .quiet],
        examples: [
            "tern verify Recipes.sqlite",
            "tern verify Recipes.sqlite --model Recipes.xcdatamodeld --json | jq '.problems[].kind'",
            "tern verify 'postgres://app@db/recipes?schema=kitchen'",
        ])

    /// The store as typed.
    var storePath: String
    /// The model to check against, if given.
    var selection: ModelSelection?
    /// Whether to print JSON.
    var json: Bool

    /// Makes the command from its parsed command line.
    init(_ arguments: ParsedArguments) throws(ValidationError) {
        storePath = try arguments.requiredValue(of: Self.store)
        selection = try ModelSelection.parse(Self.model, from: arguments)
        json = arguments.isSet(.json)
    }

    /// Verifies the store and prints the result, or fails with the list of problems.
    func run(in context: CommandContext) async throws {
        let file = StoreFile(storePath, environment: context.environment)
        let kind = try file.kind()
        guard kind == .sqlite || kind == .postgres else {
            throw CommandFailure(
                "\(kind.rawValue) stores cannot be verified yet, only SQLite and PostgreSQL stores; "
                    + "convert a copy to SQLite and verify that")
        }
        let model = try selection?.model(for: file, in: context, fallback: "verify without --model")
        let progress = Progress(totalUnitCount: 0)
        let report: StoreVerificationReport
        do {
            let bar = context.progressBar("verifying", for: progress)
            defer { bar.finish() }
            if kind == .postgres {
                let store = try PostgreSQLStore(url: storePath, model: model, readOnly: true)
                report = try await store.verify(progress: progress)
            } else {
                report = try await StoreVerifier.verify(storeAt: file.url, model: model, progress: progress)
            }
        } catch {
            throw CommandFailure("cannot verify the store at \(file.displayName): \(StoreFile.message(of: error))")
        }
        if !report.skippedChecks.isEmpty {
            let names = report.skippedChecks.map(\.rawValue).joined(separator: ", ")
            context.note("note: not checked, as they do not apply to a \(kind.rawValue) store: \(names)")
        }
        let warnings = report.warnings.map { "\($0.location) (\($0.kind)): \($0.message)" }
        let count = report.problems.count
        let summary = "the store has \(report.isTruncated ? "more than " : "")\(count) problem\(count == 1 ? "" : "s")"
        if json {
            let document = Self.document(report)
            guard report.isClean else { throw CommandFailure(summary, report: document) }
            context.printJSON(document)
            return
        }
        guard report.isClean else {
            var lines = report.problems.map { "  \($0.location) (\($0.kind)): \($0.message)" }
            if report.isTruncated { lines.append("  … only the first \(count) problems are listed") }
            throw CommandFailure(summary, details: lines + warnings.map { "  warning: " + $0 })
        }
        for warning in warnings { context.warn(warning) }
        let objects = report.objectCount
        context.print("ok: \(objects) object\(objects == 1 ? "" : "s") checked, no problems")
    }

    // MARK: - Rendering

    /// The report as the JSON document `--json` prints.
    static func document(_ report: StoreVerificationReport) -> JSONValue {
        .object([
            "ok": .bool(report.isClean),
            "objects": .integer(Int64(report.objectCount)),
            "truncated": .bool(report.isTruncated),
            "skipped": .array(report.skippedChecks.map { .string($0.rawValue) }),
            "problems": .array(report.problems.map(entry)),
            "warnings": .array(report.warnings.map(entry)),
        ])
    }

    /// A problem or warning as an entry of the JSON document.
    private static func entry(_ problem: StoreProblem) -> JSONValue {
        .object([
            "kind": .string(problem.kind.rawValue),
            "entity": .string(problem.entityName),
            "primaryKey": problem.primaryKey.map(JSONValue.integer) ?? .null,
            "property": .string(problem.propertyName),
            "message": .string(problem.message),
        ])
    }
}
