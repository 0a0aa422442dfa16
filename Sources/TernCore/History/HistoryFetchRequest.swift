/// Which recorded transactions and changes to fetch: Core Data's `fetchHistory(after:)` and its
/// fetch requests over transactions and changes, as a typed value.
///
/// Every filter left nil lets everything through. Transaction filters (``authors``,
/// ``contextNames``) keep or drop whole transactions; change filters (``entityNames``,
/// ``changeTypes``) keep only the matching changes, and a transaction left with no change is
/// dropped.
///
/// ```swift
/// var request = HistoryFetchRequest(after: token)
/// request.authors = ["importer"]
/// request.entityNames = ["Recipe"]
/// request.fetchLimit = 100
/// let transactions = try await store.fetchHistory(request)
/// ```
public struct HistoryFetchRequest: Hashable, Sendable {
    /// Only transactions after this one; nil for the whole history.
    public var token: HistoryToken?
    /// Only transactions by these authors.
    public var authors: Set<String>?
    /// Only transactions saved by contexts with these names.
    public var contextNames: Set<String>?
    /// Only changes of objects of these entities (exactly these; subentities are not implied).
    public var entityNames: Set<String>?
    /// Only changes of these types.
    public var changeTypes: Set<HistoryChange.ChangeType>?
    /// At most this many transactions, the oldest first; nil for all.
    public var fetchLimit: Int?

    /// Creates a request.
    ///
    /// - Parameter token: Only transactions after this one; nil for the whole history.
    public init(after token: HistoryToken? = nil) {
        self.token = token
    }

    // MARK: - Applying

    /// The transaction as this request sees it: nil when it is filtered out, else with only the
    /// matching changes.
    ///
    /// - Parameter transaction: A recorded transaction.
    /// - Returns: The filtered transaction, or nil.
    /// - Complexity: O(*c*) in the number of its changes.
    public func filtered(_ transaction: HistoryTransaction) -> HistoryTransaction? {
        if let token, transaction.token.transactionNumber <= token.transactionNumber { return nil }
        if let authors, transaction.author.map(authors.contains) != true { return nil }
        if let contextNames, transaction.contextName.map(contextNames.contains) != true { return nil }
        guard entityNames != nil || changeTypes != nil else { return transaction }
        var result = transaction
        result.changes = transaction.changes.filter { change in
            entityNames.map { $0.contains(change.objectID.entityName) } ?? true
                && changeTypes.map { $0.contains(change.changeType) } ?? true
        }
        return result.changes.isEmpty ? nil : result
    }
}
