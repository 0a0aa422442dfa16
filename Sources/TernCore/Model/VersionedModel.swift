/// One named version of a versioned model.
public struct ModelVersion: Sendable, Hashable {
    /// The version's name (the `.xcdatamodel` folder name without its extension).
    public var name: String
    /// The model of this version.
    public var model: ManagedObjectModel

    /// Creates a model version.
    public init(name: String, model: ManagedObjectModel) {
        self.name = name
        self.model = model
    }
}

/// The versions of an app's data model, in migration order, with one current version:
/// an `.xcdatamodeld` bundle.
///
/// ```swift
/// let recipes = VersionedModel(name: "Recipes", versions: [v1, v2], current: "v2")
/// recipes.currentVersion.name            // "v2"
/// recipes.version(named: "v1")?.model
/// ```
///
/// ``hasExplicitOrder`` says whether the order of ``versions`` is the app's own (listed by the
/// developer, or given to the reader) or a guess from the version names (a bundle read from disk
/// without an order, as Xcode stores none). A migration walks versions step by step only through
/// an order it knows; see ``hasExplicitOrder``.
public struct VersionedModel: Sendable, Hashable {
    /// The model's name (the bundle name without `.xcdatamodeld`).
    public var name: String
    /// The versions, oldest first: the order a progressive migration walks.
    public var versions: [ModelVersion]
    /// The name of the current version, the one new stores are created with.
    public var currentVersionName: String
    /// Whether the order of ``versions`` is the app's own rather than a guess from their names.
    ///
    /// True for models built in Swift (the developer lists the versions in order) and for bundles
    /// read with an explicit order; false for bundles read without one, whose versions are sorted
    /// by name. Migrations infer one step straight from the store's version to the target, as
    /// Core Data does; only when this is true may a planner fall back to walking the versions
    /// between step by step. Not part of equality or hashing: two models with the same versions
    /// in the same order are equal however their order was found.
    public var hasExplicitOrder: Bool

    /// Creates a versioned model.
    ///
    /// - Parameters:
    ///   - name: The model's name.
    ///   - versions: The versions in migration order, oldest first.
    ///   - current: The current version's name; the last version when nil.
    ///   - hasExplicitOrder: Whether `versions` is in the app's own order (the default) rather
    ///     than in an order guessed from their names.
    /// - Precondition: `versions` is not empty and `current`, if given, names one of them.
    public init(name: String, versions: [ModelVersion], current: String? = nil, hasExplicitOrder: Bool = true) {
        precondition(!versions.isEmpty, "a versioned model needs at least one version")
        let currentName = current ?? versions[versions.count - 1].name
        precondition(versions.contains { $0.name == currentName }, "no version is named \(currentName)")
        self.name = name
        self.versions = versions
        self.currentVersionName = currentName
        self.hasExplicitOrder = hasExplicitOrder
    }

    /// Whether two models have the same name, versions in the same order and current version;
    /// ``hasExplicitOrder`` is not compared.
    public static func == (lhs: VersionedModel, rhs: VersionedModel) -> Bool {
        lhs.name == rhs.name && lhs.versions == rhs.versions && lhs.currentVersionName == rhs.currentVersionName
    }

    /// Hashes the name, versions and current version (not ``hasExplicitOrder``).
    ///
    /// - Complexity: O(*n*) in the size of the versions.
    public func hash(into hasher: inout Hasher) {
        hasher.combine(name)
        hasher.combine(versions)
        hasher.combine(currentVersionName)
    }

    /// The current version.
    public var currentVersion: ModelVersion {
        versions.first { $0.name == currentVersionName } ?? versions[versions.count - 1]
    }

    /// The version with that name.
    ///
    /// - Complexity: O(*n*) in the number of versions.
    public func version(named name: String) -> ModelVersion? {
        versions.first { $0.name == name }
    }
}
