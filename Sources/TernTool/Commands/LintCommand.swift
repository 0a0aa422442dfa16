import Foundation
import TernCore
import TernFormats
import TernMigration
import TernMigrationTesting

/// `tern lint MODEL [--against GIT-REF] [--cloudkit] [--mapping FILE]… [--json]`: the mistakes in
/// a model that break migrations in the field.
struct LintCommand: Command {
    /// The model to lint.
    static let model = ArgumentDefinition.positional("MODEL", help: ModelSelection.modelHelp)
    /// The released revision to compare with.
    static let against = ArgumentDefinition.option(
        "against", value: "GIT-REF",
        help:
            "A git revision (a release tag) whose versions must be unchanged now; the model must be in a git work tree."
    )
    /// CloudKit's rules.
    static let cloudKit = ArgumentDefinition.flag(
        "cloudkit", help: "Also checks the rules NSPersistentCloudKitContainer enforces on the current version.")
    /// Mapping files, repeatable.
    static let mapping = MigrationArguments.mapping

    /// The command's name, arguments and help.
    static let configuration = CommandConfiguration(
        name: "lint",
        abstract: "Finds the mistakes in a model that break migrations in the field.",
        discussion: """
            Checks, and prints one line per finding ("error:" or "warning:", the version, the
            entity and property, what is wrong and what to do):
            - with --against GIT-REF, every version that exists at that revision (a release tag)
              must have the same entity hashes now: an edited released version is an error naming
              each changed entity and property (stores it wrote would match no version: "Can't
              find model for source store");
            - two versions with identical hashes (a warning: a store cannot tell them apart; add a
              versionHashModifier or remove one);
            - a current version that is not the newest in migration order (an error with --order,
              a warning when the order is guessed from names);
            - for every historical version, the plan to the current one: a step no inference can
              do and no --mapping file covers is an error; a required attribute or relationship
              added without a default in an inferred step is a warning (Core Data refuses such a
              migration when the store has objects);
            - with --cloudkit, NSPersistentCloudKitContainer's rules on the current version: no
              uniqueness constraints, every attribute optional or with a default, every
              relationship optional and with an inverse, no Deny delete rule, no ordered
              relationships (errors).

            Exits 1 when any finding is an error ("error: N error(s) in the model" on stderr after
            the findings), 0 otherwise. --json prints {"errors": INT, "warnings": INT,
            "findings": [{"severity": "error"|"warning", "rule": RULE, "version": NAME|null,
            "entity": NAME|null, "property": NAME|null, "message": TEXT}]}, also on failure.
            --mapping (JSON, .xcmappingmodel or .cdm, repeatable) is an extension of the
            contract: the mappings the app ships cover their steps.
            """,
        arguments: [model, ModelSelection.version, ModelSelection.order, against, cloudKit, mapping, .json],
        examples: [
            "tern lint Recipes.xcdatamodeld",
            "tern lint Recipes.xcdatamodeld --against v2.3.0 --cloudkit --json",
        ])

    /// The model.
    var selection: ModelSelection
    /// The released revision, if any.
    var revision: String?
    /// Whether to check CloudKit's rules.
    var checksCloudKit: Bool
    /// The mapping files as typed.
    var mappingPaths: [String]
    /// Whether to print JSON.
    var json: Bool

    /// Makes the command from its parsed command line.
    init(_ arguments: ParsedArguments) throws(ValidationError) {
        guard let selection = try ModelSelection.parse(Self.model, from: arguments) else {
            throw ValidationError("missing argument \(Self.model.valueName)")
        }
        self.selection = selection
        revision = arguments.value(of: Self.against)
        checksCloudKit = arguments.isSet(Self.cloudKit)
        mappingPaths = arguments.values(of: Self.mapping)
        json = arguments.isSet(.json)
    }

    /// Lints the model and prints the findings.
    func run(in context: CommandContext) async throws {
        let model = try selection.read(in: context)
        let url = context.environment.url(forPath: selection.path)
        let mappings = try MigrationArguments.mappings(at: mappingPaths, model: model, in: context).map(\.mapping)
        var released: VersionedModel?
        if let revision { released = try GitRevision.model(at: url, revision: revision, order: selection.order) }
        let findings = ModelLint.findings(in: model, released: released, mappings: mappings, cloudKit: checksCloudKit)
        let errors = findings.filter { $0.severity == .error }.count
        let document = Self.document(findings)
        if json {
            if errors > 0 { throw CommandFailure("\(errors) error(s) in the model", report: document) }
            context.printJSON(document)
            return
        }
        for finding in findings {
            context.environment.output.write(finding.description + "\n", to: .standardError)
        }
        if errors > 0 { throw CommandFailure("\(errors) error(s) in the model") }
        context.print(findings.isEmpty ? "no findings" : "\(findings.count) warning(s), no error")
    }

    /// The `--json` document.
    static func document(_ findings: [ModelLint.Finding]) -> JSONValue {
        .object([
            "errors": .integer(Int64(findings.filter { $0.severity == .error }.count)),
            "warnings": .integer(Int64(findings.filter { $0.severity == .warning }.count)),
            "findings": .array(
                findings.map { finding in
                    .object([
                        "severity": .string(finding.severity.rawValue), "rule": .string(finding.rule.rawValue),
                        "version": .string(finding.version), "entity": .string(finding.entity),
                        "property": .string(finding.property), "message": .string(finding.message),
                    ])
                }),
        ])
    }
}

/// Reading a model as a git revision holds it, with the `git` command.
enum GitRevision {
    /// The model at a revision, read from its files as that revision holds them.
    ///
    /// - Parameters:
    ///   - url: The model in a git work tree.
    ///   - revision: A revision git knows (a tag, a branch, a commit).
    ///   - order: The versions' order, as given for the model now.
    /// - Returns: The model at the revision, or nil when the revision has no model at that path.
    /// - Throws: ``CommandFailure`` when git fails (not a work tree, an unknown revision) or the
    ///   model at the revision cannot be read.
    static func model(at url: URL, revision: String, order: [String]?) throws -> VersionedModel? {
        let folder = url.deletingLastPathComponent().path
        let top = text(
            of: try run(["-C", folder, "rev-parse", "--show-toplevel"], doing: "find the git work tree of \(url.path)"))
        _ = try run(
            ["-C", top, "rev-parse", "--verify", "--quiet", revision + "^{commit}"],
            doing: "find the revision \(revision)")
        let root = URL(fileURLWithPath: top).resolvingSymlinksInPath().path
        let modelPath = url.resolvingSymlinksInPath().path
        guard modelPath.hasPrefix(root + "/") else {
            throw CommandFailure("the model \(url.path) is not inside the git work tree \(top)")
        }
        let relative = String(modelPath.dropFirst(root.count + 1))
        let listing = text(
            of: try run(
                ["-C", top, "ls-tree", "-r", "--name-only", revision, "--", relative],
                doing: "list the model at \(revision)"))
        let files = listing.split(separator: "\n").map(String.init).filter { !$0.isEmpty }
        guard !files.isEmpty else { return nil }
        let scratch = FileManager.default.temporaryDirectory.appendingPathComponent("tern-lint-\(UUID().uuidString)")
        defer { try? FileManager.default.removeItem(at: scratch) }
        let base = scratch.appendingPathComponent(url.lastPathComponent)
        for file in files {
            let data = try run(["-C", top, "show", "\(revision):\(file)"], doing: "read \(file) at \(revision)")
            let destination =
                file == relative ? base : base.appendingPathComponent(String(file.dropFirst(relative.count + 1)))
            do {
                try FileManager.default.createDirectory(
                    at: destination.deletingLastPathComponent(), withIntermediateDirectories: true)
                try data.write(to: destination)
            } catch {
                throw CommandFailure(
                    "cannot write a copy of \(file) at \(revision) to \(destination.path): \(error.localizedDescription)"
                )
            }
        }
        // The order as given now may name versions added since: keep those the revision holds.
        let held = Set(
            files.flatMap { $0.split(separator: "/") }.filter { $0.hasSuffix(".xcdatamodel") }.map { $0.dropLast(12) }
                .map(String.init))
        let releasedOrder = order?.filter(held.contains)
        do {
            return try XcodeModel.readVersionedModel(
                at: base, order: releasedOrder?.isEmpty == false ? releasedOrder : nil)
        } catch {
            throw CommandFailure("cannot read the model as \(revision) holds it: \(error)")
        }
    }

    /// Runs git and returns its standard output.
    private static func run(_ arguments: [String], doing task: String) throws -> Data {
        let process = Process()
        process.executableURL = URL(fileURLWithPath: "/usr/bin/env")
        process.arguments = ["git"] + arguments
        let output = Pipe()
        let errors = Pipe()
        process.standardOutput = output
        process.standardError = errors
        do {
            try process.run()
        } catch {
            throw CommandFailure(
                "cannot run git to \(task): \(error.localizedDescription); install git or leave out --against")
        }
        let data = output.fileHandleForReading.readDataToEndOfFile()
        let message = String(decoding: errors.fileHandleForReading.readDataToEndOfFile(), as: UTF8.self)
        process.waitUntilExit()
        guard process.terminationStatus == 0 else {
            let reason =
                message.split(separator: "\n").first.map(String.init) ?? "exit status \(process.terminationStatus)"
            throw CommandFailure("git could not \(task): \(reason)")
        }
        return data
    }

    /// Output as a trimmed line.
    private static func text(of data: Data) -> String {
        String(decoding: data, as: UTF8.self).trimmingCharacters(in: .whitespacesAndNewlines)
    }
}
