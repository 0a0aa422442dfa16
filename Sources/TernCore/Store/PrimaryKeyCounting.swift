/// A store that remembers, for each inheritance root, the last primary key it handed out, also
/// when the object that had it is gone (Core Data's `Z_MAX` in `Z_PRIMARYKEY`): a key is never
/// handed out twice, so the object ID of a deleted object never names a new one.
///
/// A copy that keeps primary keys (`tern convert`, ``StoreKind`` conversions) carries these
/// counters over too; a copy that only looked at the rows would hand deleted objects' keys out
/// again.
package protocol PrimaryKeyCounting: PersistentStore {
    /// The last primary key handed out, by inheritance root; a root that never handed one out
    /// may be missing or 0.
    ///
    /// - Throws: Any error of reading the store.
    func lastPrimaryKeys() async throws -> [String: Int64]
}

extension PersistentStore {
    /// The store's primary-key counters (``PrimaryKeyCounting/lastPrimaryKeys()``), or none
    /// for a store that keeps no counters beyond its rows.
    ///
    /// - Throws: Any error of reading the store.
    package func recordedLastPrimaryKeys() async throws -> [String: Int64] {
        guard let counting = self as? any PrimaryKeyCounting else { return [:] }
        return try await counting.lastPrimaryKeys()
    }
}
