/// The result builder of a versioned model's body: its versions, oldest first.
@resultBuilder
public enum VersionBuilder: ListBuilder {
    /// A version builder collects model versions.
    public typealias Component = ModelVersion

    /// A version.
    public static func buildExpression(_ version: ModelVersion) -> [ModelVersion] { [version] }
}

extension ModelVersion {
    /// Creates a version from a builder body, for a ``VersionedModel`` builder.
    ///
    /// The model is validated when the versioned model is built.
    ///
    /// - Parameters:
    ///   - name: The version's name.
    ///   - versionIdentifiers: The developer's version identifiers of its model.
    ///   - members: The model's entities, configurations and fetch request templates.
    public init(_ name: String, versionIdentifiers: [String] = [], @ModelBuilder _ members: () -> [ModelMember]) {
        self.init(name: name, model: ManagedObjectModel(unvalidated: members(), versionIdentifiers: versionIdentifiers))
    }
}

extension VersionedModel {
    /// Creates and validates a versioned model from a builder body.
    ///
    /// ```swift
    /// let notes = try VersionedModel("Notes", current: "v2") {
    ///     ModelVersion("v1") { Entity("Note") { Attribute("text", .string) } }
    ///     ModelVersion("v2") {
    ///         Entity("Note") {
    ///             Attribute("text", .string)
    ///             Attribute("created", .date)
    ///         }
    ///     }
    /// }
    /// ```
    ///
    /// - Parameters:
    ///   - name: The model's name.
    ///   - current: The current version's name; the last version when nil.
    ///   - versions: The versions in migration order, oldest first.
    /// - Throws: ``TernError`` with code ``TernError/Code/invalidModel`` when there is no
    ///   version, two versions share a name, `current` names none of them, or a version's
    ///   model does not validate (the message names the version).
    /// - Complexity: That of ``ManagedObjectModel/validationIssues`` for each version.
    public init(_ name: String, current: String? = nil, @VersionBuilder _ versions: () -> [ModelVersion])
        throws(TernError)
    {
        let versions = versions()
        guard let last = versions.last else {
            throw TernError(.invalidModel, "The versioned model '\(name)' has no version; add at least one")
        }
        var seen: Set<String> = []
        for version in versions where !seen.insert(version.name).inserted {
            throw TernError(
                .invalidModel, "The versioned model '\(name)' has two versions named '\(version.name)'; rename one")
        }
        let currentName = current ?? last.name
        guard seen.contains(currentName) else {
            throw TernError(
                .invalidModel,
                "The current version '\(currentName)' of '\(name)' is not one of its versions; name an existing version"
            )
        }
        for version in versions {
            do {
                try version.model.validate()
            } catch {
                var wrapped = error
                wrapped.message = "Version '\(version.name)' of '\(name)': \(error.message)"
                throw wrapped
            }
        }
        self.init(name: name, versions: versions, current: currentName)
    }
}
