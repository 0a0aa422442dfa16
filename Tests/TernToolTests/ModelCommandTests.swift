import Foundation
import TernTestSupport
import Testing

/// `tern model`, checked against the version hashes and checksums Xcode compiled into the
/// fixtures' `.momd/VersionInfo.plist` files.
@Suite struct ModelCommandTests {
    /// What Xcode's model compiler recorded for a bundle.
    struct VersionInfo {
        var current: String
        var hashes: [String: [String: String]]
        var checksums: [String: String]

        init(_ relativePath: String) throws {
            let data = try Data(contentsOf: Fixtures.url(relativePath))
            let plist = try #require(
                try PropertyListSerialization.propertyList(from: data, format: nil) as? [String: Any])
            current = try #require(plist["NSManagedObjectModel_CurrentVersionName"] as? String)
            let versions = try #require(plist["NSManagedObjectModel_VersionHashes"] as? [String: [String: Data]])
            hashes = versions.mapValues { $0.mapValues { $0.base64EncodedString() } }
            checksums = plist["NSManagedObjectModel_VersionChecksums"] as? [String: String] ?? [:]
        }
    }

    /// Runs `tern model … --json` and decodes the document.
    func modelJSON(_ arguments: [String]) async throws -> [String: Any] {
        let result = await ToolRunner.run(["model"] + arguments + ["--json"])
        #expect(result.status == 0, "\(result.standardError)")
        #expect(result.standardError.isEmpty)
        let object = try JSONSerialization.jsonObject(with: Data(result.standardOutput.utf8))
        return try #require(object as? [String: Any])
    }

    @Test(arguments: [
        (
            "CoreDataPlus/SampleModel/SampleModel.xcdatamodeld",
            "CoreDataPlus/SampleModel/Fixtures/SampleModel.momd/VersionInfo.plist"
        ),
        (
            "CoreDataPlus/SampleModel3/SampleModel3.xcdatamodeld",
            "CoreDataPlus/SampleModel3/Fixtures/SampleModel3.momd/VersionInfo.plist"
        ),
    ])
    func jsonMatchesXcodesCompiledModel(model: String, versionInfo: String) async throws {
        let expected = try VersionInfo(versionInfo)
        let document = try await modelJSON([Fixtures.url(model).path])
        #expect(document["current"] as? String == expected.current)
        let versions = try #require(document["versions"] as? [[String: Any]])
        #expect(Set(versions.compactMap { $0["name"] as? String }) == Set(expected.hashes.keys))
        #expect(versions.last?["name"] as? String == expected.current)
        for version in versions {
            let name = try #require(version["name"] as? String)
            let entities = try #require(version["entities"] as? [String: [String: Any]])
            #expect(entities.mapValues { $0["hash"] as? String ?? "" } == expected.hashes[name])
            if let checksum = expected.checksums[name] {
                #expect(version["checksum"] as? String == checksum)
            }
            for (_, entity) in entities {
                #expect(entity["abstract"] is Bool)
                #expect(entity["parent"] is String || entity["parent"] is NSNull)
            }
        }
    }

    @Test func jsonGivesParentsAndIsOneSortedDocument() async throws {
        let result = await ToolRunner.run(["model", Fixtures.sampleModel.path, "--json"])
        let text = result.standardOutput
        #expect(text.hasPrefix("{") && text.hasSuffix("}\n"))
        let current = try #require(text.range(of: "\"current\""))
        let versions = try #require(text.range(of: "\"versions\""))
        #expect(current.lowerBound < versions.lowerBound)
        let document = try await modelJSON([Fixtures.sampleModel.path])
        let first = try #require(
            (document["versions"] as? [[String: Any]])?.first { $0["name"] as? String == "SampleModel" })
        let entities = try #require(first["entities"] as? [String: [String: Any]])
        #expect(entities["ExpensiveSportCar"]?["parent"] as? String == "SportCar")
        #expect(entities["SportCar"]?["parent"] as? String == "Car")
        #expect(entities["Car"]?["parent"] is NSNull)
    }

    @Test func textListsVersionsInOrderWithHashes() async throws {
        let result = await ToolRunner.run(["model", Fixtures.sampleModel.path])
        #expect(result.status == 0)
        let lines = result.standardOutput.split(separator: "\n").map(String.init)
        #expect(lines.first == "SampleModel: 3 versions in migration order, current SampleModel")
        let headers = lines.filter { $0.hasPrefix("SampleModel") }.dropFirst()
        #expect(Array(headers) == ["SampleModel2", "SampleModel3", "SampleModel (current)"])
        // The hashes Core Data wrote into SampleModel_V1.sqlite (Tests/Fixtures/EXPECTED.md).
        #expect(lines.contains("  Car                nlVVKQchWCING6zS+Ao9rUkZ90oyqovp7iKmp7QSbI8="))
        #expect(lines.contains("  ExpensiveSportCar  PcfjKxvkW1pMeVrJrz4dEKpyItPGmugFu+tECL3rpIA=  parent SportCar"))
        #expect(lines.contains { $0.hasPrefix("  checksum ") })
    }

    @Test func orderAndVersionOptionsChooseOrderAndCurrent() async throws {
        let document = try await modelJSON([
            Fixtures.sampleModel.path, "--order", "SampleModel,SampleModel2,SampleModel3", "--version=SampleModel3",
        ])
        #expect(document["current"] as? String == "SampleModel3")
        let names = (document["versions"] as? [[String: Any]])?.compactMap { $0["name"] as? String }
        #expect(names == ["SampleModel", "SampleModel2", "SampleModel3"])
    }

    @Test func singleVersionFolderIsAModelWithOneVersion() async throws {
        let folder = Fixtures.sampleModel.appendingPathComponent("SampleModel2.xcdatamodel")
        let document = try await modelJSON([folder.path])
        #expect(document["current"] as? String == "SampleModel2")
        #expect((document["versions"] as? [Any])?.count == 1)
    }

    @Test(arguments: [
        (["--version", "Nope"], "error: the model has no version named 'Nope'; use one of: "),
        (["--order", "SampleModel,Other"], "error: cannot read the model at "),
    ])
    func badVersionChoicesFailWithOneErrorLine(options: [String], prefix: String) async {
        let result = await ToolRunner.run(["model", Fixtures.sampleModel.path] + options)
        #expect(result.status == 1)
        #expect(result.standardOutput.isEmpty)
        #expect(result.errorLines.count == 1)
        #expect(result.errorLines.first?.hasPrefix(prefix) == true)
    }

    @Test func emptyOrderNameIsAUsageError() async {
        let result = await ToolRunner.run(["model", Fixtures.sampleModel.path, "--order", "a,,b"])
        #expect(result.status == 2)
        #expect(result.errorLines.first?.hasPrefix("error: --order has an empty version name") == true)
    }

    @Test func pathThatIsNotAModelFails() async throws {
        let tmp = try TemporaryDirectory()
        let notAModel = try tmp.copy(Fixtures.url("EXPECTED.md"))
        let result = await ToolRunner.run(["model", notAModel.path])
        #expect(result.status == 1)
        #expect(result.standardOutput.isEmpty)
        #expect(result.errorLines.count == 1)
        #expect(result.errorLines.first?.hasPrefix("error: cannot read the model at \(notAModel.path): ") == true)
    }
}
