import Foundation
import TernCore
import TernSQLite

extension SyncEngine {
    // MARK: - Purging

    /// Removes what this device no longer needs for sync: its history up to and including the
    /// last pushed transaction, and the identities of deleted objects once every delete has
    /// reached the server (nothing but sync's own transactions after the pushed one).
    ///
    /// Push first (``sync()``) to purge the most. The server purges separately
    /// (`SyncServer.purge(through:)`).
    ///
    /// - Returns: How many history transactions and deleted identities went.
    /// - Throws: ``SyncError`` when the store is not set up for sync; `SQLiteError`.
    /// - Complexity: O(*t* + *d*) for *t* transactions and *d* deleted identities removed.
    public func purgeHistory() async throws -> (transactions: Int, identities: Int) {
        try await requireSyncStore()
        guard let text = try await store.syncState(forKey: StateKey.pushed), let pushed = HistoryToken(text) else {
            return (0, 0)
        }
        let transactions = try await store.deleteHistory(before: pushed)
        var isPushed = true
        var after = pushed
        while isPushed {
            var request = HistoryFetchRequest(after: after)
            request.fetchLimit = pageSize
            let page = try await store.fetchHistory(request)
            isPushed = page.allSatisfy { $0.author == Self.author }
            guard let last = page.last?.token, page.count == pageSize else { break }
            after = last
        }
        let identities = isPushed ? try await store.removeDeletedGlobalIdentities() : 0
        return (transactions, identities)
    }
}
