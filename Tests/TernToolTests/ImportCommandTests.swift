import Foundation
import TernTestSupport
import Testing

@testable import TernTool

/// `tern import` end to end on a temporary SQLite store of the Chef's Book model.
@Suite struct ImportCommandTests {
    static let example = URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent()
        .deletingLastPathComponent().appendingPathComponent("Examples/ChefsBook")
    static let model = example.appendingPathComponent("ChefsBook.xcdatamodeld").path

    func newStore(in tmp: TemporaryDirectory, type: String = "sqlite") async -> String {
        let path = tmp.path("r.\(type)").path
        let created = await ToolRunner.run(["create", path, "--model", Self.model, "--type", type])
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
        #expect(
            second.standardOutput.contains("0 inserted")
                && second.standardOutput.contains("Recipe: 0 inserted, 8 updated"))
        let tsv = Self.example.appendingPathComponent("StarterRecipes.tsv").path
        let flat = await ToolRunner.run([
            "import", store, "--model", Self.model, tsv, "--entity", "Recipe", "--unique-by", "uid",
        ])
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

    @Test(arguments: ["binary", "xml"])
    func importsIntoAtomicStoresWithTheSameCounts(type: String) async throws {
        let tmp = try TemporaryDirectory()
        let store = await newStore(in: tmp, type: type)
        let file = Self.example.appendingPathComponent("StarterRecipes.json").path
        let first = await ToolRunner.run(["import", store, "--model", Self.model, file])
        #expect(first.status == 0, "\(first.standardError)")
        #expect(first.standardOutput.contains("Recipe: 8 inserted, 0 updated"))
        let second = await ToolRunner.run(["import", store, "--model", Self.model, file])
        #expect(second.standardOutput.contains("Recipe: 0 inserted, 8 updated"), "\(second.standardError)")
        let info = await ToolRunner.run(["info", store, "--model", Self.model, "--json"])
        let document = try #require(
            try JSONSerialization.jsonObject(with: Data(info.standardOutput.utf8)) as? [String: Any])
        #expect(document["type"] as? String == type)
        #expect((document["counts"] as? [String: Int])?["Recipe"] == 8)
    }

    @Test func printsTheSummaryAsJSON() async throws {
        let tmp = try TemporaryDirectory()
        let store = await newStore(in: tmp)
        let file = Self.example.appendingPathComponent("StarterRecipes.json").path
        let result = await ToolRunner.run(["import", store, "--model", Self.model, file, "--json"])
        #expect(result.status == 0, "\(result.standardError)")
        let document = try #require(
            try JSONSerialization.jsonObject(with: Data(result.standardOutput.utf8)) as? [String: Any])
        #expect(document["file"] as? String == file)
        #expect(document["updated"] as? Int == 0 && document["deleted"] as? Int == 0)
        let entities = try #require(document["entities"] as? [String: [String: Int]])
        #expect(entities["Recipe"] == ["inserted": 8, "updated": 0, "deleted": 0])
        #expect(document["inserted"] as? Int == entities.values.map { $0["inserted"] ?? 0 }.reduce(0, +))
    }
}
