import Foundation
import TernFormats
import TernTestSupport
import Testing

@testable import TernTool

// The contract of the `tern` command (/work/shared/CLI.md, README "Command line") checked row by
// row against the BUILT BINARY, as a user or a script runs it. Each row names the tests that
// run it; `E` = this file, `E+M` = ContractExecutableTests+Migration.swift, `PG` =
// PostgreSQLExecutableTests.swift, `X` = TernExecutableTests.swift / VerifyCommandTests.swift.
//
// | contract row                                        | end-to-end test                                         |
// | --------------------------------------------------- | ------------------------------------------------------- |
// | `tern help`, `tern --version`                       | X versionExitsWithZero, helpListsTheCommands            |
// | `tern <command> --help` (usage, options, example)   | E everyCommandHasAHelpPage                              |
// | `--model PATH` and `--model=PATH`                   | E bothOptionSpellingsMeanTheSame                        |
// | unknown flag / missing value / missing argument → 2 | E badFlagsAreUsageErrors, X unknownFlag…, missingArg…   |
// | exit 1 + one `error:` line, nothing on stdout       | every failure test below checks all three (Binary.fail) |
// | …except a `--json` report: on stdout, exit 1        | E+M nonInferableChange… (plan), E+M verifyJSON… (verify) |
// | results stdout, progress stderr, `--progress` lines | E progressIsPlainLinesOnStderrWithProgress              |
// | progress bar on a terminal, `NO_COLOR`              | E aTerminalGetsABarRedrawnInPlace (through script(1))   |
// | never progress with `--quiet`                       | E progressIsPlainLinesOnStderrWithProgress              |
// | `--json`: one sorted document on stdout             | E jsonIsOneSortedDocumentAndNothingFollowsAFailure (model, info, import, verify, history, plan) |
// | MODEL: bundle, one .xcdatamodel, --version, --order | E modelFolderVersionAndOrder                            |
// | STORE type from contents, never the extension       | E storeTypeComesFromTheContents                         |
// | STORE as postgres:// (info/verify/import/export/convert/create) | PG storeCommandsTakeAPostgresURL                |
// | `--type sqlite|binary|xml|postgres`                 | E createMakesEachTypeAndRefusesOthers, PG …             |
// | `tern model [--json]` + JSON shape                  | E jsonIsOneSorted…, X modelPrintsJSONOnStdout           |
// | `tern info [--model] [--json]` + JSON shape         | E infoJSONHasTheContractKeys                            |
// | `tern create … [--version] [--type] [--history]`    | E createMakesEachTypeAndRefusesOthers, E+M history…     |
// | `tern import … [--entity] [--format] [--unique-by]` | E importUpsertsAndExportRoundTrips, E badImportRow…     |
// | `tern export … [--entity] [--format] [-o]`          | E exportTSVToAFile, E importUpsertsAndExportRoundTrips  |
// | export → import → export gives the same JSON        | E importUpsertsAndExportRoundTrips                      |
// | `tern plan … [--to] [--mapping] [--json]`           | E+M planAndMigrateTheFixture, E+M nonInferableChange…   |
// | plan: a migration is impossible → exit 1 + reasons  | E+M nonInferableChangeFailsPlanAndMigrate               |
// | `tern migrate … [--destination] [--type]`           | E+M planAndMigrateTheFixture                            |
// | migrate: a store at the target is left, exit 0      | E+M planAndMigrateTheFixture                            |
// | `tern convert STORE DEST --type [--model]`          | E convertCopiesToEachType                               |
// | `tern verify [--model] [--json]`, exit 1 + list     | X binary… (VerifyCommandTests), E+M verifyJSONOfACleanAndADamagedStore, PG |
// | `tern history [--after] [--json]`                   | E+M historyListsImportsAfterATokenAndRejectsBadTokens   |
// | `tern sync --server [--model] [--json]`             | PG syncTwoDevicesThroughTheBinary, PG syncFailures…     |
// | `tern sync --resync`, `--page-size N` (N ≥ 1)       | PG syncInPagesAndResyncAfterTheServerPurged             |
// | `tern generate MODEL [--version] [--output] [--style]` | GenerateCommandTests theBinaryWritesTheFiles…, …      |
// | `tern demo [DIR]`                                   | E+M demoTellsTheStoryAndRefusesAnEarlierFolder          |
// | failure: a missing file                             | X missingFileFailsWithExitOne, E+M failures…            |
// | failure: a file that is not a store                 | E+M failuresOfEveryKindThroughTheBinary                 |
// | failure: a store from a model it does not match     | E+M failuresOfEveryKindThroughTheBinary                 |
// | failure: a non-inferable change                     | E+M nonInferableChangeFailsPlanAndMigrate               |
// | failure: a bad import row                           | E badImportRowFailsAndChangesNothing                    |
// | README: the CLI tour on a real Core Data store      | ReadmeCommandLineTests (output compared line by line)   |
// | the runner never hangs on a child (posix_spawn)     | ToolRunnerTests                                         |

/// Runs the built binary and checks the conventions every command shares.
enum Binary {
    /// The Chef's Book example folder.
    static let example = URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent()
        .deletingLastPathComponent().appendingPathComponent("Examples/ChefsBook")
    /// The Chef's Book model.
    static let chefsBook = example.appendingPathComponent("ChefsBook.xcdatamodeld").path
    /// The Chef's Book starter records.
    static let starter = example.appendingPathComponent("StarterRecipes.json").path
    /// The first Core Data fixture store.
    static let sampleStore = Fixtures.url("CoreDataPlus/SampleModel/Fixtures/SampleModel_V1.sqlite")

    /// Runs `tern` and expects success: exit 0 and nothing on stderr unless allowed.
    @discardableResult
    static func succeed(
        _ arguments: [String], allowingStandardError: Bool = false, sourceLocation: SourceLocation = #_sourceLocation
    ) throws -> ToolResult {
        let result = try ToolRunner.runExecutable(arguments)
        #expect(
            result.status == 0, "tern \(arguments.joined(separator: " ")): \(result.standardError)",
            sourceLocation: sourceLocation)
        if !allowingStandardError {
            #expect(result.standardError.isEmpty, "\(result.standardError)", sourceLocation: sourceLocation)
        }
        return result
    }

    /// Runs `tern` and expects a failure with that status: nothing on stdout, and stderr
    /// starting with one `error:` line.
    @discardableResult
    static func fail(
        _ arguments: [String], status: Int32, sourceLocation: SourceLocation = #_sourceLocation
    ) throws -> ToolResult {
        let result = try ToolRunner.runExecutable(arguments)
        #expect(
            result.status == status, "tern \(arguments.joined(separator: " ")): \(result.standardError)",
            sourceLocation: sourceLocation)
        #expect(
            result.standardOutput.isEmpty, "stdout after a failure: \(result.standardOutput)",
            sourceLocation: sourceLocation)
        #expect(
            result.errorLines.first?.hasPrefix("error: ") == true, "\(result.standardError)",
            sourceLocation: sourceLocation)
        #expect(result.errorLines.dropFirst().allSatisfy { !$0.hasPrefix("error: ") }, sourceLocation: sourceLocation)
        return result
    }

    /// Runs `tern` and expects a failure whose `--json` report is still the result: exit 1, one
    /// sorted JSON document on stdout, and stderr starting with one `error:` line.
    static func failWithReport(
        _ arguments: [String], sourceLocation: SourceLocation = #_sourceLocation
    ) throws -> (ToolResult, [String: Any]) {
        let result = try ToolRunner.runExecutable(arguments)
        #expect(
            result.status == 1, "tern \(arguments.joined(separator: " ")): \(result.standardError)",
            sourceLocation: sourceLocation)
        #expect(
            result.errorLines.first?.hasPrefix("error: ") == true, "\(result.standardError)",
            sourceLocation: sourceLocation)
        #expect(result.errorLines.dropFirst().allSatisfy { !$0.hasPrefix("error: ") }, sourceLocation: sourceLocation)
        return (result, try document(result, sourceLocation: sourceLocation))
    }

    /// The JSON document a run printed, which must be exactly one document with sorted keys.
    static func document(_ result: ToolResult, sourceLocation: SourceLocation = #_sourceLocation) throws -> [String:
        Any]
    {
        let data = Data(result.standardOutput.utf8)
        let object = try #require(
            try JSONSerialization.jsonObject(with: data) as? [String: Any],
            "not one JSON object: \(result.standardOutput)",
            sourceLocation: sourceLocation)
        #expect(Self.keysAreSorted(in: result.standardOutput), "keys not sorted", sourceLocation: sourceLocation)
        return object
    }

    /// Whether the keys of every object of a pretty-printed document appear in sorted order.
    static func keysAreSorted(in text: String) -> Bool {
        var stack: [[String]] = [[]]
        for line in text.split(separator: "\n") {
            let trimmed = line.drop { $0 == " " }
            if trimmed.hasPrefix("\""), let end = trimmed.dropFirst().firstIndex(of: "\""),
                trimmed[trimmed.index(after: end)...].hasPrefix(" :")
            {
                let key = String(trimmed[trimmed.index(after: trimmed.startIndex)..<end])
                if let last = stack[stack.count - 1].last, last > key { return false }
                stack[stack.count - 1].append(key)
            }
            if trimmed.hasSuffix("{") || trimmed.hasSuffix("[") { stack.append([]) }
            if trimmed.hasPrefix("}") || trimmed.hasPrefix("]") { stack.removeLast() }
            if stack.isEmpty { return false }
        }
        return true
    }

    /// An export with primary keys set aside: for each entity, its records as sorted JSON lines in
    /// which every reference is replaced by the attributes of the object it names.
    static func canonical(_ export: String) throws -> [String: [String]] {
        let document = try #require(
            try JSONSerialization.jsonObject(with: Data(export.utf8)) as? [String: [[String: Any]]])
        let ids = Set(document.values.joined().compactMap { $0["_id"] as? String })
        var attributes: [String: [String: Any]] = [:]
        for record in document.values.joined() {
            guard let id = record["_id"] as? String else { continue }
            attributes[id] = record.filter { key, value in
                key != "_id" && !(value is [Any]) && !ids.contains(value as? String ?? "")
            }
        }
        func text(_ value: Any) throws -> String {
            let data = try JSONSerialization.data(withJSONObject: value, options: [.sortedKeys, .fragmentsAllowed])
            return String(decoding: data, as: UTF8.self)
        }
        var result: [String: [String]] = [:]
        for (entity, records) in document {
            result[entity] = try records.map { record in
                var resolved: [String: Any] = [:]
                for (key, value) in record where key != "_id" {
                    if let id = value as? String, let target = attributes[id] {
                        resolved[key] = try text(target)
                    } else if let ids = value as? [String] {
                        resolved[key] = try ids.map { try text(attributes[$0] ?? [:]) }.sorted()
                    } else {
                        resolved[key] = value
                    }
                }
                return try text(resolved)
            }.sorted()
        }
        return result
    }

    /// A new SQLite Chef's Book store in a folder.
    static func chefsBookStore(in tmp: TemporaryDirectory, named name: String = "Recipes.sqlite") throws -> String {
        let path = tmp.path(name).path
        try succeed(["create", path, "--model", chefsBook])
        return path
    }
}

/// The conventions every command shares, through the binary.
@Suite struct ConventionsExecutableTests {
    @Test func everyCommandHasAHelpPage() throws {
        for command in Tern.commands {
            let name = command.configuration.name
            let page = try Binary.succeed([name, "--help"])
            #expect(page.standardOutput.hasPrefix("OVERVIEW: "))
            #expect(page.standardOutput.contains("USAGE: tern \(name)"))
            #expect(page.standardOutput.contains("EXAMPLES:\n  tern \(name)"))
            for argument in command.configuration.arguments {
                #expect(
                    page.standardOutput.contains(argument.label), "tern \(name) --help does not list \(argument.label)")
            }
        }
        #expect(
            try Binary.succeed(["help", "export"]).standardOutput == Binary.succeed(["export", "-h"]).standardOutput)
    }

    @Test func bothOptionSpellingsMeanTheSame() throws {
        let tmp = try TemporaryDirectory()
        let store = try tmp.copy(Binary.sampleStore).path
        let separate = try Binary.succeed(["info", store, "--model", Fixtures.sampleModel.path, "--json"])
        let joined = try Binary.succeed(["info", "--json", "--model=\(Fixtures.sampleModel.path)", store])
        #expect(separate.standardOutput == joined.standardOutput)
    }

    @Test func badFlagsAreUsageErrors() throws {
        let tmp = try TemporaryDirectory()
        let store = try tmp.copy(Binary.sampleStore).path
        let unknown = try Binary.fail(["export", store, "--bogus"], status: 2)
        #expect(
            unknown.errorLines == [
                "error: unknown option '--bogus'",
                "usage: \(ExportCommand.configuration.usage)",
                "See 'tern export --help' for every option.",
            ])
        let missingValue = try Binary.fail(["export", store, "--entity"], status: 2)
        #expect(missingValue.errorLines.first == "error: missing value for --entity E")
        let twice = try Binary.fail(["info", store, "--model", "a", "--model", "b"], status: 2)
        #expect(twice.errorLines.first == "error: --model was given more than once; give it once")
        let extra = try Binary.fail(["info", store, "other"], status: 2)
        #expect(extra.errorLines.first == "error: unexpected argument 'other'")
        let flagValue = try Binary.fail(["info", store, "--json=yes"], status: 2)
        #expect(flagValue.errorLines.first == "error: --json takes no value")
        let badFormat = try Binary.fail(["export", store, "--format", "xml"], status: 2)
        #expect(badFormat.errorLines.first == "error: unknown format 'xml'; use json or tsv")
        try Binary.fail([], status: 2)
    }

    @Test func storeTypeComesFromTheContents() throws {
        let tmp = try TemporaryDirectory()
        let sqliteNamedXML = try tmp.copy(Binary.sampleStore, as: "looks-like.xml").path
        let info = try Binary.document(try Binary.succeed(["info", sqliteNamedXML, "--json"]))
        #expect(info["type"] as? String == "sqlite")
        let binaryNamedSQLite = tmp.path("looks-like.sqlite").path
        try Binary.succeed(["create", binaryNamedSQLite, "--model", Binary.chefsBook, "--type", "binary"])
        #expect(
            try Binary.document(try Binary.succeed(["info", binaryNamedSQLite, "--json"]))["type"] as? String
                == "binary")
        let text = tmp.path("notes.sqlite")
        try "not a store".write(to: text, atomically: true, encoding: .utf8)
        let notAStore = try Binary.fail(["info", text.path], status: 1)
        #expect(
            notAStore.errorLines == [
                "error: \(text.path) is not a store Tern knows (SQLite, binary or XML); give a store file"
            ])
    }

    @Test func progressIsPlainLinesOnStderrWithProgress() throws {
        let tmp = try TemporaryDirectory()
        let store = try tmp.copy(Binary.sampleStore).path
        // stderr is a file here, not a terminal: quiet by default, plain lines with --progress.
        let quietByDefault = try Binary.succeed(["export", store])
        #expect(quietByDefault.standardError.isEmpty)
        let runs: [(title: String, arguments: [String])] = [
            ("exporting", ["export", store, "--progress"]),
            ("verifying", ["verify", store, "--progress"]),
            ("converting", ["convert", store, tmp.path("copy.binary").path, "--type", "binary", "--progress"]),
            (
                "importing",
                [
                    "import", try Binary.chefsBookStore(in: tmp), "--model", Binary.chefsBook, Binary.starter,
                    "--progress",
                ]
            ),
            (
                "migrating",
                [
                    "migrate", store, "--model", Fixtures.sampleModel.path, "--order",
                    "SampleModel,SampleModel2,SampleModel3",
                    "--to", "SampleModel3", "--destination", tmp.path("m.sqlite").path, "--progress",
                ]
            ),
        ]
        for run in runs {
            let result = try Binary.succeed(run.arguments, allowingStandardError: true)
            let last = try #require(result.errorLines.last, "no progress from tern \(run.arguments[0])")
            // The last line is the finished state: title, 100 %, the counts done of the total.
            #expect(last.hasPrefix("\(run.title) 100% "), "\(result.standardError)")
            #expect(result.errorLines.allSatisfy { $0.hasPrefix(run.title + " ") }, "\(result.standardError)")
            #expect(!result.standardError.contains("\u{1B}") && !result.standardError.contains("\r"))
            #expect(!result.standardOutput.contains(run.title + " "))
            let quiet = try Binary.succeed(
                run.arguments.map { $0 == "--progress" ? "--quiet" : $0 }.map {
                    $0.hasSuffix("copy.binary")
                        ? tmp.path("copy2.binary").path : $0.hasSuffix("m.sqlite") ? tmp.path("m2.sqlite").path : $0
                })
            #expect(quiet.standardError.isEmpty)
        }
        let counted = try Binary.succeed(["export", store, "--progress"], allowingStandardError: true)
        let total = try #require(counted.errorLines.last?.split(separator: " ").dropFirst(2).first)
        #expect(total == "145/145", "the fixture holds 145 objects: \(counted.standardError)")
    }

    @Test(.enabled(if: FileManager.default.isExecutableFile(atPath: "/usr/bin/script")))
    func aTerminalGetsABarRedrawnInPlace() throws {
        let tmp = try TemporaryDirectory()
        let store = try tmp.copy(Binary.sampleStore).path
        let executable = try #require(ToolRunner.executable).path
        // script(1) gives the binary a terminal; its stdout goes to a file, stderr to the terminal.
        func onATerminal(_ variables: String) throws -> String {
            let output = tmp.path("out-\(UUID().uuidString)").path
            let command = "\(variables) '\(executable)' export '\(store)' --progress -o '\(output)'"
            let result = try ToolRunner.runProgram("/usr/bin/script", ["-qec", command, "/dev/null"])
            #expect(result.status == 0, "\(result.standardOutput)")
            #expect(FileManager.default.fileExists(atPath: output))
            return result.standardOutput
        }
        let colour = try onATerminal("env -u NO_COLOR TERM=xterm")
        #expect(colour.contains("\rexporting \u{1B}[32m["), "\(colour.debugDescription)")
        #expect(colour.contains("100% 145/145") && colour.contains("\u{1B}[K"), "\(colour.debugDescription)")
        // The note comes after the finished bar, on a line of its own.
        #expect(colour.contains("\u{1B}[K\r\nexported 145 objects to "), "\(colour.debugDescription)")
        let plain = try onATerminal("NO_COLOR=1")
        #expect(plain.contains("\rexporting [") && !plain.contains("\u{1B}[32m"), "\(plain.debugDescription)")
    }

    @Test func jsonIsOneSortedDocumentAndNothingFollowsAFailure() throws {
        let tmp = try TemporaryDirectory()
        let store = tmp.path("Recipes.sqlite").path
        try Binary.succeed(["create", store, "--model", Binary.chefsBook, "--history"])
        // Success: one document with sorted keys on stdout, nothing on stderr.
        let documents = try [
            ["model", Binary.chefsBook, "--json"],
            ["import", store, "--model", Binary.chefsBook, Binary.starter, "--json"],
            ["info", store, "--model", Binary.chefsBook, "--json"],
            ["verify", store, "--json"],
            ["plan", store, "--model", Binary.chefsBook, "--json"],
            ["history", store, "--json"],
        ].map { try Binary.document(try Binary.succeed($0)) }
        #expect(
            documents.map { $0.keys.sorted().first ?? "" } == [
                "current", "deleted", "counts", "objects", "destination", "lastToken",
            ])
        // Failure: nothing on stdout, one error line, for every command that takes --json (sync's
        // are in PostgreSQLExecutableTests; the reports of verify and plan in
        // MigrationExecutableTests).
        let bad = tmp.path("bad.csv")
        try "uid,title,servings\nZZ-1,Salad,many\n".write(to: bad, atomically: true, encoding: .utf8)
        let missing = tmp.path("none.sqlite").path
        for arguments in [
            ["model", tmp.path("none.xcdatamodeld").path, "--json"],
            ["info", missing, "--json"],
            ["import", store, "--model", Binary.chefsBook, bad.path, "--entity", "Recipe", "--json"],
            ["verify", missing, "--json"],
            ["plan", missing, "--model", Binary.chefsBook, "--json"],
            ["history", missing, "--json"],
            ["sync", missing, "--server", "postgres://tern@127.0.0.1:1/kitchen", "--json"],
        ] {
            try Binary.fail(arguments, status: 1)
        }
    }

    @Test func modelFolderVersionAndOrder() throws {
        let bundle = try Binary.document(try Binary.succeed(["model", Fixtures.sampleModel.path, "--json"]))
        let names = (bundle["versions"] as? [[String: Any]])?.compactMap { $0["name"] as? String }
        // Natural sort of the names, the current version (SampleModel) last.
        #expect(names == ["SampleModel2", "SampleModel3", "SampleModel"])
        let reordered = try Binary.document(
            try Binary.succeed([
                "model", Fixtures.sampleModel.path, "--order", "SampleModel,SampleModel3,SampleModel2", "--version",
                "SampleModel2",
                "--json",
            ]))
        #expect(reordered["current"] as? String == "SampleModel2")
        #expect(
            (reordered["versions"] as? [[String: Any]])?.compactMap { $0["name"] as? String } == [
                "SampleModel", "SampleModel3", "SampleModel2",
            ])
        let folder = Fixtures.sampleModel.appendingPathComponent("SampleModel2.xcdatamodel").path
        let single = try Binary.document(try Binary.succeed(["model", folder, "--json"]))
        #expect(single["current"] as? String == "SampleModel2")
        let missing = try Binary.fail(["model", Fixtures.sampleModel.path, "--version", "v9"], status: 1)
        #expect(
            missing.errorLines == [
                "error: the model has no version named 'v9'; use one of: SampleModel2, SampleModel3, SampleModel"
            ])
    }
}

/// Store commands on files, through the binary.
@Suite struct StoreCommandExecutableTests {
    @Test func infoJSONHasTheContractKeys() throws {
        let tmp = try TemporaryDirectory()
        let store = try tmp.copy(Binary.sampleStore).path
        let info = try Binary.document(
            try Binary.succeed(["info", store, "--model", Fixtures.sampleModel.path, "--json"]))
        #expect(
            Set(info.keys).isSuperset(of: [
                "type", "uuid", "hashes", "metadata", "matchingVersion", "needsMigration", "counts",
            ]))
        #expect(info["type"] as? String == "sqlite" && info["matchingVersion"] as? String == "SampleModel")
        #expect(info["needsMigration"] as? Bool == false)
        let counts = try #require(info["counts"] as? [String: Int])
        #expect(counts == ["Car": 115, "ExpensiveSportCar": 5, "Person": 20, "SportCar": 5])
        let bare = try Binary.document(try Binary.succeed(["info", store, "--json"]))
        #expect(bare["matchingVersion"] is NSNull && bare["needsMigration"] is NSNull)
        let text = try Binary.succeed(["info", store, "--model", Fixtures.sampleModel.path]).standardOutput
        #expect(text.contains("written by model version: SampleModel\n"))
        #expect(text.contains("needs migration to SampleModel: no\n"))
        let older = try Binary.succeed([
            "info", store, "--model", Fixtures.sampleModel.path, "--version", "SampleModel3",
        ])
        #expect(older.standardOutput.contains("needs migration to SampleModel3: yes\n"))
    }

    @Test func createMakesEachTypeAndRefusesOthers() throws {
        let tmp = try TemporaryDirectory()
        for type in ["sqlite", "binary", "xml"] {
            let path = tmp.path("Store.\(type)").path
            let created = try Binary.succeed([
                "create", path, "--model", Fixtures.sampleModel.path, "--version", "SampleModel2", "--type", type,
            ])
            #expect(
                created.standardOutput.hasPrefix(
                    "created \(path): \(type) store for SampleModel version SampleModel2, uuid "))
            let info = try Binary.document(
                try Binary.succeed(["info", path, "--model", Fixtures.sampleModel.path, "--json"]))
            #expect(info["type"] as? String == type && info["matchingVersion"] as? String == "SampleModel2")
            let again = try Binary.fail(
                ["create", path, "--model", Fixtures.sampleModel.path, "--type", type], status: 1)
            #expect(again.errorLines == ["error: a file already exists at \(path); remove it or choose another path"])
        }
        let unknown = try Binary.fail(
            ["create", tmp.path("x").path, "--model", Binary.chefsBook, "--type", "csv"], status: 2)
        #expect(
            unknown.errorLines.first == "error: unknown store type 'csv'; use one of: sqlite, binary, xml, postgres")
        let fileAsPostgres = try Binary.fail(
            ["create", tmp.path("p").path, "--model", Binary.chefsBook, "--type", "postgres"], status: 1)
        #expect(
            fileAsPostgres.errorLines.first?.hasPrefix("error: a postgres store is named by a postgres:// URL") == true)
        let historyOnBinary = try Binary.fail(
            ["create", tmp.path("h").path, "--model", Binary.chefsBook, "--type", "binary", "--history"], status: 1)
        #expect(historyOnBinary.errorLines.first?.contains("do not record persistent history") == true)
        let noModel = try Binary.fail(["create", tmp.path("n").path], status: 2)
        #expect(noModel.errorLines.first == "error: missing option --model MODEL")
        #expect(!FileManager.default.fileExists(atPath: tmp.path("x").path))
    }

    @Test func convertCopiesToEachType() throws {
        let tmp = try TemporaryDirectory()
        let store = try tmp.copy(Binary.sampleStore).path
        let expected = try Binary.succeed(["export", store]).standardOutput
        var previous = store
        for (type, name) in [("binary", "copy.ternbin"), ("xml", "copy.xml"), ("sqlite", "back.sqlite")] {
            let destination = tmp.path(name).path
            let converted = try Binary.succeed(["convert", previous, destination, "--type", type])
            #expect(converted.standardOutput.hasSuffix("(\(type)): 145 objects\n"), "\(converted.standardOutput)")
            #expect(try Binary.succeed(["export", destination]).standardOutput == expected)
            previous = destination
        }
        let existing = try Binary.fail(["convert", store, previous, "--type", "sqlite"], status: 1)
        #expect(
            existing.errorLines == ["error: a file already exists at \(previous); remove it or choose another path"])
        let noType = try Binary.fail(["convert", store, tmp.path("n").path], status: 2)
        #expect(noType.errorLines.first == "error: missing option --type TYPE")
        let badType = try Binary.fail(["convert", store, tmp.path("n").path, "--type", "csv"], status: 2)
        #expect(
            badType.errorLines.first == "error: unknown store type 'csv'; use one of: sqlite, binary, xml, postgres")
        let notURL = try Binary.fail(["convert", store, tmp.path("n").path, "--type", "postgres"], status: 1)
        #expect(
            notURL.errorLines == [
                "error: a postgres store goes to a postgres:// URL, and only there; check DEST and --type"
            ])
    }

    @Test func exportTSVToAFile() throws {
        let tmp = try TemporaryDirectory()
        let store = try tmp.copy(Binary.sampleStore).path
        let file = tmp.path("people.tsv").path
        let result = try Binary.succeed(
            ["export", store, "--entity", "Person", "--format", "tsv", "-o", file], allowingStandardError: true)
        #expect(result.standardOutput.isEmpty)
        let lines = try String(contentsOfFile: file, encoding: .utf8).split(separator: "\n")
        #expect(lines.first?.hasPrefix("_id\t") == true)
        #expect(result.errorLines == ["exported \(lines.count - 1) objects to \(file)"])
        let quiet = try Binary.succeed([
            "export", store, "--entity", "Person", "--format", "tsv", "-o", file, "--quiet",
        ])
        #expect(quiet.standardError.isEmpty)
        let noEntity = try Binary.fail(["export", store, "--format", "tsv"], status: 2)
        #expect(noEntity.errorLines.first == "error: tsv holds one entity; name it with --entity")
        let unknown = try Binary.fail(["export", store, "--entity", "Boat"], status: 1)
        #expect(
            unknown.errorLines.first?.hasPrefix("error: the store's model has no entity named 'Boat'; use one of: ")
                == true)
    }

    @Test func importUpsertsAndExportRoundTrips() throws {
        let tmp = try TemporaryDirectory()
        let store = try Binary.chefsBookStore(in: tmp)
        let first = try Binary.document(
            try Binary.succeed(["import", store, "--model", Binary.chefsBook, Binary.starter, "--json"]))
        #expect(first["inserted"] as? Int ?? 0 > 8 && first["updated"] as? Int == 0 && first["deleted"] as? Int == 0)
        #expect((first["entities"] as? [String: [String: Int]])?["Recipe"]?["inserted"] == 8)
        // The same records again update the same objects: no duplicates.
        let second = try Binary.succeed(["import", store, "--model", Binary.chefsBook, Binary.starter]).standardOutput
        #expect(second.contains("  Recipe: 0 inserted, 8 updated\n"), "\(second)")
        // A CSV with --unique-by updates by that key and leaves absent keys as they are.
        let csv = tmp.path("servings.data")
        try "uid,servings\nCB-0001,12\n".write(to: csv, atomically: true, encoding: .utf8)
        let upsert = try Binary.succeed([
            "import", store, "--model", Binary.chefsBook, csv.path, "--format", "csv", "--entity", "Recipe",
            "--unique-by", "uid",
        ])
        #expect(
            upsert.standardOutput == "imported \(csv.path): 0 inserted, 1 updated\n  Recipe: 0 inserted, 1 updated\n")
        let exported = try Binary.succeed(["export", store]).standardOutput
        #expect(exported.contains(#""servings":12"#) && exported.contains(#""title":"Tomato Soup""#))
        // Exporting, importing into a fresh store and exporting again gives the same JSON, except
        // the _id numbering (new keys are assigned).
        let file = tmp.path("export.json")
        try exported.write(to: file, atomically: true, encoding: .utf8)
        let fresh = try Binary.chefsBookStore(in: tmp, named: "Fresh.sqlite")
        try Binary.succeed(["import", fresh, "--model", Binary.chefsBook, file.path])
        let reexported = try Binary.succeed(["export", fresh]).standardOutput
        #expect(try Binary.canonical(reexported) == Binary.canonical(exported))
        #expect(reexported.count == exported.count)
    }

    @Test func badImportRowFailsAndChangesNothing() throws {
        let tmp = try TemporaryDirectory()
        let store = try Binary.chefsBookStore(in: tmp)
        try Binary.succeed(["import", store, "--model", Binary.chefsBook, Binary.starter])
        let before = try Binary.succeed(["export", store]).standardOutput
        let file = tmp.path("bad.tsv")
        try "uid\ttitle\tservings\nCB-0001\tSoup\t4\nZZ-9\tSalad\tmany\n".write(
            to: file, atomically: true, encoding: .utf8)
        let result = try Binary.fail(
            ["import", store, "--model", Binary.chefsBook, file.path, "--entity", "Recipe"], status: 1)
        #expect(result.errorLines.count == 1)
        #expect(result.errorLines.first?.contains("\(file.path):3:3:") == true, "\(result.standardError)")
        #expect(result.errorLines.first?.hasSuffix("; nothing was imported") == true)
        #expect(try Binary.succeed(["export", store]).standardOutput == before)
        let missing = try Binary.fail(
            ["import", store, "--model", Binary.chefsBook, tmp.path("none.json").path], status: 1)
        #expect(missing.errorLines == ["error: no file exists at \(tmp.path("none.json").path); check the path"])
        let entity = try Binary.fail(
            ["import", store, "--model", Binary.chefsBook, file.path, "--entity", "Boat"], status: 1)
        #expect(entity.errorLines.first?.hasPrefix("error: the model has no entity named 'Boat'; use one of: ") == true)
        let noEntity = try Binary.fail(["import", store, "--model", Binary.chefsBook, file.path], status: 2)
        #expect(noEntity.errorLines.first == "error: a tsv file holds one entity; name it with --entity")
    }
}
