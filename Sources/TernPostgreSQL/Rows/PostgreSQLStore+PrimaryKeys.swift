import Foundation
import TernCore
import TernRelational

extension PostgreSQLStore: PrimaryKeyCounting {
    // MARK: - Primary-key counters

    /// The last primary key each inheritance root handed out: its `Z_MAX`, which stays above
    /// the keys of deleted objects.
    ///
    /// - Throws: ``PostgreSQLError`` when `Z_PRIMARYKEY` cannot be read.
    package func lastPrimaryKeys() throws -> [String: Int64] {
        schema.lastPrimaryKeys(fromCounters: try connection.fetchAll(#"SELECT "Z_ENT", "Z_MAX" FROM "Z_PRIMARYKEY""#))
    }

    /// Raises the `Z_MAX` of inheritance roots to at least the keys given, never lowering one,
    /// so that a copy does not hand out again a key its source gave a deleted object.
    ///
    /// - Parameter keys: The last primary key handed out, by inheritance root; names that are
    ///   not a root of this store's model are ignored.
    /// - Throws: ``PostgreSQLError`` when the store is read-only or cannot be written.
    package func raiseLastPrimaryKeys(to keys: [String: Int64]) throws {
        try requireWritable()
        let counters = schema.rootCounters(keys)
        guard !counters.isEmpty else { return }
        try connection.inTransaction {
            for (number, key) in counters {
                try connection.execute(
                    """
                    UPDATE "Z_PRIMARYKEY" SET "Z_MAX" = \(key) WHERE "Z_ENT" = \(number) AND "Z_MAX" < \(key)
                    """)
            }
        }
    }
}
