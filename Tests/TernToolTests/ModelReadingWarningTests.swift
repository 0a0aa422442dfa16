import Foundation
import TernTestSupport
import Testing

/// Commands read models as momc does: lenient values give `warning:` lines on stderr (and
/// `tern model --json` lists them), meaningless models are refused.
@Suite struct ModelReadingWarningTests {
    /// A lenient model (two values momc reads leniently) and a meaningless one (an inheritance cycle).
    struct Models {
        let folder: TemporaryDirectory
        let lenient: URL
        let cyclic: URL

        init() throws {
            folder = try TemporaryDirectory()
            lenient = folder.path("Garage.xcdatamodeld")
            cyclic = folder.path("Cycle.xcdatamodeld")
            try Self.write(
                """
                <model>
                <entity name="Car">
                <attribute name="count" attributeType="Integer 32" defaultValueString="NO"/>
                <attribute name="done" optional="YES" attributeType="Boolean" defaultValueString="0.0"/>
                <relationship name="owner" optional="YES" minCount="1" maxCount="1" destinationEntity="Person" inverseName="cars" inverseEntity="Person"/>
                </entity>
                <entity name="Person">
                <relationship name="cars" optional="YES" toMany="YES" destinationEntity="Car" inverseName="owner" inverseEntity="Car"/>
                </entity>
                </model>
                """, to: lenient.appendingPathComponent("Garage.xcdatamodel"))
            try Self.write(
                """
                <model>
                <entity name="A" parentEntity="B"/>
                <entity name="B" parentEntity="A"/>
                </model>
                """, to: cyclic.appendingPathComponent("Cycle.xcdatamodel"))
        }

        static func write(_ xml: String, to version: URL) throws {
            try FileManager.default.createDirectory(at: version, withIntermediateDirectories: true)
            try Data(xml.utf8).write(to: version.appendingPathComponent("contents"))
        }
    }

    static let expectedWarnings = [
        #"warning: Garage: Car.count (line 3): defaultValueString "NO" on an Integer 32 attribute read as 0, as momc reads it"#,
        #"warning: Garage: Car.done (line 4): defaultValueString "0.0" on a Boolean attribute read as NO, as momc reads it"#,
    ]

    @Test func modelPrintsEachWarningOnStderr() async throws {
        let models = try Models()
        let result = await ToolRunner.run(["model", models.lenient.path])
        #expect(result.status == 0)
        #expect(result.errorLines == Self.expectedWarnings)
        #expect(result.standardOutput.hasPrefix("Garage: 1 version in migration order"))
    }

    @Test func modelJSONListsTheWarnings() async throws {
        let models = try Models()
        let result = await ToolRunner.run(["model", models.lenient.path, "--json"])
        #expect(result.status == 0)
        #expect(result.errorLines == Self.expectedWarnings)
        let document = try #require(
            try JSONSerialization.jsonObject(with: Data(result.standardOutput.utf8)) as? [String: Any])
        let warnings = try #require(document["warnings"] as? [[String: Any]])
        #expect(warnings.count == 2)
        let first = try #require(warnings.first)
        #expect(first["code"] as? String == "lenientValue")
        #expect(first["version"] as? String == "Garage")
        #expect(first["entity"] as? String == "Car" && first["property"] as? String == "count")
        #expect(first["line"] as? Int == 3)
        #expect(
            first["message"] as? String
                == #"defaultValueString "NO" on an Integer 32 attribute read as 0, as momc reads it"#)
        #expect(Set(first.keys) == ["code", "version", "entity", "property", "line", "message"])
    }

    @Test func aCleanModelHasNoWarnings() async throws {
        let result = await ToolRunner.run(["model", Fixtures.sampleModel.path, "--json"])
        #expect(result.status == 0 && result.standardError.isEmpty)
        let document = try #require(
            try JSONSerialization.jsonObject(with: Data(result.standardOutput.utf8)) as? [String: Any])
        #expect((document["warnings"] as? [Any])?.isEmpty == true)
    }

    @Test func otherCommandsPrintTheWarningsOnce() async throws {
        let models = try Models()
        let store = models.folder.path("Garage.sqlite")
        let created = await ToolRunner.run(["create", store.path, "--model", models.lenient.path])
        #expect(created.status == 0, "\(created.standardError)")
        #expect(created.errorLines == Self.expectedWarnings)
        let info = await ToolRunner.run(["info", store.path, "--model", models.lenient.path, "--json"])
        #expect(info.status == 0, "\(info.standardError)")
        #expect(info.errorLines == Self.expectedWarnings)
        let document = try #require(
            try JSONSerialization.jsonObject(with: Data(info.standardOutput.utf8)) as? [String: Any])
        #expect(document["matchingVersion"] as? String == "Garage")
    }

    @Test func aMeaninglessModelIsRefusedByEveryCommand() async throws {
        let models = try Models()
        let model = await ToolRunner.run(["model", models.cyclic.path])
        let store = models.folder.path("Cycle.sqlite")
        let create = await ToolRunner.run(["create", store.path, "--model", models.cyclic.path])
        let tmp = try TemporaryDirectory()
        let copy = try tmp.copy(Fixtures.url("CoreDataStack/TestModel.sqlite"))
        let info = await ToolRunner.run(["info", copy.path, "--model", models.cyclic.path])
        for result in [model, create, info] {
            #expect(result.status == 1)
            #expect(result.standardOutput.isEmpty)
            #expect(
                result.errorLines.first?.hasPrefix("error: cannot read the model at ") == true, "\(result.errorLines)")
            #expect(result.standardError.contains("the model has 2 problems that leave it without meaning"))
            #expect(result.standardError.contains("A (line 2): the entity is its own ancestor through 'B'"))
            #expect(result.standardError.contains(models.cyclic.path))
        }
        #expect(!FileManager.default.fileExists(atPath: store.path))
    }
}
