/// How a save resolves conflicts with changes made in the store since objects were read:
/// Core Data's merge policies.
///
/// A conflict arises when an object's row has a newer version (`Z_OPT`) in the store than the
/// one the context read, because another context or another process saved it.
///
/// ```swift
/// try await context.perform { context in
///     context.mergePolicy = .objectTrumps
/// }
/// ```
public struct MergePolicy: Hashable, Sendable, CustomStringConvertible {
    enum Kind: String {
        case error, storeTrumps, objectTrumps, overwrite, rollback
    }

    let kind: Kind

    /// The policy's name.
    public var description: String { kind.rawValue }

    /// The save fails with ``TernError/Code/mergeConflict``, naming each conflicting object.
    public static let error = MergePolicy(kind: .error)
    /// Property by property, the store's changes win; the object's changes to other properties
    /// are kept (`NSMergeByPropertyStoreTrumpMergePolicy`).
    public static let storeTrumps = MergePolicy(kind: .storeTrumps)
    /// Property by property, the object's changes win; the store's changes to other properties
    /// are kept (`NSMergeByPropertyObjectTrumpMergePolicy`).
    public static let objectTrumps = MergePolicy(kind: .objectTrumps)
    /// The object's whole state replaces the store's (`NSOverwriteMergePolicy`).
    public static let overwrite = MergePolicy(kind: .overwrite)
    /// The object's changes are dropped and it takes the store's state (`NSRollbackMergePolicy`).
    public static let rollback = MergePolicy(kind: .rollback)
}
