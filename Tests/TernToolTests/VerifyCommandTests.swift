import Foundation
import TernRelational
import TernSQLite
import TernTestSupport
import Testing

@testable import TernTool

/// `tern verify`: clean stores, each kind of planted problem, JSON output and failures, in-process
/// and through the built binary.
@Suite struct VerifyCommandTests {
    static let sampleStore = "CoreDataPlus/SampleModel/Fixtures/SampleModel_V2.sqlite"

    /// A copy of the SampleModel2 store (145 objects) with some SQL run on it.
    static func damagedCopy(in folder: TemporaryDirectory, _ statements: [SQL]) throws -> URL {
        let copy = try folder.copy(Fixtures.url(sampleStore))
        let connection = try Connection(path: copy.path, configuration: SQLiteConfiguration())
        for statement in statements { try connection.executeOnce(statement) }
        return copy
    }

    @Test(arguments: Fixtures.stores.map(\.path))
    func everyFixtureStoreIsClean(path: String) async throws {
        let folder = try TemporaryDirectory()
        let copy = try folder.copy(Fixtures.url(path))
        let result = await ToolRunner.run(["verify", copy.path])
        #expect(result.status == 0)
        #expect(result.standardError.isEmpty)
        #expect(
            result.standardOutput.hasPrefix("ok: ")
                && result.standardOutput.hasSuffix(" objects checked, no problems\n"))
    }

    @Test func aCleanStoreWithItsModelPrintsTheObjectCount() async throws {
        let folder = try TemporaryDirectory()
        let copy = try folder.copy(Fixtures.url(Self.sampleStore))
        let result = await ToolRunner.run(["verify", copy.path, "--model", Fixtures.sampleModel.path])
        #expect(result.status == 0)
        #expect(result.standardOutput == "ok: 145 objects checked, no problems\n")
    }

    @Test func plantedProblemsAreListedUnderTheErrorLine() async throws {
        let folder = try TemporaryDirectory()
        let copy = try Self.damagedCopy(
            in: folder,
            [
                "UPDATE ZCAR SET ZOWNER = 999 WHERE Z_PK = 4",
                "UPDATE Z_PRIMARYKEY SET Z_MAX = 3 WHERE Z_NAME = 'Car'",
            ])
        let result = await ToolRunner.run(["verify", copy.path])
        #expect(result.status == 1)
        #expect(result.standardOutput.isEmpty)
        #expect(result.errorLines.first == "error: the store has 2 problems")
        #expect(
            result.errorLines.contains {
                $0.hasPrefix("  Car/p4.owner (danglingReference): ") && $0.contains("Person/p999")
            })
        #expect(result.errorLines.contains { $0.hasPrefix("  Car/p125 (primaryKeyCounter): ") })
        #expect(result.errorLines.count == 3)
    }

    @Test func jsonListsTheProblemsOnStdoutAndStillFails() async throws {
        let folder = try TemporaryDirectory()
        let copy = try Self.damagedCopy(in: folder, ["UPDATE ZCAR SET Z_ENT = 42 WHERE Z_PK = 7"])
        let result = await ToolRunner.run(["verify", copy.path, "--json"])
        #expect(result.status == 1)
        #expect(result.errorLines == ["error: the store has 1 problem"])
        let document = try #require(
            try JSONSerialization.jsonObject(with: Data(result.standardOutput.utf8)) as? [String: Any])
        #expect(document["ok"] as? Bool == false)
        #expect(document["objects"] as? Int == 145)
        #expect(document["truncated"] as? Bool == false)
        let problems = try #require(document["problems"] as? [[String: Any]])
        #expect(problems.count == 1)
        #expect(problems.first?["kind"] as? String == "unknownEntity")
        #expect(problems.first?["entity"] as? String == "Car")
        #expect(problems.first?["primaryKey"] as? Int == 7)
        #expect(problems.first?["property"] is NSNull)
    }

    @Test func jsonOfACleanStoreSucceeds() async throws {
        let folder = try TemporaryDirectory()
        let copy = try folder.copy(Fixtures.url(Self.sampleStore))
        let result = await ToolRunner.run(["verify", copy.path, "--json"])
        #expect(result.status == 0)
        #expect(result.standardError.isEmpty)
        #expect(result.standardOutput.contains("\"ok\" : true"))
        #expect(result.standardOutput.contains("\"problems\" : [\n\n  ]"))
    }

    @Test func aModelThatDidNotWriteTheStoreFails() async throws {
        let folder = try TemporaryDirectory()
        let copy = try folder.copy(Fixtures.url(Self.sampleStore))
        let result = await ToolRunner.run(["verify", copy.path, "--model", Fixtures.sampleModel3.path])
        #expect(result.status == 1)
        #expect(result.standardOutput.isEmpty)
        #expect(result.errorLines.first?.hasPrefix("error: none of the model's versions wrote this store") == true)
    }

    // MARK: - Through the binary

    @Test func binaryExitsWithZeroForACleanStore() throws {
        let folder = try TemporaryDirectory()
        let copy = try folder.copy(Fixtures.url(Self.sampleStore))
        let result = try ToolRunner.runExecutable(["verify", copy.path])
        #expect(result.status == 0)
        #expect(result.standardOutput == "ok: 145 objects checked, no problems\n")
        #expect(result.standardError.isEmpty)
    }

    @Test func binaryExitsWithOneAndTheListForAPlantedProblem() throws {
        let folder = try TemporaryDirectory()
        let copy = try Self.damagedCopy(in: folder, ["UPDATE ZCAR SET ZOWNER = 1000 WHERE Z_PK = 2"])
        let result = try ToolRunner.runExecutable(["verify", copy.path])
        #expect(result.status == 1)
        #expect(result.standardOutput.isEmpty)
        #expect(result.errorLines.first == "error: the store has 1 problem")
        #expect(result.errorLines.dropFirst().first?.hasPrefix("  Car/p2.owner (danglingReference): ") == true)
    }

    @Test func binaryReportsACorruptFile() throws {
        let folder = try TemporaryDirectory()
        let copy = try folder.copy(Fixtures.url(Self.sampleStore))
        let handle = try FileHandle(forUpdating: copy)
        try handle.seek(toOffset: 8192)
        try handle.write(contentsOf: Data(repeating: 0x55, count: 8192))
        try handle.close()
        let result = try ToolRunner.runExecutable(["verify", copy.path, "--json"])
        #expect(result.status == 1)
        #expect(result.standardOutput.contains("\"kind\" : \"integrity\""))
        #expect(result.errorLines.first?.hasPrefix("error: the store has ") == true)
    }

    @Test func binaryFailsForAMissingFileAndANonStore() throws {
        let folder = try TemporaryDirectory()
        let missing = try ToolRunner.runExecutable(["verify", folder.path("none.sqlite").path])
        #expect(missing.status == 1)
        #expect(missing.standardOutput.isEmpty)
        #expect(missing.errorLines.first?.hasPrefix("error: no store exists at ") == true)
        let text = folder.path("notes.txt")
        try Data("not a store at all, just words".utf8).write(to: text)
        let notAStore = try ToolRunner.runExecutable(["verify", text.path])
        #expect(notAStore.status == 1)
        #expect(notAStore.errorLines.first?.contains("is not a store Tern knows") == true)
        let usage = try ToolRunner.runExecutable(["verify"])
        #expect(usage.status == 2)
    }
}
