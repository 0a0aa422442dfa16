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
    /// The attribute names in the order of the objects' packed values.
    let attributeKeys: AttributeKeys
    /// ``attributeKeys``, reached without counting a reference: see ``position(of:)``.
    private let unmanagedKeys: Unmanaged<AttributeKeys>
    /// The attributes in the order of ``attributeKeys``.
    let orderedAttributes: [AttributeDescription]
    /// The positions of the transient attributes in ``attributeKeys``.
    let transientPositions: [Int]
    /// Whether some relationship is transient.
    let hasTransientRelationships: Bool
    /// The default values of a new object.
    let defaultValues: PackedAttributes
    /// The space of the entity's temporary IDs.
    let temporarySpace: ObjectIDSpace

    init(entity: EntityDescription, model: ManagedObjectModel) {
        self.entity = entity
        let attributes = model.allAttributes(of: entity.name)
        self.attributes = Dictionary(uniqueKeysWithValues: attributes.map { ($0.name, $0) })
        let relationships = model.allRelationships(of: entity.name)
        self.relationships = Dictionary(uniqueKeysWithValues: relationships.map { ($0.name, $0) })
        self.kinds = Set([entity.name] + model.allSubentities(of: entity.name).map(\.name))
        self.uniquenessConstraints = ([entity] + model.ancestors(of: entity.name)).flatMap { declaring in
            declaring.uniquenessConstraints.map { (entity: declaring.name, properties: $0) }
        }
        let keys = AttributeKeys.shared(names: attributes.map(\.name))
        self.attributeKeys = keys
        self.unmanagedKeys = Unmanaged.passUnretained(keys)
        self.orderedAttributes = attributes
        self.transientPositions = attributes.indices.filter { attributes[$0].isTransient }
        self.hasTransientRelationships = relationships.contains(where: \.isTransient)
        self.temporarySpace = .shared(entityName: entity.name, storeIdentifier: nil)
        self.defaultValues =
            attributes.contains { $0.defaultValue != nil }
            ? PackedAttributes(keys: keys, values: attributes.map(\.defaultValue)) : PackedAttributes(keys: keys)
    }

    var name: String { entity.name }

    /// The position of an attribute in ``attributeKeys``, or nil when the entity has none of
    /// that name: what every read of an attribute by name asks.
    ///
    /// - Complexity: O(1) on average.
    @inline(__always) func position(of name: String) -> Int? {
        // Without retaining the keys (this schema holds them, and `AttributeKeys.shared(names:)`
        // keeps them for the process): they are shared with every store and context, so
        // counting references to them from several threads at once would make each read contend.
        unmanagedKeys._withUnsafeGuaranteedRef { $0.position(of: name) }
    }

    /// The names of the stored (non-transient) properties.
    var storedPropertyNames: [String] {
        attributes.values.filter { !$0.isTransient }.map(\.name)
            + relationships.values.filter { !$0.isTransient }.map(\.name)
    }
}
