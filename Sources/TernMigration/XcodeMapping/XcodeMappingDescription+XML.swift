import Foundation
import TernCore
import TernFormats

/// Reading and writing `xcmapping.xml`, the document inside an `.xcmappingmodel` bundle: a Core
/// Data XML store whose objects are Xcode's `XDDevMappingModel`, `XDDevEntityMapping`,
/// `XDDevAttributeMapping` and `XDDevRelationshipMapping`.
///
/// The document is read and written with ``CoreDataXMLDocument``; this file knows only what
/// mapping models hold: string, int16, bool and binary attributes, and relationships by `idrefs`.
extension XcodeMappingDescription {
    /// The name of the document inside a mapping model bundle.
    static let documentName = "xcmapping.xml"

    // MARK: - Reading

    /// Reads an `xcmapping.xml` document.
    ///
    /// - Parameters:
    ///   - xmlData: The document's bytes.
    ///   - name: The mapping model's name.
    ///   - path: The bundle's path, for messages.
    /// - Throws: ``MigrationError`` with code ``MigrationError/Code/unreadableMappingFile`` when
    ///   the XML is malformed or holds no `XDDEVMAPPINGMODEL` object.
    /// - Complexity: O(*n*) in the size of the document.
    init(xmlData: Data, name: String, path: String) throws(MigrationError) {
        var limits = CoreDataXMLDocument.storeLimits
        limits.code = .corruptArchive
        limits.documentName = "mapping model"
        let document: CoreDataXMLDocument
        do { document = try CoreDataXMLDocument(data: xmlData, path: path, limits: limits) } catch {
            throw MigrationError.unreadableXcodeMapping(error.message, path: path)
        }
        var objects: [String: StoredObject] = [:]
        var order: [String] = []
        for object in document.objects {
            objects[object.id] = StoredObject(object)
            order.append(object.id)
        }
        guard let modelID = order.first(where: { objects[$0]?.type == "XDDEVMAPPINGMODEL" }),
            let model = objects[modelID]
        else {
            throw MigrationError.unreadableXcodeMapping(
                "\(Self.documentName) holds no XDDevMappingModel object", path: path)
        }
        var entityIDs = model.references("entitymappings")
        // An entity mapping whose mapping model is gone was deleted in Xcode, which leaves it in the store; it does not run.
        for id in order
        where objects[id]?.type == "XDDEVENTITYMAPPING" && !entityIDs.contains(id)
            && objects[id]?.references("mappingmodel") == [modelID]
        {
            entityIDs.append(id)
        }
        var entities: [(number: Int, position: Int, mapping: EntityMappingDescription)] = []
        for (position, id) in entityIDs.enumerated() {
            guard let object = objects[id], object.type == "XDDEVENTITYMAPPING" else { continue }
            let mapping = try Self.entityMapping(object, objects: objects, path: path)
            entities.append((Int(object.string("mappingnumber") ?? "") ?? Int.max, position, mapping))
        }
        entities.sort { ($0.number, $0.position) < ($1.number, $1.position) }
        self.init(
            name: name, path: path, sourceModelPath: model.string("sourcemodelpath"),
            destinationModelPath: model.string("destinationmodelpath"), entityMappings: entities.map(\.mapping))
        sourceModelHashes = Self.embeddedHashes(model.binary("sourcemodeldata"))
        destinationModelHashes = Self.embeddedHashes(model.binary("destinationmodeldata"))
    }

    /// The entity version hashes of a model Xcode embeds in a mapping model: an archive of its
    /// own model classes, as in an Xcode 3 `elements` file. Nil when it cannot be read, for the
    /// model paths then name the versions.
    private static func embeddedHashes(_ data: Data?) -> [String: Data]? {
        guard let data, !data.isEmpty else { return nil }
        var warnings: [ModelReadingWarning] = []
        return try? XcodeModel.model(fromElements: data, warnings: &warnings).entityVersionHashes
    }

    // MARK: - Writing

    /// The mapping model as an `xcmapping.xml` document, as Xcode writes it.
    ///
    /// - Parameter uuid: The store's UUID (fixed in tests).
    /// - Returns: UTF-8 XML.
    /// - Throws: ``MigrationError`` with code ``MigrationError/Code/unreadableMappingFile`` when
    ///   a name holds characters XML cannot hold.
    /// - Complexity: O(*n*) in the size of the mapping model.
    func xmlData(uuid: UUID = UUID()) throws(MigrationError) -> Data {
        typealias Object = CoreDataXMLDocument.Object
        typealias Attribute = CoreDataXMLDocument.Attribute
        typealias Relationship = CoreDataXMLDocument.Relationship
        var objects: [Object] = []
        var nextID = 101
        func newID() -> String {
            defer { nextID += 1 }
            return "z\(nextID)"
        }
        func binary(_ name: String, _ data: Data) -> Attribute {
            Attribute(
                name: name, type: "binary",
                text: data.base64EncodedString(options: [.lineLength76Characters, .endLineWithLineFeed]) + "\n")
        }
        let modelID = newID()
        var entityIDs: [String] = []
        for (number, mapping) in entityMappings.enumerated() {
            let entityID = newID()
            entityIDs.append(entityID)
            var propertyIDs: [[String]] = [[], []]
            for (kind, properties) in [mapping.attributeMappings, mapping.relationshipMappings].enumerated() {
                for property in properties {
                    let id = newID()
                    propertyIDs[kind].append(id)
                    var attributes: [Attribute] = []
                    if let expression = property.expression {
                        attributes.append(binary("valueexpressiondata", expression.archivedData()))
                    }
                    if property.autogenerates {
                        attributes.append(Attribute(name: "autogenerateexpression", type: "bool", text: "1"))
                    }
                    if let name = property.sourceMappingName {
                        attributes.append(Attribute(name: "sourcemappingname", type: "string", text: name))
                    }
                    if let keyPath = property.sourceKeyPath {
                        attributes.append(Attribute(name: "sourcekeypath", type: "string", text: keyPath))
                    }
                    if !property.userInfo.isEmpty {
                        attributes.append(binary("userinfodata", Self.archivedUserInfo(property.userInfo)))
                    }
                    attributes.append(Attribute(name: "name", type: "string", text: property.name))
                    objects.append(
                        Object(
                            type: kind == 0 ? "XDDEVATTRIBUTEMAPPING" : "XDDEVRELATIONSHIPMAPPING", id: id,
                            attributes: attributes,
                            relationships: [
                                Relationship(
                                    name: "entitymapping", type: "1/1", destination: "XDDEVENTITYMAPPING",
                                    idrefs: [entityID])
                            ]))
                }
            }
            var attributes: [Attribute] = []
            func string(_ name: String, _ value: String?) {
                if let value { attributes.append(Attribute(name: name, type: "string", text: value)) }
            }
            string("name", mapping.name)
            string("sourcefilterpredicatestring", mapping.filterPredicate)
            string("migrationpolicyclassname", mapping.policyClassName)
            string("sourcename", mapping.sourceEntityName)
            string("mappingtypename", mapping.type.xcodeName)
            attributes.append(Attribute(name: "mappingnumber", type: "int16", text: String(number + 1)))
            string("destinationname", mapping.destinationEntityName)
            attributes.append(Attribute(name: "autogenerateexpression", type: "bool", text: "1"))
            if !mapping.userInfo.isEmpty {
                attributes.append(binary("userinfodata", Self.archivedUserInfo(mapping.userInfo)))
            }
            objects.append(
                Object(
                    type: "XDDEVENTITYMAPPING", id: entityID, attributes: attributes,
                    relationships: [
                        Relationship(
                            name: "mappingmodel", type: "1/1", destination: "XDDEVMAPPINGMODEL", idrefs: [modelID]),
                        Relationship(
                            name: "attributemappings", type: "0/0", destination: "XDDEVATTRIBUTEMAPPING",
                            idrefs: propertyIDs[0]),
                        Relationship(
                            name: "relationshipmappings", type: "0/0", destination: "XDDEVRELATIONSHIPMAPPING",
                            idrefs: propertyIDs[1]),
                    ]))
        }
        var modelAttributes: [Attribute] = []
        if let source = sourceModelPath {
            modelAttributes.append(Attribute(name: "sourcemodelpath", type: "string", text: source))
        }
        if let destination = destinationModelPath {
            modelAttributes.append(Attribute(name: "destinationmodelpath", type: "string", text: destination))
        }
        objects.append(
            Object(
                type: "XDDEVMAPPINGMODEL", id: modelID, attributes: modelAttributes,
                relationships: [
                    Relationship(
                        name: "entitymappings", type: "0/0", destination: "XDDEVENTITYMAPPING", idrefs: entityIDs)
                ]))
        var hashes: [String: PropertyListValue] = [:]
        for (name, hash) in Self.schemaHashes { hashes[name] = .data(Data(base64Encoded: hash) ?? Data()) }
        let metadata: [String: PropertyListValue] = [
            "NSPersistenceFrameworkVersion": .integer(754), "NSStoreModelVersionHashes": .dictionary(hashes),
            "NSStoreModelVersionHashesVersion": .integer(3), "NSStoreModelVersionIdentifiers": .array([.string("")]),
        ]
        let document = CoreDataXMLDocument(
            info: CoreDataXMLDocument.DatabaseInfo(
                uuid: uuid.uuidString, nextObjectID: Int64(nextID - 1), metadata: metadata),
            objects: objects)
        do { return try document.encoded() } catch {
            throw MigrationError.unreadableXcodeMapping(error.message, path: path)
        }
    }

    // MARK: - Non public

    /// One `<object>` of the store: its type and its attribute and relationship elements by name.
    private struct StoredObject {
        let type: String
        let attributes: [String: String]
        let relationships: [String: [String]]

        init(_ object: CoreDataXMLDocument.Object) {
            type = object.type.uppercased()
            attributes = Dictionary(
                object.attributes.map { ($0.name, $0.text) }, uniquingKeysWith: { first, _ in first })
            relationships = Dictionary(
                object.relationships.map { ($0.name, $0.idrefs) }, uniquingKeysWith: { first, _ in first })
        }

        func string(_ name: String) -> String? { attributes[name] }
        func references(_ name: String) -> [String] { relationships[name] ?? [] }
        func flag(_ name: String) -> Bool {
            ["1", "YES", "true"].contains(attributes[name]?.trimmingCharacters(in: .whitespaces) ?? "")
        }

        /// The bytes of a binary attribute, base64 in the XML.
        func binary(_ name: String) -> Data? {
            attributes[name].flatMap { Data(base64Encoded: $0, options: .ignoreUnknownCharacters) }
        }
    }

    private static func entityMapping(
        _ object: StoredObject, objects: [String: StoredObject], path: String
    ) throws(MigrationError) -> EntityMappingDescription {
        let typeName = object.string("mappingtypename") ?? "Undefined"
        var mapping = EntityMappingDescription(
            name: object.string("name"), type: EntityMappingDescription.MappingType(xcodeName: typeName) ?? .undefined,
            sourceEntityName: nonEmpty(object.string("sourcename")),
            destinationEntityName: nonEmpty(object.string("destinationname")),
            filterPredicate: nonEmpty(object.string("sourcefilterpredicatestring")),
            policyClassName: nonEmpty(object.string("migrationpolicyclassname")))
        mapping.userInfo = try userInfo(object.binary("userinfodata"), path: path)
        for (key, kind) in [
            ("attributemappings", "XDDEVATTRIBUTEMAPPING"), ("relationshipmappings", "XDDEVRELATIONSHIPMAPPING"),
        ] {
            var properties: [PropertyMappingDescription] = []
            for id in object.references(key) {
                guard let property = objects[id], property.type == kind, let name = property.string("name") else {
                    continue
                }
                var expression: ExpressionNode?
                if let data = property.binary("valueexpressiondata"), !data.isEmpty {
                    do { expression = try ExpressionNode(archivedData: data) } catch {
                        throw MigrationError.unreadableXcodeMapping(
                            "the value expression of \(mapping.destinationEntityName ?? "?").\(name) is not an archived "
                                + "NSExpression (\(reason(error)))", path: path)
                    }
                }
                properties.append(
                    PropertyMappingDescription(
                        name: name, expression: expression, autogenerates: property.flag("autogenerateexpression"),
                        userInfo: try userInfo(property.binary("userinfodata"), path: path),
                        sourceMappingName: nonEmpty(property.string("sourcemappingname")),
                        sourceKeyPath: nonEmpty(property.string("sourcekeypath"))))
            }
            properties.sort { $0.name < $1.name }
            if kind == "XDDEVATTRIBUTEMAPPING" {
                mapping.attributeMappings = properties
            } else {
                mapping.relationshipMappings = properties
            }
        }
        return mapping
    }

    private static func nonEmpty(_ text: String?) -> String? {
        guard let text, !text.isEmpty else { return nil }
        return text
    }

    private static func userInfo(_ data: Data?, path: String) throws(MigrationError) -> [String: String] {
        guard let data, !data.isEmpty else { return [:] }
        do {
            let archive = try KeyedArchive(data: data)
            guard case .object = try archive.resolve(.uid(UInt64(archive.rootUID))) else { return [:] }
            return try userInfo(.object(archive.rootObject()))
        } catch {
            throw MigrationError.unreadableXcodeMapping(
                "a user info is not an archived dictionary (\(reason(error)))", path: path)
        }
    }

    /// A user info dictionary as the keyed archive Xcode keeps in `userinfodata`.
    static func archivedUserInfo(_ userInfo: [String: String]) -> Data {
        var writer = KeyedArchiveWriter()
        let entries = userInfo.sorted { $0.key < $1.key }.map { (key: $0.key, value: writer.string($0.value)) }
        let root = writer.dictionary(entries, classes: ["NSMutableDictionary", "NSDictionary", "NSObject"])
        return writer.archive(root: root)
    }

    /// The entity version hashes of Xcode's mapping model schema, as every `xcmapping.xml` records them.
    private static let schemaHashes = [
        ("XDDevAttributeMapping", "0plcXXRN7XHKl5CcF+fwriFmUpON3ZtcI/AfK748aWc="),
        ("XDDevEntityMapping", "qeN1Ym3TkWN1G6dU9RfX6Kd2ccEvcDVWHpd3LpLgboI="),
        ("XDDevMappingModel", "EqtMzvRnVZWkXwBHu4VeVGy8UyoOe+bi67KC79kphlQ="),
        ("XDDevPropertyMapping", "XN33V44TTGY4JETlMoOB5yyTKxB+u4slvDIinv0rtGA="),
        ("XDDevRelationshipMapping", "akYY9LhehVA/mCb4ATLWuI9XGLcjpm14wWL1oEBtIcs="),
    ]
}
