import Foundation
import TernCore
import TernFormats
import TernTestSupport
import Testing

/// Value texts read as `momc` reads them, with a warning whenever the text was not a clean
/// value of its type; and the models readers refuse because they are meaningless.
@Suite struct LenientModelReadingTests {
    static let path = "/models/M.xcdatamodel/contents"

    /// A model whose entity `Car` has one property, on line 3.
    static func contents(_ property: String) -> Data {
        Data("<model>\n<entity name=\"Car\">\n\(property)\n</entity>\n</model>".utf8)
    }

    /// Reads a model from XML, collecting its warnings.
    static func read(_ xml: Data) throws -> (ManagedObjectModel, [ModelReadingWarning]) {
        var warnings: [ModelReadingWarning] = []
        let model = try XcodeModel.model(fromContents: xml, path: path, warnings: &warnings)
        return (model, warnings)
    }

    /// One rule: an XML attribute's text on an attribute of a type, and what it reads as.
    struct Case: CustomStringConvertible, Sendable {
        var type: String
        var key: String
        var text: String
        var expected: AttributeValue?
        var warns: Bool
        var description: String { "\(key)=\"\(text)\" on \(type)" }

        init(
            _ type: String, key: String = "defaultValueString", _ text: String, _ expected: AttributeValue?, warns: Bool
        ) {
            self.type = type
            self.key = key
            self.text = text
            self.expected = expected
            self.warns = warns
        }

        /// The value the case's XML attribute sets.
        func value(of attribute: AttributeDescription) -> AttributeValue? {
            switch key {
            case "minValueString", "minDateTimeInterval": attribute.minimum
            case "maxValueString", "maxDateTimeInterval": attribute.maximum
            default: attribute.defaultValue
            }
        }
    }

    static func date(_ seconds: Double) -> AttributeValue { .date(Date(timeIntervalSinceReferenceDate: seconds)) }

    static let cases: [Case] = [
        // integerValue: leading white space, a sign and digits; the rest is ignored, no digits give 0.
        Case("Integer 32", "NO", .integer(0), warns: true),
        Case("Integer 32", "12", .integer(12), warns: false),
        Case("Integer 16", " -12 ", .integer(-12), warns: false),
        Case("Integer 64", "3.0", .integer(3), warns: false),
        Case("Integer 32", "1.5", .integer(1), warns: true),
        Case("Integer 32", "12abc", .integer(12), warns: true),
        Case("Integer 64", "1e3", .integer(1), warns: true),
        Case("Integer 32", "", .integer(0), warns: true),
        Case("Integer 16", "70000", .integer(32767), warns: true),
        Case("Integer 16", "-70000", .integer(-32768), warns: true),
        Case("Integer 64", "99999999999999999999", .integer(.max), warns: true),
        // doubleValue: a decimal number with fraction and exponent; no digits give 0.
        Case("Double", "0.0", .double(0), warns: false),
        Case("Float", ".5", .double(0.5), warns: false),
        Case("Double", "-2.5e2", .double(-250), warns: false),
        Case("Double", "2.5kg", .double(2.5), warns: true),
        Case("Double", "quick", .double(0), warns: true),
        Case("Double", "1e999", .double(.infinity), warns: true),
        // NSDecimalNumber(string:): the leading number; not a number gives no value.
        Case("Decimal", "1.25", .decimal(Decimal(string: "1.25")!), warns: false),
        Case("Decimal", "1,5", .decimal(1), warns: true),
        Case("Decimal", "abc", nil, warns: true),
        // boolValue: Y, y, T, t or 1-9 after white space, a sign and zeros.
        Case("Boolean", "YES", .bool(true), warns: false),
        Case("Boolean", "NO", .bool(false), warns: false),
        Case("Boolean", "true", .bool(true), warns: false),
        Case("Boolean", "1", .bool(true), warns: false),
        Case("Boolean", "0", .bool(false), warns: false),
        Case("Boolean", "0.0", .bool(false), warns: true),
        Case("Boolean", "Y", .bool(true), warns: true),
        Case("Boolean", "+0002", .bool(true), warns: true),
        Case("Boolean", "maybe", .bool(false), warns: true),
        // Texts that give no value of their type are ignored.
        Case("UUID", "not-a-uuid", nil, warns: true),
        Case(
            "UUID", "6F9619FF-8B86-D011-B42D-00C04FC964FF",
            .uuid(UUID(uuidString: "6F9619FF-8B86-D011-B42D-00C04FC964FF")!), warns: false),
        Case("URI", "https://example.com/a", .uri(URL(string: "https://example.com/a")!), warns: false),
        Case("URI", "http://[x", nil, warns: true),
        Case("Binary", "abc", nil, warns: true),
        Case("String", " NO ", .string(" NO "), warns: false),
        // Dates: seconds since 2001 as doubleValue reads them; no number gives no date.
        Case("Date", key: "defaultDateTimeInterval", "100", date(100), warns: false),
        Case("Date", key: "defaultDateTimeInterval", "12.5s", date(12.5), warns: true),
        Case("Date", key: "defaultDateTimeInterval", "noon", nil, warns: true),
        Case("Date", key: "minDateTimeInterval", "-5 days", date(-5), warns: true),
        Case("Date", "10", date(10), warns: false),
        Case("Date", "2013-04-23 12:00:00 +0000", date(388_411_200), warns: false),
        Case("Date", "NO", nil, warns: true),
        // Bounds: numbers for numeric attributes, lengths (integerValue, not negative) otherwise.
        Case("Integer 64", key: "minValueString", "low", .integer(0), warns: true),
        Case("Double", key: "maxValueString", "9.5", .double(9.5), warns: false),
        Case("String", key: "maxValueString", "10", .integer(10), warns: false),
        Case("String", key: "maxValueString", "10 characters", .integer(10), warns: true),
        Case("String", key: "maxValueString", "-1", nil, warns: true),
    ]

    @Test(arguments: cases)
    func valueTextsReadAsMomcReadsThem(rule: Case) throws {
        let xml = Self.contents(
            #"<attribute name="speed" attributeType="\#(rule.type)" \#(rule.key)="\#(rule.text)"/>"#)
        let (model, warnings) = try Self.read(xml)
        let attribute = try #require(model.entity(named: "Car")?.attribute(named: "speed"))
        #expect(rule.value(of: attribute) == rule.expected)
        #expect(warnings.count == (rule.warns ? 1 : 0), "\(warnings)")
        guard let warning = warnings.first else { return }
        #expect(warning.code == .lenientValue)
        #expect(warning.entityName == "Car" && warning.propertyName == "speed")
        #expect(warning.line == 3 && warning.path == Self.path)
        #expect(warning.message.hasPrefix("\(rule.key) \"\(rule.text)\" on "))
    }

    @Test func warningSaysWhatTheTextWasReadAs() throws {
        let (_, warnings) = try Self.read(
            Self.contents(#"<attribute name="count" attributeType="Integer 32" defaultValueString="NO"/>"#))
        #expect(
            warnings.map(\.message) == [
                #"defaultValueString "NO" on an Integer 32 attribute read as 0, as momc reads it"#
            ])
        #expect(
            warnings.first?.description
                == #"Car.count (line 3): defaultValueString "NO" on an Integer 32 attribute read as 0, as momc reads it"#
        )
        let (_, flags) = try Self.read(
            Self.contents(#"<attribute name="done" attributeType="Boolean" defaultValueString="0.0"/>"#))
        #expect(
            flags.first?.message == #"defaultValueString "0.0" on a Boolean attribute read as NO, as momc reads it"#)
        let (_, clamped) = try Self.read(
            Self.contents(#"<attribute name="count" attributeType="Integer 16" defaultValueString="70000"/>"#))
        #expect(clamped.first?.message.hasSuffix("read as 32767, the largest value of an Integer 16 attribute") == true)
        let (_, ignored) = try Self.read(
            Self.contents(#"<attribute name="id" attributeType="UUID" defaultValueString="none"/>"#))
        #expect(ignored.first?.message == #"defaultValueString "none" on a UUID attribute ignored: it is not a UUID"#)
    }

    /// Xcode writes a date default twice: as seconds, and as text for display.
    @Test func aDatesIntervalWinsOverItsText() throws {
        let (model, warnings) = try Self.read(
            Self.contents(
                #"<attribute name="at" attributeType="Date" defaultDateTimeInterval="388411200" defaultValueString="23/04/2013" minValueString="2010-01-01 01:00:00"/>"#
            ))
        #expect(model.entity(named: "Car")?.attribute(named: "at")?.defaultValue == Self.date(388_411_200))
        #expect(warnings.isEmpty)
    }

    @Test func longTextsAreCutInWarnings() throws {
        let text = String(repeating: "x", count: 60)
        let (_, warnings) = try Self.read(
            Self.contents(#"<attribute name="count" attributeType="Integer 32" defaultValueString="\#(text)"/>"#))
        #expect(
            warnings.first?.message.hasPrefix("defaultValueString \"" + String(repeating: "x", count: 40) + "…\" on")
                == true)
    }

    @Test func relationshipCountsReadAsIntegerValueReadsThem() throws {
        let xml = Self.contents(
            #"<relationship name="parts" toMany="YES" minCount="2" maxCount="many" destinationEntity="Car"/>"#)
        let (model, warnings) = try Self.read(xml)
        let parts = try #require(model.entity(named: "Car")?.relationship(named: "parts"))
        #expect(parts.minCount == 2 && parts.maxCount == 0)
        #expect(warnings.map(\.message) == [#"maxCount "many" on a relationship read as 0, as momc reads it"#])
        #expect(warnings.first?.propertyName == "parts" && warnings.first?.line == 3)
    }

    @Test func lenientDefaultsKeepTheVersionHashes() throws {
        let lenient = try Self.read(
            Self.contents(#"<attribute name="count" attributeType="Integer 32" defaultValueString="NO"/>"#)
        ).0
        let clean = try Self.read(
            Self.contents(#"<attribute name="count" attributeType="Integer 32" defaultValueString="0"/>"#)
        ).0
        let none = try Self.read(Self.contents(#"<attribute name="count" attributeType="Integer 32"/>"#)).0
        #expect(lenient.entityVersionHashes == clean.entityVersionHashes)
        #expect(lenient.entityVersionHashes == none.entityVersionHashes)
        #expect(lenient == clean)
    }

    @Test func warningsOfABundleNameTheirVersion() throws {
        let tmp = try TemporaryDirectory()
        let folder = tmp.path("M.xcdatamodeld/M 2.xcdatamodel")
        try FileManager.default.createDirectory(at: folder, withIntermediateDirectories: true)
        let contents = folder.appendingPathComponent("contents")
        try Self.contents(#"<attribute name="count" attributeType="Integer 32" defaultValueString="NO"/>"#).write(
            to: contents)
        var warnings: [ModelReadingWarning] = []
        let model = try XcodeModel.readVersionedModel(at: tmp.path("M.xcdatamodeld"), warnings: &warnings)
        #expect(model.currentVersion.model.entity(named: "Car")?.attribute(named: "count")?.defaultValue == .integer(0))
        #expect(warnings.count == 1)
        #expect(warnings.first?.versionName == "M 2" && warnings.first?.path == contents.path)
        // The overload without warnings reads the same model.
        #expect(try XcodeModel.readVersionedModel(at: tmp.path("M.xcdatamodeld")) == model)
    }
}
