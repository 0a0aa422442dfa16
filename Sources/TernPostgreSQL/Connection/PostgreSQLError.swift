public import TernCore
import TernRelational

/// A failure that the PostgreSQL server or libpq reported, or a connection string that is wrong.
///
/// What any store can find wrong (a database that holds no Core Data store, malformed metadata, a
/// value that does not fit, a store opened read-only, another process migrating it) is a
/// ``/TernCore/TernError`` in every store, with the same code; this type is for what only
/// PostgreSQL says.
///
/// Errors carry a ``Code`` to match on, the server's SQLSTATE when it reported the failure, a
/// message that says what went wrong and what to do, and the SQL involved. They never carry bound
/// values, attribute contents or passwords.
///
/// ```swift
/// do {
///     let store = try PostgreSQLStore(url: "postgres://app@db.example.com/recipes", model: model)
/// } catch PostgreSQLError.Code.connectionFailed {
///     print("the server cannot be reached")
/// }
/// ```
public struct PostgreSQLError: CodedError, Sendable, Hashable {
    /// A kind of failure. New codes may be added in any release: match on the ones you handle.
    public struct Code: Hashable, Sendable, CustomStringConvertible {
        /// The code's stable spelling.
        public let rawValue: String

        /// Creates a code. Use the static members.
        package init(_ rawValue: String) { self.rawValue = rawValue }

        /// The code's stable spelling.
        public var description: String { rawValue }

        /// The server reported a failure; see ``PostgreSQLError/sqlState``.
        public static let serverFailure = Code("serverFailure")
        /// No connection could be made, or it was lost.
        public static let connectionFailed = Code("connectionFailed")
        /// The connection string cannot be read.
        public static let invalidConnectionString = Code("invalidConnectionString")
    }

    /// The kind of failure.
    public var code: Code
    /// The server's SQLSTATE (`23505` for a unique violation…), when the server reported the failure.
    public var sqlState: String?
    /// What went wrong and what to do about it, without any bound value.
    public var message: String
    /// The SQL statement involved, if any, with `$n` placeholders in place of values.
    public var sql: String?
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
    ///   - sqlState: The server's SQLSTATE.
    ///   - sql: The statement involved.
    ///   - underlyingError: The error that caused this one.
    public init(
        _ code: Code, _ message: String, sqlState: String? = nil, sql: String? = nil,
        underlyingError: (any Error)? = nil
    ) {
        self.code = code
        self.message = message
        self.sqlState = sqlState
        self.sql = sql
        self.underlyingError = underlyingError
    }
}

extension PostgreSQLError.Code {
    /// Matches an error against a code, so that `catch PostgreSQLError.Code.connectionFailed` works.
    public static func ~= (code: Self, error: any Error) -> Bool {
        (error as? PostgreSQLError)?.code == code
    }
}

extension PostgreSQLError: CustomStringConvertible {
    /// The message, followed by the SQLSTATE and the SQL when there are any.
    public var description: String {
        var text = message
        if let sqlState { text += " (SQLSTATE \(sqlState))" }
        if let sql { text += " – SQL: \(sql)" }
        return text
    }
}
