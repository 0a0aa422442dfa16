/// A stored or transient value of an entity: Core Data's `NSAttributeDescription`.
///
/// Attributes are plain values. Build them with the model builder or read them from an Xcode
/// model file; a ``ManagedObjectModel`` validates them as a whole.
///
/// ```swift
/// var servings = AttributeDescription(name: "servings", type: .integer16)
/// servings.defaultValue = .integer(2)
/// servings.minimum = .integer(1)
/// ```
public struct AttributeDescription: Sendable, Hashable {
    /// The attribute's name, unique among the entity's properties.
    public var name: String
    /// The attribute's type.
    public var type: AttributeType
    /// Whether the attribute may be nil when its object is saved.
    public var isOptional: Bool
    /// Whether the attribute lives only in memory and is never stored.
    public var isTransient: Bool
    /// The value a new object gets, or nil for none.
    public var defaultValue: AttributeValue?
    /// The smallest allowed value; for strings and binary data, the smallest length.
    public var minimum: AttributeValue?
    /// The largest allowed value; for strings and binary data, the largest length.
    public var maximum: AttributeValue?
    /// A regular expression that string values must match in full.
    public var regularExpression: String?
    /// Whether large binary values may be stored in a file beside the store.
    public var allowsExternalBinaryDataStorage: Bool
    /// Whether persistent history keeps the value of a deleted object (a tombstone).
    public var preservesValueInHistoryOnDeletion: Bool
    /// The name of the value transformer of a transformable attribute.
    public var valueTransformerName: String?
    /// The class of a transformable attribute's values (Xcode's `customClassName`).
    public var attributeValueClassName: String?
    /// The expression of a derived attribute, or nil for an ordinary one.
    public var derivationExpression: String?
    /// The identifier that names the property this one was renamed from (Xcode's `elementID`).
    public var renamingIdentifier: String?
    /// Text that forces a new version hash without any other change.
    public var versionHashModifier: String?
    /// Whether the attribute has a legacy single-property index (Xcode's `indexed`).
    public var isIndexed: Bool
    /// Whether Spotlight indexes the attribute.
    public var isIndexedBySpotlight: Bool
    /// Whether the attribute is also stored in an external record (Xcode's `storedInTruthFile`).
    public var isStoredInExternalRecord: Bool
    /// Whether CloudKit encrypts the attribute.
    public var allowsCloudEncryption: Bool
    /// Whether generated code uses a scalar type (code generation only).
    public var usesScalarValueType: Bool?
    /// Free-form keys and values for the application.
    public var userInfo: [String: String]

    /// Creates an attribute.
    ///
    /// - Parameters:
    ///   - name: The attribute's name.
    ///   - type: Its type.
    ///   - isOptional: Whether it may be nil on save. Core Data's default is `true`.
    ///   - isTransient: Whether it is never stored.
    ///   - defaultValue: The value new objects get.
    public init(
        name: String, type: AttributeType, isOptional: Bool = true, isTransient: Bool = false,
        defaultValue: AttributeValue? = nil
    ) {
        self.name = name
        self.type = type
        self.isOptional = isOptional
        self.isTransient = isTransient
        self.defaultValue = defaultValue
        self.minimum = nil
        self.maximum = nil
        self.regularExpression = nil
        self.allowsExternalBinaryDataStorage = false
        self.preservesValueInHistoryOnDeletion = false
        self.valueTransformerName = nil
        self.attributeValueClassName = nil
        self.derivationExpression = nil
        self.renamingIdentifier = nil
        self.versionHashModifier = nil
        self.isIndexed = false
        self.isIndexedBySpotlight = false
        self.isStoredInExternalRecord = false
        self.allowsCloudEncryption = false
        self.usesScalarValueType = nil
        self.userInfo = [:]
    }

    /// Whether the attribute is derived from an expression, and so read-only.
    public var isDerived: Bool { derivationExpression != nil }
}
