import Foundation
import TernTestSupport
import Testing
@testable import TernTool

/// `tern import` end to end on a temporary SQLite store of the Chef's Book model.
@Suite struct ImportCommandTests {
    static let example = URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent()
        .deletingLastPathComponent().appendingPathComponent("Examples/ChefsBook")
    static let model = example.appendingPathComponent("ChefsBook.xcdatamodeld").path

    func newStore(in tmp: TemporaryDirectory) async -> String {
        let path = tmp.path("r.sqlite").path
        let created = await ToolRunner.run(["create", path, "--model", Self.model])
        #expect(created.status == 0, "\(created.standardError)")
        return path
    }

    @Test func importsStarterDataTwiceWithoutDuplicates() async throws {
        let tmp = try TemporaryDirectory()
        let store = await newStore(in: tmp)
        let file = Self.example.appendingPathComponent("StarterRecipes.json").path
        let first = await ToolRunner.run(["import", store, "--model", Self.model, file])
        #expect(first.status == 0, "\(first.standardError)")
        #expect(first.standardOutput.contains("Recipe: 8 inserted, 0 updated"))
        let second = await ToolRunner.run(["import", store, "--model", Self.model, file])
        #expect(second.standardOutput.contains("0 inserted") && second.standardOutput.contains("Recipe: 0 inserted, 8 updated"))
        let tsv = Self.example.appendingPathComponent("StarterRecipes.tsv").path
        let flat = await ToolRunner.run(["import", store, "--model", Self.model, tsv, "--entity", "Recipe", "--unique-by", "uid"])
        #expect(flat.status == 0 && flat.standardOutput.contains("0 inserted, 8 updated"), "\(flat.standardError)")
    }

    @Test func badRowLeavesTheStoreByteIdentical() async throws {
        let tmp = try TemporaryDirectory()
        let store = await newStore(in: tmp)
        let before = try Data(contentsOf: URL(fileURLWithPath: store))
        let file = tmp.path("bad.csv")
        try "uid,title,servings\nA,Soup,4\nB,Salad,many\n".write(to: file, atomically: true, encoding: .utf8)
        let result = await ToolRunner.run(["import", store, "--model", Self.model, file.path, "--entity", "Recipe"])
        #expect(result.status == 1)
        #expect(result.standardOutput.isEmpty)
        #expect(result.standardError.hasPrefix("error: ") && result.standardError.contains(":3:3:"))
        #expect(try Data(contentsOf: URL(fileURLWithPath: store)) == before)
    }

    @Test func usageErrorsAndMissingFiles() async throws {
        let tmp = try TemporaryDirectory()
        let store = await newStore(in: tmp)
        let flag = await ToolRunner.run(["import", store, "--model", Self.model, "x.json", "--bogus"])
        #expect(flag.status == 2)
        let format = await ToolRunner.run(["import", store, "--model", Self.model, "x.txt"])
        #expect(format.status == 2 && format.standardError.contains("--format"))
        let noEntity = await ToolRunner.run(["import", store, "--model", Self.model, "x.tsv"])
        #expect(noEntity.status == 2)
        let missing = await ToolRunner.run(["import", store, "--model", Self.model, tmp.path("none.json").path])
        #expect(missing.status == 1 && missing.standardError.contains("no file exists"))
    }
}
