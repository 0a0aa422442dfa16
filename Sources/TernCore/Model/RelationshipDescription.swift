/// What happens to related objects when an object is deleted: Core Data's `NSDeleteRule`.
public enum DeleteRule: Int, Sendable, Hashable, CaseIterable {
    /// Nothing is done; the related objects keep a reference to the deleted object.
    case noAction = 0
    /// The related objects' inverse reference is cleared.
    case nullify = 1
    /// The related objects are deleted too.
    case cascade = 2
    /// The delete is refused while related objects exist.
    case deny = 3

    /// Creates a rule from the `deletionRule` spelling of Xcode's model files
    /// (`Nullify`, `Cascade`, `Deny`, `No Action`).
    public init?(xcodeName: String) {
        guard let match = Self.allCases.first(where: { $0.xcodeName == xcodeName }) else { return nil }
        self = match
    }

    /// The `deletionRule` spelling of Xcode's model files.
    public var xcodeName: String {
        switch self {
        case .noAction: "No Action"
        case .nullify: "Nullify"
        case .cascade: "Cascade"
        case .deny: "Deny"
        }
    }
}

/// A reference from an entity to another: Core Data's `NSRelationshipDescription`.
///
/// ```swift
/// var ingredients = RelationshipDescription(name: "ingredients", destination: "Ingredient")
/// ingredients.isToMany = true
/// ingredients.inverseName = "recipe"
/// ingredients.deleteRule = .cascade
/// ```
public struct RelationshipDescription: Sendable, Hashable {
    /// The relationship's name, unique among the entity's properties.
    public var name: String
    /// The name of the destination entity.
    public var destinationEntityName: String
    /// The name of the inverse relationship on the destination entity, if any.
    public var inverseName: String?
    /// Whether the relationship may hold many objects.
    public var isToMany: Bool
    /// Whether a to-many relationship keeps its objects in order.
    public var isOrdered: Bool
    /// The smallest number of objects of a relationship that is not empty (0 for no minimum).
    ///
    /// An empty relationship is allowed when it is optional, whatever its minimum: see
    /// ``isRequired``.
    public var minCount: Int
    /// The largest number of objects; 0 means unbounded. A to-one relationship has 1.
    public var maxCount: Int
    /// What deleting the source object does to the destination objects.
    public var deleteRule: DeleteRule
    /// Whether the relationship may be empty when its object is saved (Xcode's `optional`).
    public var isOptional: Bool
    /// Whether the relationship lives only in memory and is never stored.
    public var isTransient: Bool
    /// The identifier that names the property this one was renamed from (Xcode's `elementID`).
    public var renamingIdentifier: String?
    /// Text that forces a new version hash without any other change.
    public var versionHashModifier: String?
    /// Whether the relationship has a legacy index (Xcode's `indexed`).
    public var isIndexed: Bool
    /// Free-form keys and values for the application.
    public var userInfo: [String: String]

    /// Creates a relationship.
    ///
    /// - Parameters:
    ///   - name: The relationship's name.
    ///   - destination: The destination entity's name.
    ///   - inverse: The inverse relationship's name on the destination.
    ///   - toMany: Whether it holds many objects; a to-many relationship is unbounded.
    ///   - ordered: Whether a to-many relationship is ordered.
    ///   - deleteRule: What deleting the source does to the destinations.
    ///   - isOptional: Whether it may be empty on save.
    public init(
        name: String, destination: String, inverse: String? = nil, toMany: Bool = false,
        ordered: Bool = false, deleteRule: DeleteRule = .nullify, isOptional: Bool = true
    ) {
        self.name = name
        self.destinationEntityName = destination
        self.inverseName = inverse
        self.isToMany = toMany
        self.isOrdered = ordered
        self.minCount = 0
        self.maxCount = toMany ? 0 : 1
        self.deleteRule = deleteRule
        self.isOptional = isOptional
        self.isTransient = false
        self.renamingIdentifier = nil
        self.versionHashModifier = nil
        self.isIndexed = false
        self.userInfo = [:]
    }
}

extension RelationshipDescription {
    /// Whether an object must hold at least one object in the relationship when it is saved:
    /// the relationship is not optional.
    ///
    /// As in Core Data, ``minCount`` and ``maxCount`` constrain only a relationship that is not
    /// empty. An optional relationship with a minimum count, such as the
    /// `optional="YES" minCount="1" maxCount="1"` older Xcode versions write for optional to-one
    /// relationships, may be empty: it is not required. The counts stay as written, since they
    /// enter the version hash.
    ///
    /// ```swift
    /// var owner = RelationshipDescription(name: "owner", destination: "Person")
    /// owner.minCount = 1
    /// owner.isRequired           // false: optional, so it may be empty
    /// owner.allows(count: 0)     // true
    /// ```
    public var isRequired: Bool { !isOptional }

    /// Whether an object may hold this many objects in the relationship when it is saved.
    ///
    /// - Parameter count: The number of related objects.
    /// - Returns: For no objects, whether the relationship is optional; otherwise whether the
    ///   count is at least ``minCount`` and, when ``maxCount`` is not 0, at most ``maxCount``.
    public func allows(count: Int) -> Bool {
        guard count > 0 else { return !isRequired }
        return count >= minCount && (maxCount == 0 || count <= maxCount)
    }
}
