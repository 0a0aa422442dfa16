import Foundation

/// Persistent history for stores that do not record it: every call says so.
///
/// Stores that record history (``InMemoryStore`` created with `recordsHistory: true`, the SQLite
/// store opened with history on) implement these requirements themselves.
extension PersistentStore {
    // MARK: - History

    /// Throws: this store type does not record history.
    ///
    /// - Throws: ``TernError/Code/historyUnavailable``.
    public func fetchHistory(_ request: HistoryFetchRequest) async throws -> [HistoryTransaction] {
        throw historyUnavailable()
    }

    /// Throws: this store type does not record history.
    ///
    /// - Throws: ``TernError/Code/historyUnavailable``.
    public func deleteHistory(before token: HistoryToken) async throws -> Int {
        throw historyUnavailable()
    }

    /// Throws: this store type does not record history.
    ///
    /// - Throws: ``TernError/Code/historyUnavailable``.
    public func currentHistoryToken() async throws -> HistoryToken? {
        throw historyUnavailable()
    }

    /// Always false: this store type does not record history.
    public var recordsHistory: Bool { false }

    // MARK: - Non public

    private func historyUnavailable() -> TernError {
        TernError(
            .historyUnavailable,
            "\(kind) stores do not record persistent history; use a SQLite or in-memory store with history turned on",
            path: location?.path)
    }
}
