/// Something a migration step relaxes or drops, counted in the store: it does not stop the
/// migration, as it does not stop Core Data's lightweight migration, but the plan and the report
/// say so, with the number of objects or links concerned.
///
/// ```swift
/// let plan = try StoreMigrator().plan(forStoreAt: .file(url), model: versions)
/// for warning in plan.steps.flatMap(\.warnings) { print(warning) }
/// // 3 Album objects link Album.cover to objects that are not Image objects; those links are dropped
/// ```
public struct MigrationWarning: Sendable, Hashable, Codable, CustomStringConvertible {
    /// A kind of warning. New kinds may be added in any release.
    public struct Kind: Hashable, Sendable, Codable, CustomStringConvertible {
        /// The kind's stable spelling.
        public let rawValue: String

        /// Creates a kind. Use the static members.
        package init(_ rawValue: String) { self.rawValue = rawValue }

        /// The kind's stable spelling.
        public var description: String { rawValue }

        /// Links to objects that a relationship can no longer hold are dropped (the objects stay):
        /// its destination entity changed, or their entity left its inheritance tree.
        public static let droppedLinks = Kind("droppedLinks")
        /// Objects hold a number of related objects that the relationship's new bounds (required,
        /// minimum or maximum count) do not allow; they are kept as they are.
        public static let relaxedCount = Kind("relaxedCount")
        /// Values do not fit an attribute's new type (an integer wider than the new width, or a
        /// Boolean other than 0 and 1); they are kept as stored.
        public static let valuesOutOfRange = Kind("valuesOutOfRange")

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

    /// The kind of warning.
    public var kind: Kind
    /// The destination entity concerned.
    public var entityName: String
    /// The destination property concerned.
    public var propertyName: String
    /// How many objects (or, for ``Kind/droppedLinks``, links) are concerned; never 0.
    public var count: Int
    /// The warning in words, with the count and what happens to them.
    public var message: String

    /// Creates a warning.
    ///
    /// - Parameters:
    ///   - kind: The kind of warning.
    ///   - entity: The destination entity concerned.
    ///   - property: The destination property concerned.
    ///   - count: How many objects or links are concerned.
    ///   - message: The warning in words.
    public init(_ kind: Kind, entity: String, property: String, count: Int, _ message: String) {
        self.kind = kind
        self.entityName = entity
        self.propertyName = property
        self.count = count
        self.message = message
    }

    /// The warning in words.
    public var description: String { message }
}
