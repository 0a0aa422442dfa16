/// An attribute or relationship description, with the chainable modifiers both share.
///
/// Each modifier returns a modified copy, so modifiers chain in the builder:
///
/// ```swift
/// Attribute("title", .string).required().renamed(from: "name")
/// Relationship("owner", to: "Person", inverse: "cars").transient()
/// ```
public protocol BuildableProperty: Sendable {
    /// Whether the property may be empty when its object is saved.
    var isOptional: Bool { get set }
    /// Whether the property lives only in memory and is never stored.
    var isTransient: Bool { get set }
    /// The identifier that names the property this one was renamed from.
    var renamingIdentifier: String? { get set }
    /// Text that forces a new version hash without any other change.
    var versionHashModifier: String? { get set }
    /// Free-form keys and values for the application.
    var userInfo: [String: String] { get set }
}

extension BuildableProperty {
    /// A copy that must have a value when its object is saved (not optional).
    public func required() -> Self { updating { $0.isOptional = false } }

    /// A copy that may be empty when its object is saved (Core Data's default).
    public func optional() -> Self { updating { $0.isOptional = true } }

    /// A copy that lives only in memory and is never stored.
    public func transient() -> Self { updating { $0.isTransient = true } }

    /// A copy that records the name the property had in the previous model version.
    ///
    /// - Parameter identifier: The previous name (Xcode's renaming identifier).
    public func renamed(from identifier: String) -> Self { updating { $0.renamingIdentifier = identifier } }

    /// A copy with a version hash modifier, to force a new version hash.
    ///
    /// - Parameter modifier: Any text; changing it changes the version hash.
    public func versionHashModifier(_ modifier: String) -> Self { updating { $0.versionHashModifier = modifier } }

    /// A copy with one more user-info entry.
    ///
    /// - Parameters:
    ///   - key: The entry's key.
    ///   - value: Its value.
    public func userInfo(_ key: String, _ value: String) -> Self { updating { $0.userInfo[key] = value } }

    // MARK: - Non public

    /// A copy with one change applied.
    func updating(_ change: (inout Self) -> Void) -> Self {
        var copy = self
        change(&copy)
        return copy
    }
}

extension AttributeDescription: BuildableProperty {}
extension RelationshipDescription: BuildableProperty {}
