import Foundation
import TernCore
import TernFormats

/// Reading and writing `xcmapping.xml`, the document inside an `.xcmappingmodel` bundle: a Core
/// Data XML store whose objects are Xcode's `XDDevMappingModel`, `XDDevEntityMapping`,
/// `XDDevAttributeMapping` and `XDDevRelationshipMapping`.
///
/// This reads the store's `<object>` elements with ``XMLElementTree`` in this one file, and
/// knows only what mapping models hold: string, int16, bool and binary attributes, and
/// relationships by `idrefs`. (A generic Core Data XML store reader would take its place.)
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
        var limits = XMLElementTree.Limits()
        limits.code = .corruptArchive
        limits.documentName = "mapping model"
        let root: XMLElementTree
        do { root = try XMLElementTree.parse(xmlData, path: path, limits: limits) } catch {
            throw MigrationError.unreadableXcodeMapping(error.message, path: path)
        }
        var objects: [String: StoredObject] = [:]
        var order: [String] = []
        for element in root.children(named: "object") {
            guard let id = element[attribute: "id"], let type = element[attribute: "type"] else { continue }
            objects[id] = StoredObject(element: element, type: type.uppercased())
            order.append(id)
        }
        guard let modelID = order.first(where: { objects[$0]?.type == "XDDEVMAPPINGMODEL" }), let model = objects[modelID] else {
            throw MigrationError.unreadableXcodeMapping("\(Self.documentName) holds no XDDevMappingModel object", path: path)
        }
        var entityIDs = model.references("entitymappings")
        // An entity mapping whose mapping model is gone was deleted in Xcode, which leaves it in the store; it does not run.
        for id in order where objects[id]?.type == "XDDEVENTITYMAPPING" && !entityIDs.contains(id)
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
    /// - Complexity: O(*n*) in the size of the mapping model.
    func xmlData(uuid: UUID = UUID()) -> Data {
        var body = ""
        var nextID = 101
        func newID() -> String {
            defer { nextID += 1 }
            return "z\(nextID)"
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
                    var fields: [Field] = []
                    if let expression = property.expression {
                        fields.append(.binary("valueexpressiondata", expression.archivedData()))
                    }
                    if property.autogenerates { fields.append(.plain("autogenerateexpression", "bool", "1")) }
                    if !property.userInfo.isEmpty { fields.append(.binary("userinfodata", Self.archivedUserInfo(property.userInfo))) }
                    fields.append(.plain("name", "string", property.name))
                    fields.append(.relationship("entitymapping", "1/1", "XDDEVENTITYMAPPING", [entityID]))
                    body += Self.object(kind == 0 ? "XDDEVATTRIBUTEMAPPING" : "XDDEVRELATIONSHIPMAPPING", id: id, fields: fields)
                }
            }
            var fields: [Field] = []
            if let name = mapping.name { fields.append(.plain("name", "string", name)) }
            if let filter = mapping.filterPredicate { fields.append(.plain("sourcefilterpredicatestring", "string", filter)) }
            if let policy = mapping.policyClassName { fields.append(.plain("migrationpolicyclassname", "string", policy)) }
            if let source = mapping.sourceEntityName { fields.append(.plain("sourcename", "string", source)) }
            fields.append(.plain("mappingtypename", "string", mapping.type.xcodeName))
            fields.append(.plain("mappingnumber", "int16", String(number + 1)))
            if let destination = mapping.destinationEntityName { fields.append(.plain("destinationname", "string", destination)) }
            fields.append(.plain("autogenerateexpression", "bool", "1"))
            if !mapping.userInfo.isEmpty { fields.append(.binary("userinfodata", Self.archivedUserInfo(mapping.userInfo))) }
            fields.append(.relationship("mappingmodel", "1/1", "XDDEVMAPPINGMODEL", [modelID]))
            fields.append(.relationship("attributemappings", "0/0", "XDDEVATTRIBUTEMAPPING", propertyIDs[0]))
            fields.append(.relationship("relationshipmappings", "0/0", "XDDEVRELATIONSHIPMAPPING", propertyIDs[1]))
            body += Self.object("XDDEVENTITYMAPPING", id: entityID, fields: fields)
        }
        var modelFields: [Field] = []
        if let source = sourceModelPath { modelFields.append(.plain("sourcemodelpath", "string", source)) }
        if let destination = destinationModelPath { modelFields.append(.plain("destinationmodelpath", "string", destination)) }
        modelFields.append(.relationship("entitymappings", "0/0", "XDDEVENTITYMAPPING", entityIDs))
        body += Self.object("XDDEVMAPPINGMODEL", id: modelID, fields: modelFields)
        return Data((Self.header(uuid: uuid, nextObjectID: nextID) + body + "</database>").utf8)
    }

    // MARK: - Non public

    /// One `<object>` of the store: its type and its attribute and relationship elements by name.
    private struct StoredObject {
        let type: String
        let attributes: [String: String]
        let relationships: [String: [String]]

        init(element: XMLElementTree, type: String) {
            self.type = type
            var attributes: [String: String] = [:]
            for child in element.children(named: "attribute") {
                if let name = child[attribute: "name"] { attributes[name] = child.text }
            }
            self.attributes = attributes
            var relationships: [String: [String]] = [:]
            for child in element.children(named: "relationship") {
                guard let name = child[attribute: "name"] else { continue }
                relationships[name] = (child[attribute: "idrefs"] ?? "").split(whereSeparator: \.isWhitespace).map(String.init)
            }
            self.relationships = relationships
        }

        func string(_ name: String) -> String? { attributes[name] }
        func references(_ name: String) -> [String] { relationships[name] ?? [] }
        func flag(_ name: String) -> Bool { ["1", "YES", "true"].contains(attributes[name]?.trimmingCharacters(in: .whitespaces) ?? "") }

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
            sourceEntityName: nonEmpty(object.string("sourcename")), destinationEntityName: nonEmpty(object.string("destinationname")),
            filterPredicate: nonEmpty(object.string("sourcefilterpredicatestring")),
            policyClassName: nonEmpty(object.string("migrationpolicyclassname")))
        mapping.userInfo = try userInfo(object.binary("userinfodata"), path: path)
        for (key, kind) in [("attributemappings", "XDDEVATTRIBUTEMAPPING"), ("relationshipmappings", "XDDEVRELATIONSHIPMAPPING")] {
            var properties: [PropertyMappingDescription] = []
            for id in object.references(key) {
                guard let property = objects[id], property.type == kind, let name = property.string("name") else { continue }
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
                        userInfo: try userInfo(property.binary("userinfodata"), path: path)))
            }
            properties.sort { $0.name < $1.name }
            if kind == "XDDEVATTRIBUTEMAPPING" { mapping.attributeMappings = properties } else { mapping.relationshipMappings = properties }
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
            throw MigrationError.unreadableXcodeMapping("a user info is not an archived dictionary (\(reason(error)))", path: path)
        }
    }

    /// A user info dictionary as the keyed archive Xcode keeps in `userinfodata`.
    static func archivedUserInfo(_ userInfo: [String: String]) -> Data {
        var writer = KeyedArchiveWriter()
        let entries = userInfo.sorted { $0.key < $1.key }.map { (key: $0.key, value: writer.string($0.value)) }
        let root = writer.dictionary(entries, classes: ["NSMutableDictionary", "NSDictionary", "NSObject"])
        return writer.archive(root: root)
    }

    private enum Field {
        case plain(String, String, String)
        case binary(String, Data)
        case relationship(String, String, String, [String])
    }

    private static func object(_ type: String, id: String, fields: [Field]) -> String {
        var text = "    <object type=\"\(type)\" id=\"\(id)\">\n"
        for field in fields {
            switch field {
            case .plain(let name, let type, let value):
                text += "        <attribute name=\"\(name)\" type=\"\(type)\">\(XMLElementTree.escape(value))</attribute>\n"
            case .binary(let name, let data):
                text += "        <attribute name=\"\(name)\" type=\"binary\">"
                    + data.base64EncodedString(options: [.lineLength76Characters, .endLineWithLineFeed]) + "\n</attribute>\n"
            case .relationship(let name, let type, let destination, let ids):
                let references = ids.isEmpty ? "" : " idrefs=\"\(ids.joined(separator: " "))\""
                text += "        <relationship name=\"\(name)\" type=\"\(type)\" destination=\"\(destination)\"\(references)></relationship>\n"
            }
        }
        return text + "    </object>\n"
    }

    /// The entity version hashes of Xcode's mapping model schema, as every `xcmapping.xml` records them.
    private static let schemaHashes = [
        ("XDDevAttributeMapping", "0plcXXRN7XHKl5CcF+fwriFmUpON3ZtcI/AfK748aWc="),
        ("XDDevEntityMapping", "qeN1Ym3TkWN1G6dU9RfX6Kd2ccEvcDVWHpd3LpLgboI="),
        ("XDDevMappingModel", "EqtMzvRnVZWkXwBHu4VeVGy8UyoOe+bi67KC79kphlQ="),
        ("XDDevPropertyMapping", "XN33V44TTGY4JETlMoOB5yyTKxB+u4slvDIinv0rtGA="),
        ("XDDevRelationshipMapping", "akYY9LhehVA/mCb4ATLWuI9XGLcjpm14wWL1oEBtIcs="),
    ]

    private static func header(uuid: UUID, nextObjectID: Int) -> String {
        let hashes = schemaHashes.map { name, hash in
            "                        <key>\(name)</key>\n                        <data>\n\t\t\(hash)\n\t\t</data>\n"
        }.joined()
        return """
            <?xml version="1.0" standalone="yes"?>
            <!DOCTYPE database SYSTEM "file:///System/Library/DTDs/CoreData.dtd">

            <database>
                <databaseInfo>
                    <version>134481920</version>
                    <UUID>\(uuid.uuidString)</UUID>
                    <nextObjectID>\(nextObjectID)</nextObjectID>
                    <metadata>
                        <plist version="1.0">
                            <dict>
                                <key>NSPersistenceFrameworkVersion</key>
                                <integer>754</integer>
                                <key>NSStoreModelVersionHashes</key>
                                <dict>

            """ + hashes + """
                                </dict>
                                <key>NSStoreModelVersionHashesVersion</key>
                                <integer>3</integer>
                                <key>NSStoreModelVersionIdentifiers</key>
                                <array>
                                    <string></string>
                                </array>
                            </dict>
                        </plist>
                    </metadata>
                </databaseInfo>

            """
    }
}
