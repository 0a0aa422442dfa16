import Foundation
import TernCore
import TernStores
import TernTestSupport
import Testing

@testable import TernTool

/// `tern info`, `export` and `convert` on a Core Data XML store as a Mac app leaves it: Core
/// Data's format, and no model recorded in its metadata (Core Data records none).
@Suite struct CoreDataXMLStoreCommandTests {
    func tern(_ arguments: [String]) async -> String {
        let result = await ToolRunner.run(arguments)
        #expect(result.status == 0, "tern \(arguments.joined(separator: " ")): \(result.standardError)")
        return result.standardOutput
    }

    @Test func infoExportAndConvertReadACoreDataXMLStore() async throws {
        let tmp = try TemporaryDirectory()
        let fixture = try #require(Fixtures.stores.first)
        let original = try tmp.copy(Fixtures.url(fixture.path), as: "original.sqlite")
        let model = Fixtures.url(try #require(fixture.model)).path
        let expected = await tern(["export", original.path])

        // An XML store with Core Data's metadata alone, as a Mac app writes it.
        let xml = tmp.path("Store.storedata")
        _ = await tern(["convert", original.path, xml.path, "--type", "xml"])
        var metadata = try StoreFiles.metadata(at: xml)
        metadata.applicationKeys[StoreFiles.modelCacheKey] = nil
        try StoreFiles.setMetadata(metadata, at: xml)
        let text = String(decoding: try Data(contentsOf: xml), as: UTF8.self)
        #expect(text.hasPrefix("<?xml version=\"1.0\" standalone=\"yes\"?>\n<!DOCTYPE database SYSTEM"))
        #expect(!text.contains("TernModelCache"))

        // info: the type from the contents; counts under the file's names, or the model's.
        let bare = try #require(
            try JSONSerialization.jsonObject(with: Data(await tern(["info", xml.path, "--json"]).utf8))
                as? [String: Any])
        #expect(bare["type"] as? String == "xml" && bare["uuid"] as? String == metadata.uuid)
        let bareCounts = try #require(bare["counts"] as? [String: Int])
        #expect(!bareCounts.isEmpty && bareCounts.keys.allSatisfy { $0 == $0.uppercased() })
        let info = await tern(["info", xml.path, "--model", model, "--json"])
        let named = try #require(try JSONSerialization.jsonObject(with: Data(info.utf8)) as? [String: Any])
        let originalInfo = try #require(
            try JSONSerialization.jsonObject(with: Data(await tern(["info", original.path, "--json"]).utf8))
                as? [String: Any])
        let counts = try #require(named["counts"] as? [String: Int])
        let originalCounts = try #require(originalInfo["counts"] as? [String: Int])
        #expect(counts.filter { $0.value > 0 } == originalCounts.filter { $0.value > 0 })
        #expect(counts.values.reduce(0, +) == bareCounts.values.reduce(0, +))
        #expect(named["needsMigration"] != nil)

        // export: with the model, the same objects as the original; without one, a clear refusal.
        #expect(await tern(["export", xml.path, "--model", model]) == expected)
        let refused = await ToolRunner.run(["export", xml.path])
        #expect(refused.status != 0 && refused.standardError.contains("model"))

        // convert: to SQLite and back to XML, the export unchanged.
        let back = tmp.path("back.sqlite").path
        #expect(await tern(["convert", xml.path, back, "--type", "sqlite", "--model", model]).contains("(xml) to"))
        #expect(await tern(["export", back]) == expected)
        let again = tmp.path("again.xml").path
        _ = await tern(["convert", xml.path, again, "--type", "xml", "--model", model])
        #expect(await tern(["export", again]) == expected)
    }
}
