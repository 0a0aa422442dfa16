public import Foundation
public import TernCore
import TernPostgreSQL

/// A property two devices wrote concurrently: the pushing device had not pulled the other
/// device's write when it made its own (docs/Sync.md, "Conflicts").
public struct SyncConflict: Sendable, Hashable {
    /// A property's value as sync sees it.
    public enum Value: Sendable, Hashable {
        /// An attribute's value (nil: no value).
        case attribute(AttributeValue?)
        /// A to-one relationship's destination, by global identifier (nil: none).
        case toOne(UUID?)
        /// A to-many relationship's destinations, by global identifier, in order.
        case toMany([UUID])
    }

    /// The object's global identifier.
    public var object: UUID
    /// Its entity.
    public var entity: String
    /// The property's name.
    public var property: String
    /// The value this device pushes.
    public var local: Value
    /// The value another device wrote, on the server now.
    public var remote: Value
    /// The server sequence number of the remote value.
    public var remoteSequence: Int64

    /// Creates a conflict.
    ///
    /// - Parameters:
    ///   - object: The object's global identifier.
    ///   - entity: Its entity.
    ///   - property: The property.
    ///   - local: This device's value.
    ///   - remote: The other device's value.
    ///   - remoteSequence: The remote value's sequence number.
    public init(object: UUID, entity: String, property: String, local: Value, remote: Value, remoteSequence: Int64) {
        (self.object, self.entity, self.property) = (object, entity, property)
        (self.local, self.remote, self.remoteSequence) = (local, remote, remoteSequence)
    }
}

/// Decides conflicts per property. By default the later write in server order wins (the
/// pushed value: a push always comes after every write already on the server); a resolver may
/// keep the remote value or write another one. Its choice is recorded on the server as the
/// property's value, so every device ends with it.
///
/// ```swift
/// let resolver = SyncConflictResolver.laterWriteWins
///     .resolving("Recipe", "servings") { conflict in
///         guard case .attribute(.integer(let mine)?) = conflict.local,
///             case .attribute(.integer(let theirs)?) = conflict.remote else { return .local }
///         return .value(.attribute(.integer(max(mine, theirs))))
///     }
/// let engine = SyncEngine(store: store, server: server, conflictResolver: resolver)
/// ```
public struct SyncConflictResolver: Sendable {
    /// What to write for a conflicting property.
    public enum Resolution: Sendable, Hashable {
        /// This device's value (later write wins).
        case local
        /// The other device's value, already on the server.
        case remote
        /// Another value, of the property's kind.
        case value(SyncConflict.Value)
    }

    /// The rule for properties without a rule of their own.
    private let fallback: @Sendable (SyncConflict) -> Resolution
    /// Rules by entity and property name.
    private var rules: [String: @Sendable (SyncConflict) -> Resolution] = [:]

    /// Creates a resolver from one rule for every property.
    ///
    /// - Parameter resolve: Decides a conflict.
    public init(_ resolve: @escaping @Sendable (SyncConflict) -> Resolution) {
        fallback = resolve
    }

    /// The default: the pushed value, the later write in server order, wins.
    public static let laterWriteWins: SyncConflictResolver = {
        var resolver = SyncConflictResolver { _ in .local }
        resolver.isLaterWriteWins = true
        return resolver
    }()

    /// The same resolver with a rule of its own for one property.
    ///
    /// - Parameters:
    ///   - entity: The entity's name (the object's own entity).
    ///   - property: The property's name.
    ///   - resolve: Decides that property's conflicts.
    /// - Returns: The resolver with the rule.
    public func resolving(
        _ entity: String, _ property: String, with resolve: @escaping @Sendable (SyncConflict) -> Resolution
    ) -> SyncConflictResolver {
        var copy = self
        copy.rules[entity + "." + property] = resolve
        return copy
    }

    /// Decides a conflict.
    ///
    /// - Parameter conflict: The conflict.
    /// - Returns: What to write.
    public func resolve(_ conflict: SyncConflict) -> Resolution {
        (rules[conflict.entity + "." + conflict.property] ?? fallback)(conflict)
    }

    /// Whether every property uses the default rule (the server then skips conflict checks).
    var isDefault: Bool { rules.isEmpty && isLaterWriteWins }

    /// Set only on ``laterWriteWins``.
    private var isLaterWriteWins = false

    /// The server's handler: decodes, decides and encodes.
    var handler: SyncServer.ConflictHandler {
        let resolver = self
        return { conflict in
            let local = SyncValueCoding.value(conflict.pushed, kind: conflict.kind)
            let remote = SyncValueCoding.value(conflict.current, kind: conflict.kind)
            let decoded = SyncConflict(
                object: conflict.object, entity: conflict.entity, property: conflict.property, local: local,
                remote: remote,
                remoteSequence: conflict.currentSequence)
            switch resolver.resolve(decoded) {
            case .local: return .pushed
            case .remote: return .current
            case .value(let value): return .value(SyncValueCoding.text(of: value))
            }
        }
    }
}
