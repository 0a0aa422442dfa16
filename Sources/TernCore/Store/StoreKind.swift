/// The type of a store: Core Data's store type strings (`NSSQLiteStoreType`, …).
///
/// An open set: new store modules add their own kinds.
///
/// ```swift
/// if store.kind == .sqlite { … }
/// let custom = StoreKind("PostgreSQL")
/// ```
public struct StoreKind: Hashable, Sendable, CustomStringConvertible {
    /// The store type as Core Data's metadata spells it (`NSStoreType`).
    public let rawValue: String

    /// Creates a store kind.
    ///
    /// - Parameter rawValue: The store type string.
    public init(_ rawValue: String) { self.rawValue = rawValue }

    /// The store type string.
    public var description: String { rawValue }

    /// An SQLite store (`"SQLite"`).
    public static let sqlite = StoreKind("SQLite")
    /// A binary store (`"Binary"`).
    public static let binary = StoreKind("Binary")
    /// An XML store (`"XML"`).
    public static let xml = StoreKind("XML")
    /// A store that lives only in memory (`"InMemory"`).
    public static let inMemory = StoreKind("InMemory")
}
