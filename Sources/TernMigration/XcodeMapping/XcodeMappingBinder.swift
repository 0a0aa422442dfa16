import Foundation
import TernCore
import TernFormats

/// Binds an Xcode mapping model to the versions of a model, as Xcode's mapping compiler and Core
/// Data do: finds its two versions, fills in the expressions Xcode autogenerates, turns undefined
/// mapping types into the kind their entities tell, translates every archived expression, and
/// checks that each custom policy and each `$entityPolicy` selector is registered.
///
/// Every problem is gathered, each naming the mapping model, the entity mapping, the property
/// and the expression, and refused at once, before any store is touched.
struct XcodeMappingBinder {
    /// The mapping model as its file describes it.
    let description: XcodeMappingDescription
    /// The versioned model it is bound to.
    let model: VersionedModel
    /// The policies custom entity mappings may name; nil to skip the check (reading only).
    let policies: MigrationPolicyRegistry?

    /// The source and destination versions of the mapping model.
    ///
    /// A version matches when each entity the entity mappings name has the version hash the
    /// file records for it: a `.cdm` records them in its entity mappings, an `.xcmappingmodel`
    /// in the models Xcode embeds (`sourcemodeldata`, `destinationmodeldata`), as Core Data
    /// matches a bundle's mapping models, even after the project or the model was renamed.
    /// Among several, the one equal in every entity wins, then the one the `.xcdatamodel` path
    /// names. Without hashes, or when none matches, the path names the version.
    ///
    /// - Throws: ``MigrationError`` with code ``MigrationError/Code/unknownVersion`` when no
    ///   version of the model matches.
    func versions() throws(MigrationError) -> (source: ModelVersion, destination: ModelVersion) {
        (try version(.source), try version(.destination))
    }

    /// The mapping model bound to its versions, named after the file.
    ///
    /// - Throws: ``MigrationError`` with code ``MigrationError/Code/unknownVersion`` as
    ///   ``versions()`` does, and ``MigrationError/Code/invalidMapping`` (or
    ///   ``MigrationError/Code/unknownPolicy`` when that is the only kind of problem) with one
    ///   failure per expression, policy or selector that cannot be used.
    func mappingModel() throws(MigrationError) -> (
        source: ModelVersion, destination: ModelVersion, mapping: MappingModel
    ) {
        let (source, destination) = try versions()
        var problems: [MigrationError] = []
        var entityMappings: [EntityMapping] = []
        for entity in description.entityMappings {
            entityMappings.append(
                bind(entity, source: source.model, destination: destination.model, problems: &problems))
        }
        guard problems.isEmpty else {
            let onlyPolicies = problems.allSatisfy { $0.code == .unknownPolicy }
            var error = MigrationError(
                onlyPolicies ? .unknownPolicy : .invalidMapping,
                "The Xcode mapping model \(description.name) cannot be used (\(problems.count) problem(s)); nothing was migrated",
                failures: problems)
            error.path = description.path
            throw error
        }
        var mapping = MappingModel(
            name: description.name, sourceHashes: source.model.entityVersionHashes,
            destinationHashes: destination.model.entityVersionHashes, entityMappings: entityMappings)
        mapping.order = .given
        return (source, destination, mapping)
    }

    // MARK: - Non public

    private enum Role: String {
        case source, destination
    }

    private func version(_ role: Role) throws(MigrationError) -> ModelVersion {
        let isSource = role == .source
        let name = isSource ? description.sourceVersionName : description.destinationVersionName
        let embedded = isSource ? description.sourceModelHashes : description.destinationModelHashes
        var recorded: [String: Data] = [:]
        for mapping in description.entityMappings {
            guard let entity = isSource ? mapping.sourceEntityName : mapping.destinationEntityName else { continue }
            let hash =
                (isSource ? mapping.sourceEntityVersionHash : mapping.destinationEntityVersionHash) ?? embedded?[entity]
            if let hash { recorded[entity] = hash }
        }
        let matching = model.versions.filter { version in
            let hashes = version.model.entityVersionHashes
            return !recorded.isEmpty && recorded.allSatisfy { hashes[$0.key] == $0.value }
        }
        let exact = matching.filter { $0.model.entityVersionHashes == embedded }
        if let version = exact.first(where: { $0.name == name }) ?? exact.first { return version }
        if let named = matching.first(where: { $0.name == name }) { return named }
        // Several versions may share the entities a mapping names: the first is the source, the last the destination.
        if let version = isSource ? matching.first : matching.last { return version }
        if let name, let version = model.version(named: name) { return version }
        let known = model.versions.map(\.name).joined(separator: ", ")
        let path = isSource ? description.sourceModelPath : description.destinationModelPath
        var error = MigrationError(
            .unknownVersion,
            "The Xcode mapping model \(description.name) was made for a \(role.rawValue) model "
                + (path.map { "(\($0)) " } ?? "") + "whose entity hashes match no version of \(model.name) (\(known)); "
                + "recreate it for these versions",
            version: name)
        error.path = description.path
        throw error
    }

    /// One entity mapping bound, its problems appended.
    private func bind(
        _ entity: EntityMappingDescription, source: ManagedObjectModel, destination: ManagedObjectModel,
        problems: inout [MigrationError]
    ) -> EntityMapping {
        let name = entity.effectiveName
        let policyName = entity.policyClassName.flatMap { $0.isEmpty ? nil : $0 }
        var kind = EntityMappingDescription.kind(
            of: entity.type, source: entity.sourceEntityName, destination: entity.destinationEntityName)
        let hasProperties = !entity.attributeMappings.isEmpty || !entity.relationshipMappings.isEmpty
        // Core Data's default policy runs the property mappings of a copy or of a custom mapping
        // without a policy as it runs a transform's.
        if kind == .copy && hasProperties || kind == .custom && policyName == nil { kind = .transform }
        func fail(_ message: String, property: String? = nil, code: MigrationError.Code = .invalidMapping) {
            var error = MigrationError(
                code, "mapping model \(description.name): \(message)", mapping: name,
                entity: property == nil
                    ? (entity.sourceEntityName ?? entity.destinationEntityName) : entity.destinationEntityName,
                property: property)
            error.path = description.path
            problems.append(error)
        }
        var filter: FetchPredicate?
        if let text = entity.filterPredicate {
            do { filter = try FetchPredicate(text) } catch {
                fail("the filter predicate '\(text)' does not parse: \(error.message)")
            }
        }
        var policy: (any EntityMigrationPolicy)?
        if let policyName, let policies {
            policy = policies.policy(named: policyName)
            if policy == nil {
                fail(
                    "no migration policy is registered under the class name \(policyName); register a Swift policy "
                        + "under that name (MigrationPolicyRegistry.register(_:named:))", code: .unknownPolicy)
            }
        }
        let sourceEntity = entity.sourceEntityName
        func isSourceKeyPath(_ path: String) -> Bool {
            guard let sourceEntity else { return false }
            var current = sourceEntity
            let names = path.split(separator: ".").map(String.init)
            for (offset, name) in names.enumerated() {
                switch source.property(named: name, inEntity: current) {
                case .relationship(let relationship)?: current = relationship.destinationEntityName
                case .attribute?, .fetchedProperty?: return offset == names.count - 1
                case nil: return false
                }
            }
            return true
        }
        func translate(_ property: PropertyMappingDescription, relationship: Bool) -> PropertyMapping {
            let inspector = relationship ? property.inspectorExpression(defaultMapping: nil) : nil
            guard let node = property.expression ?? inspector else {
                // A property mapping without an archived expression gets the one Xcode shows and
                // compiles: the source property of the same name. Xcode marks relationship
                // mappings autogenerateexpression and attribute mappings not, for the same result.
                guard let sourceEntity, kind != .add else { return PropertyMapping(property.name, nil) }
                if relationship {
                    return PropertyMapping(
                        property.name,
                        autogeneratedRelationship(
                            property.name, entity: entity, source: source, destination: destination))
                }
                guard let attribute = source.attribute(named: property.name, inEntity: sourceEntity) else {
                    return PropertyMapping(property.name, nil)
                }
                // A value whose type does not fit is left to the custom policy, which sets it (as
                // the app's does); without one, the check refuses it as Core Data would fail on it.
                let target = entity.destinationEntityName.flatMap {
                    destination.attribute(named: property.name, inEntity: $0)
                }
                if policyName != nil, let target, !ExpressionType(attribute.type).fits(target.type) {
                    return PropertyMapping(property.name, nil)
                }
                return PropertyMapping(property.name, .source(keyPath: [property.name]))
            }
            do throws(XcodeExpressionTranslation.Refusal) {
                let expression = try XcodeExpressionTranslation.valueExpression(node, isSourceKeyPath: isSourceKeyPath)
                for selector in expression.policySelectors where policies != nil {
                    if policyName == nil {
                        fail(
                            "'\(node)' calls $entityPolicy's \(selector), but the entity mapping names no policy class",
                            property: property.name)
                    } else if let policy, policy.expressionFunctions[selector] == nil {
                        fail(
                            "'\(node)' calls the selector \(selector), which the policy \(policyName ?? "") does not register; "
                                + "add it to the policy's expressionFunctions", property: property.name,
                            code: .unknownPolicy)
                    }
                }
                return PropertyMapping(property.name, expression)
            } catch {
                fail("the expression '\(node)' cannot be translated: \(error.reason)", property: property.name)
                return PropertyMapping(property.name, nil)
            }
        }
        var mapping = EntityMapping(
            name: name, kind: kind, source: kind == .add ? nil : entity.sourceEntityName,
            destination: kind == .remove ? nil : entity.destinationEntityName, filter: filter,
            attributes: kind == .remove ? [] : entity.attributeMappings.map { translate($0, relationship: false) },
            relationships: kind == .remove ? [] : entity.relationshipMappings.map { translate($0, relationship: true) },
            policy: policyName)
        mapping.userInfo = entity.userInfo
        return mapping
    }

    /// What Xcode writes for an autogenerated relationship mapping: the destination instances of
    /// the source relationship of the same name, under the entity mapping of this mapping model
    /// between the two relationships' destination entities (any mapping when there is none).
    private func autogeneratedRelationship(
        _ name: String, entity: EntityMappingDescription, source: ManagedObjectModel, destination: ManagedObjectModel
    ) -> ValueExpression? {
        guard let sourceEntity = entity.sourceEntityName,
            let sourceRelationship = source.relationship(named: name, inEntity: sourceEntity)
        else { return nil }
        let target = entity.destinationEntityName.flatMap { destination.relationship(named: name, inEntity: $0) }
        let candidates = description.entityMappings.filter {
            $0.sourceEntityName == sourceRelationship.destinationEntityName
                && (target == nil || $0.destinationEntityName == target?.destinationEntityName)
        }
        guard candidates.count == 1, let mapping = candidates.first else {
            return .call(.destinationInstances, [.source(keyPath: [name])])
        }
        return .call(.destinationInstances, [.literal(.string(mapping.effectiveName)), .source(keyPath: [name])])
    }
}
