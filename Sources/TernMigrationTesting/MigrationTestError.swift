public import TernCore

/// Why a migration test failed: the code to match, and a message naming the source version, the
/// step, the entity and the property where they are known.
///
/// ```swift
/// do {
///     _ = try await MigrationTesting.everyVersionMigrates(model: recipes)
/// } catch let error as MigrationTestError where error.code == .objectsLost {
///     print(error.message)   // v1 → v3: 2 of 5 Recipe object(s) are missing from Recipe after the migration
/// }
/// ```
public struct MigrationTestError: CodedError, Sendable {
    /// What went wrong. New codes may be added in any release.
    public struct Code: Hashable, Sendable, CustomStringConvertible {
        /// The code's stable spelling.
        public let rawValue: String

        /// Creates a code. Use the static members.
        package init(_ rawValue: String) { self.rawValue = rawValue }

        /// The code's stable spelling.
        public var description: String { rawValue }

        /// The model has no version of that name.
        public static let unknownVersion = Code("unknownVersion")
        /// Sample objects cannot be made for a property (a pattern with no default to follow).
        public static let cannotSample = Code("cannotSample")
        /// The migration itself failed; ``MigrationTestError/underlyingError`` is its error.
        public static let migrationFailed = Code("migrationFailed")
        /// Source objects that the plan carries over are missing afterwards.
        public static let objectsLost = Code("objectsLost")
        /// A value the plan carries over changed.
        public static let valueChanged = Code("valueChanged")
        /// The migrated store does not verify clean against its version.
        public static let invalidResult = Code("invalidResult")
        /// The migrated store is not at the version asked for.
        public static let wrongVersion = Code("wrongVersion")
    }

    /// What went wrong.
    public var code: Code
    /// What went wrong, where, and what to do.
    public var message: String
    /// The source version the failing migration started from.
    public var sourceVersion: String?
    /// The step that failed, as `from → to`, when one did.
    public var step: String?
    /// The entity concerned.
    public var entityName: String?
    /// The property concerned.
    public var propertyName: String?
    /// The error that caused this one, kept as it was thrown.
    public var underlyingError: (any Error)?

    /// Creates an error.
    ///
    /// - Parameters:
    ///   - code: What went wrong.
    ///   - message: What went wrong, where, and what to do.
    ///   - sourceVersion: The source version.
    ///   - step: The failing step, `from → to`.
    ///   - entity: The entity concerned.
    ///   - property: The property concerned.
    ///   - underlyingError: The error that caused this one.
    public init(
        _ code: Code, _ message: String, sourceVersion: String? = nil, step: String? = nil, entity: String? = nil,
        property: String? = nil, underlyingError: (any Error)? = nil
    ) {
        self.code = code
        self.message = message
        self.sourceVersion = sourceVersion
        self.step = step
        self.entityName = entity
        self.propertyName = property
        self.underlyingError = underlyingError
    }

    /// The message, then the underlying error's text when there is one.
    public var description: String {
        guard let underlyingError else { return message }
        return message + "\n  caused by: \(underlyingError)"
    }
}
