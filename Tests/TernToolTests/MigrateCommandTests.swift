import Foundation
import TernCore
import TernPostgreSQL
import TernSQLite
import TernTestSupport
import Testing

/// `tern plan` and `tern migrate` on copies of the real fixture stores, checked with `tern info`.
@Suite struct MigrateCommandTests {
    static let order = "SampleModel,SampleModel2,SampleModel3"

    /// The per-entity counts `tern info --json` reports.
    func counts(_ store: String) async throws -> [String: Int] {
        let info = await ToolRunner.run(["info", store, "--json"])
        let document = try #require(
            try JSONSerialization.jsonObject(with: Data(info.standardOutput.utf8)) as? [String: Any])
        return try #require(document["counts"] as? [String: Int])
    }

    @Test func plansTheFixtureStoreToSampleModel3AsJSON() async throws {
        let tmp = try TemporaryDirectory()
        let store = try tmp.copy(Fixtures.url("CoreDataPlus/SampleModel/Fixtures/SampleModel_V1.sqlite")).path
        let before = try Data(contentsOf: URL(fileURLWithPath: store))
        let result = await ToolRunner.run([
            "plan", store, "--model", Fixtures.sampleModel.path, "--order", Self.order, "--to", "SampleModel3",
            "--json",
        ])
        #expect(result.status == 0, "\(result.standardError)")
        let document = try #require(
            try JSONSerialization.jsonObject(with: Data(result.standardOutput.utf8)) as? [String: Any])
        #expect(document["source"] as? String == "SampleModel" && document["destination"] as? String == "SampleModel3")
        let steps = try #require(document["steps"] as? [[String: Any]])
        #expect(
            steps.map { "\($0["from"] ?? "")→\($0["to"] ?? ""):\($0["kind"] ?? "")" } == [
                "SampleModel→SampleModel3:inferred"
            ])
        #expect(
            (steps.first?["changes"] as? [String])?.contains("rename entity ExpensiveSportCar to LuxuryCar") == true)
        #expect(try Data(contentsOf: URL(fileURLWithPath: store)) == before)
    }

    @Test(arguments: [
        ("SampleModel/Fixtures/SampleModel_V1.sqlite", "SampleModel"),
        ("SampleModel/Fixtures/SampleModel_V2.sqlite", "SampleModel2"),
    ])
    func migratesTheFixtureStoreToSampleModel3WithEveryRow(path: String, version: String) async throws {
        let tmp = try TemporaryDirectory()
        let store = try tmp.copy(Fixtures.url("CoreDataPlus/" + path)).path
        let before = try await counts(store)
        let result = await ToolRunner.run([
            "migrate", store, "--model", Fixtures.sampleModel.path, "--order", Self.order, "--to", "SampleModel3",
        ])
        #expect(result.status == 0, "\(result.standardError)")
        #expect(result.standardOutput.hasPrefix("migrated \(store) from \(version) to SampleModel3 in 1 step(s)"))
        let after = try await counts(store)
        // Every row is accounted for: ExpensiveSportCar became LuxuryCar, the other entities kept
        // their names, and SampleModel3's new Maker entity starts empty.
        var expected = before
        if let expensive = expected.removeValue(forKey: "ExpensiveSportCar") { expected["LuxuryCar"] = expensive }
        expected["Maker"] = 0
        #expect(after == expected)
        #expect(after.values.reduce(0, +) == before.values.reduce(0, +) && after.values.reduce(0, +) > 0)
        let info = await ToolRunner.run([
            "info", store, "--model", Fixtures.sampleModel.path, "--order", Self.order, "--version", "SampleModel3",
            "--json",
        ])
        let document = try #require(
            try JSONSerialization.jsonObject(with: Data(info.standardOutput.utf8)) as? [String: Any])
        #expect(
            document["matchingVersion"] as? String == "SampleModel3" && document["needsMigration"] as? Bool == false)
        let again = await ToolRunner.run([
            "migrate", store, "--model", Fixtures.sampleModel.path, "--order", Self.order, "--to", "SampleModel3",
        ])
        #expect(again.status == 0 && again.standardOutput == "\(store) is already at version SampleModel3\n")
    }

    @Test func migratesToADestinationAndLeavesTheSourceAsItWas() async throws {
        let tmp = try TemporaryDirectory()
        let store = try tmp.copy(Fixtures.url("CoreDataPlus/SampleModel/Fixtures/SampleModel_V1.sqlite")).path
        let before = try Data(contentsOf: URL(fileURLWithPath: store))
        let destination = tmp.path("Migrated.sqlite").path
        let result = await ToolRunner.run([
            "migrate", store, "--model", Fixtures.sampleModel.path, "--order", Self.order, "--to", "SampleModel2",
            "--destination", destination, "--progress",
        ])
        #expect(result.status == 0, "\(result.standardError)")
        #expect(result.standardError.contains("migrating"))
        #expect(try Data(contentsOf: URL(fileURLWithPath: store)) == before)
        #expect(try await counts(destination).values.reduce(0, +) == (try await counts(store)).values.reduce(0, +))
    }

    @Test func refusesADowngradeAndAnUnknownType() async throws {
        let tmp = try TemporaryDirectory()
        let store = try tmp.copy(Fixtures.url("CoreDataPlus/SampleModel/Fixtures/SampleModel_V2.sqlite")).path
        let downgrade = await ToolRunner.run([
            "plan", store, "--model", Fixtures.sampleModel.path, "--order", Self.order, "--to", "SampleModel",
        ])
        #expect(downgrade.status == 1 && downgrade.standardOutput.isEmpty)
        #expect(
            downgrade.errorLines.first?.hasPrefix(
                "error: The store was written by SampleModel2, which is newer than SampleModel") == true)
        for type in ["csv", "banana"] {
            let refused = await ToolRunner.run(["migrate", store, "--model", Fixtures.sampleModel.path, "--type", type])
            #expect(refused.status == 2)
        }
        let missing = await ToolRunner.run(["migrate", store])
        #expect(missing.status == 2 && missing.errorLines.first?.contains("--model") == true)
    }

    @Test func migratesBinaryAndXMLStoresInPlaceAndIntoAnotherType() async throws {
        let tmp = try TemporaryDirectory()
        let source = try tmp.copy(Fixtures.url("CoreDataPlus/SampleModel/Fixtures/SampleModel_V1.sqlite")).path
        let binary = tmp.path("Cars.binary").path
        let converted = await ToolRunner.run(["convert", source, binary, "--type", "binary"])
        #expect(converted.status == 0, "\(converted.standardError)")
        let before = try await counts(binary)
        let plan = await ToolRunner.run([
            "plan", binary, "--model", Fixtures.sampleModel.path, "--order", Self.order, "--to", "SampleModel3",
        ])
        #expect(plan.status == 0, "\(plan.standardError)")
        let binaryBytes = try Data(contentsOf: URL(fileURLWithPath: binary))
        let xml = tmp.path("Cars.xml").path
        let toXML = await ToolRunner.run([
            "migrate", binary, "--model", Fixtures.sampleModel.path, "--order", Self.order, "--to", "SampleModel2",
            "--type", "xml", "--destination", xml,
        ])
        #expect(toXML.status == 0, "\(toXML.standardError)")
        #expect(try Data(contentsOf: URL(fileURLWithPath: binary)) == binaryBytes)
        let inPlace = await ToolRunner.run([
            "migrate", binary, "--model", Fixtures.sampleModel.path, "--order", Self.order, "--to", "SampleModel3",
        ])
        #expect(inPlace.status == 0, "\(inPlace.standardError)")
        #expect(inPlace.standardOutput.hasPrefix("migrated \(binary) from SampleModel to SampleModel3"))
        var expected = before
        if let expensive = expected.removeValue(forKey: "ExpensiveSportCar") { expected["LuxuryCar"] = expensive }
        expected["Maker"] = 0
        #expect(try await counts(binary) == expected)
        #expect(try await counts(xml).values.reduce(0, +) == before.values.reduce(0, +))
        let info = await ToolRunner.run(["info", xml, "--json"])
        #expect(info.standardOutput.contains("\"type\" : \"xml\"") || info.standardOutput.contains("\"type\":\"xml\""))
    }

    /// `--mapping` is repeatable, as the contract and the help say: one file per step of a chain.
    @Test func takesOneMappingFilePerStepOfAChain() async throws {
        let scenario = try CrashScenario(rowCount: 3)
        let store = try await scenario.makeStore("Items.sqlite", version: "v1")
        let rename = scenario.path("v1-v2.json")
        try Data(
            """
            {"source": "v1", "destination": "v2", "passes": [{"name": "Rename", "entityMappings": [
              {"kind": "transform", "source": "Item", "destination": "Item", "attributes": {
                "title": "concat($source.name, \\"!\\")", "value": "$source.value"}}]}]}
            """.utf8
        ).write(to: rename)
        let label = scenario.path("v2-v3.json")
        try Data(CrashScenario.mappingJSON.utf8).write(to: label)
        let result = await ToolRunner.run([
            "migrate", store.path, "--model", scenario.modelURL.path, "--order", CrashScenario.order, "--to", "v3",
            "--mapping", rename.path, "--mapping=\(label.path)", "--quiet",
        ])
        #expect(result.status == 0, "\(result.standardError)")
        let contents = try await scenario.contents(of: store)
        #expect(contents.version == "v3")
        // Both files ran: the first appended "!", the second upper-cased the title and made the label.
        #expect(contents.names == [1: "ITEM 1!", 2: "ITEM 2!", 3: "ITEM 3!"])
        #expect(contents.labels == [1: "#1", 2: "#2", 3: "#3"])
    }

    /// `tern plan` says, under a mapped step of a SQLite store, which entity mappings run as one
    /// `INSERT … SELECT` and why the others run in Swift (#24).
    @Test func planSaysWhichEntityMappingsRunAsSQL() async throws {
        let scenario = try CrashScenario(rowCount: 3)
        let store = try await scenario.makeStore("Items.sqlite", version: "v1")
        func write(_ attributes: String, filter: String? = nil, to name: String) throws -> URL {
            let url = scenario.path(name)
            let filter = filter.map { #""filter": "\#($0)", "# } ?? ""
            try Data(
                """
                {"source": "v1", "destination": "v2", "passes": [{"name": "Rename", "entityMappings": [
                  {"name": "ItemToItem", "kind": "transform", "source": "Item", "destination": "Item", \(filter)
                   "attributes": {\(attributes)}}]}]}
                """.utf8
            ).write(to: url)
            return url
        }
        let plain = try write(#""title": "$source.name", "value": "$source.value""#, to: "plain.json")
        // The text of a double has no SQL form: SQLite's differs from Swift's.
        let concat = try write(#""title": "string($source.value * 2.5)", "value": "$source.value""#, to: "double.json")
        let arguments = [
            "plan", store.path, "--model", scenario.modelURL.path, "--order", CrashScenario.order, "--to", "v2",
        ]
        let sql = await ToolRunner.run(arguments + ["--mapping", plain.path])
        #expect(sql.status == 0, "\(sql.standardError)")
        #expect(sql.standardOutput.contains("     ItemToItem: runs as one INSERT … SELECT"), "\(sql.standardOutput)")
        let swift = await ToolRunner.run(arguments + ["--mapping", concat.path])
        #expect(swift.standardOutput.contains("     ItemToItem: runs in Swift: title: "), "\(swift.standardOutput)")
        #expect(swift.standardOutput.contains("has no SQL form here"))
        let json = await ToolRunner.run(arguments + ["--mapping", concat.path, "--json"])
        let document = try JSONSerialization.jsonObject(with: Data(json.standardOutput.utf8)) as? [String: Any]
        let steps = document?["steps"] as? [[String: Any]]
        let mappings = steps?.first?["entityMappings"] as? [[String: Any]]
        #expect(mappings?.first?["name"] as? String == "ItemToItem")
        #expect(mappings?.first?["sql"] as? Bool == false)
        #expect((mappings?.first?["reason"] as? String)?.contains("has no SQL form") == true)
        // A filter is forecast with the store's own translation: key path against key path has none.
        let attributes = #""title": "$source.name", "value": "$source.value""#
        for (filter, inSQL) in [("name BEGINSWITH 'I'", true), ("value > value", false)] {
            let filtered = try write(attributes, filter: filter, to: "filtered.json")
            let output = await ToolRunner.run(arguments + ["--mapping", filtered.path]).standardOutput
            #expect(
                output.contains(
                    inSQL
                        ? "ItemToItem: runs as one INSERT … SELECT"
                        : "ItemToItem: runs in Swift: its filter has no SQL form on this store: value > value"),
                "\(output)")
        }
    }

    /// Each store forecasts a filter with its own dialect: PostgreSQL's fetch translation has no
    /// form for `BEGINSWITH`, SQLite's has.
    @Test func filterForecastsFollowEachStoresDialect() throws {
        let model = try CrashScenario(rowCount: 1).model.versions[0].model
        for (format, onSQLite, onPostgreSQL) in [
            ("name BEGINSWITH 'I'", true, false), ("name == 'Item 1' AND value > 1", true, true),
            ("value > value", false, false),
        ] {
            let filter = try FetchPredicate(format)
            #expect(
                SQLiteStoreMigrator.runsMigrationFilterAsSQL(filter, of: "Item", in: model) == onSQLite, "\(format)")
            #expect(
                PostgreSQLStore.runsMigrationFilterAsSQL(filter, of: "Item", in: model) == onPostgreSQL, "\(format)")
        }
    }
}
