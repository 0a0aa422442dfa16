public import Foundation

/// Finding the version of a versioned model that wrote a store.
///
/// ```swift
/// let metadata = try SQLiteStore.metadata(at: url)
/// if let version = recipes.version(matching: metadata) {
///     print("written by \(version.name)")
/// } else if let closest = recipes.closestVersion(to: metadata) {
///     print("nearest is \(closest.version.name); differs in \(closest.differingEntities)")
/// }
/// ```
extension VersionedModel {
    // MARK: - Exact match

    /// The version whose entity hashes are exactly the given ones.
    ///
    /// When several versions have the same hashes (a version that changed nothing stored), the
    /// newest of them is returned, so that a migration starting there skips the empty steps.
    ///
    /// - Parameter hashes: Entity version hashes by entity name, as a store records them.
    /// - Returns: The matching version, or nil when none matches.
    /// - Complexity: O(*v* · *h*) for *v* versions whose hashes cost *h* to compute.
    public func version(matchingHashes hashes: [String: Data]) -> ModelVersion? {
        versions.last { $0.model.entityVersionHashes == hashes }
    }

    /// The version that wrote a store, found by the entity hashes in its metadata.
    ///
    /// - Parameter metadata: The store's metadata.
    /// - Returns: The matching version, or nil when none matches.
    /// - Complexity: O(*v* · *h*) for *v* versions whose hashes cost *h* to compute.
    public func version(matching metadata: StoreMetadata) -> ModelVersion? {
        version(matchingHashes: metadata.versionHashes)
    }

    // MARK: - Nearest match

    /// The version nearest to some entity hashes, and the entities in which they differ.
    ///
    /// The nearest version is the one with the fewest differing entities; on a tie, the newest.
    ///
    /// - Parameter hashes: Entity version hashes by entity name, as a store records them.
    /// - Returns: The nearest version with its differences (none when it matches exactly).
    /// - Complexity: O(*v* · *h*) for *v* versions whose hashes cost *h* to compute.
    public func closestVersion(toHashes hashes: [String: Data]) -> VersionMatch {
        var best: VersionMatch?
        for version in versions {
            let ownHashes = version.model.entityVersionHashes
            let names = Set(ownHashes.keys).union(hashes.keys)
            let differing = names.filter { ownHashes[$0] != hashes[$0] }.sorted()
            if let current = best, current.differingEntities.count < differing.count { continue }
            best = VersionMatch(version: version, differingEntities: differing)
        }
        // `versions` is never empty, so the loop always sets `best`.
        return best ?? VersionMatch(version: currentVersion, differingEntities: [])
    }

    /// The version nearest to the one that wrote a store, and the entities in which they differ.
    ///
    /// - Parameter metadata: The store's metadata.
    /// - Returns: The nearest version with its differences (none when it matches exactly).
    /// - Complexity: O(*v* · *h*) for *v* versions whose hashes cost *h* to compute.
    public func closestVersion(to metadata: StoreMetadata) -> VersionMatch {
        closestVersion(toHashes: metadata.versionHashes)
    }
}

/// A model version compared with a store's entity hashes.
///
/// ```swift
/// let match = recipes.closestVersion(to: metadata)
/// if !match.isExact { print("entities that changed: \(match.differingEntities)") }
/// ```
public struct VersionMatch: Sendable, Hashable {
    /// The version.
    public var version: ModelVersion
    /// The entities whose hash differs, or that exist on one side only, sorted by name.
    public var differingEntities: [String]

    /// Creates a comparison result.
    ///
    /// - Parameters:
    ///   - version: The version compared.
    ///   - differingEntities: The entities in which it differs from the store.
    public init(version: ModelVersion, differingEntities: [String]) {
        self.version = version
        self.differingEntities = differingEntities
    }

    /// Whether the version matches the store exactly.
    public var isExact: Bool { differingEntities.isEmpty }
}
