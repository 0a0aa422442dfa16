public import Foundation

/// What a store records about itself: its type, UUID and the version hashes of the model
/// that last wrote it, plus the application's own keys.
///
/// Core Data keeps this as a property-list dictionary (`Z_METADATA.Z_PLIST` in SQLite stores);
/// the well-known keys are typed properties here and every other key is kept in
/// ``applicationKeys`` so that rewriting metadata never drops them.
///
/// ```swift
/// let metadata = try SQLiteStore.metadata(at: url)
/// let version = recipes.version(matching: metadata)   // which version wrote the store
/// ```
public struct StoreMetadata: Sendable, Hashable {
    /// The store type, as Core Data spells it (`"SQLite"`, `"Binary"`, `"XML"`, `"InMemory"`).
    public var storeType: String
    /// The store's UUID (`NSStoreUUID`).
    public var uuid: String
    /// The version hash of each entity of the model that last wrote the store.
    public var versionHashes: [String: Data]
    /// The version identifiers of that model.
    public var versionIdentifiers: [String]
    /// The version of the hashing scheme (`NSStoreModelVersionHashesVersion`, 3 since 2009).
    public var hashesVersion: Int
    /// The model checksum (`NSStoreModelVersionChecksumKey`), base64, when recorded.
    public var modelChecksum: String?
    /// The digest of the hashes (`NSStoreModelVersionHashesDigest`), base64, when recorded.
    public var hashesDigest: String?
    /// The Core Data framework version that wrote the store, when recorded.
    public var frameworkVersion: Int?
    /// Every other key: the application's own and keys Tern does not interpret.
    public var applicationKeys: [String: PropertyListValue]

    /// Creates metadata.
    ///
    /// - Parameters:
    ///   - storeType: The store type.
    ///   - uuid: The store's UUID string.
    ///   - versionHashes: The entity version hashes.
    public init(storeType: String, uuid: String, versionHashes: [String: Data] = [:]) {
        self.storeType = storeType
        self.uuid = uuid
        self.versionHashes = versionHashes
        self.versionIdentifiers = []
        self.hashesVersion = 3
        self.modelChecksum = nil
        self.hashesDigest = nil
        self.frameworkVersion = nil
        self.applicationKeys = [:]
    }
}
