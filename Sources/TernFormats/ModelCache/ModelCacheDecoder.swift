import Foundation
import TernCore

/// Builds a ``ManagedObjectModel`` from the archived `NSManagedObjectModel` of a model cache.
struct ModelCacheDecoder {
    // MARK: - Model

    func model(from root: ArchivedObject) throws -> ManagedObjectModel {
        try expect(root, "NSManagedObjectModel")
        guard let entries = try root.value(forKey: "NSEntities").stringKeyedEntries() else {
            throw TernError.corrupt("The archived model has no NSEntities dictionary.")
        }
        var entities = [EntityDescription]()
        var names = Set<String>()
        for entry in entries {
            guard let object = entry.value.object else {
                throw TernError.corrupt("The archived model's entity \(entry.key) is not an object.")
            }
            let entity = try self.entity(from: object)
            guard names.insert(entity.name).inserted else {
                throw TernError.corrupt("The archived model has two entities named \(entity.name).")
            }
            entities.append(entity)
        }
        try checkInheritance(of: entities)
        var model = ManagedObjectModel(entities: entities)
        model.versionIdentifiers = try strings(in: root.value(forKey: "NSVersionIdentifiers"))
        model.configurations = try configurations(of: root)
        model.fetchRequestTemplates = try fetchRequestTemplates(of: root)
        return model
    }

    // MARK: - Entities

    func entity(from object: ArchivedObject) throws -> EntityDescription {
        try expect(object, "NSEntityDescription")
        guard let name = try object.string(forKey: "NSEntityName") else {
            throw TernError.corrupt("An archived entity has no name.")
        }
        var entity = EntityDescription(name: name)
        let parent = try object.object(forKey: "NSSuperentity")
        if let parent {
            try expect(parent, "NSEntityDescription")
            entity.parentName = try parent.string(forKey: "NSEntityName")
        }
        entity.isAbstract = try object.bool(forKey: "NSIsAbstract")
        entity.representedClassName = try object.string(forKey: "NSClassNameForEntity")
        entity.codeGenerationType = try object.string(forKey: "_TernCodeGenerationType")
        entity.renamingIdentifier = try object.string(forKey: "NSRenamingIdentifier").flatMap { $0 == name ? nil : $0 }
        entity.versionHashModifier = try object.string(forKey: "NSVersionHashModifier")
        entity.userInfo = try userInfo(object.value(forKey: "NSUserInfo"))
        entity.uniquenessConstraints = try (object.value(forKey: "NSUniqueTuples").elements() ?? []).map { tuple in
            try (tuple.elements() ?? []).map { try propertyName($0) }
        }
        entity.fetchIndexes = try (object.value(forKey: "NSFetchIndexDescriptions").elements() ?? []).compactMap {
            try $0.object.map(fetchIndex(from:))
        }

        // Core Data archives a subentity with its parent's properties too: keep the own ones.
        let inherited = Set(try parent.map { try propertyEntries(of: $0).map(\.key) } ?? [])
        for (key, property) in try propertyEntries(of: object) where !inherited.contains(key) {
            guard let property = property.object else {
                throw TernError.corrupt("The property \(key) of archived entity \(name) is not an object.")
            }
            if property.isKind(of: "NSRelationshipDescription") {
                entity.relationships.append(try relationship(from: property, entity: name))
            } else if property.isKind(of: "NSFetchedPropertyDescription") {
                entity.fetchedProperties.append(try fetchedProperty(from: property, entity: name))
            } else if property.isKind(of: "NSAttributeDescription") {
                entity.attributes.append(try attribute(from: property, entity: name))
            } else if property.className == "_NSPropertyDescriptionProxy" {
                continue  // an inherited property seen through a proxy
            } else {
                throw TernError.corrupt(
                    "The property \(key) of archived entity \(name) is an unknown \(property.className).")
            }
        }
        return entity
    }

    func fetchIndex(from object: ArchivedObject) throws -> FetchIndex {
        try expect(object, "NSFetchIndexDescription")
        let elements = try (object.value(forKey: "NSIndexElements").elements() ?? []).compactMap {
            value -> FetchIndex.Element? in
            guard let element = value.object else { return nil }
            let property =
                try element.string(forKey: "NSPropertyName")
                ?? element.object(forKey: "NSProperty").flatMap { try $0.string(forKey: "NSPropertyName") } ?? ""
            let kind = try element.integer(forKey: "NSFetchIndexElementType") == 1 ? "R-Tree" : "Binary"
            return FetchIndex.Element(
                property: property, kind: kind, isAscending: try element.bool(forKey: "NSAscending"))
        }
        return FetchIndex(name: try object.string(forKey: "NSIndexName") ?? "", elements: elements)
    }

    // MARK: - Properties

    func attribute(from object: ArchivedObject, entity: String) throws -> AttributeDescription {
        let flags = try PropertyFlags(object)
        let name = try propertyName(of: object, entity: entity)
        let code = try object.integer(forKey: "NSAttributeType") ?? 0
        guard let type = Int32(exactly: code).flatMap(AttributeType.init(rawValue:)) else {
            throw TernError(
                .corruptArchive, "The archived attribute has an unknown type code \(code).", entity: entity,
                property: name)
        }
        var attribute = AttributeDescription(
            name: name, type: type, isOptional: flags.isOptional, isTransient: flags.isTransient)
        attribute.defaultValue = try ArchivedFoundationValue.attributeValue(
            object.value(forKey: "NSDefaultValue"), type: type)
        attribute.valueTransformerName = try object.string(forKey: "NSValueTransformerName")
        attribute.attributeValueClassName = try object.string(forKey: "NSAttributeValueClassName")
        attribute.isIndexed = try object.bool(forKey: "NSIsIndexed")
        attribute.isIndexedBySpotlight = flags.isIndexedBySpotlight
        attribute.isStoredInExternalRecord = flags.isStoredInExternalRecord
        attribute.allowsCloudEncryption = flags.allowsCloudEncryption
        let attributeFlags = try object.integer(forKey: "NSFlagsKey") ?? 0
        attribute.allowsExternalBinaryDataStorage = attributeFlags & 0x4 != 0
        attribute.preservesValueInHistoryOnDeletion = attributeFlags & 0x10 != 0
        if attributeFlags & 0x1 != 0 { attribute.maximum = try limit(object, "NSMaxValueName", type: type) }
        if attributeFlags & 0x2 != 0 { attribute.minimum = try limit(object, "NSMinValueName", type: type) }
        if let text = try object.string(forKey: "_TernExpressionText") {
            attribute.derivationExpression = text
        } else if let expression = try object.object(forKey: "NSDerivationExpression") {
            attribute.derivationExpression = try ArchivedExpression.expressionText(expression)
        }
        if case .bool(let scalar) = try object.value(forKey: "_TernUsesScalarValueType") {
            attribute.usesScalarValueType = scalar
        }
        if !flags.hasNoValidationPredicates {
            try ValidationRules(object).apply(to: &attribute)
        }
        try applyCommon(object, name: name, flags: flags) {
            attribute.renamingIdentifier = $0
            attribute.versionHashModifier = $1
            attribute.userInfo = $2
        }
        return attribute
    }

    func relationship(from object: ArchivedObject, entity: String) throws -> RelationshipDescription {
        let flags = try PropertyFlags(object)
        let name = try propertyName(of: object, entity: entity)
        guard
            let destination = try object.string(forKey: "_NSDestinationEntityName")
                ?? object.object(forKey: "NSDestinationEntity").flatMap({ try $0.string(forKey: "NSEntityName") })
        else {
            throw TernError(
                .corruptArchive, "The archived relationship has no destination entity.", entity: entity, property: name)
        }
        let inverse =
            try object.string(forKey: "_NSInverseRelationshipName")
            ?? object.object(forKey: "NSInverseRelationship").flatMap { try $0.string(forKey: "NSPropertyName") }
        let rule = try object.integer(forKey: "NSDeleteRule") ?? 1
        guard let deleteRule = Int(exactly: rule).flatMap(DeleteRule.init(rawValue:)) else {
            throw TernError(
                .corruptArchive, "The archived relationship has an unknown delete rule \(rule).", entity: entity,
                property: name)
        }
        // Unbounded to-many relationships archive a max count of 0; a model built in code with
        // `Int.max` archives -1 (encodeInt truncates), and Core Data hashes those same 32 bits,
        // so -1 is kept as is: SampleModel2_V1's Author hash only matches with it.
        let maxCount = try Int(clamping: object.integer(forKey: "NSMaxCount") ?? 1)
        let minCount = try Int(clamping: object.integer(forKey: "NSMinCount") ?? 0)
        var relationship = RelationshipDescription(
            name: name, destination: destination, inverse: inverse, toMany: maxCount != 1,
            ordered: flags.isOrdered, deleteRule: deleteRule, isOptional: flags.isOptional)
        relationship.maxCount = maxCount
        relationship.minCount = minCount
        relationship.isTransient = flags.isTransient
        relationship.isIndexed = try object.bool(forKey: "NSIsIndexed")
        try applyCommon(object, name: name, flags: flags) {
            relationship.renamingIdentifier = $0
            relationship.versionHashModifier = $1
            relationship.userInfo = $2
        }
        return relationship
    }

    func fetchedProperty(from object: ArchivedObject, entity: String) throws -> FetchedPropertyDescription {
        let flags = try PropertyFlags(object)
        let name = try propertyName(of: object, entity: entity)
        let request = try object.object(forKey: "NSFetchRequest")
        let target =
            try object.string(forKey: "_NSFetchRequestEntityName")
            ?? request.flatMap { try $0.object(forKey: "NSEntity") }.flatMap { try $0.string(forKey: "NSEntityName") }
        var property = FetchedPropertyDescription(name: name, entityName: target ?? "", predicate: nil)
        property.predicate = try request.flatMap { try predicateText(of: $0) }
        property.isOptional = flags.isOptional
        property.userInfo = try userInfo(object.value(forKey: "NSUserInfo"))
        return property
    }

    // MARK: - Non public

    /// Checks that every parent exists and that no entity is its own ancestor, with the model's
    /// own definition of those problems.
    private func checkInheritance(of entities: [EntityDescription]) throws {
        guard let issue = ManagedObjectModel(entities: entities).inheritanceIssues.first else { return }
        throw TernError(
            .corruptArchive, "The archived model is inconsistent: \(issue.message).", entity: issue.entityName)
    }

    private func expect(_ object: ArchivedObject, _ className: String) throws {
        guard object.isKind(of: className) else {
            throw TernError.corrupt("Expected an archived \(className), found \(object.className).")
        }
    }

    private func propertyEntries(of entity: ArchivedObject) throws -> [(key: String, value: ArchivedValue)] {
        let properties = try entity.value(forKey: "NSProperties")
        if properties.isNull { return [] }
        guard let entries = try properties.stringKeyedEntries() else {
            throw TernError.corrupt("The NSProperties of an archived entity is not a dictionary.")
        }
        return entries
    }

    private func propertyName(of object: ArchivedObject, entity: String) throws -> String {
        guard let name = try object.string(forKey: "NSPropertyName") else {
            throw TernError(.corruptArchive, "An archived property has no name.", entity: entity)
        }
        return name
    }

    private func propertyName(_ value: ArchivedValue) throws -> String {
        if let text = try value.string() { return text }
        if let name = try value.object.flatMap({ try $0.string(forKey: "NSPropertyName") }) { return name }
        throw TernError.corrupt("A uniqueness constraint names something that is neither a string nor a property.")
    }

    private func applyCommon(
        _ object: ArchivedObject, name: String, flags: PropertyFlags,
        _ assign: (String?, String?, [String: String]) -> Void
    ) throws {
        let renaming = try object.string(forKey: "NSRenamingIdentifier").flatMap { $0 == name ? nil : $0 }
        let modifier = flags.hasNoVersionHashModifier ? nil : try object.string(forKey: "NSVersionHashModifier")
        assign(renaming, modifier, try userInfo(object.value(forKey: "NSUserInfo")))
    }

    /// A minimum or maximum: a length for strings and binary data, else a value of the type.
    private func limit(_ object: ArchivedObject, _ key: String, type: AttributeType) throws -> AttributeValue? {
        let integral = type.isInteger || type == .string || type == .binary
        switch try object.value(forKey: key) {
        case .integer(let number): return ValidationRules.converted(.integer(number), to: type)
        case .real(let number) where integral: return Int64(exactly: number.rounded()).map { .integer($0) }
        case .real(let number): return ValidationRules.converted(.double(number), to: type)
        default: return nil
        }
    }

    private func userInfo(_ value: ArchivedValue) throws -> [String: String] {
        guard let entries = try value.stringKeyedEntries() else { return [:] }
        var info = [String: String]()
        for (key, entry) in entries {
            info[key] = try ArchivedFoundationValue.text(entry)
        }
        return info
    }

    private func strings(in value: ArchivedValue) throws -> [String] {
        try (value.elements() ?? []).compactMap { try $0.string() }
    }

    private func configurations(of root: ArchivedObject) throws -> [Configuration] {
        guard let entries = try root.value(forKey: "NSConfigurations").stringKeyedEntries() else { return [] }
        return try entries.map { entry in
            let names = try (entry.value.elements() ?? []).compactMap { try $0.object?.string(forKey: "NSEntityName") }
            return Configuration(name: entry.key, entityNames: names)
        }
    }

    private func fetchRequestTemplates(of root: ArchivedObject) throws -> [FetchRequestTemplate] {
        guard let entries = try root.value(forKey: "NSFetchRequestTemplates").stringKeyedEntries() else { return [] }
        return try entries.compactMap { entry in
            guard let request = entry.value.object else { return nil }
            let entity = try request.object(forKey: "NSEntity").flatMap { try $0.string(forKey: "NSEntityName") }
            let settings = try userInfo(request.value(forKey: "_TernSettings"))
            return FetchRequestTemplate(
                name: entry.key, entityName: entity ?? "", predicate: try predicateText(of: request), settings: settings
            )
        }
    }

    /// The predicate of a fetch request: Tern's own text when Tern wrote the archive, else the
    /// archived `NSPredicate` printed.
    private func predicateText(of request: ArchivedObject) throws -> String? {
        if let text = try request.string(forKey: "_TernPredicateText") { return text }
        return try request.object(forKey: "NSPredicate").map { try ArchivedExpression.predicateText($0) }
    }
}

/// The flags of an archived `NSPropertyDescription`: the packed `_P` word when present, else
/// the separate Boolean keys of older archives.
struct PropertyFlags {
    var isOptional: Bool
    var isReadOnly: Bool
    var isTransient: Bool
    var isIndexedBySpotlight: Bool
    var isStoredInExternalRecord: Bool
    var isOrdered: Bool
    var allowsCloudEncryption: Bool
    var hasNoVersionHashModifier: Bool
    var hasNoValidationPredicates: Bool

    init(_ object: ArchivedObject) throws {
        let packed = try object.integer(forKey: "_P") ?? 0
        if packed != 0 {
            isOptional = packed & 0x2 != 0
            isReadOnly = packed & 0x4 != 0
            isTransient = packed & 0x8 != 0
            hasNoVersionHashModifier = packed & 0x80 != 0
            hasNoValidationPredicates = packed & 0x10 != 0
            isIndexedBySpotlight = packed & 0x100 != 0
            isStoredInExternalRecord = packed & 0x200 != 0
            isOrdered = packed & 0x400 != 0
            allowsCloudEncryption = packed & 0x800 != 0
        } else {
            isOptional = try object.bool(forKey: "NSIsOptional")
            isReadOnly = try object.bool(forKey: "NSIsReadOnly")
            isTransient = try object.bool(forKey: "NSIsTransient")
            hasNoVersionHashModifier = false
            hasNoValidationPredicates = false
            isIndexedBySpotlight = try object.bool(forKey: "NSIndexedBySpotlight")
            isStoredInExternalRecord = try object.bool(forKey: "NSIsStoredInTruth")
            isOrdered = try object.bool(forKey: "NSIsOrdered")
            allowsCloudEncryption = try object.bool(forKey: "NSAllowsCloudEncryption")
        }
    }
}
