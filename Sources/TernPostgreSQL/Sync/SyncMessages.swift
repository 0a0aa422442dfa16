public import Foundation

/// One object's change as a device pushes it to a ``SyncServer``.
///
/// Attribute values travel as text (the sync engine's encoding); relationships as the global
/// identifiers of their destinations, so that the server can follow merged objects.
public struct SyncChange: Sendable, Hashable {
    /// What happened to the object.
    public enum Kind: Int64, Sendable, Hashable {
        /// The object was created.
        case insert = 0
        /// Some of its properties changed.
        case update = 1
        /// It was deleted.
        case delete = 2
    }

    /// The object's global identifier.
    public var object: UUID
    /// Its entity's name.
    public var entity: String
    /// What happened.
    public var kind: Kind
    /// Attribute values by name, encoded; nil is a missing value.
    public var attributes: [String: String?]
    /// To-one relationships by name: the destination's identifier, or nil.
    public var toOne: [String: UUID?]
    /// To-many relationships by name: the destinations' identifiers, in order.
    public var toMany: [String: [UUID]]
    /// For inserts: the attributes of the entity's uniqueness key. Nil when the entity has none:
    /// then the object's identity is its content (every attribute and to-one relationship),
    /// matched once per device against objects other devices pushed.
    public var uniqueKey: [String]?

    /// Creates a change.
    ///
    /// - Parameters:
    ///   - object: The object's global identifier.
    ///   - entity: Its entity.
    ///   - kind: What happened.
    ///   - attributes: Encoded attribute values.
    ///   - toOne: To-one destinations.
    ///   - toMany: To-many destinations.
    ///   - uniqueKey: The uniqueness key's attributes, for inserts.
    public init(
        object: UUID, entity: String, kind: Kind, attributes: [String: String?] = [:], toOne: [String: UUID?] = [:],
        toMany: [String: [UUID]] = [:], uniqueKey: [String]? = nil
    ) {
        (self.object, self.entity, self.kind) = (object, entity, kind)
        (self.attributes, self.toOne, self.toMany, self.uniqueKey) = (attributes, toOne, toMany, uniqueKey)
    }
}

/// One local transaction as a device pushes it.
public struct SyncPushTransaction: Sendable, Hashable {
    /// The pushing device.
    public var device: UUID
    /// The local history transaction's number (0 for a device's initial state).
    public var localNumber: Int64
    /// The transaction's author, if any.
    public var author: String?
    /// The digest of the model version hashes the device wrote it with.
    public var modelDigest: String
    /// The changes.
    public var changes: [SyncChange]

    /// Creates a transaction.
    ///
    /// - Parameters:
    ///   - device: The pushing device.
    ///   - localNumber: The local transaction number.
    ///   - author: The author.
    ///   - modelDigest: The model's version hashes digest.
    ///   - changes: The changes.
    public init(device: UUID, localNumber: Int64, author: String?, modelDigest: String, changes: [SyncChange]) {
        (self.device, self.localNumber, self.author, self.modelDigest, self.changes) =
            (device, localNumber, author, modelDigest, changes)
    }
}

/// The current state of one object on the server.
public struct SyncObjectState: Sendable, Hashable {
    /// The object's global identifier.
    public var object: UUID
    /// Its entity.
    public var entity: String
    /// Whether it was deleted.
    public var isDeleted: Bool
    /// Attribute values, encoded.
    public var attributes: [String: String?]
    /// To-one destinations.
    public var toOne: [String: UUID?]
    /// To-many destinations.
    public var toMany: [String: [UUID]]
}

/// What a device pulls: the objects changed after a server sequence number.
public struct SyncPullBatch: Sendable, Hashable {
    /// The last server sequence number this batch covers.
    public var lastSequence: Int64
    /// The model digests of the transactions it covers, with one transaction's number each.
    public var modelDigests: [String: Int64]
    /// Objects merged into others: merged identifier to owner.
    public var aliases: [UUID: UUID]
    /// The changed objects' current state.
    public var objects: [SyncObjectState]
}

/// How many transactions and changes a push sent.
public struct SyncPushResult: Sendable, Hashable {
    /// Transactions the server recorded (re-sent ones it already had are not counted).
    public var transactions: Int
    /// Changes in them.
    public var changes: Int
    /// Inserts that the server merged into an existing object with the same key.
    public var merged: Int
}
