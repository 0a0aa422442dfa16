/// Something a model reader accepted, as Xcode and `momc` do, but that the model's owner should
/// know about: a default value read leniently, a version of a bundle that could not be read, a
/// compiled model whose recorded hashes differ from the computed ones.
///
/// Readers collect warnings rather than refusing the model: Tern reads what Xcode compiles, and
/// refuses only what makes a model meaningless (see `docs/ModelFormat.md`).
///
/// ```swift
/// var warnings: [ModelReadingWarning] = []
/// let model = try XcodeModel.readVersionedModel(at: bundle, warnings: &warnings)
/// for warning in warnings { print(warning) }   // "Event.count (line 12): …"
/// ```
public struct ModelReadingWarning: Sendable, Hashable, CustomStringConvertible {
    /// A kind of warning. New codes may be added in any release.
    public struct Code: Hashable, Sendable, CustomStringConvertible {
        /// The code's stable spelling, as `tern model --json` prints it.
        public let rawValue: String

        /// Creates a code. Use the static members.
        package init(_ rawValue: String) { self.rawValue = rawValue }

        /// The code's stable spelling.
        public var description: String { rawValue }

        /// A value's text was read leniently, as Foundation's `integerValue`, `doubleValue` or
        /// `boolValue` read it (`"NO"` as an integer default is 0), or was ignored.
        public static let lenientValue = Code("lenientValue")
        /// A property's settings were read as Core Data reads them, not as written (a to-one
        /// relationship marked optional with a `minCount` of 1 is optional).
        public static let lenientSetting = Code("lenientSetting")
        /// One version of a bundle could not be read; the other versions were.
        public static let unreadableVersion = Code("unreadableVersion")
        /// A compiled model records entity hashes (`VersionInfo.plist`) that differ from the ones
        /// computed from its model.
        public static let versionHashMismatch = Code("versionHashMismatch")
        /// Part of a model that Tern does not read in that format was left out (a fetched
        /// property of an Xcode 3 model, for example); nothing left out enters version hashes.
        public static let ignoredContent = Code("ignoredContent")
    }

    /// The kind of warning.
    public var code: Code
    /// What was found and what Tern did about it, without attribute values the file does not show.
    public var message: String
    /// The model version concerned, when the file is a bundle.
    public var versionName: String?
    /// The entity concerned, if any.
    public var entityName: String?
    /// The property concerned, if any.
    public var propertyName: String?
    /// The file concerned, if any.
    public var path: String?
    /// The line of the element concerned (1-based), if known.
    public var line: Int?

    /// Creates a warning.
    ///
    /// - Parameters:
    ///   - code: The kind of warning.
    ///   - message: What was found and what was done about it.
    ///   - versionName: The model version concerned.
    ///   - entityName: The entity concerned.
    ///   - propertyName: The property concerned.
    ///   - path: The file concerned.
    ///   - line: The line of the element concerned.
    public init(
        _ code: Code, _ message: String, versionName: String? = nil, entityName: String? = nil,
        propertyName: String? = nil, path: String? = nil, line: Int? = nil
    ) {
        self.code = code
        self.message = message
        self.versionName = versionName
        self.entityName = entityName
        self.propertyName = propertyName
        self.path = path
        self.line = line
    }

    /// The warning as one line: where, then what (`Recipes 2: Event.count (line 12): …`).
    public var description: String {
        var place = ""
        if let versionName { place += versionName + ": " }
        switch (entityName, propertyName) {
        case (let entity?, let property?): place += "\(entity).\(property)"
        case (let entity?, nil): place += entity
        case (nil, let property?): place += property
        case (nil, nil): break
        }
        if let line { place += place.isEmpty ? "line \(line)" : " (line \(line))" }
        return place.isEmpty ? message : place + ": " + message
    }
}

/// Where readers put their warnings while they read: one log per read, used by one thread.
final class ModelWarningLog {
    /// The warnings so far, in the order they were found.
    private(set) var warnings: [ModelReadingWarning] = []

    /// Creates an empty log.
    init() {}

    /// Adds a warning.
    func add(_ warning: ModelReadingWarning) {
        warnings.append(warning)
    }
}
