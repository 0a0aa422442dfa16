import Foundation
import TernCore
import TernFormats
import TernTestSupport
import Testing

@Suite struct XcodeModelWritingTests {
    static let fixtureBundles = [Fixtures.sampleModel, Fixtures.sampleModel3, Fixtures.coreDataStackModel]

    @Test(arguments: fixtureBundles)
    func everyFixtureVersionRoundTrips(bundle: URL) throws {
        let versioned = try XcodeModel.readVersionedModel(at: bundle)
        for version in versioned.versions {
            let xml = XcodeModel.contentsXML(for: version.model)
            let reread = try XcodeModel.model(fromContents: Data(xml.utf8))
            #expect(reread == version.model, "\(version.name)")
        }
    }

    @Test(arguments: fixtureBundles)
    func everyFixtureBundleRoundTrips(bundle: URL) throws {
        let versioned = try XcodeModel.readVersionedModel(at: bundle)
        let tmp = try TemporaryDirectory()
        let copy = tmp.path(bundle.lastPathComponent)
        try XcodeModel.write(versioned, to: copy)
        #expect(try XcodeModel.readVersionedModel(at: copy) == versioned)
    }

    @Test func writesLikeXcode() throws {
        let model = try XcodeModel.readModel(
            contentsOf: Fixtures.sampleModel.appendingPathComponent("SampleModel.xcdatamodel"))
        let xml = XcodeModel.contentsXML(for: model)
        #expect(xml.hasPrefix(#"<?xml version="1.0" encoding="UTF-8" standalone="yes"?>"# + "\n"))
        #expect(
            xml.contains(
                #"<model type="com.apple.IDECoreDataModeler.DataModel" documentVersion="1.0" lastSavedToolsVersion="\#(XcodeModel.toolsVersion)" minimumToolsVersion="Automatic" sourceLanguage="Swift" userDefinedModelVersionIdentifier="1">"#
            ))
        #expect(
            xml.contains(
                #"        <relationship name="owner" optional="YES" maxCount="1" deletionRule="Nullify" destinationEntity="Person" inverseName="cars" inverseEntity="Person"/>"#
            ))
        #expect(
            xml.contains(
                #"        <attribute name="currentDrivingSpeed" optional="YES" transient="YES" attributeType="Integer 64" defaultValueString="0" usesScalarValueType="YES"/>"#
            ))
        #expect(xml.contains(#"<attribute name="numberPlate" attributeType="String"/>"#))
        #expect(xml.contains(#"<entity name="SportCar" representedClassName="SportCar" parentEntity="Car"/>"#))
        #expect(xml.hasSuffix("</model>"))
        // Entities come sorted by name.
        let positions = ["Car", "ExpensiveSportCar", "Person", "SportCar"].compactMap {
            xml.range(of: "<entity name=\"\($0)\"")?.lowerBound
        }
        #expect(positions.count == 4 && positions == positions.sorted())
    }

    @Test func modelWithoutIdentifierWritesNone() {
        #expect(!XcodeModel.contentsXML(for: ManagedObjectModel()).contains("userDefinedModelVersionIdentifier"))
        let empty = ManagedObjectModel(versionIdentifiers: [""])
        #expect(XcodeModel.contentsXML(for: empty).contains(#"userDefinedModelVersionIdentifier="""#))
    }

    @Test func swiftBuiltModelWithEveryOptionRoundTrips() throws {
        let model = Self.everyOptionModel()
        let xml = XcodeModel.contentsXML(for: model)
        let reread = try XcodeModel.model(fromContents: Data(xml.utf8))
        #expect(reread == model)
        #expect(model.validationIssues.isEmpty)
        for (entity, original) in zip(reread.entities, model.entities) {
            #expect(entity == original, "\(entity.name)")
            for (attribute, expected) in zip(entity.attributes, original.attributes) {
                #expect(attribute == expected, "\(entity.name).\(attribute.name)")
            }
        }

        let tmp = try TemporaryDirectory()
        let versioned = VersionedModel(
            name: "Kitchen",
            versions: [
                ModelVersion(name: "Kitchen", model: ManagedObjectModel(versionIdentifiers: ["1"])),
                ModelVersion(name: "Kitchen 2", model: model),
            ])
        let bundle = tmp.path("Kitchen.xcdatamodeld")
        try XcodeModel.write(versioned, to: bundle)
        #expect(try XcodeModel.readVersionedModel(at: bundle) == versioned)
        // Writing again replaces the bundle.
        let smaller = VersionedModel(name: "Kitchen", versions: [versioned.versions[0]])
        try XcodeModel.write(smaller, to: bundle)
        #expect(try XcodeModel.readVersionedModel(at: bundle) == smaller)
    }

    @Test func escapesText() throws {
        var entity = EntityDescription(
            name: "Note",
            attributes: [
                AttributeDescription(name: "body", type: .string, defaultValue: .string("a < b & \"c\" > 'd'\n\te"))
            ])
        entity.userInfo = ["quote": "\"&<>", "lines": "one\r\ntwo"]
        var model = ManagedObjectModel(entities: [entity], versionIdentifiers: ["v<1>"])
        model.fetchRequestTemplates = [
            FetchRequestTemplate(name: "Q", entityName: "Note", predicate: "body == \"x&y\"")
        ]
        let xml = XcodeModel.contentsXML(for: model)
        #expect(xml.contains("&lt;") && xml.contains("&amp;") && xml.contains("&quot;") && xml.contains("&#10;"))
        #expect(try XcodeModel.model(fromContents: Data(xml.utf8)) == model)
    }

    @Test func refusesBadBundleNames() throws {
        let tmp = try TemporaryDirectory()
        let versioned = VersionedModel(name: "M", versions: [ModelVersion(name: "M", model: ManagedObjectModel())])
        #expect(throws: TernError.self) { try XcodeModel.write(versioned, to: tmp.path("M.model")) }
        let slashed = VersionedModel(name: "M", versions: [ModelVersion(name: "a/b", model: ManagedObjectModel())])
        let error = #expect(throws: TernError.self) { try XcodeModel.write(slashed, to: tmp.path("M.xcdatamodeld")) }
        #expect(error?.code == .unwritableModelFile)
        #expect(!FileManager.default.fileExists(atPath: tmp.path("M.xcdatamodeld").path))
    }

    // MARK: - A model with every attribute type and option

    static func everyOptionModel() -> ManagedObjectModel {
        var attributes: [AttributeDescription] = []
        let defaults: [(AttributeType, AttributeValue?)] = [
            (.integer16, .integer(-7)), (.integer32, .integer(70_000)), (.integer64, .integer(1 << 40)),
            (.decimal, .decimal(Decimal(string: "12.75")!)), (.double, .double(0.1)), (.float, .double(2.5)),
            (.string, .string("plain")), (.boolean, .bool(true)),
            (.date, .date(Date(timeIntervalSinceReferenceDate: 631_123_200.25))),
            (.binary, nil), (.uuid, .uuid(UUID(uuidString: "E621E1F8-C36C-495A-93FC-0C247A3E6E5F")!)),
            (.uri, .uri(URL(string: "https://example.com/x?y=1&z=2")!)), (.transformable, nil),
        ]
        for (type, value) in defaults {
            var attribute = AttributeDescription(
                name: "a" + type.xcodeName.replacingOccurrences(of: " ", with: ""), type: type,
                isOptional: type.rawValue % 200 == 0, defaultValue: value)
            attribute.userInfo = ["type": type.xcodeName]
            attributes.append(attribute)
        }
        var bounded = AttributeDescription(name: "bounded", type: .integer16, isOptional: false)
        bounded.minimum = .integer(-3)
        bounded.maximum = .integer(300)
        bounded.usesScalarValueType = true
        var real = AttributeDescription(name: "real", type: .double)
        real.minimum = .double(-1.5)
        real.maximum = .double(1e10)
        var money = AttributeDescription(name: "money", type: .decimal)
        money.minimum = .decimal(0)
        money.maximum = .decimal(Decimal(string: "99.99")!)
        var text = AttributeDescription(name: "text", type: .string)
        text.minimum = .integer(1)
        text.maximum = .integer(140)
        text.regularExpression = "[a-z]+"
        text.renamingIdentifier = "oldText"
        text.versionHashModifier = "2"
        text.isIndexed = true
        text.isIndexedBySpotlight = true
        text.isStoredInExternalRecord = true
        text.allowsCloudEncryption = true
        text.usesScalarValueType = false
        var when = AttributeDescription(name: "when", type: .date)
        when.minimum = .date(Date(timeIntervalSinceReferenceDate: 0))
        when.maximum = .date(Date(timeIntervalSinceReferenceDate: 1e9))
        var blob = AttributeDescription(name: "blob", type: .binary)
        blob.allowsExternalBinaryDataStorage = true
        blob.preservesValueInHistoryOnDeletion = true
        blob.minimum = .integer(0)
        blob.maximum = .integer(1 << 20)
        var colour = AttributeDescription(name: "colour", type: .transformable)
        colour.valueTransformerName = "ColourTransformer"
        colour.attributeValueClassName = "Colour"
        var scratch = AttributeDescription(name: "scratch", type: .undefined, isTransient: true)
        scratch.defaultValue = .string("tmp")
        var total = AttributeDescription(name: "total", type: .integer64)
        total.derivationExpression = "items.@count"
        attributes += [bounded, real, money, text, when, blob, colour, scratch, total]

        var items = RelationshipDescription(
            name: "items", destination: "Item", inverse: "order", toMany: true, ordered: true,
            deleteRule: .cascade, isOptional: false)
        items.minCount = 1
        items.maxCount = 50
        items.renamingIdentifier = "lines"
        items.versionHashModifier = "x"
        items.isIndexed = true
        items.userInfo = ["k": "v"]
        var customer = RelationshipDescription(name: "customer", destination: "Customer", deleteRule: .deny)
        customer.isTransient = true
        let audit = RelationshipDescription(name: "audit", destination: "Order", deleteRule: .noAction)
        var order = EntityDescription(name: "Order", attributes: attributes, relationships: [items, customer, audit])
        order.representedClassName = "Shop.Order"
        order.codeGenerationType = "class"
        order.renamingIdentifier = "Purchase"
        order.versionHashModifier = "3"
        order.userInfo = ["table": "orders", "empty": ""]
        order.uniquenessConstraints = [["text"], ["bounded", "real"]]
        order.fetchIndexes = [
            FetchIndex(name: "byText", elements: [FetchIndex.Element(property: "text")]),
            FetchIndex(
                name: "byWhen",
                elements: [
                    FetchIndex.Element(property: "when", isAscending: false),
                    FetchIndex.Element(property: "bounded", kind: "R-Tree"),
                ]),
        ]
        var favourites = FetchedPropertyDescription(name: "favourites", entityName: "Item", predicate: "price > 10")
        favourites.userInfo = ["a": "b"]
        var plain = FetchedPropertyDescription(name: "plain", entityName: "Item")
        plain.isOptional = false
        order.fetchedProperties = [plain, favourites]

        let item = EntityDescription(
            name: "Item", attributes: [AttributeDescription(name: "price", type: .double)],
            relationships: [RelationshipDescription(name: "order", destination: "Order", inverse: "items")])
        let special = EntityDescription(name: "SpecialOrder", parent: "Order", isAbstract: true)
        let customerEntity = EntityDescription(name: "Customer")
        var model = ManagedObjectModel(
            entities: [order, item, special, customerEntity],
            configurations: [
                Configuration(name: "Local", entityNames: ["Order", "Item"]),
                Configuration(name: "None", entityNames: []),
            ],
            versionIdentifiers: ["2.0"])
        model.fetchRequestTemplates = [
            FetchRequestTemplate(
                name: "Cheap", entityName: "Item", predicate: "price < $LIMIT",
                settings: ["fetchLimit": "5", "returnDistinctResults": "YES"]),
            FetchRequestTemplate(name: "All", entityName: "Order"),
        ]
        return model
    }
}
