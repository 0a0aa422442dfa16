import Foundation
import TernCore
import TernFormats
import TernMigration
import TernTestSupport
import Testing

/// `tern check-migrations` through the built binary: a sample store of every version, and every
/// store of a folder, migrated to the current version, with a table and the exit status.
@Suite struct CheckMigrationsCommandTests {
    /// v1 → v2 renames `minutes` to `duration` with a renaming identifier; v3 turns `duration` into
    /// text, which only a mapping can do.
    static func model() throws -> VersionedModel {
        try VersionedModel("Recipes") {
            ModelVersion("v1") {
                Entity("Recipe") {
                    Attribute("title", .string).required()
                    Attribute("minutes", .integer32)
                }
            }
            ModelVersion("v2") {
                Entity("Recipe") {
                    Attribute("title", .string).required()
                    Attribute("duration", .integer32).renamed(from: "minutes")
                }
            }
            ModelVersion("v3") {
                Entity("Recipe") {
                    Attribute("title", .string).required()
                    Attribute("duration", .string)
                }
            }
        }
    }

    static let mapping = #"""
        {"source": "v2", "destination": "v3", "passes": [{"name": "Only", "entityMappings": [
          {"name": "RecipeToRecipe", "kind": "transform", "source": "Recipe", "destination": "Recipe",
           "attributes": {"title": "$source.title", "duration": "string($source.duration)"}}]}]}
        """#

    @Test func failsNamingTheVersionsThatNeedAMappingAndPassesWithIt() throws {
        let tmp = try TemporaryDirectory()
        let bundle = tmp.path("Recipes.xcdatamodeld")
        try XcodeModel.write(try Self.model(), to: bundle)
        let without = try ToolRunner.runExecutable(["check-migrations", bundle.path, "--order", "v1,v2,v3"])
        #expect(without.status == 1)
        #expect(without.standardError.hasPrefix("error: 2 of 2 sources fail to migrate\n"), "\(without.standardError)")
        let rows = without.standardOutput.split(separator: "\n").map(String.init)
        #expect(
            rows.first == "Migrations to v3:" && rows.last == "0 of 2 sources migrate.", "\(without.standardOutput)")
        #expect(rows.contains { $0.hasPrefix("v1 ") && $0.contains("failed: ") && $0.contains("cannot be inferred") })

        let mappings = tmp.path("Mappings")
        try FileManager.default.createDirectory(at: mappings, withIntermediateDirectories: true)
        try Data(Self.mapping.utf8).write(to: mappings.appendingPathComponent("v2-v3.json"))
        let with = try ToolRunner.runExecutable([
            "check-migrations", bundle.path, "--order", "v1,v2,v3", "--mappings", mappings.path, "--objects", "4",
            "--json",
        ])
        #expect(with.status == 0, "\(with.standardError)")
        let document = try #require(
            try JSONSerialization.jsonObject(with: Data(with.standardOutput.utf8)) as? [String: Any])
        #expect(document["passed"] as? Bool == true && document["current"] as? String == "v3")
        let results = try #require(document["results"] as? [[String: Any]])
        #expect(results.map { $0["source"] as? String } == ["v1", "v2"])
        #expect(results.map { $0["steps"] as? Int } == [2, 1])
        #expect(
            results.allSatisfy { $0["objects"] as? Int == 4 && $0["passed"] as? Bool == true && $0["error"] is NSNull })
    }

    /// `--mapping` is repeatable: one file per step.
    @Test func takesOneMappingFilePerStep() throws {
        let tmp = try TemporaryDirectory()
        let bundle = tmp.path("Recipes.xcdatamodeld")
        try XcodeModel.write(try Self.model(), to: bundle)
        let rename = tmp.path("v1-v2.json")
        try Data(
            #"""
            {"source": "v1", "destination": "v2", "passes": [{"name": "Only", "entityMappings": [
              {"name": "RecipeToRecipe", "kind": "transform", "source": "Recipe", "destination": "Recipe",
               "attributes": {"title": "$source.title", "duration": "$source.minutes"}}]}]}
            """#.utf8
        ).write(to: rename)
        let text = tmp.path("v2-v3.json")
        try Data(Self.mapping.utf8).write(to: text)
        let result = try ToolRunner.runExecutable([
            "check-migrations", bundle.path, "--order", "v1,v2,v3", "--mapping", rename.path, "--mapping", text.path,
            "--objects", "2", "--json",
        ])
        #expect(result.status == 0, "\(result.standardError)")
        let document = try #require(
            try JSONSerialization.jsonObject(with: Data(result.standardOutput.utf8)) as? [String: Any])
        let results = try #require(document["results"] as? [[String: Any]])
        #expect(results.map { $0["steps"] as? Int } == [2, 1])
        #expect(results.allSatisfy { $0["passed"] as? Bool == true })
    }

    @Test func checksTheStoresOfAFolderFromCopies() throws {
        let item = try #require(
            try RealWorldCorpus.items(of: .store).first {
                $0.folder.lastPathComponent == "wibosco__CoreDataMigrationRevised-Example"
                    && $0.path.hasSuffix("_3.sqlite")
            })
        let tmp = try TemporaryDirectory()
        let stores = tmp.path("Stores")
        try FileManager.default.createDirectory(at: stores, withIntermediateDirectories: true)
        try FileManager.default.copyItem(at: item.url, to: stores.appendingPathComponent(item.url.lastPathComponent))
        let before = try Data(contentsOf: stores.appendingPathComponent(item.url.lastPathComponent))
        let model = item.folder.appendingPathComponent(try #require(item.model)).path
        let result = try ToolRunner.runExecutable(["check-migrations", model, "--stores", stores.path, "--json"])
        let document = try #require(
            try JSONSerialization.jsonObject(with: Data(result.standardOutput.utf8)) as? [String: Any])
        let results = try #require(document["results"] as? [[String: Any]])
        let store = try #require(results.first { $0["store"] as? Bool == true })
        #expect(store["passed"] as? Bool == true, "\(store)")
        #expect(store["objects"] as? Int ?? 0 > 0)
        #expect(try Data(contentsOf: stores.appendingPathComponent(item.url.lastPathComponent)) == before)
    }
}
