/// Any property of an entity: an attribute, a relationship or a fetched property.
///
/// Core Data's `NSPropertyDescription` is a class hierarchy; here a property is one of three
/// value types, and this enum holds any of them when the kind does not matter up front.
///
/// ```swift
/// switch model.property(named: "owner", inEntity: "SportCar") {
/// case .relationship(let owner)?: print(owner.destinationEntityName)   // "Person"
/// default: break
/// }
/// ```
public enum PropertyDescription: Sendable, Hashable {
    /// An attribute.
    case attribute(AttributeDescription)
    /// A relationship.
    case relationship(RelationshipDescription)
    /// A fetched property.
    case fetchedProperty(FetchedPropertyDescription)

    /// The property's name.
    public var name: String {
        switch self {
        case .attribute(let attribute): attribute.name
        case .relationship(let relationship): relationship.name
        case .fetchedProperty(let fetched): fetched.name
        }
    }

    /// Whether the property is stored: an attribute or relationship that is not transient.
    ///
    /// Only stored properties enter an entity's version hash.
    public var isStored: Bool {
        switch self {
        case .attribute(let attribute): !attribute.isTransient
        case .relationship(let relationship): !relationship.isTransient
        case .fetchedProperty: false
        }
    }
}

extension EntityDescription {
    /// The entity's own properties: attributes, then relationships, then fetched properties,
    /// each group sorted by name.
    ///
    /// - Complexity: O(*p*) in the number of own properties.
    public var properties: [PropertyDescription] {
        attributes.map(PropertyDescription.attribute)
            + relationships.map(PropertyDescription.relationship)
            + fetchedProperties.map(PropertyDescription.fetchedProperty)
    }
}
