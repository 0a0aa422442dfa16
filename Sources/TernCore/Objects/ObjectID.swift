public import Foundation
import Synchronization

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
    /// The entity and store of the ID, shared by every ID of that entity in that store.
    // Safe: spaces are interned for the life of the process (`ObjectIDSpace.shared`), never
    // freed, so the reference cannot dangle; not retaining it keeps IDs trivial values that are
    // copied, hashed and compared without reference counting.
    unowned(unsafe) let space: ObjectIDSpace
    /// The primary key of a permanent ID; 0 for a temporary one.
    let key: Int64
    /// The random identifier of a temporary ID; all zero for a permanent one.
    let random: uuid_t

    /// The name of the object's entity (its concrete entity, never an abstract parent).
    public var entityName: String { space.entityName }
    /// The UUID of the store that holds the object, or nil while the ID is temporary.
    public var storeIdentifier: String? { space.storeIdentifier }
    /// The object's primary key in its store, or nil while the ID is temporary.
    public var primaryKey: Int64? { space.storeIdentifier == nil ? nil : key }
    /// The random identifier of a temporary ID, or nil for a permanent one.
    public var temporaryIdentifier: UUID? { space.storeIdentifier == nil ? UUID(uuid: random) : nil }

    /// Creates a permanent ID.
    ///
    /// - Parameters:
    ///   - entityName: The object's entity.
    ///   - storeIdentifier: The UUID of its store.
    ///   - primaryKey: Its primary key in that store.
    public init(entityName: String, storeIdentifier: String, primaryKey: Int64) {
        self.init(space: .shared(entityName: entityName, storeIdentifier: storeIdentifier), primaryKey: primaryKey)
    }

    /// Creates a temporary ID for a new object.
    ///
    /// - Parameters:
    ///   - entityName: The object's entity.
    ///   - identifier: The random part; a fresh UUID when omitted.
    public init(temporaryFor entityName: String, identifier: UUID = UUID()) {
        self.init(space: .shared(entityName: entityName, storeIdentifier: nil), temporary: identifier)
    }

    /// A permanent ID in a space found before (no lookup of the space).
    ///
    /// - Precondition: The space has a store identifier.
    init(space: ObjectIDSpace, primaryKey: Int64) {
        precondition(space.storeIdentifier != nil, "a permanent ID needs the space of a store")
        self.space = space
        self.key = primaryKey
        self.random = ObjectID.noRandom
    }

    /// A temporary ID in a space found before (no lookup of the space).
    ///
    /// - Precondition: The space has no store identifier.
    init(space: ObjectIDSpace, temporary identifier: UUID) {
        precondition(space.storeIdentifier == nil, "a temporary ID needs a space without store")
        self.space = space
        self.key = 0
        self.random = identifier.uuid
    }

    private static let noRandom: uuid_t = (0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0)

    // MARK: - Hashing

    /// Whether two IDs name the same object: same entity, same store, same key or identifier.
    ///
    /// - Complexity: O(1): spaces are interned, so comparing them is comparing references.
    public static func == (lhs: ObjectID, rhs: ObjectID) -> Bool {
        lhs.space === rhs.space && lhs.key == rhs.key && lhs.randomWords == rhs.randomWords
    }

    /// Hashes the primary key or the temporary identifier only: IDs are hashed on every object
    /// a context makes or forgets, and hashing the store's UUID and the entity name each time
    /// would cost more than all else. Equal IDs have equal keys, so equal hashes.
    ///
    /// - Parameter hasher: The hasher.
    public func hash(into hasher: inout Hasher) {
        if space.storeIdentifier != nil {
            hasher.combine(key)
        } else {
            let (high, low) = randomWords
            hasher.combine(high)
            hasher.combine(low)
        }
    }

    /// The random identifier as two words, for comparing and hashing.
    private var randomWords: (UInt64, UInt64) {
        withUnsafeBytes(of: random) { bytes in
            (
                bytes.loadUnaligned(fromByteOffset: 0, as: UInt64.self),
                bytes.loadUnaligned(fromByteOffset: 8, as: UInt64.self)
            )
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

/// The entity and store shared by object IDs: interned once per process, so that an ID holds
/// one reference that it never retains (see ``ObjectID``).
final class ObjectIDSpace: Sendable {
    /// The entity's name.
    let entityName: String
    /// The store's UUID, or nil for the space of temporary IDs.
    let storeIdentifier: String?

    private init(entityName: String, storeIdentifier: String?) {
        self.entityName = entityName
        self.storeIdentifier = storeIdentifier
    }

    /// The one space of an entity in a store (or of its temporary IDs), made on first use and
    /// kept for the life of the process.
    ///
    /// - Complexity: One lookup under a lock; callers on hot paths keep the space they got.
    static func shared(entityName: String, storeIdentifier: String?) -> ObjectIDSpace {
        let name = Name(entityName: entityName, storeIdentifier: storeIdentifier)
        return spaces.withLock { spaces in
            if let found = spaces[name] { return found }
            let made = ObjectIDSpace(entityName: entityName, storeIdentifier: storeIdentifier)
            spaces[name] = made
            return made
        }
    }

    private struct Name: Hashable {
        let entityName: String
        let storeIdentifier: String?
    }

    /// Every space made, never freed: one per entity and store the process has used.
    private static let spaces = Mutex<[Name: ObjectIDSpace]>([:])
}
