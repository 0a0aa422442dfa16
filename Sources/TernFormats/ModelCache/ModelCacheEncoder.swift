import Foundation
import TernCore

/// Writes a ``ManagedObjectModel`` as the keyed archive of an `NSManagedObjectModel`, in the
/// layout Core Data's model caches use (see `docs/ModelCache.md`).
///
/// Like Core Data, a subentity's archive lists its inherited properties too, as copies whose
/// `NSEntity` is the subentity. Settings Core Data does not archive (code generation, scalar
/// types, fetch request settings) and the exact text of expressions and predicates go under keys
/// of Tern's own, prefixed `_Tern`, which Core Data ignores.
struct ModelCacheEncoder {
    typealias Value = BinaryPropertyList.Value

    static let entityClasses = ["NSEntityDescription", "NSObject"]
    static let attributeClasses = ["NSAttributeDescription", "NSPropertyDescription", "NSObject"]
    static let derivedClasses = ["NSDerivedAttributeDescription"] + attributeClasses
    static let relationshipClasses = ["NSRelationshipDescription", "NSPropertyDescription", "NSObject"]
    static let fetchedClasses = ["NSFetchedPropertyDescription", "NSPropertyDescription", "NSObject"]
    static let fetchRequestClasses = ["NSFetchRequest", "NSPersistentStoreRequest", "NSObject"]
    static let mutableDictionary = ["NSMutableDictionary", "NSDictionary", "NSObject"]
    static let mutableArray = ["NSMutableArray", "NSArray", "NSObject"]
    static let set = ["NSSet", "NSObject"]

    let model: ManagedObjectModel
    var writer = KeyedArchiveWriter()
    /// The reserved UID of each entity.
    var entityReferences: [String: Value] = [:]
    /// The reserved UID of each property of each entity, own and inherited.
    var propertyReferences: [String: [String: Value]] = [:]

    init(model: ManagedObjectModel) {
        self.model = model
    }

    // MARK: - Model

    mutating func archive() throws -> Data {
        try checkInheritance()
        let root = writer.reserve()
        for entity in model.entities {
            entityReferences[entity.name] = writer.reserve()
        }
        for entity in model.entities {
            var references = [String: Value]()
            for name in propertyNames(of: entity.name) { references[name] = writer.reserve() }
            propertyReferences[entity.name] = references
        }
        for entity in model.entities {
            try fillEntity(entity, root: root)
        }

        let names = model.entities.map(\.name)
        let mapping = writer.object(
            ["NSKnownKeysMappingStrategy1", "NSKnownKeysMappingStrategy", "NSObject"],
            fields: [
                "keys": writer.array(names.map { writer.string($0) }), "length": .integer(Int64(names.count)),
                "version": .integer(1),
            ])
        let entities = writer.object(
            ["NSKnownKeysDictionary1", "NSKnownKeysDictionary", "NSMutableDictionary", "NSDictionary", "NSObject"],
            fields: [
                "values": writer.array(names.compactMap { entityReferences[$0] }), "searchMapping": mapping,
                "emptyToken": writer.string("__empty_slot_token_4c24_98dc_ac1e_b773__"), "version": .integer(1),
            ])
        var fields: [String: Value] = [
            "NSEntities": entities,
            "NSVersionIdentifiers": writer.array(model.versionIdentifiers.map { writer.string($0) }, classes: Self.set),
            "NSFetchRequestTemplates": try fetchRequestTemplates(),
        ]
        if !model.configurations.isEmpty {
            fields["NSConfigurations"] = writer.dictionary(
                model.configurations.map { configuration in
                    (
                        key: configuration.name,
                        value: writer.array(
                            configuration.entityNames.compactMap { entityReferences[$0] }, classes: Self.set)
                    )
                }, classes: Self.mutableDictionary)
        }
        writer.fill(root, classes: ["NSManagedObjectModel", "NSObject"], fields: fields)
        return writer.archive(root: root)
    }

    // MARK: - Entities

    private mutating func fillEntity(_ entity: EntityDescription, root: Value) throws {
        guard let reference = entityReferences[entity.name], let properties = propertyReferences[entity.name] else {
            return
        }
        for attribute in model.allAttributes(of: entity.name) {
            if let target = properties[attribute.name] { try fillAttribute(attribute, target, entity: reference) }
        }
        for relationship in model.allRelationships(of: entity.name) {
            if let target = properties[relationship.name] {
                try fillRelationship(relationship, target, entity: reference, in: entity.name)
            }
        }
        for fetched in model.allFetchedProperties(of: entity.name) {
            if let target = properties[fetched.name] { try fillFetchedProperty(fetched, target, entity: reference) }
        }
        let subentities = model.subentities(of: entity.name).compactMap { sub in
            entityReferences[sub.name].map { (key: sub.name, value: $0) }
        }
        var fields: [String: Value] = [
            "NSEntityName": writer.string(entity.name),
            "NSClassNameForEntity": writer.string(entity.representedClassName),
            "NSSuperentity": entity.parentName.flatMap { entityReferences[$0] } ?? KeyedArchiveWriter.null,
            "NSSubentities": writer.dictionary(subentities, classes: Self.mutableDictionary),
            "NSProperties": writer.dictionary(
                properties.sorted { $0.key < $1.key }.map { (key: $0.key, value: $0.value) },
                classes: Self.mutableDictionary),
            "NSUserInfo": userInfo(entity.userInfo),
            "NSVersionHashModifier": writer.string(entity.versionHashModifier),
            "NSRenamingIdentifier": writer.string(entity.renamingIdentifier ?? entity.name),
            "NSManagedObjectModel": root,
        ]
        if entity.isAbstract { fields["NSIsAbstract"] = .bool(true) }
        if !entity.uniquenessConstraints.isEmpty {
            let tuples = entity.uniquenessConstraints.map { tuple in
                writer.array(tuple.map { writer.string($0) }, classes: Self.mutableArray)
            }
            fields["NSUniqueTuples"] = writer.array(tuples, classes: Self.mutableArray)
        }
        if model.entities.contains(where: { !$0.fetchIndexes.isEmpty }) {
            // As Core Data does once a model has indexes: every entity lists its fetch indexes,
            // and again as legacy compound indexes (arrays of property names).
            let indexes = entity.fetchIndexes.map { fetchIndex($0, entity: reference) }
            fields["NSFetchIndexDescriptions"] = writer.array(indexes, classes: Self.mutableArray)
            let compound = entity.fetchIndexes.map { index in
                writer.array(index.elements.map { writer.string($0.property) }, classes: Self.mutableArray)
            }
            fields["NSCompoundIndexes"] = writer.array(compound, classes: Self.mutableArray)
        }
        if let generation = entity.codeGenerationType { fields["_TernCodeGenerationType"] = writer.string(generation) }
        writer.fill(reference, classes: Self.entityClasses, fields: fields)
    }

    private mutating func fetchIndex(_ index: FetchIndex, entity: Value) -> Value {
        let reference = writer.reserve()
        let elements = index.elements.map { element in
            writer.object(
                ["NSFetchIndexElementDescription", "NSObject"],
                fields: [
                    "NSPropertyName": writer.string(element.property), "NSAscending": .bool(element.isAscending),
                    "NSFetchIndexElementType": .integer(element.kind == "R-Tree" ? 1 : 0),
                    "NSFetchIndexDescription": reference,
                ])
        }
        writer.fill(
            reference, classes: ["NSFetchIndexDescription", "NSObject"],
            fields: [
                "NSIndexName": writer.string(index.name), "NSIndexElements": writer.array(elements), "NSEntity": entity,
                "NSPartialIndexPredicate": KeyedArchiveWriter.null,
            ])
        return reference
    }

    // MARK: - Properties

    private mutating func fillAttribute(_ attribute: AttributeDescription, _ reference: Value, entity: Value) throws {
        var fields = commonFields(
            name: attribute.name, entity: entity, isOptional: attribute.isOptional, isReadOnly: attribute.isDerived,
            isTransient: attribute.isTransient, spotlight: attribute.isIndexedBySpotlight,
            truth: attribute.isStoredInExternalRecord,
            ordered: false, cloudEncryption: attribute.allowsCloudEncryption, renaming: attribute.renamingIdentifier,
            modifier: attribute.versionHashModifier, userInfo: attribute.userInfo,
            validation: attribute.regularExpression.map { [$0] } ?? [])
        fields["NSAttributeType"] = .integer(Int64(attribute.type.rawValue))
        fields["NSAttributeValueClassName"] = writer.string(attribute.attributeValueClassName)
        fields["NSValueTransformerName"] = writer.string(attribute.valueTransformerName)
        fields["NSDefaultValue"] = ArchivedFoundationValue.archive(attribute.defaultValue, in: &writer)
        if attribute.isIndexed { fields["NSIsIndexed"] = .bool(true) }
        var flags: Int64 = 0
        if attribute.allowsExternalBinaryDataStorage { flags |= 0x4 }
        if attribute.preservesValueInHistoryOnDeletion { flags |= 0x10 }
        if let maximum = attribute.maximum.flatMap(Self.limit) {
            flags |= 0x1
            fields["NSMaxValueName"] = maximum
        }
        if let minimum = attribute.minimum.flatMap(Self.limit) {
            flags |= 0x2
            fields["NSMinValueName"] = minimum
        }
        fields["NSFlagsKey"] = .integer(flags)
        if let scalar = attribute.usesScalarValueType { fields["_TernUsesScalarValueType"] = .bool(scalar) }
        if let expression = attribute.derivationExpression {
            fields["NSDerivationExpression"] = ArchivedExpressionWriter.expression(expression, in: &writer)
            fields["NSFilteringPredicate"] = KeyedArchiveWriter.null
            fields["_TernExpressionText"] = writer.string(expression)
        }
        writer.fill(
            reference, classes: attribute.isDerived ? Self.derivedClasses : Self.attributeClasses, fields: fields)
    }

    private mutating func fillRelationship(
        _ relationship: RelationshipDescription, _ reference: Value, entity: Value, in entityName: String
    ) throws {
        var fields = commonFields(
            name: relationship.name, entity: entity, isOptional: relationship.isOptional, isReadOnly: false,
            isTransient: relationship.isTransient, spotlight: false, truth: false, ordered: relationship.isOrdered,
            cloudEncryption: false, renaming: relationship.renamingIdentifier,
            modifier: relationship.versionHashModifier,
            userInfo: relationship.userInfo, validation: [])
        let destination = relationship.destinationEntityName
        fields["NSDestinationEntity"] = entityReferences[destination] ?? KeyedArchiveWriter.null
        fields["_NSDestinationEntityName"] = writer.string(destination)
        fields["NSInverseRelationship"] =
            relationship.inverseName.flatMap { propertyReferences[destination]?[$0] } ?? KeyedArchiveWriter.null
        fields["_NSInverseRelationshipName"] = writer.string(relationship.inverseName)
        fields["NSMinCount"] = .integer(Int64(relationship.minCount))
        fields["NSMaxCount"] = .integer(Int64(relationship.maxCount))
        fields["NSDeleteRule"] = .integer(Int64(relationship.deleteRule.rawValue))
        if relationship.isIndexed { fields["NSIsIndexed"] = .bool(true) }
        writer.fill(reference, classes: Self.relationshipClasses, fields: fields)
    }

    private mutating func fillFetchedProperty(_ property: FetchedPropertyDescription, _ reference: Value, entity: Value)
        throws
    {
        var fields = commonFields(
            name: property.name, entity: entity, isOptional: property.isOptional, isReadOnly: true, isTransient: true,
            spotlight: false, truth: false, ordered: false, cloudEncryption: false, renaming: nil, modifier: nil,
            userInfo: property.userInfo, validation: [])
        fields["NSFetchRequest"] = try fetchRequest(entity: property.entityName, predicate: property.predicate)
        fields["_NSFetchRequestEntityName"] = writer.string(property.entityName)
        writer.fill(reference, classes: Self.fetchedClasses, fields: fields)
    }

    // MARK: - Non public

    private mutating func commonFields(
        name: String, entity: Value, isOptional: Bool, isReadOnly: Bool, isTransient: Bool, spotlight: Bool,
        truth: Bool,
        ordered: Bool, cloudEncryption: Bool, renaming: String?, modifier: String?, userInfo: [String: String],
        validation: [String]
    ) -> [String: Value] {
        var packed: Int64 = 1
        var fields: [String: Value] = [
            "NSPropertyName": writer.string(name), "NSEntity": entity,
            "NSRenamingIdentifier": writer.string(renaming ?? name),
        ]
        for (isSet, bit, key) in [
            (isOptional, 0x2, "NSIsOptional"), (isReadOnly, 0x4, "NSIsReadOnly"), (isTransient, 0x8, "NSIsTransient"),
            (spotlight, 0x100, "NSIndexedBySpotlight"), (truth, 0x200, "NSIsStoredInTruth"),
            (ordered, 0x400, "NSIsOrdered"),
            (cloudEncryption, 0x800, "NSAllowsCloudEncryption"),
        ] where isSet {
            packed |= Int64(bit)
            fields[key] = .bool(true)
        }
        if validation.isEmpty {
            packed |= 0x10 | 0x20
        } else {
            // A regular expression becomes the validation predicate `SELF MATCHES "…"`, as Xcode compiles it.
            let predicates = validation.map { pattern in
                ArchivedExpressionWriter.predicate(
                    .compare(.evaluatedObject, .matches, .constant(.string(pattern))), in: &writer)
            }
            fields["NSValidationPredicates"] = writer.array(predicates)
            fields["NSValidationWarnings"] = writer.array(
                validation.map { _ in writer.string("Value does not match the pattern.") })
        }
        if userInfo.isEmpty { packed |= 0x40 } else { fields["NSUserInfo"] = self.userInfo(userInfo) }
        if let modifier, !modifier.isEmpty {
            fields["NSVersionHashModifier"] = writer.string(modifier)
        } else {
            packed |= 0x80
        }
        fields["_P"] = .integer(packed)
        return fields
    }

    private mutating func fetchRequest(entity: String, predicate: String?, settings: [String: String] = [:]) throws
        -> Value
    {
        var fields: [String: Value] = [
            "NSEntity": entityReferences[entity] ?? KeyedArchiveWriter.null, "NSPredicate": KeyedArchiveWriter.null,
            "NSFetchLimit": .integer(0), "NSFetchOffset": .integer(0), "NSBatchSize": .integer(0),
            "NSResultType": .integer(0),
            "NSHasFetchRequestFlags": .bool(true), "NSFetchRequestFlags": .integer(30),
        ]
        if let predicate {
            if let parsed = try? FetchPredicate(predicate) {
                fields["NSPredicate"] = ArchivedExpressionWriter.predicate(parsed, in: &writer)
            }
            fields["_TernPredicateText"] = writer.string(predicate)
        }
        if !settings.isEmpty { fields["_TernSettings"] = userInfo(settings) }
        return writer.object(Self.fetchRequestClasses, fields: fields)
    }

    private mutating func fetchRequestTemplates() throws -> Value {
        guard !model.fetchRequestTemplates.isEmpty else { return KeyedArchiveWriter.null }
        var entries = [(key: String, value: Value)]()
        for template in model.fetchRequestTemplates {
            entries.append(
                (
                    key: template.name,
                    value: try fetchRequest(
                        entity: template.entityName, predicate: template.predicate, settings: template.settings)
                ))
        }
        return writer.dictionary(entries)
    }

    private mutating func userInfo(_ info: [String: String]) -> Value {
        writer.dictionary(info.sorted { $0.key < $1.key }.map { (key: $0.key, value: writer.string($0.value)) })
    }

    private func propertyNames(of entity: String) -> [String] {
        model.allAttributes(of: entity).map(\.name) + model.allRelationships(of: entity).map(\.name)
            + model.allFetchedProperties(of: entity).map(\.name)
    }

    /// Refuses a model whose parents are missing or form a cycle, which cannot be archived.
    private func checkInheritance() throws {
        guard let issue = model.inheritanceIssues.first else { return }
        throw TernError(.invalidModel, "The model cannot be encoded: \(issue.message).", entity: issue.entityName)
    }

    private static func limit(_ value: AttributeValue) -> Value? {
        switch value {
        case .integer(let number): .integer(number)
        case .double(let number): .real(number)
        case .decimal(let number): .real(NSDecimalNumber(decimal: number).doubleValue)
        case .date(let date): .real(date.timeIntervalSinceReferenceDate)
        default: nil
        }
    }
}
