public import Foundation

/// The identity of an object: Core Data's `NSManagedObjectID`.
///
/// A new object gets a *temporary* ID (a random UUID). Saving it gives it a *permanent* ID: the
/// UUID of the store that holds it, its entity and its primary key (`Z_PK`). IDs are values and
/// are `Sendable`, so they are what crosses from one context or task to another, never objects.
///
/// ```swift
/// let id = ObjectID(entityName: "Recipe", storeIdentifier: store.identifier, primaryKey: 7)
/// id.uriRepresentation          // x-coredata://<store UUID>/Recipe/p7
/// ObjectID(uriRepresentation: id.uriRepresentation) == id   // true
/// ```
public struct ObjectID: Hashable, Sendable, CustomStringConvertible {
    /// The name of the object's entity (its concrete entity, never an abstract parent).
    public let entityName: String
    /// The UUID of the store that holds the object, or nil while the ID is temporary.
    public let storeIdentifier: String?
    /// The object's primary key in its store, or nil while the ID is temporary.
    public let primaryKey: Int64?
    /// The random identifier of a temporary ID, or nil for a permanent one.
    public let temporaryIdentifier: UUID?

    /// Creates a permanent ID.
    ///
    /// - Parameters:
    ///   - entityName: The object's entity.
    ///   - storeIdentifier: The UUID of its store.
    ///   - primaryKey: Its primary key in that store.
    public init(entityName: String, storeIdentifier: String, primaryKey: Int64) {
        self.entityName = entityName
        self.storeIdentifier = storeIdentifier
        self.primaryKey = primaryKey
        self.temporaryIdentifier = nil
    }

    /// Creates a temporary ID for a new object.
    ///
    /// - Parameters:
    ///   - entityName: The object's entity.
    ///   - identifier: The random part; a fresh UUID when omitted.
    public init(temporaryFor entityName: String, identifier: UUID = UUID()) {
        self.entityName = entityName
        self.storeIdentifier = nil
        self.primaryKey = nil
        self.temporaryIdentifier = identifier
    }

    // MARK: - Hashing

    /// Hashes the primary key or the temporary identifier only: IDs are hashed on every object
    /// a context makes or forgets, and hashing the store's UUID and the entity name each time
    /// would cost more than all else. Equal IDs have equal keys, so equal hashes.
    ///
    /// - Parameter hasher: The hasher.
    public func hash(into hasher: inout Hasher) {
        if let primaryKey {
            hasher.combine(primaryKey)
        } else if let temporaryIdentifier {
            hasher.combine(temporaryIdentifier)
        }
    }

    // MARK: - Describing

    /// Whether the ID is temporary: its object has not been saved to a store yet.
    public var isTemporary: Bool { temporaryIdentifier != nil }

    /// The row this ID names in its store, or nil for a temporary ID.
    public var rowReference: RowReference? {
        primaryKey.map { RowReference(entityName: entityName, primaryKey: $0) }
    }

    /// The ID as a URI, in Core Data's form.
    ///
    /// A permanent ID reads `x-coredata://<store UUID>/<Entity>/p<primary key>`; a temporary one
    /// reads `x-coredata:///<Entity>/t<UUID>`.
    public var uriRepresentation: URL {
        var components = URLComponents()
        components.scheme = "x-coredata"
        if let temporaryIdentifier {
            components.host = ""
            components.path = "/\(entityName)/t\(temporaryIdentifier.uuidString)"
        } else {
            components.host = storeIdentifier ?? ""
            components.path = "/\(entityName)/p\(primaryKey ?? 0)"
        }
        // Every part is a UUID, an entity name or a number; building cannot fail for them.
        return components.url ?? URL(fileURLWithPath: "/")
    }

    /// Reads an ID from its URI form.
    ///
    /// - Parameter uri: A URI made by ``uriRepresentation``.
    /// - Returns: nil when the URI is not an object ID in Core Data's form.
    public init?(uriRepresentation uri: URL) {
        guard uri.scheme == "x-coredata" else { return nil }
        let parts = uri.path.split(separator: "/", omittingEmptySubsequences: true)
        guard parts.count == 2, let kind = parts[1].first else { return nil }
        let entityName = String(parts[0])
        let rest = String(parts[1].dropFirst())
        let host = uri.host ?? ""
        switch kind {
        case "p":
            guard !host.isEmpty, let key = Int64(rest) else { return nil }
            self.init(entityName: entityName, storeIdentifier: host, primaryKey: key)
        case "t":
            guard host.isEmpty, let uuid = UUID(uuidString: rest) else { return nil }
            self.init(temporaryFor: entityName, identifier: uuid)
        default:
            return nil
        }
    }

    /// The URI form of the ID.
    public var description: String { uriRepresentation.absoluteString }
}
