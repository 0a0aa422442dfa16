import Foundation
import TernTestSupport
import Testing

/// `--model` and `tern model` take compiled models (`.momd`, `.mom`) wherever they take an
/// `.xcdatamodeld`.
@Suite struct CompiledModelCommandTests {
    static let sampleModel = Fixtures.url("RealWorld/alemar11__CoreDataPlus/SampleModel.momd")

    @Test func modelCommandReadsAMomd() async throws {
        let result = await ToolRunner.run(["model", Self.sampleModel.path, "--json"])
        #expect(result.status == 0, "\(result.standardError)")
        let document = try #require(
            try JSONSerialization.jsonObject(with: Data(result.standardOutput.utf8)) as? [String: Any])
        #expect(document["current"] as? String == "SampleModel")
        let versions = try #require(document["versions"] as? [[String: Any]])
        #expect(versions.compactMap { $0["name"] as? String } == ["SampleModel2", "SampleModel3", "SampleModel"])
        // The same hashes as the .xcdatamodeld the .momd was compiled from.
        let source = await ToolRunner.run(["model", Fixtures.sampleModel.path, "--json"])
        let sourceDocument = try #require(
            try JSONSerialization.jsonObject(with: Data(source.standardOutput.utf8)) as? [String: Any])
        let hashes = { (document: [String: Any]) -> [String: [String: String]] in
            var result: [String: [String: String]] = [:]
            for version in document["versions"] as? [[String: Any]] ?? [] {
                let entities = version["entities"] as? [String: [String: Any]] ?? [:]
                result[version["name"] as? String ?? ""] = entities.mapValues { $0["hash"] as? String ?? "" }
            }
            return result
        }
        #expect(hashes(document) == hashes(sourceDocument))
    }

    @Test func infoIdentifiesAStoreWithAMom() async throws {
        let tmp = try TemporaryDirectory()
        let store = try tmp.copy(Fixtures.url("CoreDataPlus/SampleModel/Fixtures/SampleModel_V1.sqlite"))
        let mom = Self.sampleModel.appendingPathComponent("SampleModel.mom")
        let result = await ToolRunner.run(["info", store.path, "--model", mom.path, "--json"])
        #expect(result.status == 0, "\(result.standardError)")
        let document = try #require(
            try JSONSerialization.jsonObject(with: Data(result.standardOutput.utf8)) as? [String: Any])
        #expect(document["matchingVersion"] as? String == "SampleModel")
        #expect(document["needsMigration"] as? Bool == false)

        let momd = await ToolRunner.run(["info", store.path, "--model", Self.sampleModel.path, "--json"])
        #expect(momd.status == 0, "\(momd.standardError)")
        #expect(
            momd.standardOutput.contains("\"matchingVersion\" : \"SampleModel\"")
                || momd.standardOutput.contains("\"matchingVersion\":\"SampleModel\""))
    }

    @Test func anOmoIsRefusedWithOneErrorLine() async throws {
        let omo = Self.sampleModel.appendingPathComponent("SampleModel.omo")
        let result = await ToolRunner.run(["model", omo.path])
        #expect(result.status == 1)
        #expect(result.standardOutput.isEmpty)
        #expect(result.errorLines.count == 1)
        #expect(result.errorLines.first?.contains("use the .mom file") == true)
    }
}
