import Foundation
import TernCore

/// Turns the `elements` file of an Xcode 3 model version into the element tree of the `contents`
/// file Xcode writes when it converts the version, so that ``ContentsDecoder`` reads both forms
/// with the same rules (and the same version hashes).
///
/// `elements` is an `NSKeyedArchiver` archive of Xcode's own classes: an `XDPMModel` whose
/// `_xd_rootPackage` (`XDModelPackage`) keeps the entities by name in
/// `XDBucketForClassesstorage`. An `XDPMEntity` keeps its properties (`XDPMAttribute`,
/// `XDPMRelationship`) by name in `XDBucketForOwnedAttributesstorage` and its parent in
/// `XDBucketForGeneralizationsstorage` (an `XDUMLGeneralizationImp` whose `_general` is the
/// parent). Core Data's settings sit in stereotypes (`XDBucketForStereotypesstorage`), each an
/// `XDUMLStereotypeImp` whose owned `XDUMLPropertyImp`s carry a key (`_name`, such as
/// `XD_PPSK_isOptional`) and a value (`_default`). See `docs/ModelFormat.md`.
struct LegacyModelDecoder {
    /// The `elements` file, for error messages and warnings.
    var path: String?
    /// Where warnings go.
    var log: ModelWarningLog

    /// The `contents` element tree of an `elements` archive.
    ///
    /// - Throws: ``TernError/Code/unreadableModelFile`` when the bytes are not a keyed archive
    ///   of an Xcode 3 model, or lack names Core Data needs.
    /// - Complexity: O(*n*) in the size of the archive.
    func contentsTree(fromElements data: Data) throws(TernError) -> XMLElementTree {
        do {
            let root = try KeyedArchive(data: data).rootObject()
            return try model(from: root)
        } catch let error as TernError where error.code == .unreadableModelFile {
            throw error
        } catch let error as TernError {
            throw TernError(
                .unreadableModelFile,
                "the Xcode 3 model file (`elements`) cannot be read: \(error.message)",
                entity: error.entityName, property: error.propertyName, path: path, underlyingError: error)
        } catch {
            throw TernError(
                .unreadableModelFile, "the Xcode 3 model file (`elements`) cannot be read", path: path,
                underlyingError: error)
        }
    }

    // MARK: - Model

    private func model(from root: ArchivedObject) throws -> XMLElementTree {
        guard root.isKind(of: "XDPMModel") || root.isKind(of: "XDModel") else {
            throw failure("its archive holds an \(root.className), not an XDPMModel: this is not an Xcode 3 model")
        }
        var model = XMLElementTree(name: "model")
        if let identifier = try root.string(forKey: "_modelVersionIdentifier"), !identifier.isEmpty {
            model.attributes["userDefinedModelVersionIdentifier"] = identifier
        }
        guard let package = try root.object(forKey: "_xd_rootPackage") else {
            throw failure("its XDPMModel has no root package (_xd_rootPackage), so it holds no entities")
        }
        for (key, value) in try sortedEntries(package.value(forKey: "XDBucketForClassesstorage")) {
            guard let entity = value.object, entity.isKind(of: "XDPMEntity") else {
                throw failure("the model's class \(key) is not an XDPMEntity")
            }
            model.children.append(try self.entity(from: entity))
        }
        for (name, members) in try sortedEntries(root.value(forKey: "_configurationsByName")) {
            var configuration = XMLElementTree(name: "configuration", attributes: ["name": name])
            for member in try members.elements() ?? [] {
                guard let entityName = try member.string() ?? member.object?.string(forKey: "_name") else { continue }
                configuration.children.append(XMLElementTree(name: "memberEntity", attributes: ["name": entityName]))
            }
            model.children.append(configuration)
        }
        return model
    }

    // MARK: - Entities

    private func entity(from object: ArchivedObject) throws -> XMLElementTree {
        let name = try requiredName(of: object, what: "an entity")
        let settings = try stereotypeSettings(of: object)
        var entity = XMLElementTree(name: "entity", attributes: ["name": name])
        if let parent = try parentName(of: object) { entity.attributes["parentEntity"] = parent }
        if try object.bool(forKey: "_isAbstract") || settings.bool("XD_PSK_isAbstract") {
            entity.attributes["isAbstract"] = "YES"
        }
        if let className = try settings.string("XD_PSK_entityClassName"), className != "NSManagedObject" {
            entity.attributes["representedClassName"] = className
        }
        entity.attributes["versionHashModifier"] = try settings.string("XD_PSK_versionHashModifier")
        entity.attributes["elementID"] = try settings.string("XD_PSK_elementID")

        for (key, value) in try sortedEntries(object.value(forKey: "XDBucketForOwnedAttributesstorage")) {
            guard let property = value.object else {
                throw failure("the property \(key) is not an archived object", entity: name)
            }
            if property.isKind(of: "XDPMAttribute") {
                entity.children.append(try attribute(from: property, entity: name))
            } else if property.isKind(of: "XDPMRelationship") {
                entity.children.append(try relationship(from: property, entity: name))
            } else {
                log.add(
                    ModelReadingWarning(
                        .ignoredContent,
                        "the property is an \(property.className), which Tern does not read in Xcode 3 models; "
                            + "it was left out (fetched properties do not enter version hashes)",
                        entityName: name, propertyName: key, path: path))
            }
        }
        let fetchRequests = try settings.value("XD_PSK_fetchRequestsArray").elements() ?? []
        if !fetchRequests.isEmpty {
            log.add(
                ModelReadingWarning(
                    .ignoredContent,
                    "the entity's \(fetchRequests.count) fetch request template(s) were left out: Tern does not read "
                        + "them in Xcode 3 models; open and save the model in Xcode to keep them",
                    entityName: name, path: path))
        }
        if let group = try propertyGroups(
            settings.value("XDPMUniquenessConstraints"), "uniquenessConstraints",
            "uniquenessConstraint", "constraint")
        {
            entity.children.append(group)
        }
        if let group = try propertyGroups(
            settings.value("XDPMCompoundIndexes"), "compoundIndexes", "compoundIndex", "index")
        {
            entity.children.append(group)
        }
        if let info = try userInfo(settings.value("XD_PSK_userInfo")) { entity.children.append(info) }
        return entity
    }

    /// The parent's name: the `_general` of the first `XDUMLGeneralizationImp`, or an entity
    /// listed directly.
    private func parentName(of entity: ArchivedObject) throws -> String? {
        for value in try entity.value(forKey: "XDBucketForGeneralizationsstorage").elements() ?? [] {
            guard let object = value.object else { continue }
            let parent = object.isKind(of: "XDPMEntity") ? object : try object.object(forKey: "_general")
            if let name = try parent?.string(forKey: "_name") { return name }
        }
        return nil
    }

    // MARK: - Properties

    private func attribute(from object: ArchivedObject, entity: String) throws -> XMLElementTree {
        let name = try requiredName(of: object, what: "an attribute", entity: entity)
        let settings = try stereotypeSettings(of: object)
        var attribute = try propertyElement("attribute", name: name, settings: settings)
        if let code = try settings.integer("XD_PAttK_attributeType") {
            let type = Int32(exactly: code).flatMap(AttributeType.init(rawValue:))
            if type != .undefined {
                attribute.attributes["attributeType"] = type?.xcodeName ?? "code \(code)"
            }
        }
        attribute.attributes["defaultValueString"] = try settings.string("XD_PAttK_defaultValueAsString")
        attribute.attributes["minValueString"] = try settings.string("XD_PAttK_minValueString")
        attribute.attributes["maxValueString"] = try settings.string("XD_PAttK_maxValueString")
        attribute.attributes["regularExpressionString"] = try settings.string("XD_PAttK_regularExpressionString")
        attribute.attributes["valueTransformerName"] = try settings.string("XD_PAttK_valueTransformerName")
        if try settings.bool("XD_PAttK_allowsExternalBinaryDataStorage") {
            attribute.attributes["allowsExternalBinaryDataStorage"] = "YES"
        }
        try appendUserInfo(settings, to: &attribute)
        return attribute
    }

    private func relationship(from object: ArchivedObject, entity: String) throws -> XMLElementTree {
        let name = try requiredName(of: object, what: "a relationship", entity: entity)
        let settings = try stereotypeSettings(of: object)
        var relationship = try propertyElement("relationship", name: name, settings: settings)
        guard let destination = try settings.value("XD_PRK_destination").object?.string(forKey: "_name") else {
            throw failure("the relationship names no destination entity", entity: entity, property: name)
        }
        relationship.attributes["destinationEntity"] = destination
        if let inverse = settings.value("XD_PRK_inverseRelationship").object {
            relationship.attributes["inverseName"] = try inverse.string(forKey: "_name")
            relationship.attributes["inverseEntity"] = try inverse.object(forKey: "_owner")?.string(forKey: "_name")
        }
        if let code = try settings.integer("XD_PRK_deleteRule") {
            let rule = Int(exactly: code).flatMap(DeleteRule.init(rawValue:))
            relationship.attributes["deletionRule"] = rule?.xcodeName ?? "code \(code)"
        }
        let minCount = try settings.integer("XD_PRK_minCount")
        let maxCount = try settings.integer("XD_PRK_maxCount")
        let isToMany =
            try settings.value("XD_PRK_isToMany").isNull
            ? (maxCount.map { $0 != 1 } ?? false) : settings.bool("XD_PRK_isToMany")
        if isToMany { relationship.attributes["toMany"] = "YES" }
        relationship.attributes["minCount"] = minCount.map(String.init)
        relationship.attributes["maxCount"] = maxCount.map(String.init)
        if try settings.bool("XD_PRK_ordered") { relationship.attributes["ordered"] = "YES" }
        try appendUserInfo(settings, to: &relationship)
        return relationship
    }

    /// An `<attribute>` or `<relationship>` with the settings every property has.
    private func propertyElement(_ kind: String, name: String, settings: Settings) throws -> XMLElementTree {
        var element = XMLElementTree(name: kind, attributes: ["name": name])
        let flags = [
            ("XD_PPSK_isOptional", "optional"), ("XD_PPSK_isTransient", "transient"), ("XD_PPSK_isIndexed", "indexed"),
            ("XD_PPSK_isSpotlightIndexed", "spotlightIndexingEnabled"),
            ("XD_PPSK_isStoredInTruthFile", "storedInTruthFile"),
        ]
        for (key, attribute) in flags where try settings.bool(key) {
            element.attributes[attribute] = "YES"
        }
        element.attributes["versionHashModifier"] = try settings.string("XD_PPSK_versionHashModifier")
        element.attributes["elementID"] = try settings.string("XD_PPSK_elementID")
        return element
    }

    private func appendUserInfo(_ settings: Settings, to element: inout XMLElementTree) throws {
        if let info = try userInfo(settings.value("XD_PPSK_userInfo")) { element.children.append(info) }
    }

    // MARK: - Settings

    /// The values of an element's stereotypes, by key (`XD_PSK_…`, `XD_PPSK_…`, `XD_PAttK_…`,
    /// `XD_PRK_…`; the keys of different stereotypes do not overlap).
    struct Settings {
        var values: [String: ArchivedValue] = [:]

        func value(_ key: String) -> ArchivedValue { values[key] ?? .null }

        /// A string setting; nil when missing, `$null` or empty.
        func string(_ key: String) throws -> String? {
            guard let text = try value(key).string(), !text.isEmpty else { return nil }
            return text
        }

        func integer(_ key: String) throws -> Int64? {
            switch value(key) {
            case .integer(let number): return number
            case .bool(let flag): return flag ? 1 : 0
            case .real(let number): return Int64(exactly: number)
            case let other: return try other.string().flatMap { Int64($0.trimmingCharacters(in: .whitespaces)) }
            }
        }

        func bool(_ key: String) throws -> Bool {
            switch value(key) {
            case .bool(let flag): return flag
            case .integer(let number): return number != 0
            case let other: return try other.string().map(ContentsDecoder.isYes) ?? false
            }
        }
    }

    private func stereotypeSettings(of object: ArchivedObject) throws -> Settings {
        var settings = Settings()
        for (_, stereotype) in try sortedEntries(object.value(forKey: "XDBucketForStereotypesstorage")) {
            guard let stereotype = stereotype.object else { continue }
            for (key, property) in try sortedEntries(stereotype.value(forKey: "XDBucketForOwnedAttributesstorage")) {
                guard let property = property.object else { continue }
                settings.values[key] = try property.value(forKey: "_default")
            }
        }
        return settings
    }

    // MARK: - Non public

    /// A dictionary's entries sorted by key (Xcode writes `contents` in name order); none for `$null`.
    private func sortedEntries(_ value: ArchivedValue) throws -> [(key: String, value: ArchivedValue)] {
        if value.isNull { return [] }
        guard let entries = try value.stringKeyedEntries() else {
            throw failure("a \(value.object?.className ?? "value") stands where a dictionary belongs")
        }
        return entries.sorted { $0.key < $1.key }
    }

    /// Uniqueness constraints or compound indexes: lists of property names (or properties).
    private func propertyGroups(
        _ value: ArchivedValue, _ groupName: String, _ itemName: String, _ memberName: String
    ) throws -> XMLElementTree? {
        let lists = try value.elements() ?? []
        guard !lists.isEmpty else { return nil }
        var group = XMLElementTree(name: groupName)
        for list in lists {
            var item = XMLElementTree(name: itemName)
            for member in try list.elements() ?? [list] {
                guard let name = try member.string() ?? member.object?.string(forKey: "_name") else { continue }
                item.children.append(XMLElementTree(name: memberName, attributes: ["value": name]))
            }
            group.children.append(item)
        }
        return group
    }

    private func userInfo(_ value: ArchivedValue) throws -> XMLElementTree? {
        let entries = try sortedEntries(value)
        guard !entries.isEmpty else { return nil }
        var info = XMLElementTree(name: "userInfo")
        for (key, entry) in entries {
            info.children.append(
                XMLElementTree(
                    name: "entry", attributes: ["key": key, "value": try ArchivedFoundationValue.text(entry)]))
        }
        return info
    }

    private func requiredName(of object: ArchivedObject, what: String, entity: String? = nil) throws -> String {
        guard let name = try object.string(forKey: "_name"), !name.isEmpty else {
            throw failure("\(what) has no name", entity: entity)
        }
        return name
    }

    private func failure(_ message: String, entity: String? = nil, property: String? = nil) -> TernError {
        TernError(
            .unreadableModelFile, "the Xcode 3 model file (`elements`) cannot be read: " + message,
            entity: entity, property: property, path: path)
    }
}
