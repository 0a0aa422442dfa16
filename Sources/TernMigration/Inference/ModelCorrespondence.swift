import TernCore

/// Which source entity and property each destination entity and property comes from, following
/// renaming identifiers, possibly through intermediate versions.
///
/// A destination element matches a source element whose name is its renaming identifier, or
/// whose own renaming identifier is the same; failing that, one with the same name. Across
/// several versions the matches of each adjacent pair are chained, so `heading` (renamed from
/// `title`) in v3 comes from `name` in v1 when v2's `title` was renamed from `name`.
struct ModelCorrespondence {
    /// The source entity of each destination entity that has one.
    var entities: [String: String] = [:]
    /// For each destination entity, the source property of each of its stored properties that has one.
    var properties: [String: [String: String]] = [:]

    /// An empty correspondence.
    init() {}

    /// The correspondence between adjacent or distant models.
    ///
    /// - Parameter models: The source model, any intermediate versions in order, then the destination.
    init(chain models: [ManagedObjectModel]) {
        guard models.count >= 2 else {
            for entity in models.first?.entities ?? [] {
                entities[entity.name] = entity.name
                properties[entity.name] = Dictionary(
                    uniqueKeysWithValues: Self.storedNames(models[0], entity.name).map { ($0, $0) })
            }
            return
        }
        self = ModelCorrespondence(source: models[0], destination: models[1])
        for index in 2..<models.count {
            let next = ModelCorrespondence(source: models[index - 1], destination: models[index])
            self = next.composed(with: self)
        }
    }

    /// The correspondence between two adjacent models.
    init(source: ManagedObjectModel, destination: ManagedObjectModel) {
        let pairs = Self.match(
            destination.entities.map { ($0.name, $0.renamingIdentifier) },
            source.entities.map { ($0.name, $0.renamingIdentifier) })
        entities = pairs
        for (destinationEntity, sourceEntity) in pairs {
            properties[destinationEntity] = Self.match(
                Self.storedProperties(destination, destinationEntity), Self.storedProperties(source, sourceEntity))
        }
    }

    /// The source entity whose own stored property a destination property of an entity comes from.
    func sourceProperty(_ property: String, ofEntity entity: String) -> String? {
        properties[entity]?[property]
    }

    // MARK: - Non public

    /// This correspondence (from an intermediate model to the destination) after `earlier`
    /// (from the source to the intermediate model).
    private func composed(with earlier: ModelCorrespondence) -> ModelCorrespondence {
        var result = ModelCorrespondence()
        for (destinationEntity, middleEntity) in entities {
            guard let sourceEntity = earlier.entities[middleEntity] else { continue }
            result.entities[destinationEntity] = sourceEntity
            var map: [String: String] = [:]
            for (destinationProperty, middleProperty) in properties[destinationEntity] ?? [:] {
                if let sourceProperty = earlier.properties[middleEntity]?[middleProperty] {
                    map[destinationProperty] = sourceProperty
                }
            }
            result.properties[destinationEntity] = map
        }
        return result
    }

    /// Matches destination names to source names: renames first, then equal names, each source used once.
    private static func match(_ destinations: [(String, String?)], _ sources: [(String, String?)]) -> [String: String] {
        var result: [String: String] = [:]
        var claimed: Set<String> = []
        let sourceNames = Set(sources.map(\.0))
        for (name, identifier) in destinations {
            guard let identifier, !identifier.isEmpty else { continue }
            let candidate =
                sourceNames.contains(identifier) && identifier != name
                ? identifier : sources.first { $0.1 == identifier && !claimed.contains($0.0) }?.0
            if let candidate, !claimed.contains(candidate) {
                result[name] = candidate
                claimed.insert(candidate)
            }
        }
        for (name, _) in destinations where result[name] == nil && sourceNames.contains(name) && !claimed.contains(name)
        {
            result[name] = name
            claimed.insert(name)
        }
        return result
    }

    /// An entity's stored attributes and relationships, own and inherited, with their renaming identifiers.
    private static func storedProperties(_ model: ManagedObjectModel, _ entity: String) -> [(String, String?)] {
        model.allAttributes(of: entity).filter { !$0.isTransient }.map { ($0.name, $0.renamingIdentifier) }
            + model.allRelationships(of: entity).filter { !$0.isTransient }.map { ($0.name, $0.renamingIdentifier) }
    }

    private static func storedNames(_ model: ManagedObjectModel, _ entity: String) -> [String] {
        storedProperties(model, entity).map(\.0)
    }
}
