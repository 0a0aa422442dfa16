public import Foundation
import TernRelational

/// One object's change as a device pushes it to a ``SyncServer``.
///
/// Attribute values travel as text (the sync engine's encoding); relationships as the global
/// identifiers of their destinations, so that the server can follow merged objects.
public struct SyncChange: Sendable, Hashable, Codable {
    /// What happened to the object.
    public enum Kind: Int64, Sendable, Hashable, Codable {
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
    /// In a snapshot: whether the device changed the object after creating it, before its first
    /// sync. Then its values that differ from the server's are writes at the snapshot's place in
    /// server order (later write wins, as any edit), not initial state that fills only what
    /// nobody else wrote.
    public var isEdited = false

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
    /// The last server sequence number the device had pulled when it made the changes: a write
    /// of a property that another device wrote after it is a conflict.
    public var basedOn: Int64
    /// Whether the transaction is a snapshot of the device's state (its first push, or the push
    /// after a migration) rather than edits: a snapshot never overwrites a property another
    /// device wrote after `basedOn`, and writes nothing where the value is already the same.
    public var isSnapshot: Bool

    /// Creates a transaction.
    ///
    /// - Parameters:
    ///   - device: The pushing device.
    ///   - localNumber: The local transaction number (negative or 0 for snapshots).
    ///   - author: The author.
    ///   - modelDigest: The model's version hashes digest.
    ///   - changes: The changes.
    ///   - basedOn: The last sequence number the device had pulled.
    ///   - isSnapshot: Whether it is a snapshot of the device's state.
    public init(
        device: UUID, localNumber: Int64, author: String?, modelDigest: String, changes: [SyncChange],
        basedOn: Int64 = 0, isSnapshot: Bool = false
    ) {
        (self.device, self.localNumber, self.author, self.modelDigest, self.changes) =
            (device, localNumber, author, modelDigest, changes)
        (self.basedOn, self.isSnapshot) = (basedOn, isSnapshot)
    }
}

/// A property that two devices wrote concurrently, as the server meets it while recording a
/// push: the pushing device had not pulled the other device's write when it made its own.
public struct SyncWriteConflict: Sendable, Hashable {
    /// What kind of property.
    public enum Kind: String, Sendable, Hashable {
        /// An attribute: values are encoded attribute values.
        case attribute = "a"
        /// A to-one relationship: values are a destination identifier.
        case toOne = "o"
        /// A to-many relationship: values are identifiers separated by commas.
        case toMany = "m"
    }

    /// The object's global identifier.
    public var object: UUID
    /// Its entity.
    public var entity: String
    /// The property's name.
    public var property: String
    /// What kind of property.
    public var kind: Kind
    /// The value the pushing device wrote (encoded; nil: no value).
    public var pushed: String?
    /// The value on the server, written by another device (encoded; nil: no value).
    public var current: String?
    /// The server sequence number of the current value.
    public var currentSequence: Int64
}

/// What to do with a ``SyncWriteConflict``.
public enum SyncWriteChoice: Sendable, Hashable {
    /// Write the pushed value (later write wins).
    case pushed
    /// Keep the server's value.
    case current
    /// Write another value (encoded as the conflict's values are).
    case value(String?)
}

/// The current state of one object on the server.
public struct SyncObjectState: Sendable, Hashable, Codable {
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

/// Where a pull stands: the server sequence number of the last object applied and, while a
/// pull is paged, that object's identifier (objects come in `(sequence, identifier)` order) and
/// the sequence number the pull started from.
public struct SyncPullCursor: Sendable, Hashable, Codable, LosslessStringConvertible {
    /// The sequence number.
    public var sequence: Int64
    /// The last object applied at that sequence number, or nil when all of them were.
    public var object: UUID?
    /// While a pull is paged, the sequence number it started from (0: a read of the whole
    /// state); the server's purge check applies to it, not to the position inside the read.
    /// Nil: ``sequence``.
    public var start: Int64?

    /// Creates a cursor.
    ///
    /// - Parameters:
    ///   - sequence: The sequence number (0 for nothing pulled yet).
    ///   - object: The last object applied at that number, or nil for all of them.
    ///   - start: While paged, the sequence number the pull started from; nil: `sequence`.
    public init(sequence: Int64, object: UUID? = nil, start: Int64? = nil) {
        (self.sequence, self.object, self.start) = (sequence, object, start)
    }

    /// Reads `<sequence>`, `<sequence>/<UUID>` or `<sequence>/<UUID>/<start>`.
    ///
    /// - Parameter description: The text.
    public init?(_ description: String) {
        let parts = description.split(separator: "/", maxSplits: 2, omittingEmptySubsequences: false).map(String.init)
        guard let first = parts.first, let sequence = Int64(first) else { return nil }
        self.sequence = sequence
        object = nil
        start = nil
        if parts.count >= 2 {
            guard let object = UUID(uuidString: parts[1]) else { return nil }
            self.object = object
        }
        if parts.count == 3 {
            guard let start = Int64(parts[2]) else { return nil }
            self.start = start
        }
    }

    /// `<sequence>`, `<sequence>/<UUID>` or `<sequence>/<UUID>/<start>`.
    public var description: String {
        guard let object else { return String(sequence) }
        return "\(sequence)/\(object.uuidString)" + (start.map { "/\($0)" } ?? "")
    }
}

/// What a device pulls: the objects changed after a cursor, a page at a time.
public struct SyncPullBatch: Sendable, Hashable, Codable {
    /// The last server sequence number this batch covers (when complete: every change up to it).
    public var lastSequence: Int64
    /// Where the next page starts; equal to `SyncPullCursor(sequence: lastSequence)` when complete.
    public var cursor: SyncPullCursor
    /// Whether the batch holds every object changed after the cursor asked for.
    public var isComplete: Bool
    /// The model digests of the transactions it covers, with one transaction's number each.
    public var modelDigests: [String: Int64]
    /// Objects merged into others: merged identifier to owner.
    public var aliases: [UUID: UUID]
    /// The changed objects' current state.
    public var objects: [SyncObjectState]
    /// Whether the server purged changes the device has not pulled: it must resync (pull the
    /// whole state again); the batch holds nothing else then.
    public var needsResync: Bool
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
