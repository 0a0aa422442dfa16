import Foundation
import TernCore
import TernTestSupport
import Testing

@testable import TernFormats

@Suite struct ModelCacheRoundTripTests {
    @Test(arguments: Fixtures.stores.map(\.path))
    func reencodesEveryFixtureCache(store: String) throws {
        let decoded = try ModelCache.decode(FixtureStoreReader.blobs(ofFixture: store).modelCache)
        let again = try ModelCache.decode(ModelCache.encode(decoded))
        expectEqual(again, decoded)
        #expect(again.entityVersionHashes == decoded.entityVersionHashes)
    }

    @Test(arguments: [Fixtures.sampleModel, Fixtures.sampleModel3, Fixtures.coreDataStackModel])
    func roundTripsEveryXcodeModelVersion(bundle: URL) throws {
        for version in try XcodeModel.readVersionedModel(at: bundle).versions {
            let again = try ModelCache.decode(ModelCache.encode(version.model))
            expectEqual(again, version.model)
        }
    }

    @Test func roundTripsAModelWithEveryOption() throws {
        let model = Self.everyOption()
        let again = try ModelCache.decode(ModelCache.encode(model))
        expectEqual(again, model)
        #expect(again.entityVersionHashes == model.entityVersionHashes)
    }

    @Test func writesAnArchiveFoundationCanRead() throws {
        let archive = try ModelCache.encodeArchive(Self.everyOption())
        let plist = try PropertyListSerialization.propertyList(from: archive, options: [], format: nil)
        let top = try #require(plist as? [String: Any])
        #expect(top["$archiver"] as? String == "NSKeyedArchiver")
        #expect((top["$objects"] as? [Any])?.first as? String == "$null")
    }

    @Test func archivesDerivedExpressionsAsCoreDataDoes() throws {
        // Without Tern's own copy of the text, the archived NSExpression must print the same.
        for text in ["count:(pages)", "now()", "sum:(items.price)", "lowercase:(title)", "owner.name"] {
            var writer = KeyedArchiveWriter()
            let expression = ArchivedExpressionWriter.expression(text, in: &writer)
            let root = writer.object(["NSExpression", "NSObject"], fields: ["e": expression])
            let archived = try KeyedArchive(data: writer.archive(root: root)).rootObject()
            let object = try #require(try archived.object(forKey: "e"))
            #expect(try ArchivedExpression.expressionText(object) == text)
        }
    }

    @Test func archivesPredicatesThatPrintBack() throws {
        for text in ["authorAlias == $ALIAS", "age >= 18 AND name BEGINSWITH[c] \"A\"", "NOT price < 2.5"] {
            var writer = KeyedArchiveWriter()
            let predicate = ArchivedExpressionWriter.predicate(try FetchPredicate(text), in: &writer)
            let archived = try KeyedArchive(data: writer.archive(root: predicate)).rootObject()
            let printed = try ArchivedExpression.predicateText(archived)
            #expect(try FetchPredicate(printed) == FetchPredicate(text), "\(printed)")
        }
    }

    @Test func refusesACyclicInheritance() {
        let model = ManagedObjectModel(entities: [
            EntityDescription(name: "A", parent: "B"), EntityDescription(name: "B", parent: "A"),
        ])
        #expect(throws: TernError.self) { try ModelCache.encode(model) }
        let orphan = ManagedObjectModel(entities: [EntityDescription(name: "A", parent: "Missing")])
        #expect(throws: TernError.self) { try ModelCache.encode(orphan) }
    }

    // MARK: - Helpers

    private func expectEqual(
        _ actual: ManagedObjectModel, _ expected: ManagedObjectModel, sourceLocation: SourceLocation = #_sourceLocation
    ) {
        #expect(actual.entities.map(\.name) == expected.entities.map(\.name), sourceLocation: sourceLocation)
        for (left, right) in zip(actual.entities, expected.entities) {
            #expect(left.attributes == right.attributes, "\(right.name) attributes", sourceLocation: sourceLocation)
            #expect(
                left.relationships == right.relationships, "\(right.name) relationships", sourceLocation: sourceLocation
            )
            #expect(
                left.fetchedProperties == right.fetchedProperties, "\(right.name) fetched",
                sourceLocation: sourceLocation)
            #expect(left == right, "\(right.name)", sourceLocation: sourceLocation)
        }
        #expect(actual == expected, sourceLocation: sourceLocation)
    }

    /// A model that uses every attribute type and every option a model cache can carry.
    static func everyOption() -> ManagedObjectModel {
        var attributes = [AttributeDescription]()
        let defaults: [AttributeType: AttributeValue] = [
            .integer16: .integer(-7), .integer32: .integer(70_000), .integer64: .integer(.max),
            .decimal: .decimal(Decimal(string: "-1234.5678") ?? 0),
            .double: .double(2.5), .float: .double(0.25), .string: .string("Zoë"), .boolean: .bool(true),
            .date: .date(Date(timeIntervalSinceReferenceDate: 737_057_647.288)), .binary: .data(Data([0, 1, 2, 255])),
            .uuid: .uuid(UUID(uuidString: "753753D3-A961-4901-AB05-8CC48B1D3853") ?? UUID()),
            .uri: .uri(URL(string: "https://example.com/a?b=c") ?? URL(fileURLWithPath: "/")),
        ]
        for type in AttributeType.allCases {
            var attribute = AttributeDescription(
                name: "a\(type.rawValue)", type: type, isOptional: type.rawValue % 200 == 0)
            attribute.defaultValue = defaults[type]
            attribute.attributeValueClassName = type == .transformable ? "Color" : nil
            attribute.valueTransformerName = type == .transformable ? "ColorTransformer" : nil
            attribute.isTransient = type == .undefined || type == .objectID
            attributes.append(attribute)
        }
        var text = AttributeDescription(name: "title", type: .string, isOptional: false)
        text.minimum = .integer(3)
        text.maximum = .integer(50)
        text.regularExpression = "[A-Z].*"
        text.renamingIdentifier = "heading"
        text.versionHashModifier = "v2"
        text.userInfo = ["key": "value", "other": "ü"]
        text.isIndexed = true
        text.isIndexedBySpotlight = true
        text.isStoredInExternalRecord = true
        text.allowsCloudEncryption = true
        text.usesScalarValueType = false
        var price = AttributeDescription(name: "price", type: .double, isOptional: false)
        price.minimum = .double(0.5)
        price.maximum = .double(1e6)
        var blob = AttributeDescription(name: "photo", type: .binary)
        blob.allowsExternalBinaryDataStorage = true
        blob.preservesValueInHistoryOnDeletion = true
        var when = AttributeDescription(name: "due", type: .date)
        when.minimum = .date(Date(timeIntervalSinceReferenceDate: 0))
        var total = AttributeDescription(name: "total", type: .integer64)
        total.derivationExpression = "count:(items)"
        var updated = AttributeDescription(name: "updated", type: .date)
        updated.derivationExpression = "now()"
        attributes += [text, price, blob, when, total, updated]

        var items = RelationshipDescription(
            name: "items", destination: "Item", inverse: "owner", toMany: true, ordered: true, deleteRule: .cascade)
        items.minCount = 1
        items.maxCount = 20
        items.userInfo = ["note": "ordered"]
        items.isIndexed = true
        var owner = RelationshipDescription(
            name: "owner", destination: "Thing", inverse: "items", deleteRule: .deny, isOptional: false)
        owner.renamingIdentifier = "parent"
        owner.versionHashModifier = "x"
        var scratch = RelationshipDescription(name: "scratch", destination: "Item", toMany: true, deleteRule: .noAction)
        scratch.isTransient = true

        var thing = EntityDescription(
            name: "Thing", isAbstract: true, attributes: attributes, relationships: [items, scratch])
        thing.uniquenessConstraints = [["title"], ["a100", "a200"]]
        thing.fetchIndexes = [
            FetchIndex(
                name: "byTitle", elements: [.init(property: "title"), .init(property: "price", isAscending: false)])
        ]
        thing.versionHashModifier = "thing"
        thing.renamingIdentifier = "OldThing"
        thing.representedClassName = "Thing"
        thing.codeGenerationType = "class"
        thing.userInfo = ["entity": "info"]
        var cheap = FetchedPropertyDescription(
            name: "cheapItems", entityName: "Item", predicate: "cost < $FETCH_SOURCE.price")
        cheap.userInfo = ["k": "v"]
        thing.fetchedProperties = [cheap]

        var gadget = EntityDescription(name: "Gadget", parent: "Thing")
        gadget.attributes = [
            AttributeDescription(name: "gear", type: .integer16, isOptional: false, defaultValue: .integer(3))
        ]
        let item = EntityDescription(
            name: "Item", attributes: [AttributeDescription(name: "cost", type: .decimal)], relationships: [owner])

        var model = ManagedObjectModel(
            entities: [thing, gadget, item],
            configurations: [Configuration(name: "Cloud", entityNames: ["Item", "Gadget"])],
            versionIdentifiers: ["2", "beta"])
        model.fetchRequestTemplates = [
            FetchRequestTemplate(
                name: "expensive", entityName: "Item", predicate: "cost > $LIMIT", settings: ["fetchLimit": "10"])
        ]
        return model
    }
}

/// Tern's archives against Core Data's: the same classes with the same keys.
@Suite struct ModelCacheArchiveLayoutTests {
    @Test(arguments: Fixtures.stores.map(\.path))
    func writesTheKeysCoreDataWrites(store: String) throws {
        let original = try Deflate.inflateRaw(FixtureStoreReader.blobs(ofFixture: store).modelCache)
        let rewritten = try ModelCache.encodeArchive(ModelCache.decodeArchive(original))
        let expected = try Self.keysByClass(original)
        let actual = try Self.keysByClass(rewritten)
        for (className, keys) in expected.sorted(by: { $0.key < $1.key }) where Self.modelClasses.contains(className) {
            // Tern keeps only the regular expression, minimum and maximum of validation rules, and
            // writes the limits in NSFlagsKey: SampleModel2's custom rules with warnings are lost.
            let written = (actual[className] ?? []).union(["NSValidationPredicates", "NSValidationWarnings"])
            #expect(keys.subtracting(written).isEmpty, "\(className) lacks \(keys.subtracting(written).sorted())")
        }
    }

    static let modelClasses: Set<String> = [
        "NSManagedObjectModel", "NSEntityDescription", "NSAttributeDescription", "NSDerivedAttributeDescription",
        "NSRelationshipDescription", "NSFetchedPropertyDescription", "NSKnownKeysDictionary1",
        "NSKnownKeysMappingStrategy1",
        "NSFetchIndexDescription", "NSFetchIndexElementDescription",
    ]

    /// For each class in an archive, the keys its objects use.
    static func keysByClass(_ archive: Data) throws -> [String: Set<String>] {
        let keyed = try KeyedArchive(data: archive)
        var result = [String: Set<String>]()
        for (index, raw) in keyed.objects.enumerated() {
            guard case .dictionary(let fields) = raw, fields["$class"] != nil else { continue }
            guard case .object(let object) = try keyed.resolve(.uid(UInt64(index))) else { continue }
            result[object.className, default: []].formUnion(object.fields.keys)
        }
        return result
    }
}
