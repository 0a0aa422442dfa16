public import TernCore
import TernRelational

/// A failure that SQLite reported, or that only a SQLite file can have.
///
/// What any store can find wrong (a file that is not a Core Data store, malformed metadata, a
/// value that does not fit, a missing file, a store opened read-only) is a ``/TernCore/TernError``
/// in every store, with the same code; this type is for what only SQLite says.
///
/// Errors carry a ``Code`` to match on, SQLite's result codes when SQLite reported the failure,
/// a message that says what went wrong and what to do, and the SQL and file involved. They never
/// carry bound values or attribute contents.
///
/// ```swift
/// do {
///     let metadata = try SQLiteStore.metadata(at: url)
/// } catch SQLiteError.Code.notADatabase {
///     print("not a SQLite file")
/// }
/// ```
public struct SQLiteError: CodedError, Sendable, Hashable {
    /// A kind of failure. New codes may be added in any release: match on the ones you handle.
    public struct Code: Hashable, Sendable, CustomStringConvertible {
        /// The code's stable spelling.
        public let rawValue: String

        /// Creates a code. Use the static members.
        package init(_ rawValue: String) { self.rawValue = rawValue }

        /// The code's stable spelling.
        public var description: String { rawValue }

        /// SQLite reported a failure; see ``SQLiteError/resultCode``.
        public static let sqliteFailure = Code("sqliteFailure")
        /// The file is not a SQLite database.
        public static let notADatabase = Code("notADatabase")
        /// SQLite refused a write (`SQLITE_READONLY`): the connection or its file is read-only.
        /// A store opened read-only refuses a save before SQLite sees it, with
        /// `TernError.Code.unwritableStore`.
        public static let readOnly = Code("readOnly")
        /// A read-only open found what a crashed writer left: a hot rollback journal to roll
        /// back, or a write-ahead log whose index must be rebuilt or cannot be created (a
        /// read-only folder). The store must be opened read-write once, in a writable folder.
        public static let needsRecovery = Code("needsRecovery")
    }

    /// The kind of failure.
    public var code: Code
    /// SQLite's primary result code (`SQLITE_BUSY` is 5…), when SQLite reported the failure.
    public var resultCode: Int?
    /// SQLite's extended result code (`SQLITE_CONSTRAINT_UNIQUE` is 2067…), when known.
    public var extendedResultCode: Int?
    /// What went wrong and what to do about it, without any bound value.
    public var message: String
    /// The SQL statement involved, if any, with `?` placeholders in place of values.
    public var sql: String?
    /// The file involved, if any.
    public var path: String?
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
    ///   - resultCode: SQLite's primary result code.
    ///   - extendedResultCode: SQLite's extended result code.
    ///   - sql: The statement involved.
    ///   - path: The file involved.
    ///   - underlyingError: The error that caused this one.
    public init(
        _ code: Code, _ message: String, resultCode: Int? = nil, extendedResultCode: Int? = nil,
        sql: String? = nil, path: String? = nil, underlyingError: (any Error)? = nil
    ) {
        self.code = code
        self.message = message
        self.resultCode = resultCode
        self.extendedResultCode = extendedResultCode
        self.sql = sql
        self.path = path
        self.underlyingError = underlyingError
    }
}

extension SQLiteError.Code {
    /// Matches an error against a code, so that `catch SQLiteError.Code.notADatabase` works.
    public static func ~= (code: Self, error: any Error) -> Bool {
        (error as? SQLiteError)?.code == code
    }
}

extension SQLiteError: CustomStringConvertible {
    /// The message, followed by the result code, the SQL and the file when there are any.
    public var description: String {
        var text = message
        if let extendedResultCode { text += " (SQLite code \(extendedResultCode))" }
        if let sql { text += " – SQL: \(sql)" }
        if let path { text += " – file: \(path)" }
        return text
    }
}
