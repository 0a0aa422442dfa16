import ChefsBook
import Foundation
import TernCore
import TernFormats
import TernSQLite
import TernTestSupport
import Testing

/// `tern demo` and the Chef's Book example it plays.
@Suite struct DemoCommandTests {
    /// The repository's `Examples/ChefsBook` folder.
    static let examples = Fixtures.root.deletingLastPathComponent().deletingLastPathComponent()
        .appendingPathComponent("Examples/ChefsBook")

    @Test func embeddedModelEqualsTheExampleModelFiles() throws {
        let files = try XcodeModel.readVersionedModel(
            at: Self.examples.appendingPathComponent("ChefsBook.xcdatamodeld"))
        let embedded = try ChefsBook.model()
        #expect(files.versions.map(\.name) == ChefsBook.versionNames)
        #expect(files == embedded)
        #expect(embedded.currentVersionName == "ChefsBook 4")
    }

    @Test(arguments: [
        ("45 mins", 45), ("1 hr 5 mins", 65), ("4 hrs 30 mins", 270), ("2 hours", 120), ("90", 90), ("soon", -1),
    ])
    func minutesAreReadFromVersionOneTimes(text: String, minutes: Int64) {
        #expect(ChefsBook.minutes(fromText: text) == (minutes < 0 ? nil : minutes))
    }

    @Test func uidComesFromTheTitle() {
        #expect(ChefsBook.uid(forTitle: "Slow Roast Lamb") == "slow-roast-lamb")
        #expect(ChefsBook.uid(forTitle: "  Crème brûlée! ") == "crème-brûlée")
    }

    @Test func demoTellsTheWholeStoryAndLeavesOneStore() async throws {
        let folder = try TemporaryDirectory()
        let root = folder.path("book")
        let result = await ToolRunner.run(["demo", root.path])
        #expect(result.status == 0, "\(result.standardError)")
        let output = result.standardOutput
        for heading in [
            "1. Version 1", "2. Version 4 starts", "3. The forecast", "4. Loading the container", "5. Launching again",
            "6. Checking", "7. The recipes",
        ] {
            #expect(output.contains(heading), "missing \(heading)")
        }
        #expect(output.contains("found Documents/Recipes.sqlite, written by ChefsBook 1"))
        #expect(output.contains("migrated in 3 steps"))
        #expect(output.contains("starter recipes (keyed by uid): 2 inserted, 1 already there (merged, not duplicated)"))
        #expect(output.contains("starter recipes: already there"))
        // The old store and its sidecars are gone; exactly one store remains, at version 4.
        let documents = root.appendingPathComponent("Documents")
        #expect(try FileManager.default.contentsOfDirectory(atPath: documents.path).isEmpty)
        let store = root.appendingPathComponent("Library/Application Support/Recipes.sqlite")
        let model = try ChefsBook.model()
        #expect(model.version(matching: try SQLiteStore.metadata(at: store))?.name == "ChefsBook 4")
        // Every value made it through three steps.
        let summaries = try await ChefsBook.summaries(ofStoreAt: store, model: model)
        #expect(summaries.map(\.title) == ["Green Salad", "Lemon Tart", "Pancakes", "Slow Roast Lamb", "Tomato Soup"])
        let lamb = try #require(summaries.first { $0.title == "Slow Roast Lamb" })
        #expect(lamb.totalMinutes == 20 + 270)
        #expect(lamb.ingredientCount == 3 && lamb.stepCount == 3 && lamb.uid == "slow-roast-lamb")
        #expect(Set(summaries.compactMap(\.uid)).count == summaries.count)
    }

    @Test func demoRefusesAFolderOfAnEarlierRun() async throws {
        let folder = try TemporaryDirectory()
        #expect(await ToolRunner.run(["demo", folder.url.path]).status == 0)
        let again = await ToolRunner.run(["demo", folder.url.path])
        #expect(again.status == 1)
        #expect(again.standardError.hasPrefix("error: "))
        #expect(again.standardOutput.isEmpty)
    }
}
