import TernRelational

/// A stored value a read could not give, which a store opened with
/// ``SQLiteConfiguration/UnreadableValues/readAsNil`` read as nil: where it is and why.
public struct UnreadableValue: Sendable, Hashable {
    /// Why a value could not be read.
    public enum Kind: String, Sendable, Hashable, CaseIterable {
        /// The column holds something the attribute's type cannot read (text in a Date column,
        /// a blob in a Decimal column).
        case invalidValue
        /// The value is kept in an external data file that is missing or unreadable, or the
        /// column references one by a name that is not a UUID.
        case missingExternalData
    }

    /// Why the value could not be read.
    public var kind: Kind
    /// The entity of the object.
    public var entityName: String
    /// The object's primary key (`Z_PK`), when known.
    public var primaryKey: Int64?
    /// The attribute.
    public var propertyName: String
    /// The external data file, for a missing one.
    public var path: String?

    /// Creates the record of an unreadable value.
    ///
    /// - Parameters:
    ///   - kind: Why the value could not be read.
    ///   - entityName: The entity of the object.
    ///   - primaryKey: The object's primary key, when known.
    ///   - propertyName: The attribute.
    ///   - path: The external data file, for a missing one.
    public init(_ kind: Kind, entityName: String, primaryKey: Int64?, propertyName: String, path: String? = nil) {
        self.kind = kind
        self.entityName = entityName
        self.primaryKey = primaryKey
        self.propertyName = propertyName
        self.path = path
    }

    /// Where the value is, as `Entity/p<key>.property`.
    public var location: String {
        entityName + (primaryKey.map { "/p\($0)" } ?? "") + "." + propertyName
    }
}

/// The values a store opened with ``SQLiteConfiguration/UnreadableValues/readAsNil`` read as
/// nil: how many, and the first few, in the order they were read. Its size is bounded whatever
/// the number of values.
public struct UnreadableValueLog: Sendable, Hashable {
    /// The most values kept in ``first``.
    public static let keptCount = 10

    /// How many values were read as nil; a value read twice counts twice.
    public private(set) var count = 0
    /// The first values read as nil, at most ``keptCount``.
    public private(set) var first: [UnreadableValue] = []

    /// An empty log.
    public init() {}

    /// Whether no value was read as nil.
    public var isEmpty: Bool { count == 0 }

    /// Counts a value, and keeps it while fewer than ``keptCount`` are kept.
    ///
    /// - Parameter value: The value read as nil.
    public mutating func add(_ value: UnreadableValue) {
        count += 1
        if first.count < Self.keptCount { first.append(value) }
    }
}
