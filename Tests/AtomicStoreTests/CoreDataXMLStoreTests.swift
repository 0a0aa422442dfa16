import Foundation
import TernCore
import TernTestSupport
import TernXMLStore
import Testing

/// XML stores in Core Data's own format: written by macOS (Xcode's mapping models are Core
/// Data XML stores), hand-written the way Core Data writes, and Tern's version 1 documents.
@Suite struct CoreDataXMLStoreTests {
    /// The entities of Xcode's mapping models (`XDDevMappingModel` and its parts), as far as the
    /// corpus's `xcmapping.xml` files show them: names camel-cased as Core Data lower-cases them.
    static let mappingModel: ManagedObjectModel = {
        func string(_ name: String) -> AttributeDescription { AttributeDescription(name: name, type: .string) }
        func binary(_ name: String) -> AttributeDescription { AttributeDescription(name: name, type: .binary) }
        func relation(_ name: String, _ destination: String, _ inverse: String, many: Bool = false)
            -> RelationshipDescription
        {
            RelationshipDescription(name: name, destination: destination, inverse: inverse, toMany: many)
        }
        return ManagedObjectModel(entities: [
            EntityDescription(
                name: "XDDevMappingModel",
                attributes: [
                    string("sourceModelPath"), binary("sourceModelData"), string("destinationModelPath"),
                    binary("destinationModelData"),
                ],
                relationships: [relation("entityMappings", "XDDevEntityMapping", "mappingModel", many: true)]),
            EntityDescription(
                name: "XDDevEntityMapping",
                attributes: [
                    string("name"), string("sourceName"), string("destinationName"), string("mappingTypeName"),
                    AttributeDescription(name: "mappingNumber", type: .integer16),
                    AttributeDescription(name: "autogenerateExpression", type: .boolean),
                    string("migrationPolicyClassName"), string("sourceFilterPredicateString"), binary("userInfoData"),
                ],
                relationships: [
                    relation("mappingModel", "XDDevMappingModel", "entityMappings"),
                    relation("attributeMappings", "XDDevAttributeMapping", "entityMapping", many: true),
                    relation("relationshipMappings", "XDDevRelationshipMapping", "entityMapping", many: true),
                ]),
            EntityDescription(
                name: "XDDevPropertyMapping", isAbstract: true,
                attributes: [string("name"), binary("valueExpressionData")],
                relationships: [relation("entityMapping", "XDDevEntityMapping", "attributeMappings")]),
            EntityDescription(name: "XDDevAttributeMapping", parent: "XDDevPropertyMapping"),
            EntityDescription(
                name: "XDDevRelationshipMapping", parent: "XDDevPropertyMapping",
                attributes: [
                    AttributeDescription(name: "autogenerateExpression", type: .boolean),
                    string("sourceKeyPath"), string("sourceMappingName"),
                ]),
        ])
    }()

    @Test func storesWrittenByMacOSOpen() async throws {
        let items = try RealWorldCorpus.items(of: .mappingModel)
        var opened = 0
        for item in items {
            let url = item.url.appendingPathComponent("xcmapping.xml")
            guard FileManager.default.fileExists(atPath: url.path) else { continue }
            let store = try XMLStore(at: url, model: Self.mappingModel, isReadOnly: true)
            let metadata = try XMLStore.metadata(at: url)
            #expect(metadata.storeType == "XML" && metadata.uuid == store.identifier, "\(item)")
            #expect(metadata.versionHashes.keys.sorted() == Self.mappingModel.entities.map(\.name).sorted(), "\(item)")
            let models = try await store.fetch(StoreFetchRequest(entityName: "XDDevMappingModel"))
            #expect(models.count == 1, "\(item)")
            let model = try #require(models.first)
            guard case .data(let source)? = model.attributes["sourceModelData"] else {
                Issue.record("\(item): no source model data")
                continue
            }
            #expect(source.starts(with: Data("bplist00".utf8)), "\(item)")  // a keyed archive of the model
            // Xcode leaves objects no longer in use in the file (LoopKit's holds 16 entity mappings
            // without a mapping model): the mapping model's are those pointing back at it.
            let entityMappings = try await store.fetch(StoreFetchRequest(entityName: "XDDevEntityMapping"))
            let used = Set(entityMappings.filter { $0.toOne["mappingModel"] != nil }.map(\.reference))
            #expect(Set(model.toMany["entityMappings"] ?? []) == used, "\(item)")
            #expect(!used.isEmpty, "\(item)")
            for mapping in entityMappings {
                #expect(mapping.toOne["mappingModel"].map { $0 == model.reference } ?? true, "\(item)")
                if case .integer(let number)? = mapping.attributes["mappingNumber"] { #expect(number >= 0) }
                #expect(
                    mapping.attributes["autogenerateExpression"].map {
                        [AttributeValue.bool(true), .bool(false)].contains($0)
                    } ?? true)
            }
            // Subentities of the abstract property mapping, each pointing back at its entity mapping.
            let properties = try await store.fetch(StoreFetchRequest(entityName: "XDDevPropertyMapping"))
            let owners = Dictionary(uniqueKeysWithValues: entityMappings.map { ($0.reference, $0) })
            for property in properties {
                guard let reference = property.toOne["entityMapping"] else { continue }
                let owner = try #require(owners[reference], "\(item)")
                let key =
                    property.reference.entityName == "XDDevAttributeMapping"
                    ? "attributeMappings" : "relationshipMappings"
                #expect(owner.toMany[key]?.contains(property.reference) == true, "\(item)")
            }
            opened += 1
        }
        #expect(opened >= 36)
    }

    @Test func aStoreOfAMacOSAppOpensAndKeepsCoreDataNamingWhenSaved() async throws {
        let model = ManagedObjectModel(entities: [
            EntityDescription(
                name: "Vehicle",
                attributes: [
                    AttributeDescription(name: "make", type: .string),
                    AttributeDescription(name: "year", type: .integer32),
                    AttributeDescription(name: "boughtOn", type: .date),
                    AttributeDescription(name: "price", type: .decimal),
                ],
                relationships: [
                    RelationshipDescription(
                        name: "vehiclePictures", destination: "VehiclePicture", inverse: "picturesForVehicle",
                        toMany: true,
                        ordered: true)
                ]),
            EntityDescription(
                name: "VehiclePicture", attributes: [AttributeDescription(name: "pictureName", type: .string)],
                relationships: [
                    RelationshipDescription(
                        name: "picturesForVehicle", destination: "Vehicle", inverse: "vehiclePictures", toMany: false)
                ]),
        ])
        let text = """
            <?xml version="1.0"?>
            <!DOCTYPE database SYSTEM "file:///System/Library/DTDs/CoreData.dtd">

            <database>
                <databaseInfo>
                    <version>134481920</version>
                    <UUID>343C8D7F-A000-42C4-8463-43FA1E5EF3FB</UUID>
                    <nextObjectID>105</nextObjectID>
                    <metadata></metadata>
                </databaseInfo>
                <object type="VEHICLEPICTURE" id="z103">
                    <attribute name="picturename" type="string">picture_1</attribute>
                    <relationship name="picturesforvehicle" type="1/1" destination="VEHICLE" idrefs="z102"></relationship>
                </object>
                <object type="VEHICLEPICTURE" id="z104">
                    <attribute name="picturename" type="string">picture_2 &amp; more</attribute>
                    <relationship name="picturesforvehicle" type="1/1" destination="VEHICLE" idrefs="z102"></relationship>
                </object>
                <object type="VEHICLE" id="z102">
                    <attribute name="make" type="string">manufacturer</attribute>
                    <attribute name="year" type="int32">2006</attribute>
                    <attribute name="boughton" type="date">336046917.00164198875427246094</attribute>
                    <attribute name="price" type="decimal">12999.95</attribute>
                    <attribute name="unknown" type="string">a property the model lacks is skipped</attribute>
                    <relationship name="vehiclepictures" type="0/0" destination="VEHICLEPICTURE" idrefs="z104 z103"></relationship>
                </object>
            </database>
            """
        let tmp = try TemporaryDirectory()
        let url = tmp.path("Vehicles.xml")
        try Data(text.utf8).write(to: url)
        let store = try XMLStore(at: url, model: model)
        #expect(store.identifier == "343C8D7F-A000-42C4-8463-43FA1E5EF3FB")
        let vehicle = try #require(try await store.fetch(StoreFetchRequest(entityName: "Vehicle")).first)
        let car = RowReference(entityName: "Vehicle", primaryKey: 102)
        let pictures = [104, 103].map { RowReference(entityName: "VehiclePicture", primaryKey: $0) }
        #expect(
            vehicle
                == StoreRow(
                    reference: car, version: 1,
                    attributes: [
                        "make": .string("manufacturer"), "year": .integer(2006),
                        "boughtOn": .date(Date(timeIntervalSinceReferenceDate: 336_046_917.001_641_988_754_272_460_94)),
                        "price": .decimal(Decimal(string: "12999.95")!),
                    ],
                    toMany: ["vehiclePictures": pictures]))
        let read = try await store.fetch(StoreFetchRequest(entityName: "VehiclePicture"))
        #expect(read.map(\.toOne) == [["picturesForVehicle": car], ["picturesForVehicle": car]])
        #expect(read.last?.attributes["pictureName"] == .string("picture_2 & more"))

        // New keys follow nextObjectID, whatever the entity: ids are unique across the store.
        let pictureKeys = try await store.newPrimaryKeys(forEntity: "VehiclePicture", count: 1)
        let vehicleKeys = try await store.newPrimaryKeys(forEntity: "Vehicle", count: 1)
        #expect(pictureKeys == [106] && vehicleKeys == [107])
        var renamed = vehicle
        renamed.attributes["make"] = .string("Saab")
        _ = try await store.save(
            StoreChangeSet(
                inserted: [StoreRow(reference: RowReference(entityName: "Vehicle", primaryKey: 107))],
                updated: [renamed]))
        let written = String(decoding: try Data(contentsOf: url), as: UTF8.self)
        #expect(
            written.contains(
                """
                    <object type="VEHICLE" id="z102">
                        <attribute name="boughton" type="date">336046917.00164198875427246094</attribute>
                        <attribute name="make" type="string">Saab</attribute>
                        <attribute name="price" type="decimal">12999.95</attribute>
                        <attribute name="year" type="int32">2006</attribute>
                        <relationship name="vehiclepictures" type="0/0" destination="VEHICLEPICTURE" idrefs="z104 z103"></relationship>
                    </object>
                """))
        #expect(written.contains("<nextObjectID>107</nextObjectID>"))
        #expect(
            written.contains(
                """
                    <object type="VEHICLE" id="z107">
                        <relationship name="vehiclepictures" type="0/0" destination="VEHICLEPICTURE"></relationship>
                    </object>
                """))
    }

    @Test func namesThatCollideWithoutCaseAreWrittenAsTheModelSpellsThem() async throws {
        let model = ManagedObjectModel(entities: [
            EntityDescription(
                name: "Item",
                attributes: [
                    AttributeDescription(name: "url", type: .string), AttributeDescription(name: "URL", type: .uri),
                    AttributeDescription(name: "title", type: .string),
                ]),
            EntityDescription(name: "ITEM", attributes: [AttributeDescription(name: "title", type: .string)]),
            EntityDescription(name: "Other", attributes: [AttributeDescription(name: "title", type: .string)]),
        ])
        let tmp = try TemporaryDirectory()
        let url = tmp.path("store.xml")
        let store = try XMLStore(at: url, model: model)
        let rows = [
            StoreRow(
                reference: RowReference(entityName: "Item", primaryKey: 1),
                attributes: [
                    "url": .string("text"), "URL": .uri(URL(string: "https://example.com/a")!), "title": .string("a"),
                ]),
            StoreRow(reference: RowReference(entityName: "ITEM", primaryKey: 2), attributes: ["title": .string("b")]),
            StoreRow(reference: RowReference(entityName: "Other", primaryKey: 3), attributes: ["title": .string("c")]),
        ]
        _ = try await store.save(StoreChangeSet(inserted: rows))
        let text = String(decoding: try Data(contentsOf: url), as: UTF8.self)
        #expect(text.contains("<object type=\"Item\" id=\"z1\">") && text.contains("<object type=\"ITEM\" id=\"z2\">"))
        #expect(text.contains("<attribute name=\"url\" type=\"string\">text</attribute>"))
        #expect(text.contains("<attribute name=\"URL\" type=\"uri\">https://example.com/a</attribute>"))
        #expect(text.contains("<attribute name=\"title\" type=\"string\">a</attribute>"))
        #expect(text.contains("<object type=\"OTHER\" id=\"z3\">"))
        let reopened = try XMLStore(at: url, model: model)
        #expect(
            try await reopened.allRows()
                == rows.map {
                    var row = $0
                    row.version = 1
                    return row
                })
    }

    @Test func whatCannotBeReadIsRefusedNamingTheObjectEntityAndProperty() throws {
        let model = ManagedObjectModel(entities: [
            EntityDescription(
                name: "Thing", attributes: [AttributeDescription(name: "count", type: .integer16)],
                relationships: [
                    RelationshipDescription(name: "other", destination: "Thing", inverse: nil, toMany: false)
                ])
        ])
        func refusal(_ objects: String) throws -> TernError? {
            let tmp = try TemporaryDirectory()
            let url = tmp.path("store.xml")
            try Data("<database><databaseInfo><UUID>U</UUID></databaseInfo>\(objects)</database>".utf8).write(to: url)
            do {
                _ = try XMLStore(at: url, model: model, isReadOnly: true)
                return nil
            } catch let error as TernError {
                #expect(error.code == .unreadableStore && error.path == url.path)
                return error
            }
        }
        let badValue = try refusal(
            #"<object type="THING" id="z1"><attribute name="count" type="int16">many</attribute></object>"#)
        #expect(badValue?.entityName == "Thing" && badValue?.propertyName == "count")
        #expect(badValue?.message.contains("object z1") == true && badValue?.message.contains("Integer 16") == true)
        let twoTargets = try refusal(
            #"""
            <object type="THING" id="z1"><relationship name="other" type="1/1" destination="THING" idrefs="z1 z2"></relationship></object>
            <object type="THING" id="z2"></object>
            """#)
        #expect(twoTargets?.propertyName == "other" && twoTargets?.message.contains("to-one") == true)
        let unknown = try refusal(#"<object type="GADGET" id="z1"></object>"#)
        #expect(unknown?.entityName == "GADGET" && unknown?.message.contains("object z1") == true)
        // Lenient: a Boolean's spellings, ids that are not z and a number, file types other than the model's.
        #expect(
            try refusal(
                #"""
                <object type="Thing" id="first"><attribute name="COUNT" type="string">7</attribute></object>
                <object type="thing" id="z9"><relationship name="other" type="1/1" destination="THING" idrefs="first"></relationship></object>
                """#) == nil)
    }

    @Test func tern1DocumentsOpenAndAreWrittenInCoreDataFormatWhenSaved() async throws {
        let text = """
            <?xml version="1.0" encoding="UTF-8"?>
            <database format="Tern" version="1">
             <databaseInfo>
              <UUID>V1-UUID</UUID>
              <metadata>
               <dict>
                <key>NSStoreType</key>
                <string>XML</string>
               </dict>
              </metadata>
              <primaryKeys>
               <lastKey root="Person">3</lastKey>
               <lastKey root="Pet">3</lastKey>
              </primaryKeys>
             </databaseInfo>
             <object type="Person" pk="3" version="2">
              <attribute name="name" type="string">Ann</attribute>
              <relationship name="pets" kind="to-many" idrefs="Pet/p3"/>
             </object>
             <object type="Pet" pk="3" version="1">
              <attribute name="name" type="string" encoding="base64">bnVsAGluc2lkZQ==</attribute>
              <relationship name="owner" kind="to-one" idrefs="Person/p3"/>
             </object>
            </database>
            """
        let tmp = try TemporaryDirectory()
        let url = tmp.path("old.xml")
        try Data(text.utf8).write(to: url)
        #expect(try XMLStore.metadata(at: url).uuid == "V1-UUID")
        let store = try XMLStore(at: url, model: ConformanceModel.model)
        let person = RowReference(entityName: "Person", primaryKey: 3)
        let pet = RowReference(entityName: "Pet", primaryKey: 3)
        #expect(
            try await store.allRows() == [
                StoreRow(reference: person, version: 2, attributes: ["name": .string("Ann")], toMany: ["pets": [pet]]),
                StoreRow(
                    reference: pet, version: 1, attributes: ["name": .string("nul\u{0}inside")],
                    toOne: ["owner": person]),
            ])
        // Saved, the file is Core Data's; the Pet's key 3, already the Person's, is written z3-2.
        _ = try await store.save(StoreChangeSet())
        let written = String(decoding: try Data(contentsOf: url), as: UTF8.self)
        #expect(written.hasPrefix("<?xml version=\"1.0\" standalone=\"yes\"?>"))
        #expect(
            written.contains("<object type=\"PERSON\" id=\"z3\">")
                && written.contains("<object type=\"PET\" id=\"z3-2\">"))
        #expect(written.contains("idrefs=\"z3-2\"") && written.contains("<nextObjectID>3</nextObjectID>"))
        let reopened = try XMLStore(at: url, model: ConformanceModel.model)
        #expect(try await reopened.allRows().map(\.reference) == [person, pet])
        #expect(try await reopened.newPrimaryKeys(forEntity: "Pet", count: 1) == [4])
    }
}
