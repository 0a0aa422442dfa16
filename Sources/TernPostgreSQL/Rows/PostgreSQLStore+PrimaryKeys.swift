import Foundation
import TernCore
import TernSQLite

extension PostgreSQLStore: PrimaryKeyCounting {
    // MARK: - Primary-key counters

    /// The last primary key each inheritance root handed out: its `Z_MAX`, which stays above
    /// the keys of deleted objects.
    ///
    /// - Throws: ``PostgreSQLError`` when `Z_PRIMARYKEY` cannot be read.
    package func lastPrimaryKeys() throws -> [String: Int64] {
        var keys: [String: Int64] = [:]
        try connection.forEachRow(#"SELECT "Z_ENT", "Z_MAX" FROM "Z_PRIMARYKEY""#) { row in
            guard let number = row[0].int64, let name = schema.entityNames[Int(number)],
                let layout = schema.entities[name], layout.rootName == layout.name
            else { return }
            keys[name] = max(keys[name] ?? 0, row[1].int64 ?? 0)
        }
        return keys
    }

    /// Raises the `Z_MAX` of inheritance roots to at least the keys given, never lowering one,
    /// so that a copy does not hand out again a key its source gave a deleted object.
    ///
    /// - Parameter keys: The last primary key handed out, by inheritance root; names that are
    ///   not a root of this store's model are ignored.
    /// - Throws: ``PostgreSQLError`` when the store is read-only or cannot be written.
    package func raiseLastPrimaryKeys(to keys: [String: Int64]) throws {
        try requireWritable()
        let roots = keys.compactMap { name, key in
            schema.entities[name].flatMap { $0.rootName == name && key > 0 ? ($0.number, key) : nil }
        }
        guard !roots.isEmpty else { return }
        try connection.inTransaction {
            for (number, key) in roots.sorted(by: { $0.0 < $1.0 }) {
                try connection.execute("""
                    UPDATE "Z_PRIMARYKEY" SET "Z_MAX" = \(key) WHERE "Z_ENT" = \(number) AND "Z_MAX" < \(key)
                    """)
            }
        }
    }
}
