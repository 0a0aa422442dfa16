import Foundation
public import TernCore

/// An error of Tern's migration layer: mapping models, value expressions, inference and planning.
///
/// Errors carry a ``Code`` to match on, a message that says what went wrong and what to do, and
/// where it happened: the entity mapping, entity, property, model version and the position in a
/// value expression. They never carry attribute values. An error that gathers several problems
/// (every non-inferable change of a step, say) lists them in ``failures``.
///
/// ```swift
/// do {
///     let plan = try MigrationPlanner(model: recipes).plan(storeHashes: hashes)
///     try plan.requireExecutable()
/// } catch MigrationError.Code.notInferable {
///     print("add a mapping for this step")
/// }
/// ```
public struct MigrationError: CodedError, Sendable, Hashable {
    /// A kind of failure. New codes may be added in any release: match on the ones you handle.
    public struct Code: Hashable, Sendable, CustomStringConvertible {
        /// The code's stable spelling.
        public let rawValue: String

        /// Creates a code. Use the static members; this is for codes defined elsewhere in Tern.
        package init(_ rawValue: String) { self.rawValue = rawValue }

        /// The code's stable spelling.
        public var description: String { rawValue }

        /// A value expression's text could not be parsed.
        public static let invalidExpression = Code("invalidExpression")
        /// A mapping does not fit its models: an unknown entity, property, key path, function or mapping.
        public static let invalidMapping = Code("invalidMapping")
        /// A value expression failed while it was evaluated (a bad conversion, a division by zero…).
        public static let evaluationFailed = Code("evaluationFailed")
        /// A mapping file could not be read or written.
        public static let unreadableMappingFile = Code("unreadableMappingFile")
        /// The changes between two model versions cannot be inferred; ``MigrationError/failures``
        /// names each one.
        public static let notInferable = Code("notInferable")
        /// No version of the model wrote the store.
        public static let unknownSourceVersion = Code("unknownSourceVersion")
        /// A version name that the model does not have.
        public static let unknownVersion = Code("unknownVersion")
        /// The store was written by a newer version than the target; Tern never downgrades.
        public static let downgradeRefused = Code("downgradeRefused")
        /// A custom migration policy is not registered under the name a mapping gives.
        public static let unknownPolicy = Code("unknownPolicy")
        /// The migration was cancelled; the source store is as it was.
        public static let cancelled = Code("cancelled")
        /// The store could not be read, written or replaced while migrating.
        public static let storeFailure = Code("storeFailure")
        /// The store's objects break a rule of the destination version that the step does not
        /// repair: a property that became required is empty, or a new uniqueness constraint is
        /// broken. Checked before anything is written; the store is as it was.
        public static let constraintViolated = Code("constraintViolated")
    }

    /// The kind of failure.
    public var code: Code
    /// What went wrong and what to do about it, without any attribute value.
    public var message: String
    /// The entity mapping involved, if any.
    public var mappingName: String?
    /// The entity involved, if any.
    public var entityName: String?
    /// The property involved, if any.
    public var propertyName: String?
    /// The offset in characters, from 0, in the value expression involved, if any.
    public var position: Int?
    /// The model version involved, if any.
    public var versionName: String?
    /// The file involved, if any.
    public var path: String?
    /// The individual problems behind this error, such as every non-inferable change of a step.
    public var failures: [MigrationError]
    /// The error that caused this one, kept as it was thrown; nil when this one is the first.
    public var underlyingError: (any Error)? {
        get { cause?.error }
        set { cause = newValue.map(ErrorCause.init) }
    }
    /// ``underlyingError``, in a form that leaves the error's equality to its code and context.
    private var cause: ErrorCause?

    /// Creates an error.
    ///
    /// - Parameters:
    ///   - code: The kind of failure.
    ///   - message: What went wrong and what to do.
    ///   - mapping: The entity mapping involved.
    ///   - entity: The entity involved.
    ///   - property: The property involved.
    ///   - position: The character offset in the value expression involved.
    ///   - version: The model version involved.
    ///   - failures: The individual problems this error gathers.
    ///   - underlyingError: The error that caused this one, such as a store's error during a migration.
    public init(
        _ code: Code, _ message: String, mapping: String? = nil, entity: String? = nil,
        property: String? = nil, position: Int? = nil, version: String? = nil, failures: [MigrationError] = [],
        underlyingError: (any Error)? = nil
    ) {
        self.code = code
        self.message = message
        self.mappingName = mapping
        self.entityName = entity
        self.propertyName = property
        self.position = position
        self.versionName = version
        self.path = nil
        self.failures = failures
        self.underlyingError = underlyingError
    }

    // MARK: - Adding context

    /// The same error, with the entity mapping and property it happened in filled where missing.
    ///
    /// - Parameters:
    ///   - mapping: The entity mapping's name.
    ///   - property: The destination property's name.
    /// - Returns: The error with its context.
    public func located(mapping: String?, property: String?) -> MigrationError {
        var copy = self
        copy.mappingName = copy.mappingName ?? mapping
        copy.propertyName = copy.propertyName ?? property
        return copy
    }
}

extension MigrationError.Code {
    /// Matches an error against a code, so that `catch MigrationError.Code.notInferable` works.
    public static func ~= (code: Self, error: any Error) -> Bool {
        (error as? MigrationError)?.code == code
    }
}

extension MigrationError: CustomStringConvertible {
    /// The message preceded by where it happened, then one indented line per gathered failure.
    ///
    /// ```text
    /// mapping EventToTimeStamp, property stamp, at 8: unknown function 'tim'
    /// ```
    public var description: String {
        var place: [String] = []
        if let versionName { place.append("version \(versionName)") }
        if let mappingName { place.append("mapping \(mappingName)") }
        if let entityName {
            place.append(propertyName.map { "\(entityName).\($0)" } ?? "entity \(entityName)")
        } else if let propertyName {
            place.append("property \(propertyName)")
        }
        if let position { place.append("at \(position)") }
        var text = place.isEmpty ? message : place.joined(separator: ", ") + ": " + message
        if let path { text += " (\(path))" }
        for failure in failures { text += "\n  " + failure.description.replacingOccurrences(of: "\n", with: "\n  ") }
        return text
    }
}
