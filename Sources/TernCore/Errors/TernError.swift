/// An error of Tern's core: models, objects, contexts and stores in general.
///
/// Errors carry a ``Code`` to match on, a message that says what went wrong and what to do, and
/// the entity, property and path involved. They never carry attribute values.
///
/// ```swift
/// do {
///     try model.validate()
/// } catch TernError.Code.invalidModel {
///     print("the model is broken")
/// }
/// ```
public struct TernError: CodedError, Sendable, Hashable {
    /// A kind of failure. New codes may be added in any release: match on the ones you handle.
    public struct Code: Hashable, Sendable, CustomStringConvertible {
        /// The code's stable spelling.
        public let rawValue: String

        /// Creates a code. Use the static members; this is for codes defined elsewhere in Tern.
        package init(_ rawValue: String) { self.rawValue = rawValue }

        /// The code's stable spelling.
        public var description: String { rawValue }

        /// A model is inconsistent: a dangling reference, a duplicate name, a bad default…
        public static let invalidModel = Code("invalidModel")
        /// A model file could not be read.
        public static let unreadableModelFile = Code("unreadableModelFile")
        /// A model file could not be written.
        public static let unwritableModelFile = Code("unwritableModelFile")
        /// A value does not fit its attribute, or an object breaks its entity's rules.
        public static let validationFailed = Code("validationFailed")
        /// A store's metadata does not match the model.
        public static let incompatibleStore = Code("incompatibleStore")
        /// A store file or its metadata could not be read.
        public static let unreadableStore = Code("unreadableStore")
        /// A store could not be written.
        public static let unwritableStore = Code("unwritableStore")
        /// An I/O operation failed.
        public static let ioFailure = Code("ioFailure")
        /// The file or database holds no Core Data store: a required table is missing or malformed.
        public static let notACoreDataStore = Code("notACoreDataStore")
        /// A store's metadata could not be decoded or encoded.
        public static let invalidMetadata = Code("invalidMetadata")
        /// A store's tables do not match the model: a property has no column, an entity no row.
        public static let schemaMismatch = Code("schemaMismatch")
        /// A stored value does not fit its column or attribute.
        public static let invalidValue = Code("invalidValue")
        /// A reference to external binary data is malformed, or its file is missing.
        public static let invalidExternalData = Code("invalidExternalData")
        /// The operation is not supported by this store type.
        public static let unsupported = Code("unsupported")
        /// A predicate's text could not be parsed, or a predicate could not be evaluated.
        public static let invalidPredicate = Code("invalidPredicate")
        /// Objects changed in the store since they were read (an optimistic-locking failure);
        /// ``TernError/failures`` names each conflicting object.
        public static let mergeConflict = Code("mergeConflict")
        /// A save would break a uniqueness constraint; ``TernError/failures`` names each object.
        public static let constraintConflict = Code("constraintConflict")
        /// An object, row or store that was asked for does not exist.
        public static let objectNotFound = Code("objectNotFound")
        /// The store does not record persistent history (its type cannot, or history is off).
        public static let historyUnavailable = Code("historyUnavailable")
        /// A history token was handed out by another store, or cannot be read.
        public static let invalidHistoryToken = Code("invalidHistoryToken")
        /// Another process holds the store's lock (it is loading, moving or migrating the store)
        /// and did not release it in time.
        public static let storeBusy = Code("storeBusy")
    }

    /// The kind of failure.
    public var code: Code
    /// What went wrong and what to do about it, without any attribute value.
    public var message: String
    /// The entity involved, if any.
    public var entityName: String?
    /// The property involved, if any.
    public var propertyName: String?
    /// The file involved, if any.
    public var path: String?
    /// The SQL statement involved, if any, with placeholders in place of values.
    public var sql: String?
    /// The object involved, if any.
    public var objectID: ObjectID?
    /// The individual failures behind this error: one per object and property for
    /// ``Code/validationFailed``, ``Code/mergeConflict`` and ``Code/constraintConflict``.
    public var failures: [TernError] = []
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
    ///   - entity: The entity involved.
    ///   - property: The property involved.
    ///   - path: The file involved.
    ///   - sql: The SQL statement involved, with placeholders in place of values.
    ///   - underlyingError: The error that caused this one.
    public init(
        _ code: Code, _ message: String, entity: String? = nil, property: String? = nil,
        path: String? = nil, sql: String? = nil, underlyingError: (any Error)? = nil
    ) {
        self.code = code
        self.message = message
        self.entityName = entity
        self.propertyName = property
        self.path = path
        self.sql = sql
        self.underlyingError = underlyingError
    }

    /// Creates an error about one object, or one that gathers several failures.
    ///
    /// - Parameters:
    ///   - code: The kind of failure.
    ///   - message: What went wrong and what to do.
    ///   - objectID: The object involved.
    ///   - property: The property involved.
    ///   - failures: The individual failures this error gathers.
    ///   - underlyingError: The error that caused this one.
    public init(
        _ code: Code, _ message: String, objectID: ObjectID?, property: String? = nil,
        failures: [TernError] = [], underlyingError: (any Error)? = nil
    ) {
        self.init(code, message, entity: objectID?.entityName, property: property, underlyingError: underlyingError)
        self.objectID = objectID
        self.failures = failures
    }
}

extension TernError.Code {
    /// Matches an error against a code, so that `catch TernError.Code.invalidModel` works.
    public static func ~= (code: Self, error: any Error) -> Bool {
        (error as? TernError)?.code == code
    }
}

extension TernError: CustomStringConvertible {
    /// The message, preceded by the entity and property when there are any.
    public var description: String {
        var place = ""
        if let entityName {
            place = propertyName.map { "\(entityName).\($0): " } ?? "\(entityName): "
        }
        var text = place + message
        if let sql { text += " – SQL: \(sql)" }
        if let path { text += " (\(path))" }
        return text
    }
}
