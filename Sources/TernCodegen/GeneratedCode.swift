/// What ``ModelCodegen`` wrote for a model.
public struct GeneratedCode: Sendable, Hashable {
    /// The files, in the order they were written.
    public var files: [GeneratedFile]
    /// What was renamed or left out, one sentence each.
    public var warnings: [String]
    /// The name of the model's enum.
    public var modelTypeName: String
    /// The class of each entity that got one (a class or an extension), by entity name.
    public var classNames: [String: String]
}

/// One file of ``GeneratedCode``.
public struct GeneratedFile: Sendable, Hashable {
    /// The file's name, such as `Recipe+CoreDataProperties.swift`.
    public var name: String
    /// The Swift source.
    public var contents: String
    /// Whether the file is the developer's to edit once written (a human file of the
    /// machine-human style): write it only when it is missing.
    public var isWrittenOnce: Bool
}
