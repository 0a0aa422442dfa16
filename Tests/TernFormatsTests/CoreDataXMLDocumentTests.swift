import Foundation
import TernCore
import TernTestSupport
import Testing

@testable import TernFormats

/// Core Data XML store documents, read and written without a model: every `xcmapping.xml` of
/// the corpus (Xcode writes mapping models as Core Data XML stores) reads, and writes back byte
/// for byte as Xcode wrote it.
@Suite struct CoreDataXMLDocumentTests {
    /// Every `xcmapping.xml` in the corpus.
    static func mappingDocuments() throws -> [URL] {
        try RealWorldCorpus.items(of: .mappingModel).compactMap { item in
            let url = item.url.appendingPathComponent("xcmapping.xml")
            return FileManager.default.fileExists(atPath: url.path) ? url : nil
        }
    }

    @Test func everyMappingModelOfTheCorpusReadsAndWritesBackAsXcodeWroteIt() throws {
        let urls = try Self.mappingDocuments()
        #expect(urls.count >= 36)
        for url in urls {
            let bytes = try Data(contentsOf: url)
            let document = try CoreDataXMLDocument(data: bytes, path: url.path)
            #expect(document.info.version == CoreDataXMLDocument.storeVersion, "\(url.path)")
            #expect(document.info.uuid?.count == 36, "\(url.path)")
            #expect(document.info.metadata?["NSStoreModelVersionHashesVersion"] == .integer(3), "\(url.path)")
            #expect(document.objects.filter { $0.type == "XDDEVMAPPINGMODEL" }.count == 1, "\(url.path)")
            // Every id is z and a number no larger than nextObjectID, and every idref names an object.
            let ids = Set(document.objects.map(\.id))
            #expect(ids.count == document.objects.count, "\(url.path)")
            let numbers = document.objects.compactMap { Int64($0.id.dropFirst()) }
            #expect(numbers.count == ids.count && document.objects.allSatisfy { $0.id.hasPrefix("z") }, "\(url.path)")
            #expect(numbers.max() == document.info.nextObjectID, "\(url.path)")
            for object in document.objects {
                for relationship in object.relationships {
                    #expect(relationship.idrefs.allSatisfy(ids.contains), "\(url.path) \(object.id)")
                    #expect(relationship.counts != nil, "\(url.path) \(object.id)")
                }
            }
            let written = try document.encoded()
            #expect(try CoreDataXMLDocument(data: written, path: url.path) == document, "\(url.path)")
            // Byte for byte, but for the XML declaration, which Core Data releases spelled differently.
            let text = String(decoding: bytes, as: UTF8.self)
            let body = text.drop { $0 != "\n" }
            #expect(
                String(decoding: written, as: UTF8.self) == "<?xml version=\"1.0\" standalone=\"yes\"?>" + body,
                "\(url.path)")
        }
    }

    @Test func aMappingModelReadsAsXcodeWroteIt() throws {
        let url = RealWorldCorpus.root.appendingPathComponent(
            "richardpiazza__XCServerCoreData/MappingModel1.2.0to2.0.2.xcmappingmodel/xcmapping.xml")
        let document = try CoreDataXMLDocument(data: Data(contentsOf: url), path: url.path)
        #expect(document.info.uuid == "EA83F894-D987-4D58-B66F-653C6144D277")
        #expect(document.info.nextObjectID == 396)
        #expect(document.info.metadata?["NSPersistenceFrameworkVersion"] == .integer(851))
        #expect(document.info.metadata?["NSStoreModelVersionIdentifiers"] == .array([.string("")]))
        guard case .dictionary(let hashes)? = document.info.metadata?["NSStoreModelVersionHashes"] else {
            Issue.record("no version hashes")
            return
        }
        #expect(
            hashes["XDDevAttributeMapping"]
                == .data(Data(base64Encoded: "0plcXXRN7XHKl5CcF+fwriFmUpON3ZtcI/AfK748aWc=")!))
        let first = try #require(document.objects.first)
        #expect(first.type == "XDDEVENTITYMAPPING" && first.id == "z102")
        #expect(first.attribute(named: "mappingnumber") == .init(name: "mappingnumber", type: "int16", text: "20"))
        #expect(first.attribute(named: "autogenerateexpression")?.text == "1")
        #expect(
            first.relationship(named: "mappingmodel")
                == .init(name: "mappingmodel", type: "1/1", destination: "XDDEVMAPPINGMODEL", idrefs: ["z176"]))
        let attributeMappings = try #require(first.relationship(named: "attributemappings"))
        #expect(attributeMappings.type == "0/0" && attributeMappings.counts! == (0, 0))
        #expect(attributeMappings.idrefs.prefix(3) == ["z368", "z114", "z165"])
        // Binary values keep their text exactly, line breaks included.
        let model = try #require(document.objects.first { $0.type == "XDDEVMAPPINGMODEL" })
        let source = try #require(model.attribute(named: "sourcemodeldata"))
        #expect(source.type == "binary" && source.text.hasPrefix("YnBsaXN0MDDU") && source.text.hasSuffix("==\n"))
    }

    @Test func documentsOfOtherTimesRead() throws {
        // Mac OS X 10.4 wrote an empty <metadata> and left out idrefs of empty relationships.
        let text = """
            <?xml version="1.0"?>
            <!DOCTYPE database SYSTEM "file:///System/Library/DTDs/CoreData.dtd">

            <database>
                <databaseInfo>
                    <version>134481920</version>
                    <UUID>343C8D7F-A000-42C4-8463-43FA1E5EF3FB</UUID>
                    <nextObjectID>102</nextObjectID>
                    <metadata></metadata>
                </databaseInfo>
                <object type="VEHICLE" id="z102">
                    <attribute name="year" type="int32">2006</attribute>
                    <relationship name="vehiclepictures" type="0/0" destination="VEHICLEPICTURE"></relationship>
                </object>
            </database>
            """
        let document = try CoreDataXMLDocument(data: Data(text.utf8), path: "old.xml")
        #expect(document.info.metadata == nil && document.info.nextObjectID == 102)
        #expect(
            document.objects == [
                CoreDataXMLDocument.Object(
                    type: "VEHICLE", id: "z102", attributes: [.init(name: "year", type: "int32", text: "2006")],
                    relationships: [.init(name: "vehiclepictures", type: "0/0", destination: "VEHICLEPICTURE")])
            ])
        let written = String(decoding: try document.encoded(), as: UTF8.self)
        #expect(written.contains("        <metadata></metadata>\n"))
        #expect(
            written.contains(
                "<relationship name=\"vehiclepictures\" type=\"0/0\" destination=\"VEHICLEPICTURE\"></relationship>\n"))

        // A document without <databaseInfo> (hand-written) reads, with nothing in its info.
        let bare = try CoreDataXMLDocument(
            data: Data("<database><object type=\"A\" id=\"z1\"></object></database>".utf8), path: "bare.xml")
        #expect(bare.info == CoreDataXMLDocument.DatabaseInfo(version: nil) && bare.objects.count == 1)
        #expect(
            String(decoding: try bare.encoded(), as: UTF8.self).contains(
                "    <object type=\"A\" id=\"z1\"></object>\n</database>"))
    }

    @Test func everyTextAndMetadataValueRoundTrips() throws {
        let strings = [
            "", "plain", "nul \u{0} inside", "controls \u{1}\u{8}\u{B}", "cr \r crlf \r\n lf \n tab \t",
            "  leading and trailing  ", "<tag attr=\"x\">&amp; ' \"</tag>", "]]> <![CDATA[", "emoji 👩‍👩‍👧 é\u{301}",
        ]
        let metadata: [String: PropertyListValue] = [
            "NSStoreType": .string("XML"), "strings": .array(strings.map(PropertyListValue.string)),
            "nul\u{0}key": .string("v"),
            "numbers": .array([
                .integer(.min), .integer(.max), .real(0.1), .real(-0.0),
                .real(.infinity), .real(-.infinity), .real(.leastNonzeroMagnitude), .real(1e300),
            ]),
            "flags": .array([.bool(true), .bool(false)]),
            "dates": .array(
                [-1e10 + 0.123456789, 0, 123_456.789_012, 1e-7, 800_000_000].map {
                    .date(Date(timeIntervalSinceReferenceDate: $0))
                }),
            "data": .array([Data(), Data([0]), Data((0...255).map { UInt8($0) })].map(PropertyListValue.data)),
            "empty": .dictionary([:]),
            "nested": .dictionary(["deeper": .dictionary(["deepest": .data(Data(count: 100))])]),
        ]
        let document = CoreDataXMLDocument(
            info: .init(uuid: "U", nextObjectID: 2, metadata: metadata),
            objects: [
                CoreDataXMLDocument.Object(
                    type: "SAMPLE", id: "z1",
                    attributes: strings.enumerated().map {
                        .init(name: "s\($0.offset)", type: "string", text: $0.element)
                    },
                    relationships: [.init(name: "others", type: "0/0", destination: "SAMPLE", idrefs: ["z1", "z2"])])
            ]
                + [CoreDataXMLDocument.Object(type: "SAMPLE", id: "z2")])
        let written = try document.encoded()
        #expect(try CoreDataXMLDocument(data: written, path: "t.xml") == document)
        let text = String(decoding: written, as: UTF8.self)
        #expect(!text.contains("\u{0}") && !text.contains("\r"))
        #expect(
            text.contains(
                "<attribute name=\"s6\" type=\"string\">&lt;tag attr=\"x\"&gt;&amp;amp; ' \"&lt;/tag&gt;</attribute>"))
        #expect(text.contains("<attribute name=\"s4\" type=\"string\">cr &#13; crlf &#13;\n lf \n tab \t</attribute>"))
        #expect(text.contains("<attribute name=\"s2\" type=\"string\" encoding=\"base64\">"))
        // Core Foundation's layout: sorted keys, 17 significant digits, ISO 8601 dates.
        #expect(text.contains("<real>0.10000000000000001</real>"))
        #expect(text.contains("<real>+infinity</real>") && text.contains("<real>-0.0</real>"))
        #expect(text.contains("<date>2026-05-09T06:13:20Z</date>"))
        #expect(text.contains("<date>2001-01-02T10:17:36.78901"))
        #expect(text.contains("<key>NSStoreType</key>\n                    <string>XML</string>"))
        // Data inside nested dictionaries: base64 lines of 76 - 8 × depth, indented by tabs.
        let hundred = Data(count: 100).base64EncodedString()
        let lines = stride(from: 0, to: hundred.count, by: 52).map {
            "\t\t\t" + hundred.dropFirst($0).prefix(52) + "\n"
        }.joined()
        #expect(text.contains("<data>\n" + lines + "\t\t\t</data>"))
    }

    @Test func damagedDocumentsAreRefusedNamingTheLine() throws {
        func refusal(_ text: String) -> String? {
            do {
                _ = try CoreDataXMLDocument(data: Data(text.utf8), path: "bad.xml")
                return nil
            } catch {
                #expect(error.code == .unreadableStore && error.path == "bad.xml")
                return error.message
            }
        }
        #expect(refusal("<plist><dict/></plist>")?.contains("<database>") == true)
        #expect(refusal("<database>\n<object id=\"z1\"></object></database>")?.contains("line 2") == true)
        #expect(
            refusal(
                "<database><object type=\"A\" id=\"z1\"><attribute type=\"string\">x</attribute></object></database>")?
                .contains("object z1") == true)
        #expect(
            refusal("<database><databaseInfo><nextObjectID>x</nextObjectID></databaseInfo></database>")?
                .contains("<nextObjectID>") == true)
        #expect(
            refusal("<database><databaseInfo><metadata><plist><array/></plist></metadata></databaseInfo></database>")?
                .contains("not a dictionary") == true)
        #expect(
            refusal(
                "<database><databaseInfo><metadata><plist><dict><key>a</key></dict></plist></metadata></databaseInfo></database>"
            ) != nil)
        #expect(refusal("<!DOCTYPE database [<!ENTITY x \"y\">]><database>&x;</database>") != nil)
        #expect(refusal("<database><object type=\"A\" id=\"z1\"></objekt></database>") != nil)
    }

    @Test func unwritableNamesAreRefused() {
        let document = CoreDataXMLDocument(objects: [.init(type: "A\u{0}", id: "z1")])
        #expect(
            performing: { try document.encoded() },
            throws: { error in
                (error as? TernError)?.code == .unwritableStore
            })
    }
}
