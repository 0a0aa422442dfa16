/// An entity with its inherited properties resolved, cached by a context for fast lookups.
final class EntitySchema: Sendable {
    let entity: EntityDescription
    /// Own and inherited attributes, by name.
    let attributes: [String: AttributeDescription]
    /// Own and inherited relationships, by name.
    let relationships: [String: RelationshipDescription]
    /// The entity and every entity below it.
    let kinds: Set<String>
    /// Uniqueness constraints of the entity and its ancestors, with the entity that declares each.
    let uniquenessConstraints: [(entity: String, properties: [String])]

    init(entity: EntityDescription, model: ManagedObjectModel) {
        self.entity = entity
        self.attributes = Dictionary(uniqueKeysWithValues: model.allAttributes(of: entity.name).map { ($0.name, $0) })
        self.relationships = Dictionary(
            uniqueKeysWithValues: model.allRelationships(of: entity.name).map { ($0.name, $0) })
        self.kinds = Set([entity.name] + model.allSubentities(of: entity.name).map(\.name))
        self.uniquenessConstraints = ([entity] + model.ancestors(of: entity.name)).flatMap { declaring in
            declaring.uniquenessConstraints.map { (entity: declaring.name, properties: $0) }
        }
    }

    var name: String { entity.name }

    /// The names of the stored (non-transient) properties.
    var storedPropertyNames: [String] {
        attributes.values.filter { !$0.isTransient }.map(\.name)
            + relationships.values.filter { !$0.isTransient }.map(\.name)
    }
}
