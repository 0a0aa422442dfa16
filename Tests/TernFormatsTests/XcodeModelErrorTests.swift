import Foundation
import TernCore
import TernFormats
import TernTestSupport
import Testing

@Suite struct XcodeModelErrorTests {
    static func entity(_ attribute: String) -> Data {
        Data(#"<model><entity name="Car">\#n    \#(attribute)\#n</entity></model>"#.utf8)
    }

    /// Values are read leniently (see LenientModelReadingTests); an unknown type or delete rule
    /// is still refused.
    @Test(arguments: [
        #"<attribute name="speed" attributeType="Velocity"/>"#,
        #"<relationship name="speed" destinationEntity="Car" deletionRule="Explode"/>"#,
    ])
    func badValueNamesEntityAndProperty(attribute: String) throws {
        let error = #expect(throws: TernError.self) {
            try XcodeModel.model(fromContents: Self.entity(attribute), path: "/models/M.xcdatamodel/contents")
        }
        #expect(error?.code == .invalidModel)
        #expect(error?.entityName == "Car")
        #expect(error?.propertyName == "speed")
        #expect(error?.path == "/models/M.xcdatamodel/contents")
        #expect(error?.message.contains("line 2") == true)
        #expect(error.map(String.init(describing:))?.hasPrefix("Car.speed: ") == true)
        #expect(error.map(String.init(describing:))?.hasSuffix("(/models/M.xcdatamodel/contents)") == true)
    }

    @Test func badValueInFileNamesFile() throws {
        let tmp = try TemporaryDirectory()
        let folder = tmp.path("Bad.xcdatamodel")
        try FileManager.default.createDirectory(at: folder, withIntermediateDirectories: true)
        try Self.entity(#"<attribute name="flag" attributeType="Truth"/>"#)
            .write(to: folder.appendingPathComponent("contents"))
        let error = #expect(throws: TernError.self) { try XcodeModel.readModel(contentsOf: folder) }
        #expect(error?.path == folder.appendingPathComponent("contents").path)
        #expect(error?.propertyName == "flag")
    }

    @Test func missingNamesAreErrors() {
        for xml in [
            #"<model><entity/></model>"#,
            #"<model><entity name="A"><attribute attributeType="String"/></entity></model>"#,
            #"<model><entity name="A"><relationship name="r"/></entity></model>"#,
            #"<model><entity name="A"><fetchedProperty name="f"/></entity></model>"#,
            #"<model><fetchRequest name="q"/></model>"#, #"<plist><dict/></plist>"#,
        ] {
            let error = #expect(throws: TernError.self) { try XcodeModel.model(fromContents: Data(xml.utf8)) }
            #expect(error?.code == .unreadableModelFile, "\(xml)")
        }
    }

    @Test func malformedXMLGivesPathAndLine() {
        let xml = "<model>\n  <entity name=\"A\">\n    <attribute name=\"x\"\n  </entity>\n</model>"
        let error = #expect(throws: TernError.self) {
            try XcodeModel.model(fromContents: Data(xml.utf8), path: "/tmp/Broken/contents")
        }
        #expect(error?.code == .unreadableModelFile)
        #expect(error?.path == "/tmp/Broken/contents")
        #expect(error?.message.contains("not well-formed XML") == true)
        #expect(error?.message.contains("line") == true)
        for junk in ["", "not xml at all", "<model><entity name=\"A\"></model>", "<model></model><model></model>"] {
            #expect(throws: TernError.self, "\(junk)") { try XcodeModel.model(fromContents: Data(junk.utf8)) }
        }
    }

    @Test func externalEntitiesAreRefused() throws {
        let tmp = try TemporaryDirectory()
        let secret = tmp.path("secret.txt")
        try Data("SECRET".utf8).write(to: secret)
        let xml = """
            <?xml version="1.0"?>
            <!DOCTYPE model [<!ENTITY xxe SYSTEM "\(secret.absoluteString)">]>
            <model><entity name="A" representedClassName="&xxe;"/></model>
            """
        let error = #expect(throws: TernError.self) { try XcodeModel.model(fromContents: Data(xml.utf8)) }
        #expect(error?.code == .unreadableModelFile)
        #expect(error?.message.contains("entities") == true)
    }

    @Test func entityExpansionBombIsRefused() {
        var declarations = #"<!ENTITY lol0 "lollollollollollollollollollol">"#
        for level in 1...9 {
            let references = String(repeating: "&lol\(level - 1);", count: 10)
            declarations += "\n<!ENTITY lol\(level) \"\(references)\">"
        }
        let xml = """
            <?xml version="1.0"?>
            <!DOCTYPE model [\(declarations)]>
            <model><entity name="&lol9;"/></model>
            """
        let error = #expect(throws: TernError.self) { try XcodeModel.model(fromContents: Data(xml.utf8)) }
        #expect(error?.code == .unreadableModelFile)
    }

    @Test func externalDTDIsNotLoaded() throws {
        let xml = """
            <?xml version="1.0"?>
            <!DOCTYPE model SYSTEM "file:///nonexistent/tern/model.dtd">
            <model><entity name="A"/></model>
            """
        #expect(try XcodeModel.model(fromContents: Data(xml.utf8)).entities.map(\.name) == ["A"])
    }

    @Test func deepNestingIsRefused() {
        let depth = 10_000
        let xml =
            "<model><entity name=\"A\">" + String(repeating: "<x>", count: depth)
            + String(repeating: "</x>", count: depth) + "</entity></model>"
        let error = #expect(throws: TernError.self) { try XcodeModel.model(fromContents: Data(xml.utf8)) }
        #expect(error?.message.contains("nests elements") == true)
    }
}
