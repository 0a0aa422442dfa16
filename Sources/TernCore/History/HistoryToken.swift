/// A place in a store's persistent history: Core Data's `NSPersistentHistoryToken`.
///
/// Every recorded transaction has a token; fetching history *after* a token returns the
/// transactions saved since, and purging *before* a token removes the transactions up to and
/// including it. Tokens are opaque values: keep them (they are `Codable`), compare them, pass
/// them back, and do not build them yourself. Their text form (``description``) is what
/// `tern history --after` takes.
///
/// ```swift
/// let transactions = try await store.fetchHistory(HistoryFetchRequest(after: savedToken))
/// if let last = transactions.last?.token { savedToken = last }
/// let encoded = try JSONEncoder().encode(savedToken)   // keep it between launches
/// ```
public struct HistoryToken: Hashable, Sendable, Codable, Comparable, LosslessStringConvertible {
    /// The UUID of the store whose history the token points into.
    public let storeIdentifier: String
    /// The number of the transaction the token stands for; transactions are numbered from 1 in
    /// the order they were saved.
    package let transactionNumber: Int64

    /// Creates a token.
    ///
    /// - Parameters:
    ///   - storeIdentifier: The store's UUID.
    ///   - transactionNumber: The transaction's number (`ATRANSACTION.Z_PK` on SQLite).
    package init(storeIdentifier: String, transactionNumber: Int64) {
        self.storeIdentifier = storeIdentifier
        self.transactionNumber = transactionNumber
    }

    // MARK: - Text form

    /// Reads a token from its text form, `<transaction number>@<store UUID>`.
    ///
    /// - Parameter description: A token's ``description``.
    public init?(_ description: String) {
        let parts = description.split(separator: "@", maxSplits: 1, omittingEmptySubsequences: false)
        guard parts.count == 2, let number = Int64(parts[0]), number >= 0, !parts[1].isEmpty else { return nil }
        self.init(storeIdentifier: String(parts[1]), transactionNumber: number)
    }

    /// The token's text form, `<transaction number>@<store UUID>`.
    public var description: String { "\(transactionNumber)@\(storeIdentifier)" }

    // MARK: - Ordering

    /// Orders tokens of one store by transaction; tokens of different stores by store UUID first.
    public static func < (lhs: Self, rhs: Self) -> Bool {
        (lhs.storeIdentifier, lhs.transactionNumber) < (rhs.storeIdentifier, rhs.transactionNumber)
    }

    // MARK: - Non public

    /// Throws unless the token belongs to the store with that identifier.
    package func check(belongsTo identifier: String) throws {
        guard storeIdentifier == identifier else {
            throw TernError(
                .invalidHistoryToken,
                "the history token belongs to store \(storeIdentifier), not to store \(identifier); "
                    + "use a token this store handed out")
        }
    }
}
