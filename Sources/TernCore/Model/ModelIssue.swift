/// One problem found by validating a model: what is wrong, where, and what to do.
///
/// ```swift
/// for issue in model.validationIssues {
///     print(issue)   // "Recipe.ingredients: the inverse 'recipe' does not exist on Ingredient; …"
/// }
/// ```
public struct ModelIssue: Sendable, Hashable, CustomStringConvertible {
    /// A kind of problem. New kinds may be added in any release: match on the ones you handle.
    public struct Kind: Hashable, Sendable, CustomStringConvertible {
        /// The kind's stable spelling.
        public let rawValue: String

        /// Creates a kind. Use the static members; this is for kinds defined elsewhere in Tern.
        package init(_ rawValue: String) { self.rawValue = rawValue }

        /// The kind's stable spelling.
        public var description: String { rawValue }

        /// A name is empty or is not an identifier.
        public static let invalidName = Kind("invalidName")
        /// Two entities share a name.
        public static let duplicateEntity = Kind("duplicateEntity")
        /// Two properties of an entity share a name, or a subentity redefines an inherited one.
        public static let duplicateProperty = Kind("duplicateProperty")
        /// An entity's parent is not in the model.
        public static let unknownParent = Kind("unknownParent")
        /// An entity is its own ancestor.
        public static let inheritanceCycle = Kind("inheritanceCycle")
        /// A relationship, fetched property or fetch request names an entity not in the model.
        public static let unknownEntity = Kind("unknownEntity")
        /// A relationship's inverse does not exist on its destination, or is not a relationship.
        public static let unknownInverse = Kind("unknownInverse")
        /// A relationship's inverse does not point back to it.
        public static let mismatchedInverse = Kind("mismatchedInverse")
        /// A relationship's counts, to-many flag and ordering disagree.
        public static let invalidCardinality = Kind("invalidCardinality")
        /// An attribute's type is undefined although the attribute is stored.
        public static let undefinedType = Kind("undefinedType")
        /// A default value does not fit its attribute.
        public static let invalidDefaultValue = Kind("invalidDefaultValue")
        /// A minimum or maximum is of the wrong kind, or the minimum exceeds the maximum.
        public static let invalidRange = Kind("invalidRange")
        /// A regular expression does not compile or does not apply.
        public static let invalidRegularExpression = Kind("invalidRegularExpression")
        /// A uniqueness constraint or fetch index names an unknown or unsuitable property.
        public static let invalidConstraint = Kind("invalidConstraint")
        /// A configuration lists an entity not in the model.
        public static let unknownConfigurationEntity = Kind("unknownConfigurationEntity")
    }

    /// The kind of problem.
    public var kind: Kind
    /// The entity at fault (for a configuration, the entity it wrongly lists).
    public var entityName: String
    /// The property at fault, if the problem is in one property.
    public var propertyName: String?
    /// What is wrong and what to do about it.
    public var message: String

    /// Creates an issue.
    ///
    /// - Parameters:
    ///   - kind: The kind of problem.
    ///   - entity: The entity at fault.
    ///   - property: The property at fault, if any.
    ///   - message: What is wrong and what to do.
    public init(_ kind: Kind, entity: String, property: String? = nil, _ message: String) {
        self.kind = kind
        self.entityName = entity
        self.propertyName = property
        self.message = message
    }

    /// The place (`Entity` or `Entity.property`) followed by the message.
    public var description: String {
        "\(propertyName.map { "\(entityName).\($0)" } ?? entityName): \(message)"
    }
}
