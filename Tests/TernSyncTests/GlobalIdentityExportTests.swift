import Foundation
import TernCore
import TernSQLite
import TernTestSupport
import TernTool
import Testing

/// `tern export --global-ids` outside sync: what it refuses.
@Suite struct GlobalIdentityExportTests {
    @Test func aStoreThatNeverSyncedIsRefused() async throws {
        let directory = try TemporaryDirectory()
        let url = directory.url.appendingPathComponent("plain.sqlite")
        let model = try ManagedObjectModel {
            Entity("Item") { Attribute("name", .string) }
        }
        _ = try SQLiteStore(at: url, model: model)
        let output = CapturedOutput()
        let status = await Tern.run(["export", url.path, "--global-ids"], environment: ToolEnvironment(output: output))
        #expect(status != 0)
        #expect(output.standardError.contains("no global identifiers"))
        #expect(output.standardOutput.isEmpty)
        let tsv = CapturedOutput()
        let tsvStatus = await Tern.run(
            ["export", url.path, "--global-ids", "--format", "tsv", "--entity", "Item"],
            environment: ToolEnvironment(output: tsv))
        #expect(tsvStatus != 0)
        #expect(tsv.standardError.contains("--global-ids applies to json only"))
    }
}
