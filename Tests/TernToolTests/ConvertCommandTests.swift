import Foundation
import TernTestSupport
import Testing

@testable import TernTool

/// `tern convert` and `tern create --type binary|xml`, end to end on copies of the fixture stores.
@Suite struct ConvertCommandTests {
    static let stores = Fixtures.stores.map(\.path)

    /// Runs the tool and expects success.
    func tern(_ arguments: [String]) async -> String {
        let result = await ToolRunner.run(arguments)
        #expect(result.status == 0, "tern \(arguments.joined(separator: " ")): \(result.standardError)")
        return result.standardOutput
    }

    @Test(arguments: stores)
    func sqliteToBinaryToXMLToSQLiteKeepsTheExport(store: String) async throws {
        let tmp = try TemporaryDirectory()
        let original = try tmp.copy(Fixtures.url(store), as: "original.sqlite")
        let expected = await tern(["export", original.path])
        #expect(expected.hasPrefix("{"))

        // Names whose extensions lie: the type must come from the contents.
        let binary = tmp.path("step1.sqlite").path
        let xml = tmp.path("step2.bin").path
        let back = tmp.path("step3.xml").path
        #expect(await tern(["convert", original.path, binary, "--type", "binary"]).contains("(binary)"))
        #expect(await tern(["convert", binary, xml, "--type", "xml"]).contains("(binary) to"))
        #expect(await tern(["convert", xml, back, "--type", "sqlite"]).contains("(xml) to"))

        #expect(await tern(["export", binary]) == expected)
        #expect(await tern(["export", xml]) == expected)
        #expect(await tern(["export", back]) == expected)
        let info = await tern(["info", back, "--json"])
        let originalInfo = await tern(["info", original.path, "--json"])
        let decoded = try JSONSerialization.jsonObject(with: Data(info.utf8)) as? [String: Any]
        let originalDecoded = try JSONSerialization.jsonObject(with: Data(originalInfo.utf8)) as? [String: Any]
        #expect(decoded?["uuid"] as? String == originalDecoded?["uuid"] as? String)
        #expect(decoded?["type"] as? String == "sqlite")
    }

    @Test(arguments: ["binary", "xml"])
    func createMakesAnEmptyStoreOfThatTypeThatInfoReads(type: String) async throws {
        let tmp = try TemporaryDirectory()
        let path = tmp.path("new.store").path
        let created = await tern(["create", path, "--model", Fixtures.sampleModel.path, "--type", type])
        #expect(created.contains("\(type) store"))
        let info = await tern(["info", path, "--json"])
        let document = try #require(try JSONSerialization.jsonObject(with: Data(info.utf8)) as? [String: Any])
        #expect(document["type"] as? String == type)
        let counts = try #require(document["counts"] as? [String: Int])
        #expect(!counts.isEmpty)
        #expect(counts.values.allSatisfy { $0 == 0 })
        let metadata = try #require(document["metadata"] as? [String: Any])
        #expect(metadata["TernModelCache"] == nil)
    }

    @Test func convertNeverOverwritesAndRejectsUnknownTypes() async throws {
        let tmp = try TemporaryDirectory()
        let original = try tmp.copy(Fixtures.url(Self.stores[0]), as: "original.sqlite")
        try Data("keep".utf8).write(to: tmp.path("taken"))
        let taken = await ToolRunner.run(["convert", original.path, tmp.path("taken").path, "--type", "xml"])
        #expect(taken.status != 0)
        #expect(taken.standardError.contains("already exists"))
        #expect(try Data(contentsOf: tmp.path("taken")) == Data("keep".utf8))
        let unknown = await ToolRunner.run(["convert", original.path, tmp.path("x").path, "--type", "postgres"])
        #expect(unknown.status != 0)
        #expect(!FileManager.default.fileExists(atPath: tmp.path("x").path))
    }
}
