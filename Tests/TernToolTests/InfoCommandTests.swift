import Foundation
import TernCore
import TernFormats
import TernRelational
import TernSQLite
import TernTestSupport
import Testing

/// `tern info` on copies of the real Core Data stores (facts in Tests/Fixtures/EXPECTED.md).
@Suite struct InfoCommandTests {
    /// Runs `tern info … --json` on a copy of a fixture store and decodes the document.
    func infoJSON(_ store: String, _ options: [String] = []) async throws -> [String: Any] {
        let tmp = try TemporaryDirectory()
        let copy = try tmp.copy(Fixtures.url(store))
        let result = await ToolRunner.run(["info", copy.path] + options + ["--json"])
        #expect(result.status == 0, "\(result.standardError)")
        #expect(result.standardError.isEmpty)
        return try #require(try JSONSerialization.jsonObject(with: Data(result.standardOutput.utf8)) as? [String: Any])
    }

    @Test func storeWithItsModelMatchesTheVersionThatWroteIt() async throws {
        let document = try await infoJSON(
            "CoreDataPlus/SampleModel/Fixtures/SampleModel_V1.sqlite", ["--model", Fixtures.sampleModel.path])
        #expect(document["type"] as? String == "sqlite")
        #expect(document["uuid"] as? String == "753753D3-A961-4901-AB05-8CC48B1D3853")
        #expect(document["matchingVersion"] as? String == "SampleModel")
        #expect(document["needsMigration"] as? Bool == false)
        let counts = try #require(document["counts"] as? [String: Int])
        #expect(counts == ["Car": 115, "SportCar": 5, "ExpensiveSportCar": 5, "Person": 20])
        #expect(counts.values.reduce(0, +) == 125 + 20)
        let hashes = try #require(document["hashes"] as? [String: String])
        #expect(hashes["Car"] == "nlVVKQchWCING6zS+Ao9rUkZ90oyqovp7iKmp7QSbI8=")
        let metadata = try #require(document["metadata"] as? [String: Any])
        #expect(metadata["NSPersistenceFrameworkVersion"] as? Int == 1044)
        #expect(metadata["NSStoreModelVersionIdentifiers"] as? [String] == ["1"])
        #expect(metadata["NSStoreModelVersionHashes"] as? [String: String] == hashes)
    }

    @Test func olderStoreNeedsMigrationToAnotherCurrentVersion() async throws {
        let document = try await infoJSON(
            "CoreDataPlus/SampleModel/Fixtures/SampleModel_V2.sqlite",
            ["--model", Fixtures.sampleModel.path, "--version", "SampleModel3"])
        #expect(document["matchingVersion"] as? String == "SampleModel2")
        #expect(document["needsMigration"] as? Bool == true)
    }

    @Test func withoutAModelVersionAndMigrationAreNull() async throws {
        let document = try await infoJSON("CoreDataPlus/SampleModel2/Fixtures/SampleModel2_V1.sqlite")
        #expect(document["matchingVersion"] is NSNull)
        #expect(document["needsMigration"] is NSNull)
        let counts = try #require(document["counts"] as? [String: Int])
        #expect(counts["Page"] == 4970)
        #expect(counts["Feedback"] == 444)
        #expect((counts["Book"] ?? 0) + (counts["GraphicNovel"] ?? 0) == 52)
        #expect(counts["CHANGE"] == nil)
    }

    @Test func textNamesTheVersionAndCounts() async throws {
        let tmp = try TemporaryDirectory()
        let copy = try tmp.copy(Fixtures.url("CoreDataStack/TestModel.sqlite"))
        let result = await ToolRunner.run(["info", copy.path, "--model", Fixtures.coreDataStackModel.path])
        #expect(result.status == 0)
        let lines = result.standardOutput.split(separator: "\n").map(String.init)
        #expect(lines.contains("uuid: E7350B5D-5058-46F7-90B9-DCA517BBAF92"))
        #expect(lines.contains("written by model version: TestModel"))
        #expect(lines.contains("  Author  y8H1wnTr9BRHTE41D3OxSx3TVsIngq50iIENWXGIxG0=  0 objects"))
    }

    @Test func fileThatIsNotAStoreFails() async throws {
        let tmp = try TemporaryDirectory()
        let notAStore = try tmp.copy(Fixtures.url("EXPECTED.md"))
        let result = await ToolRunner.run(["info", notAStore.path])
        #expect(result.status == 1)
        #expect(result.standardOutput.isEmpty)
        #expect(
            result.errorLines == [
                "error: \(notAStore.path) is not a store Tern knows (SQLite, binary or XML); give a store file"
            ])
    }

    @Test func versionWithoutModelIsAUsageError() async {
        let result = await ToolRunner.run(["info", "x.sqlite", "--version", "v1"])
        #expect(result.status == 2)
        #expect(result.errorLines.first == "error: --version and --order need --model; give the model too")
    }

    /// A bundle of SampleModel (identifier "1", which wrote SampleModel_V1.sqlite) and copies of
    /// it under other names with the given version identifiers: the same entity hashes.
    func sameSchemaBundle(copies: [(name: String, identifier: String)], in tmp: TemporaryDirectory) throws -> URL {
        let sample = try XcodeModel.readVersionedModel(at: Fixtures.sampleModel)
        let first = try #require(sample.version(named: "SampleModel"))
        #expect(first.model.versionIdentifiers == ["1"])
        let copies = copies.map { copy in
            var model = first.model
            model.versionIdentifiers = [copy.identifier]
            return ModelVersion(name: copy.name, model: model)
        }
        let bundle = tmp.url.appendingPathComponent("Same.xcdatamodeld")
        try XcodeModel.write(VersionedModel(name: "Same", versions: [first] + copies), to: bundle)
        return bundle
    }

    @Test func versionIdentifiersTellIdenticalVersionsApart() async throws {
        let tmp = try TemporaryDirectory()
        let bundle = try sameSchemaBundle(copies: [("SampleModel 1b", "1b")], in: tmp)
        let document = try await infoJSON(
            "CoreDataPlus/SampleModel/Fixtures/SampleModel_V1.sqlite", ["--model", bundle.path])
        #expect(document["matchingVersion"] as? String == "SampleModel")
        #expect(document["matchingVersions"] as? [String] == ["SampleModel"])
    }

    @Test func versionsNoIdentifierTellsApartAreAllNamed() async throws {
        let tmp = try TemporaryDirectory()
        let bundle = try sameSchemaBundle(copies: [("SampleModel again", "1")], in: tmp)
        let document = try await infoJSON(
            "CoreDataPlus/SampleModel/Fixtures/SampleModel_V1.sqlite", ["--model", bundle.path])
        #expect(document["matchingVersion"] is NSNull)
        #expect(document["matchingVersions"] as? [String] == ["SampleModel", "SampleModel again"])

        let copy = try tmp.copy(Fixtures.url("CoreDataPlus/SampleModel/Fixtures/SampleModel_V1.sqlite"))
        let text = await ToolRunner.run(["info", copy.path, "--model", bundle.path])
        #expect(text.status == 0)
        #expect(
            text.standardOutput.contains(
                "written by model version: one of SampleModel, SampleModel again (their entity hashes are identical"))
    }

    @Test func storeNoVersionWroteListsNoCandidates() async throws {
        let document = try await infoJSON(
            "CoreDataStack/TestModel.sqlite", ["--model", Fixtures.sampleModel.path])
        #expect(document["matchingVersion"] is NSNull)
        #expect(document["matchingVersions"] as? [String] == [])
    }

    /// A store whose `Z_PRIMARYKEY` still names an entity by the name it had before a rename
    /// (Cook, renamed from Chef), its table named either way, and a model that renamed it.
    @Test(arguments: [false, true])
    func renamedEntityIsCountedUnderTheModelsName(tableKeepsTheOldName: Bool) async throws {
        var model = try ManagedObjectModel {
            Entity("Cook") { Attribute("name", .string) }
            Entity("Dish") { Attribute("title", .string) }
        }
        model.entities[0].renamingIdentifier = "Chef"
        let tmp = try TemporaryDirectory()
        let bundle = tmp.path("Kitchen.xcdatamodeld")
        try XcodeModel.write(
            VersionedModel(name: "Kitchen", versions: [ModelVersion(name: "Kitchen", model: model)]), to: bundle)
        let url = tmp.path("Kitchen.sqlite")
        do {
            let store = try SQLiteStore(at: url, model: model)
            let keys = try await store.newPrimaryKeys(forEntity: "Cook", count: 3)
            _ = try await store.save(
                StoreChangeSet(
                    inserted: keys.map {
                        StoreRow(
                            reference: RowReference(entityName: "Cook", primaryKey: $0),
                            attributes: ["name": .string("c\($0)")])
                    }))
        }
        do {
            let connection = try Connection(path: url.path, configuration: SQLiteConfiguration())
            try connection.execute("UPDATE Z_PRIMARYKEY SET Z_NAME = 'Chef' WHERE Z_NAME = 'Cook'")
            if tableKeepsTheOldName { try connection.execute("ALTER TABLE ZCOOK RENAME TO ZCHEF") }
        }
        let result = await ToolRunner.run(["info", url.path, "--model", bundle.path, "--json"])
        #expect(result.status == 0, "\(result.standardError)")
        let document = try #require(
            try JSONSerialization.jsonObject(with: Data(result.standardOutput.utf8)) as? [String: Any])
        #expect(document["counts"] as? [String: Int] == ["Cook": 3, "Dish": 0])
        #expect(document["matchingVersion"] as? String == "Kitchen")
        let text = await ToolRunner.run(["info", url.path, "--model", bundle.path])
        #expect(text.standardOutput.contains("  Cook  "))
        #expect(!text.standardOutput.contains("Chef"))
        #expect(!text.standardOutput.contains("(no hash)"))
    }

    /// Core Data reads a root entity without subentities with no `Z_ENT` term: a row whose
    /// `Z_ENT` disagrees is still one of its objects.
    @Test func rowsOfAnUnsharedTableAreAllItsEntitysObjects() async throws {
        let tmp = try TemporaryDirectory()
        let url = try await UnsharedTableCommandTests.store(in: tmp)
        let document = try await infoJSON(atPath: url)
        #expect(document["counts"] as? [String: Int] == ["Cook": 0, "Dish": 4])
    }

    func infoJSON(atPath url: URL) async throws -> [String: Any] {
        let result = await ToolRunner.run(["info", url.path, "--json"])
        #expect(result.status == 0, "\(result.standardError)")
        return try #require(try JSONSerialization.jsonObject(with: Data(result.standardOutput.utf8)) as? [String: Any])
    }

    /// A real app's model that momc compiled with `defaultValueString="YES"` on an Integer 32
    /// attribute: the store is identified, and the lenient reading is a warning on stderr and
    /// in the JSON document.
    @Test func lenientReadingsOfTheModelAreWarnings() async throws {
        let folder = "RealWorld/apptentive__apptentive-ios/"
        let tmp = try TemporaryDirectory()
        let copy = try tmp.copy(Fixtures.url(folder + "ATDataModelv6.sqlite"))
        let result = await ToolRunner.run(
            ["info", copy.path, "--model", Fixtures.url(folder + "ATDataModel.xcdatamodeld").path, "--json"])
        #expect(result.status == 0, "\(result.standardError)")
        let document = try #require(
            try JSONSerialization.jsonObject(with: Data(result.standardOutput.utf8)) as? [String: Any])
        #expect(document["matchingVersion"] as? String == "ATDataModel 6")
        let warnings = try #require(document["warnings"] as? [String])
        #expect(!warnings.isEmpty && warnings.allSatisfy { $0.contains("defaultValueString") }, "\(warnings)")
        #expect(result.errorLines == warnings.map { "warning: " + $0 })
        #expect(try await infoJSON(atPath: copy)["warnings"] as? [String] == [])
    }
}
