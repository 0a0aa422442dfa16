public import TernCore

/// Why ``ModelCodegen`` cannot generate code for a model.
///
/// ```swift
/// do {
///     _ = try ModelCodegen.generate(model, bundleName: "Kitchen")
/// } catch where error.code == .emptyModel {
///     print(error.message)
/// }
/// ```
public struct CodegenError: CodedError, Sendable, Hashable {
    /// The kind of failure, which callers can match.
    public struct Code: Sendable, Hashable, CustomStringConvertible {
        /// The code's name.
        public let name: String

        private init(_ name: String) { self.name = name }

        /// The model has no version to generate code for.
        public static let emptyModel = Code("emptyModel")

        /// The code's name.
        public var description: String { name }
    }

    /// The kind of failure.
    public var code: Code
    /// What went wrong and what to do about it.
    public var message: String
    /// The entity involved, if any.
    public var entityName: String?
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
    ///   - underlyingError: The error that caused this one.
    public init(_ code: Code, _ message: String, entity: String? = nil, underlyingError: (any Error)? = nil) {
        self.code = code
        self.message = message
        self.entityName = entity
        self.underlyingError = underlyingError
    }

    /// The message, preceded by the entity when there is one.
    public var description: String { entityName.map { "\($0): \(message)" } ?? message }
}

extension CodegenError.Code {
    /// Matches an error against a code, so that `catch CodegenError.Code.emptyModel` works.
    public static func ~= (code: Self, error: any Error) -> Bool {
        (error as? CodegenError)?.code == code
    }
}
