/// One difference between two model versions, as a migration plan lists it.
///
/// ```swift
/// let inference = MappingInference(from: v1, to: v2)
/// for change in inference.changes { print(change) }   // "rename attribute Note.name to title"
/// ```
public struct ModelChange: Sendable, Hashable, Codable, CustomStringConvertible {
    /// A kind of change. New kinds may be added in any release.
    public struct Kind: Hashable, Sendable, Codable, CustomStringConvertible {
        /// The kind's stable spelling.
        public let rawValue: String

        /// Creates a kind. Use the static members.
        package init(_ rawValue: String) { self.rawValue = rawValue }

        /// The kind's stable spelling.
        public var description: String { rawValue }

        /// An entity is added.
        public static let addEntity = Kind("addEntity")
        /// An entity is removed with its objects.
        public static let removeEntity = Kind("removeEntity")
        /// An entity is renamed (through its renaming identifier).
        public static let renameEntity = Kind("renameEntity")
        /// An entity gets another parent.
        public static let moveEntity = Kind("moveEntity")
        /// A property is added.
        public static let addProperty = Kind("addProperty")
        /// A property is removed with its values.
        public static let removeProperty = Kind("removeProperty")
        /// A property is renamed (through its renaming identifier).
        public static let renameProperty = Kind("renameProperty")
        /// A property moves up or down the inheritance tree.
        public static let moveProperty = Kind("moveProperty")
        /// An attribute's type changes.
        public static let changeType = Kind("changeType")
        /// A property becomes optional or required.
        public static let changeOptionality = Kind("changeOptionality")
        /// A relationship becomes to-many, ordered or unordered.
        public static let changeCardinality = Kind("changeCardinality")
        /// Links to objects of an entity that left a relationship's inheritance tree are dropped
        /// (the objects stay).
        public static let dropLinks = Kind("dropLinks")
        /// An explicit entity mapping runs.
        public static let entityMapping = Kind("entityMapping")

        /// Decodes the spelling.
        public init(from decoder: any Decoder) throws {
            rawValue = try decoder.singleValueContainer().decode(String.self)
        }

        /// Encodes the spelling.
        public func encode(to encoder: any Encoder) throws {
            var container = encoder.singleValueContainer()
            try container.encode(rawValue)
        }
    }

    /// The kind of change.
    public var kind: Kind
    /// The entity changed, in the destination model (the source model for removals).
    public var entityName: String
    /// The property changed, if any.
    public var propertyName: String?
    /// The change in words, such as `rename attribute Note.name to title`.
    public var summary: String

    /// Creates a change.
    ///
    /// - Parameters:
    ///   - kind: The kind of change.
    ///   - entity: The entity changed.
    ///   - property: The property changed.
    ///   - summary: The change in words.
    public init(_ kind: Kind, entity: String, property: String? = nil, _ summary: String) {
        self.kind = kind
        self.entityName = entity
        self.propertyName = property
        self.summary = summary
    }

    /// The change in words.
    public var description: String { summary }
}
