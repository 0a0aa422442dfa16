import Foundation
import TernCore
import TernFormats
import TernTestSupport
import Testing

@Suite struct XcodeModelBundleTests {
    /// Builds a bundle whose versions each hold one entity named after the version's position.
    static func makeBundle(
        in tmp: TemporaryDirectory, named name: String = "M.xcdatamodeld", versions: [String],
        currentVersion: String?
    ) throws -> URL {
        let bundle = tmp.path(name)
        for (index, version) in versions.enumerated() {
            let folder = bundle.appendingPathComponent("\(version).xcdatamodel")
            try FileManager.default.createDirectory(at: folder, withIntermediateDirectories: true)
            let xml = #"<model userDefinedModelVersionIdentifier="\#(index)"><entity name="E\#(index)"/></model>"#
            try Data(xml.utf8).write(to: folder.appendingPathComponent("contents"))
        }
        if let currentVersion {
            try Data(currentVersion.utf8).write(to: bundle.appendingPathComponent(".xccurrentversion"))
        }
        return bundle
    }

    static func plist(_ body: String) -> String {
        """
        <?xml version="1.0" encoding="UTF-8"?>
        <!DOCTYPE plist PUBLIC "-//Apple//DTD PLIST 1.0//EN" "http://www.apple.com/DTDs/PropertyList-1.0.dtd">
        <plist version="1.0">
        \(body)
        </plist>
        """
    }

    @Test func naturalOrder() {
        let names = ["Model 10", "Model 9", "Model", "Model 2", "Model 1"]
        #expect(names.sorted(by: XcodeModel.naturalOrder) == ["Model", "Model 1", "Model 2", "Model 9", "Model 10"])
        #expect(XcodeModel.naturalOrder("TestModel", "TestModel 2"))
        #expect(!XcodeModel.naturalOrder("TestModel 2", "TestModel"))
        #expect(
            ["SampleModel3_v3", "SampleModel3", "SampleModel3_v2"].sorted(by: XcodeModel.naturalOrder)
                == ["SampleModel3", "SampleModel3_v2", "SampleModel3_v3"])
        #expect(
            ["v010", "v9", "v10", "v1.10", "v1.9"].sorted(by: XcodeModel.naturalOrder)
                == ["v1.9", "v1.10", "v9", "v10", "v010"])
        #expect(!XcodeModel.naturalOrder("A", "A"))
    }

    @Test func currentVersionComesLast() throws {
        let tmp = try TemporaryDirectory()
        let bundle = try Self.makeBundle(
            in: tmp, versions: ["Model 10", "Model 2", "Model", "Model 9"],
            currentVersion: Self.plist(
                "<dict>\n\t<key>_XCCurrentVersionName</key>\n\t<string>Model 2.xcdatamodel</string>\n</dict>"))
        let versioned = try XcodeModel.readVersionedModel(at: bundle)
        #expect(versioned.name == "M")
        #expect(versioned.versions.map(\.name) == ["Model", "Model 9", "Model 10", "Model 2"])
        #expect(versioned.currentVersionName == "Model 2")
        #expect(versioned.currentVersion.model.entities.map(\.name) == ["E1"])
    }

    @Test func missingOrEmptyCurrentVersionFallsBackToLast() throws {
        let tmp = try TemporaryDirectory()
        for (index, current) in [nil, Self.plist("<dict/>"), Self.plist("<dict></dict>"), ""].enumerated() {
            let bundle = try Self.makeBundle(
                in: tmp, named: "M\(index).xcdatamodeld", versions: ["Model 2", "Model"], currentVersion: current)
            let versioned = try XcodeModel.readVersionedModel(at: bundle)
            #expect(versioned.versions.map(\.name) == ["Model", "Model 2"])
            #expect(versioned.currentVersionName == "Model 2")
            let single = try Self.makeBundle(
                in: tmp, named: "S\(index).xcdatamodeld", versions: ["Only"], currentVersion: current)
            #expect(try XcodeModel.readVersionedModel(at: single).currentVersionName == "Only")
        }
    }

    @Test func binaryCurrentVersionFileIsRead() throws {
        let tmp = try TemporaryDirectory()
        let bundle = try Self.makeBundle(in: tmp, versions: ["A", "B"], currentVersion: nil)
        let list = try PropertyListSerialization.data(
            fromPropertyList: ["_XCCurrentVersionName": "A.xcdatamodel"], format: .binary, options: 0)
        try list.write(to: bundle.appendingPathComponent(".xccurrentversion"))
        let versioned = try XcodeModel.readVersionedModel(at: bundle)
        #expect(versioned.currentVersionName == "A")
        #expect(versioned.versions.map(\.name) == ["B", "A"])
    }

    @Test func explicitOrder() throws {
        let tmp = try TemporaryDirectory()
        let bundle = try Self.makeBundle(
            in: tmp, versions: ["B", "A", "C"],
            currentVersion: Self.plist("<dict><key>_XCCurrentVersionName</key><string>B.xcdatamodel</string></dict>"))
        let versioned = try XcodeModel.readVersionedModel(at: bundle, order: ["C", "B", "A"])
        #expect(versioned.versions.map(\.name) == ["C", "B", "A"])
        #expect(versioned.currentVersionName == "B")

        let unknown = #expect(throws: TernError.self) {
            try XcodeModel.readVersionedModel(at: bundle, order: ["A", "B", "C", "D"])
        }
        #expect(unknown?.code == .invalidModel)
        #expect(unknown?.message.contains("D") == true)
        let omitted = #expect(throws: TernError.self) {
            try XcodeModel.readVersionedModel(at: bundle, order: ["A", "C"])
        }
        #expect(omitted?.message.contains("leaves out B") == true)
        #expect(throws: TernError.self) { try XcodeModel.readVersionedModel(at: bundle, order: ["A", "B", "C", "A"]) }

        let noCurrent = try Self.makeBundle(
            in: tmp, named: "N.xcdatamodeld", versions: ["B", "A"], currentVersion: nil)
        #expect(try XcodeModel.readVersionedModel(at: noCurrent, order: ["B", "A"]).currentVersionName == "A")
    }

    @Test func currentVersionMustExist() throws {
        let tmp = try TemporaryDirectory()
        let bundle = try Self.makeBundle(
            in: tmp, versions: ["A"],
            currentVersion: Self.plist("<dict><key>_XCCurrentVersionName</key><string>Gone.xcdatamodel</string></dict>")
        )
        let error = #expect(throws: TernError.self) { try XcodeModel.readVersionedModel(at: bundle) }
        #expect(error?.code == .unreadableModelFile)
        #expect(error?.message.contains("Gone.xcdatamodel") == true)
    }

    @Test func anUnreadableVersionIsLeftOutWithAWarning() throws {
        let tmp = try TemporaryDirectory()
        let bundle = try Self.makeBundle(in: tmp, versions: ["New"], currentVersion: nil)
        let legacy = bundle.appendingPathComponent("Old Recipes.xcdatamodel")
        try FileManager.default.createDirectory(at: legacy, withIntermediateDirectories: true)
        try Data("bplist00".utf8).write(to: legacy.appendingPathComponent("elements"))
        try Data().write(to: legacy.appendingPathComponent("layout"))
        var warnings: [ModelReadingWarning] = []
        let versioned = try XcodeModel.readVersionedModel(at: bundle, warnings: &warnings)
        #expect(versioned.versions.map(\.name) == ["New"])
        #expect(versioned.currentVersionName == "New")
        let warning = try #require(warnings.first)
        #expect(warnings.count == 1)
        #expect(warning.code == .unreadableVersion && warning.versionName == "Old Recipes")
        #expect(warning.message.contains("cannot be read") && warning.message.contains("Xcode 3"))
        #expect(warning.path == legacy.appendingPathComponent("elements").path)
        #expect(throws: TernError.self) { try XcodeModel.readModel(contentsOf: legacy) }
        // An order may still name the unreadable version.
        #expect(try XcodeModel.readVersionedModel(at: bundle, order: ["Old Recipes", "New"]).versions.count == 1)
    }

    @Test func anUnreadableCurrentVersionFallsBackToTheNewestReadable() throws {
        let tmp = try TemporaryDirectory()
        let bundle = try Self.makeBundle(
            in: tmp, versions: ["V1", "V2", "V3"],
            currentVersion: Self.plist("<dict><key>_XCCurrentVersionName</key><string>V2.xcdatamodel</string></dict>"))
        try Data("<model".utf8).write(to: bundle.appendingPathComponent("V2.xcdatamodel/contents"))
        var warnings: [ModelReadingWarning] = []
        let versioned = try XcodeModel.readVersionedModel(at: bundle, warnings: &warnings)
        #expect(versioned.versions.map(\.name) == ["V1", "V3"])
        #expect(versioned.currentVersionName == "V3")
        #expect(warnings.map(\.code) == [.unreadableVersion])
        #expect(warnings.first?.versionName == "V2")
        #expect(warnings.first?.message.contains("the current version cannot be read, so V3") == true)

        let ordered = try XcodeModel.readVersionedModel(at: bundle, order: ["V3", "V2", "V1"])
        #expect(ordered.versions.map(\.name) == ["V3", "V1"])
        #expect(ordered.currentVersionName == "V1")
    }

    @Test func aBundleWithNoReadableVersionThrows() throws {
        let tmp = try TemporaryDirectory()
        let bundle = try Self.makeBundle(in: tmp, versions: ["A", "B"], currentVersion: nil)
        for name in ["A", "B"] {
            try Data("<model".utf8).write(to: bundle.appendingPathComponent("\(name).xcdatamodel/contents"))
        }
        let error = #expect(throws: TernError.self) { try XcodeModel.readVersionedModel(at: bundle) }
        #expect(error?.code == .unreadableModelFile)
        #expect(error?.message.contains("none of the 2 versions can be read: A: ") == true)
        #expect(error?.message.contains("; B: ") == true)
        #expect(error?.path == bundle.path)

        let single = try Self.makeBundle(in: tmp, named: "S.xcdatamodeld", versions: ["Only"], currentVersion: nil)
        let contents = single.appendingPathComponent("Only.xcdatamodel/contents")
        try Data("<model".utf8).write(to: contents)
        let own = #expect(throws: TernError.self) { try XcodeModel.readVersionedModel(at: single) }
        #expect(own?.path == contents.path)
    }

    @Test func missingPathsAreErrors() throws {
        let tmp = try TemporaryDirectory()
        let missing = #expect(throws: TernError.self) {
            try XcodeModel.readVersionedModel(at: tmp.path("None.xcdatamodeld"))
        }
        #expect(missing?.path == tmp.path("None.xcdatamodeld").path)
        let emptyBundle = tmp.path("Empty.xcdatamodeld")
        try FileManager.default.createDirectory(at: emptyBundle, withIntermediateDirectories: true)
        #expect(throws: TernError.self) { try XcodeModel.readVersionedModel(at: emptyBundle) }
        let emptyVersion = tmp.path("Empty.xcdatamodel")
        try FileManager.default.createDirectory(at: emptyVersion, withIntermediateDirectories: true)
        let noContents = #expect(throws: TernError.self) { try XcodeModel.readModel(contentsOf: emptyVersion) }
        #expect(noContents?.message.contains("no `contents`") == true)
    }

    @Test func writesCurrentVersionFileLikeXcode() throws {
        let tmp = try TemporaryDirectory()
        let versioned = VersionedModel(
            name: "M",
            versions: [
                ModelVersion(name: "M", model: ManagedObjectModel()),
                ModelVersion(name: "M 2", model: ManagedObjectModel(versionIdentifiers: ["2"])),
            ],
            current: "M 2")
        let bundle = tmp.path("M.xcdatamodeld")
        try XcodeModel.write(versioned, to: bundle)
        let written = try String(contentsOf: bundle.appendingPathComponent(".xccurrentversion"), encoding: .utf8)
        let fixture = try String(
            contentsOf: Fixtures.coreDataStackModel.appendingPathComponent(".xccurrentversion"), encoding: .utf8)
        #expect(written == fixture.replacingOccurrences(of: "TestModel 2", with: "M 2"))
        let names = try FileManager.default.contentsOfDirectory(atPath: bundle.path).sorted()
        #expect(names == [".xccurrentversion", "M 2.xcdatamodel", "M.xcdatamodel"])
        #expect(try XcodeModel.readVersionedModel(at: bundle) == versioned)
    }
}
