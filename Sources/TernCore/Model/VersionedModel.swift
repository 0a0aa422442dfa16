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
public struct VersionedModel: Sendable, Hashable {
    /// The model's name (the bundle name without `.xcdatamodeld`).
    public var name: String
    /// The versions, oldest first: the order a progressive migration walks.
    public var versions: [ModelVersion]
    /// The name of the current version, the one new stores are created with.
    public var currentVersionName: String

    /// Creates a versioned model.
    ///
    /// - Parameters:
    ///   - name: The model's name.
    ///   - versions: The versions in migration order, oldest first.
    ///   - current: The current version's name; the last version when nil.
    /// - Precondition: `versions` is not empty and `current`, if given, names one of them.
    public init(name: String, versions: [ModelVersion], current: String? = nil) {
        precondition(!versions.isEmpty, "a versioned model needs at least one version")
        let currentName = current ?? versions[versions.count - 1].name
        precondition(versions.contains { $0.name == currentName }, "no version is named \(currentName)")
        self.name = name
        self.versions = versions
        self.currentVersionName = currentName
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
