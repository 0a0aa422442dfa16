import Foundation
import TernCore
import TernFormats

extension CoreDataMapping {
    /// A store's rows from a Core Data XML document, read leniently as Core Data reads it:
    /// names without regard to case, values by the model's types whatever the file's `type`
    /// says, properties the model lacks skipped. Objects named `z` and a number (and `-n`) get
    /// that number as their key; others get keys after the highest.
    ///
    /// - Throws: ``TernError/Code/unreadableStore`` naming the object id, entity and property for
    ///   what cannot be read: an entity the model lacks (or several it could be), an abstract
    ///   entity, an id used twice, a value that does not fit its attribute, a reference to an
    ///   object the file does not hold, several objects in a to-one relationship.
    func contents(of document: CoreDataXMLDocument, path: String) throws(TernError) -> AtomicStoreContents {
        guard let model else {
            throw TernError(
                .unreadableStore, "a Core Data XML store is read with its model; open it with the model", path: path)
        }
        let metadata = try Self.metadata(of: document.info, path: path)
        // First the references, so that relationships can name objects further on.
        var references: [String: RowReference] = [:]
        var entities: [String] = []
        var keys: [Int64?] = []
        var used: [String: Set<Int64>] = [:]
        for object in document.objects {
            let entity = try self.entity(writtenAs: object.type, object: object.id, path: path)
            guard references[object.id] == nil else {
                throw TernError(
                    .unreadableStore, "the XML store is damaged: two objects have the id \(object.id)",
                    entity: entity.name, path: path)
            }
            let root = model.rootEntity(of: entity.name)?.name ?? entity.name
            var key = Self.key(ofID: object.id)
            if let number = key, !used[root, default: []].insert(number).inserted { key = nil }
            entities.append(entity.name)
            keys.append(key)
            references[object.id] = RowReference(entityName: entity.name, primaryKey: key ?? 0)
        }
        var last = max(document.info.nextObjectID ?? 0, keys.compactMap { $0 }.max() ?? 0)
        for (index, object) in document.objects.enumerated() where keys[index] == nil {
            last += 1
            keys[index] = last
            references[object.id] = RowReference(entityName: entities[index], primaryKey: last)
        }
        var contents = AtomicStoreContents(metadata: metadata)
        contents.rows.reserveCapacity(document.objects.count)
        for (index, object) in document.objects.enumerated() {
            let reference = RowReference(entityName: entities[index], primaryKey: keys[index] ?? 0)
            contents.rows.append(try row(of: object, reference: reference, references: references, path: path))
        }
        contents.rows.sort { $0.reference < $1.reference }
        for entity in model.entities where entity.parentName == nil { contents.lastPrimaryKeys[entity.name] = last }
        return contents
    }

    // MARK: - Non public

    /// The key an id names: `z17` and `z17-2` (a key Tern met again in another inheritance
    /// root) are 17; nil for other ids.
    static func key(ofID id: String) -> Int64? {
        guard id.first == "z" else { return nil }
        let number = id.dropFirst().prefix { $0 != "-" }
        let rest = id.dropFirst(1 + number.count)
        guard rest.isEmpty || (rest.count > 1 && rest.dropFirst().allSatisfy { $0.isASCII && $0.isNumber }) else {
            return nil
        }
        return Int64(number)
    }

    /// The entity an object's `type` names: as written, else the only one of that name without
    /// regard to case.
    private func entity(writtenAs name: String, object: String, path: String) throws(TernError) -> EntityDescription {
        if let entity = model?.entity(named: name) { return try concrete(entity, object: object, path: path) }
        let candidates = entitiesByUppercasedName[name.uppercased()] ?? []
        guard candidates.count == 1, let entity = candidates.first else {
            let what =
                candidates.isEmpty
                ? "the model has no entity \(name) (in any case)"
                : "the model has several entities named \(name) in another case ("
                    + candidates.map(\.name).sorted().joined(separator: ", ") + ")"
            throw TernError(
                .unreadableStore,
                "object \(object) of the XML store is of entity \(name), but \(what); open the store with the model that wrote it",
                entity: name, path: path)
        }
        return try concrete(entity, object: object, path: path)
    }

    private func concrete(_ entity: EntityDescription, object: String, path: String) throws(TernError)
        -> EntityDescription
    {
        guard !entity.isAbstract else {
            throw TernError(
                .unreadableStore,
                "object \(object) of the XML store is of entity \(entity.name), which the model makes abstract, so no "
                    + "object can be of it; open the store with the model that wrote it",
                entity: entity.name, path: path)
        }
        return entity
    }

    /// The model property a written name stands for: as written, else the only one of that
    /// name without regard to case.
    private func propertyName(_ name: String, in stored: Properties) -> String? {
        if stored.writtenNames[name] != nil { return name }
        guard let candidates = stored.byLowercasedName[name.lowercased()], candidates.count == 1 else { return nil }
        return candidates.first
    }

    private func row(
        of object: CoreDataXMLDocument.Object, reference: RowReference, references: [String: RowReference], path: String
    ) throws(TernError) -> StoreRow {
        let entity = reference.entityName
        var row = StoreRow(reference: reference, version: 1)
        let stored = properties[entity] ?? Properties()
        func refused(_ what: String, property: String) -> TernError {
            TernError(
                .unreadableStore,
                "the XML store is damaged: object \(object.id) (\(entity)) \(what); restore it from a backup",
                entity: entity, property: property, path: path)
        }
        for element in object.attributes {
            guard let name = propertyName(element.name, in: stored),
                let attribute = stored.attributes.first(where: { $0.name == name })
            else { continue }
            guard let value = Self.value(of: element.text, as: attribute.type, spelled: element.type) else {
                throw refused(
                    "holds a value for \(name) that is not \(attribute.type.xcodeName) (written as \(element.type))",
                    property: name)
            }
            row.attributes[name] = value
        }
        for element in object.relationships {
            guard let name = propertyName(element.name, in: stored),
                let relationship = stored.relationships.first(where: { $0.name == name })
            else { continue }
            var targets: [RowReference] = []
            for id in element.idrefs {
                guard let target = references[id] else {
                    throw refused("refers in \(name) to object \(id), which the store does not hold", property: name)
                }
                targets.append(target)
            }
            if relationship.isToMany {
                row.toMany[name] = targets
            } else if targets.count > 1 {
                throw refused("holds \(targets.count) objects in the to-one relationship \(name)", property: name)
            } else if let target = targets.first {
                row.toOne[name] = target
            }
        }
        return row
    }
}
