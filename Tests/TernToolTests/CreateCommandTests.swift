import Foundation
import TernCore
import TernSQLite
import TernTestSupport
import Testing

@testable import TernTool

/// `tern create`, checked by reading the new store back with `tern info`.
@Suite struct CreateCommandTests {
    @Test func createsAnEmptyStoreForTheChosenVersion() async throws {
        let tmp = try TemporaryDirectory()
        let store = tmp.path("New.sqlite").path
        let created = await ToolRunner.run([
            "create", store, "--model", Fixtures.sampleModel.path, "--version", "SampleModel2",
        ])
        #expect(created.status == 0, "\(created.standardError)")
        #expect(created.standardOutput.hasPrefix("created \(store): sqlite store for SampleModel version SampleModel2"))
        let info = await ToolRunner.run(["info", store, "--model", Fixtures.sampleModel.path, "--json"])
        let document = try #require(
            try JSONSerialization.jsonObject(with: Data(info.standardOutput.utf8)) as? [String: Any])
        #expect(document["matchingVersion"] as? String == "SampleModel2")
        #expect(document["counts"] as? [String: Int] == ["Car": 0, "SportCar": 0, "LuxuryCar": 0, "Person": 0])
        let hashes = document["hashes"] as? [String: String]
        #expect(hashes?["Car"] == "flA++/S2PNk/9ynpZ14hxjxlJi2FqYifWaJECvZIG5M=")
    }

    @Test func neverOverwritesAFile() async throws {
        let tmp = try TemporaryDirectory()
        let existing = try tmp.copy(Fixtures.url("CoreDataStack/TestModel.sqlite"))
        let before = try Data(contentsOf: existing)
        let result = await ToolRunner.run(["create", existing.path, "--model", Fixtures.coreDataStackModel.path])
        #expect(result.status == 1)
        #expect(result.standardOutput.isEmpty)
        #expect(
            result.errorLines == ["error: a file already exists at \(existing.path); remove it or choose another path"])
        #expect(try Data(contentsOf: existing) == before)
    }

    @Test(arguments: [
        (["--type", "csv"], 2, "error: unknown store type 'csv'; use one of: sqlite, binary, xml, postgres"),
        (
            ["--type", "postgres"], 1,
            "error: a postgres store is named by a postgres:// URL, not a file path; use --type sqlite, binary or xml for a file"
        ),
    ])
    func storeTypeIsChecked(options: [String], status: Int32, line: String) async throws {
        let tmp = try TemporaryDirectory()
        let store = tmp.path("New.store").path
        let result = await ToolRunner.run(["create", store, "--model", Fixtures.sampleModel.path] + options)
        #expect(result.status == status)
        #expect(result.errorLines.first == line)
        #expect(!FileManager.default.fileExists(atPath: store))
    }

    @Test func modelIsRequired() async {
        let result = await ToolRunner.run(["create", "New.sqlite"])
        #expect(result.status == 2)
        #expect(result.errorLines.first == "error: missing option --model MODEL")
    }
}

/// Messages of lower layers read well after `error: … :`.
@Suite struct StoreFileMessageTests {
    @Test func lowerLayerMessagesFollowAColon() {
        let mismatch = SQLiteError(.notADatabase, "The model differs; migrate first.")
        #expect(StoreFile.message(of: mismatch) == "the model differs; migrate first")
        let acronym = TernError(.unreadableStore, "SQLite said no")
        #expect(StoreFile.message(of: acronym) == "SQLite said no")
    }
}
