import Foundation
import TernFormats
import TernTestSupport
import Testing

@testable import TernTool

/// `plan`, `migrate`, `verify`, `history`, `demo` and the failures the issue lists, through the
/// binary (see the table at the top of ContractExecutableTests.swift).
@Suite struct MigrationExecutableTests {
    static let order = "SampleModel,SampleModel2,SampleModel3"

    @Test func planAndMigrateTheFixture() throws {
        let tmp = try TemporaryDirectory()
        let store = try tmp.copy(Binary.sampleStore).path
        let before = try Data(contentsOf: URL(fileURLWithPath: store))
        let model = Fixtures.sampleModel.path
        let plan = try Binary.document(
            try Binary.succeed([
                "plan", store, "--model", model, "--order", Self.order, "--to", "SampleModel3", "--json",
            ]))
        #expect(plan["source"] as? String == "SampleModel" && plan["destination"] as? String == "SampleModel3")
        #expect(plan["executable"] as? Bool == true)
        let steps = try #require(plan["steps"] as? [[String: Any]])
        #expect(steps.count == 1)
        #expect(Set(steps[0].keys).isSuperset(of: ["from", "to", "kind", "changes"]))
        #expect(steps[0]["kind"] as? String == "inferred")
        let text = try Binary.succeed(["plan", store, "--model", model, "--order", Self.order, "--to", "SampleModel2"])
        #expect(
            text.standardOutput.hasPrefix("Migration from SampleModel to SampleModel2 in 1 step(s):\n"),
            "\(text.standardOutput)")
        // To a destination: the source is left as it was.
        let destination = tmp.path("Migrated.sqlite").path
        let target = ["--order", Self.order, "--to", "SampleModel3"]
        let migrated = try Binary.succeed(["migrate", store, "--model", model, "--destination", destination] + target)
        #expect(
            migrated.standardOutput.hasPrefix("migrated \(destination) from SampleModel to SampleModel3 in 1 step(s), ")
        )
        #expect(try Data(contentsOf: URL(fileURLWithPath: store)) == before)
        let info = try Binary.document(
            try Binary.succeed([
                "info", destination, "--model", model, "--order", Self.order, "--version", "SampleModel3", "--json",
            ]))
        #expect(info["matchingVersion"] as? String == "SampleModel3" && info["needsMigration"] as? Bool == false)
        // Already at the target: left as it is, and the command succeeds.
        let same = try Binary.succeed(["migrate", destination, "--model", model] + target)
        #expect(same.standardOutput == "\(destination) is already at version SampleModel3\n")
        // Into another type.
        let binary = tmp.path("Migrated.ternbin").path
        try Binary.succeed(["migrate", store, "--model", model, "--destination", binary, "--type", "binary"] + target)
        #expect(try Binary.document(try Binary.succeed(["info", binary, "--json"]))["type"] as? String == "binary")
        let downgrade = try Binary.fail(
            ["migrate", destination, "--model", model, "--order", Self.order, "--to", "SampleModel"], status: 1)
        #expect(downgrade.errorLines.first?.isEmpty == false)
        let noModel = try Binary.fail(["plan", store], status: 2)
        #expect(noModel.errorLines.first == "error: a migration needs the app's model; give it with --model")
    }

    @Test func nonInferableChangeFailsPlanAndMigrate() throws {
        let tmp = try TemporaryDirectory()
        let model = tmp.path("Recipes.xcdatamodeld")
        try XcodeModel.write(try RecipeVersions.model(breaking: true), to: model)
        let store = tmp.path("Recipes.sqlite").path
        try Binary.succeed(["create", store, "--model", model.path, "--version", "v4"])
        let before = try Data(contentsOf: URL(fileURLWithPath: store))
        // plan forecasts: it exits 1, as migrate would fail, naming the step, the property and
        // the reason, and suggesting a mapping.
        let arguments = ["--model", model.path, "--order", "v1,v2,v3,v4,v5"]
        let plan = try Binary.fail(["plan", store] + arguments, status: 1)
        let reasons = [
            "error: The store cannot migrate from v4 to v5: 1 change(s) cannot be inferred; add a mapping "
                + "(tern migrate --mapping FILE) for the steps named below"
        ]
        #expect(plan.errorLines.first == reasons[0], "\(plan.standardError)")
        #expect(plan.errorLines.count == 2)
        #expect(plan.errorLines.last?.hasPrefix("version v4 → v5, Recipe.minutes: ") == true, "\(plan.standardError)")
        #expect(
            plan.errorLines.last?.contains(
                "Recipe.minutes changes from Integer 32 to String, which cannot be inferred; add a mapping") == true)
        // With --json the forecast is the result: on stdout, with the same exit status and error lines.
        let (json, forecast) = try Binary.failWithReport(["plan", store, "--json"] + arguments)
        #expect(json.errorLines == plan.errorLines)
        #expect(forecast["executable"] as? Bool == false && forecast["source"] as? String == "v4")
        let problems = (forecast["steps"] as? [[String: Any]])?.first?["problems"] as? [String]
        #expect(problems?.count == 1 && problems?.first?.contains("Recipe.minutes") == true)
        // migrate fails with the same reason and leaves the store as it was.
        let migrate = try Binary.fail(["migrate", store] + arguments, status: 1)
        #expect(migrate.errorLines == plan.errorLines, "\(migrate.standardError)")
        #expect(try Data(contentsOf: URL(fileURLWithPath: store)) == before)
        // A store already at the target needs nothing: plan succeeds.
        let none = try Binary.succeed(["plan", store, "--to", "v4"] + arguments)
        #expect(none.standardOutput == "The store is already at version v4; nothing to migrate.\n")
    }

    @Test func verifyJSONOfACleanAndADamagedStore() throws {
        let tmp = try TemporaryDirectory()
        let store = try tmp.copy(Binary.sampleStore).path
        let clean = try Binary.document(
            try Binary.succeed(["verify", store, "--model", Fixtures.sampleModel.path, "--json"]))
        #expect(clean["ok"] as? Bool == true && clean["objects"] as? Int == 145)
        #expect((clean["problems"] as? [Any])?.isEmpty == true && (clean["skipped"] as? [Any])?.isEmpty == true)
        #expect(try Binary.succeed(["verify", store]).standardOutput == "ok: 145 objects checked, no problems\n")
        let binary = tmp.path("Store.ternbin").path
        try Binary.succeed(["convert", store, binary, "--type", "binary"])
        // A damaged store: the report is on stdout, the error line on stderr, and the status is 1.
        let damaged = try tmp.copy(Binary.sampleStore, as: "Damaged.sqlite").path
        let sqlite = try ToolRunner.runProgram(
            "/usr/bin/sqlite3", [damaged, "UPDATE Z_PRIMARYKEY SET Z_MAX = 1 WHERE Z_MAX > 1"])
        #expect(sqlite.status == 0, "\(sqlite.standardError)")
        let (failed, report) = try Binary.failWithReport(["verify", damaged, "--json"])
        let counters = (report["problems"] as? [[String: Any]] ?? []).filter {
            $0["kind"] as? String == "primaryKeyCounter"
        }
        #expect(report["ok"] as? Bool == false && !counters.isEmpty, "\(failed.standardOutput)")
        #expect(
            failed.errorLines == ["error: the store has \(counters.count) problem\(counters.count == 1 ? "" : "s")"])
        let unsupported = try Binary.fail(["verify", binary], status: 1)
        #expect(
            unsupported.errorLines == [
                "error: binary stores cannot be verified yet, only SQLite and PostgreSQL stores; convert a copy to SQLite and verify that"
            ])
    }

    @Test func historyListsImportsAfterATokenAndRejectsBadTokens() throws {
        let tmp = try TemporaryDirectory()
        let store = tmp.path("Recipes.sqlite").path
        let created = try Binary.succeed(["create", store, "--model", Binary.chefsBook, "--history"])
        #expect(created.standardOutput.hasSuffix(", recording history\n"))
        let empty = try Binary.succeed(["history", store]).standardOutput
        #expect(empty == "0 transactions; latest token: none\n")
        try Binary.succeed(["import", store, "--model", Binary.chefsBook, Binary.starter])
        let first = try Binary.document(try Binary.succeed(["history", store, "--json"]))
        let token = try #require(first["lastToken"] as? String)
        #expect((first["transactions"] as? [Any])?.count == 1)
        try Binary.succeed(["import", store, "--model", Binary.chefsBook, Binary.starter])
        let after = try Binary.document(try Binary.succeed(["history", store, "--after", token, "--json"]))
        let transactions = try #require(after["transactions"] as? [[String: Any]])
        #expect(transactions.count == 1 && transactions.first?["token"] as? String != token)
        let bad = try Binary.fail(["history", store, "--after", "soon"], status: 2)
        #expect(bad.errorLines.first == "error: 'soon' is not a history token; tokens look like 12@<store UUID>")
    }

    @Test func demoTellsTheStoryAndRefusesAnEarlierFolder() throws {
        let tmp = try TemporaryDirectory()
        let folder = tmp.path("book").path
        let demo = try Binary.succeed(["demo", folder])
        for heading in ["1. Version 1", "3. The forecast", "4. Loading the container", "6. Checking", "7. The recipes"]
        {
            #expect(demo.standardOutput.contains(heading), "missing \(heading)")
        }
        #expect(demo.standardOutput.contains("Slow Roast Lamb"))
        let again = try Binary.fail(["demo", folder], status: 1)
        #expect(again.errorLines.count >= 1)
        // The migration v1 → v4 shows its progress (plain lines off a terminal with --progress).
        let shown = try Binary.succeed(["demo", tmp.path("shown").path, "--progress"], allowingStandardError: true)
        #expect(shown.standardOutput.contains("7. The recipes"))
        #expect(
            !shown.errorLines.isEmpty && shown.errorLines.allSatisfy { $0.hasPrefix("migrating ") },
            "\(shown.standardError)")
        #expect(shown.errorLines.last == "migrating 100%", "\(shown.standardError)")
    }

    @Test func failuresOfEveryKindThroughTheBinary() throws {
        let tmp = try TemporaryDirectory()
        let store = try tmp.copy(Binary.sampleStore).path
        let notAStore = tmp.path("notes.txt")
        try "just words".write(to: notAStore, atomically: true, encoding: .utf8)
        let missing = tmp.path("missing.sqlite").path
        // A missing file and a file that is not a store, for every command that reads a store.
        let readers: [[String]] = [
            ["info"], ["export"], ["verify"], ["history"], ["plan", "--model", Fixtures.sampleModel.path],
            ["migrate", "--model", Fixtures.sampleModel.path], ["convert", "--type", "xml"],
            ["import", "--model", Binary.chefsBook, Binary.starter],
        ]
        for reader in readers {
            func line(_ path: String) -> [String] {
                var arguments = [reader[0], path] + reader.dropFirst()
                if reader[0] == "convert" { arguments.insert(tmp.path("c-\(UUID().uuidString).xml").path, at: 2) }
                return arguments
            }
            let absent = try Binary.fail(line(missing), status: 1)
            #expect(absent.errorLines == ["error: no store exists at \(missing); check the path"], "tern \(reader[0])")
            let wrong = try Binary.fail(line(notAStore.path), status: 1)
            #expect(
                wrong.errorLines == [
                    "error: \(notAStore.path) is not a store Tern knows (SQLite, binary or XML); give a store file"
                ],
                "tern \(reader[0])")
        }
        // A store from a model it does not match.
        let otherModel = Fixtures.coreDataStackModel.path
        for command in ["export", "verify", "convert"] {
            var arguments = [command, store, "--model", otherModel]
            if command == "convert" { arguments += [tmp.path("x.xml").path, "--type", "xml"] }
            let mismatch = try Binary.fail(arguments, status: 1)
            #expect(
                mismatch.errorLines.first?.hasPrefix(
                    "error: none of the model's versions wrote this store; migrate it, or ") == true)
        }
        let importMismatch = try Binary.fail(["import", store, "--model", Binary.chefsBook, Binary.starter], status: 1)
        #expect(importMismatch.errorLines == ["error: none of the model's versions wrote this store; migrate it first"])
        let planMismatch = try Binary.fail(["plan", store, "--model", otherModel], status: 1)
        #expect(planMismatch.errorLines.first?.isEmpty == false)
        // A model that does not exist.
        let noModel = try Binary.fail(["info", store, "--model", tmp.path("None.xcdatamodeld").path], status: 1)
        #expect(
            noModel.errorLines == [
                "error: no model exists at \(tmp.path("None.xcdatamodeld").path); give an .xcdatamodeld bundle or an .xcdatamodel folder"
            ])
    }
}
