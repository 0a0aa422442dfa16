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
    /// To tell such versions apart by the store's version identifiers, or to name all of them,
    /// use ``versions(matching:)``.
    ///
    /// - Parameter hashes: Entity version hashes by entity name, as a store records them.
    /// - Returns: The matching version, or nil when none matches.
    /// - Complexity: O(*v* · *h*) for *v* versions whose hashes cost *h* to compute.
    public func version(matchingHashes hashes: [String: Data]) -> ModelVersion? {
        versions.last { $0.model.entityVersionHashes == hashes }
    }

    /// The version that wrote a store: the newest of ``versions(matching:)``.
    ///
    /// Versions with the same entity hashes store objects the same way, so a store opens, and
    /// migrates, the same from any of them. Where the answer is shown to a person, name every
    /// candidate of ``versions(matching:)`` rather than this one.
    ///
    /// - Parameter metadata: The store's metadata.
    /// - Returns: The matching version, or nil when none matches.
    /// - Complexity: O(*v* · *h*) for *v* versions whose hashes cost *h* to compute.
    public func version(matching metadata: StoreMetadata) -> ModelVersion? {
        versions(matching: metadata).last
    }

    /// Every version that may have written a store, oldest first.
    ///
    /// These are the versions whose entity hashes equal the store's (`NSStoreModelVersionHashes`).
    /// When several do (a version added for a change that stores nothing differently), the
    /// store's version identifiers (`NSStoreModelVersionIdentifiers`, which Core Data copies from
    /// the model's `userDefinedModelVersionIdentifier`) choose among them: the versions whose
    /// identifiers are the store's are kept, if any are. More than one result means the store
    /// cannot tell which of them wrote it; migrating from any of them is the same.
    ///
    /// ```swift
    /// let candidates = recipes.versions(matching: metadata)
    /// if candidates.count > 1 { print("written by one of \(candidates.map(\.name))") }
    /// ```
    ///
    /// - Parameter metadata: The store's metadata.
    /// - Returns: The candidates in migration order; empty when no version matches.
    /// - Complexity: O(*v* · *h*) for *v* versions whose hashes cost *h* to compute.
    public func versions(matching metadata: StoreMetadata) -> [ModelVersion] {
        let candidates = versions.filter { $0.model.entityVersionHashes == metadata.versionHashes }
        guard candidates.count > 1 else { return candidates }
        let recorded = Set(metadata.versionIdentifiers)
        let identified = candidates.filter { Set($0.model.versionIdentifiers) == recorded }
        return identified.isEmpty ? candidates : identified
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
