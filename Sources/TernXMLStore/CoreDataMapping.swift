import Foundation
import TernCore
import TernFormats

/// How a store's rows become a Core Data XML document and back, with the model's names,
/// types and counts.
///
/// Core Data writes an entity's name upper-cased and a property's name lower-cased. Reading
/// looks a name up as written first, then without regard to case; a name that would collide
/// when case is dropped (entities `Item` and `ITEM`, properties `url` and `URL`) is written as
/// the model spells it, so that it reads back as the same entity or property.
struct CoreDataMapping {
    /// The model; nil to write without one (types from the values).
    let model: ManagedObjectModel?
    /// The written name of each entity, by model name.
    private var entityNames: [String: String] = [:]
    /// The entities by upper-cased name.
    var entitiesByUppercasedName: [String: [EntityDescription]] = [:]
    /// Each entity's stored properties, with their written names.
    var properties: [String: Properties] = [:]

    /// An entity's stored properties (its ancestors' included) and their written names.
    struct Properties {
        var attributes: [AttributeDescription] = []
        var relationships: [RelationshipDescription] = []
        var writtenNames: [String: String] = [:]
        var byLowercasedName: [String: [String]] = [:]
    }

    init(model: ManagedObjectModel?) {
        self.model = model
        guard let model else { return }
        entitiesByUppercasedName = Dictionary(grouping: model.entities) { $0.name.uppercased() }
        for entity in model.entities {
            let upper = entity.name.uppercased()
            entityNames[entity.name] = entitiesByUppercasedName[upper]?.count == 1 ? upper : entity.name
            var stored = Properties()
            stored.attributes = model.allAttributes(of: entity.name).filter { !$0.isTransient }
            stored.relationships = model.allRelationships(of: entity.name).filter { !$0.isTransient }
            let names = stored.attributes.map(\.name) + stored.relationships.map(\.name)
            stored.byLowercasedName = Dictionary(grouping: names) { $0.lowercased() }
            for name in names {
                stored.writtenNames[name] =
                    stored.byLowercasedName[name.lowercased()]?.count == 1 ? name.lowercased() : name
            }
            properties[entity.name] = stored
        }
    }

    // MARK: - Metadata

    /// The `<databaseInfo>` of a store's metadata. `NSStoreUUID` goes in `<UUID>` and
    /// `NSStoreType` is left out, as Core Data writes them.
    static func info(of metadata: StoreMetadata, nextObjectID: Int64?) -> CoreDataXMLDocument.DatabaseInfo {
        var dictionary = metadata.propertyList
        dictionary.removeValue(forKey: StoreMetadata.Key.storeUUID)
        if dictionary[StoreMetadata.Key.storeType] == .string(StoreKind.xml.rawValue) {
            dictionary.removeValue(forKey: StoreMetadata.Key.storeType)
        }
        return CoreDataXMLDocument.DatabaseInfo(
            uuid: metadata.uuid, nextObjectID: nextObjectID ?? 0, metadata: dictionary)
    }

    /// A store's metadata from a `<databaseInfo>`: its type is XML unless the dictionary says
    /// otherwise, and a document without a UUID gets a new one.
    static func metadata(of info: CoreDataXMLDocument.DatabaseInfo, path: String) throws(TernError) -> StoreMetadata {
        var dictionary = info.metadata ?? [:]
        if dictionary[StoreMetadata.Key.storeType] == nil {
            dictionary[StoreMetadata.Key.storeType] = .string(StoreKind.xml.rawValue)
        }
        guard let metadata = StoreMetadata(propertyList: dictionary, uuid: info.uuid ?? UUID().uuidString) else {
            throw TernError(
                .unreadableStore,
                "the XML store's metadata holds a value of the wrong type under one of Core Data's keys "
                    + "(NSStoreModelVersionHashes, NSStoreModelVersionIdentifiers, …); restore it from a backup",
                path: path)
        }
        return metadata
    }

    // MARK: - Writing

    /// The document of a store: objects in key order, named `z` and their key.
    func document(of contents: AtomicStoreContents) throws(TernError) -> CoreDataXMLDocument {
        let rows = contents.rows.sorted {
            ($0.reference.primaryKey, $0.reference.entityName) < ($1.reference.primaryKey, $1.reference.entityName)
        }
        // Keys are unique store-wide in stores Tern writes; stores of other types (SQLite, Tern's
        // version 1) keep them per inheritance root, so a key met again is written `z17-2`,
        // which reads back as the same key.
        let last = max(contents.lastPrimaryKeys.values.max() ?? 0, rows.map(\.reference.primaryKey).max() ?? 0)
        var ids: [RowReference: String] = [:]
        var uses: [Int64: Int] = [:]
        for row in rows {
            let key = row.reference.primaryKey
            let use = uses[key, default: 0] + 1
            uses[key] = use
            ids[row.reference] = use == 1 ? "z\(key)" : "z\(key)-\(use)"
        }
        var document = CoreDataXMLDocument(info: Self.info(of: contents.metadata, nextObjectID: last))
        document.objects.reserveCapacity(rows.count)
        for row in rows {
            document.objects.append(try object(of: row, id: ids[row.reference] ?? "", ids: ids))
        }
        return document
    }

    private func object(of row: StoreRow, id: String, ids: [RowReference: String]) throws(TernError)
        -> CoreDataXMLDocument.Object
    {
        let entity = row.reference.entityName
        func refused(_ what: String, property: String? = nil) -> TernError {
            TernError(
                .unwritableStore, "object \(id) (\(entity)) cannot be written: \(what)", entity: entity,
                property: property)
        }
        guard model != nil else { return modelFreeObject(of: row, id: id, ids: ids) }
        guard let entityNames = entityNames[entity], let stored = properties[entity] else {
            throw refused("the model has no entity \(entity)")
        }
        var object = CoreDataXMLDocument.Object(type: entityNames, id: id)
        for attribute in stored.attributes {
            guard let value = row.attributes[attribute.name] else { continue }
            let spelling = Self.spelling(of: attribute.type) ?? Self.spelling(of: value)
            guard value.fits(attribute.type) else {
                throw refused(
                    "its value does not fit the attribute's type \(attribute.type.xcodeName)", property: attribute.name)
            }
            object.attributes.append(
                .init(
                    name: stored.writtenNames[attribute.name] ?? attribute.name, type: spelling,
                    text: Self.text(of: value)))
        }
        for relationship in stored.relationships {
            let references: [RowReference]
            if relationship.isToMany {
                if row.toOne[relationship.name] != nil {
                    throw refused("a to-many relationship holds one object", property: relationship.name)
                }
                references = row.toMany[relationship.name] ?? []
            } else {
                if row.toMany[relationship.name] != nil {
                    throw refused("a to-one relationship holds a list", property: relationship.name)
                }
                references = row.toOne[relationship.name].map { [$0] } ?? []
            }
            // A reference to a row the store does not hold has no object to name: left out.
            object.relationships.append(
                .init(
                    name: stored.writtenNames[relationship.name] ?? relationship.name,
                    type: "\(relationship.minCount)/\(relationship.maxCount)",
                    destination: self.entityNames[relationship.destinationEntityName]
                        ?? relationship.destinationEntityName,
                    idrefs: references.compactMap { ids[$0] }))
        }
        let known = Set(stored.attributes.map(\.name) + stored.relationships.map(\.name))
        if let unknown = (Array(row.attributes.keys) + Array(row.toOne.keys) + Array(row.toMany.keys)).sorted()
            .first(where: { !known.contains($0) })
        {
            throw refused("the model's entity \(entity) has no stored property \(unknown)", property: unknown)
        }
        return object
    }

    /// An object written without a model: names upper- and lower-cased, types from the values.
    private func modelFreeObject(of row: StoreRow, id: String, ids: [RowReference: String])
        -> CoreDataXMLDocument.Object
    {
        var object = CoreDataXMLDocument.Object(type: row.reference.entityName.uppercased(), id: id)
        for (name, value) in row.attributes.sorted(by: { $0.key < $1.key }) {
            object.attributes.append(
                .init(name: name.lowercased(), type: Self.spelling(of: value), text: Self.text(of: value)))
        }
        for (name, reference) in row.toOne.sorted(by: { $0.key < $1.key }) {
            object.relationships.append(
                .init(
                    name: name.lowercased(), type: "1/1", destination: reference.entityName.uppercased(),
                    idrefs: ids[reference].map { [$0] } ?? []))
        }
        for (name, references) in row.toMany.sorted(by: { $0.key < $1.key }) {
            object.relationships.append(
                .init(
                    name: name.lowercased(), type: "0/0", destination: references.first?.entityName.uppercased() ?? "",
                    idrefs: references.compactMap { ids[$0] }))
        }
        return object
    }
}
