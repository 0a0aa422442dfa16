/// The shape every error Tern throws shares: a ``Code`` to match, a message that says what went
/// wrong and what to do, and the error that caused it, kept as it was thrown.
///
/// Each module has its error type (``TernError``; `SQLiteError` and `PostgreSQLError`, which
/// keep the database's own result codes; `MigrationError`; `RecordError`; `SyncError`;
/// `CodegenError`; `MigrationTestError`), and each matches with its code in a `catch` clause:
///
/// ```swift
/// do {
///     try await StoreMigrator().migrateStore(at: .file(url), model: versions)
/// } catch MigrationError.Code.storeFailure {
///     // …
/// } catch let error as any CodedError {
///     print(error.code, error.message, error.underlyingError.map(String.init(describing:)) ?? "")
/// }
/// ```
public protocol CodedError: Error, CustomStringConvertible {
    /// The kind of a failure: a value with a stable spelling, matched with `~=`.
    associatedtype Code: Hashable, Sendable, CustomStringConvertible

    /// The kind of failure.
    var code: Code { get }
    /// What went wrong and what to do about it, without any bound or attribute value.
    var message: String { get }
    /// The error that caused this one (a SQLite or PostgreSQL error, a file system error, a
    /// store's error during a migration…), kept as it was thrown; nil when this one is the first.
    var underlyingError: (any Error)? { get }
}

extension CodedError {
    /// This error's causes, from the one that caused it down to the first.
    ///
    /// - Complexity: O(*n*) in the length of the chain.
    public var underlyingErrors: [any Error] {
        var chain: [any Error] = []
        var next = underlyingError
        while let error = next {
            chain.append(error)
            next = (error as? any CodedError)?.underlyingError
        }
        return chain
    }
}

/// An error kept as the cause of another, in a stored property of a `Hashable` error type.
///
/// Errors are not `Hashable` in general, so two causes always compare equal: an error's equality
/// is that of its code, message and context, whatever caused it.
package struct ErrorCause: Sendable, Hashable {
    /// The error.
    package let error: any Error

    /// Keeps an error.
    ///
    /// - Parameter error: The cause.
    package init(_ error: any Error) { self.error = error }

    /// Causes never tell two errors apart.
    package static func == (_: Self, _: Self) -> Bool { true }

    /// Causes add nothing to an error's hash.
    package func hash(into hasher: inout Hasher) {}
}
