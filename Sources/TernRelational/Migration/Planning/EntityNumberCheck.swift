import TernCore
package import TernMigration

/// The check, before a migration writes anything, that every row of a store belongs to an entity
/// its `Z_PRIMARYKEY` names: plain SQL that SQLite and PostgreSQL both run.
///
/// A migration reads and rewrites rows by their entity number (`Z_ENT`). Rows whose number no
/// concrete entity of their table has (a `Z_PRIMARYKEY` edited or restored from another store,
/// a damaged file) would be left out of a store built beside, or relabelled in place. Such a
/// store is refused instead, untouched, naming each table and its count of stray rows, as
/// `tern verify` lists them one by one.
///
/// ```swift
/// try EntityNumberCheck.requireNoStrayRows(in: layout) { sql in
///     try connection.fetchValue(sql)?.int64 ?? 0
/// }
/// ```
package struct EntityNumberCheck: Sendable {
    /// The root table.
    package let table: String
    /// The root entity whose hierarchy the table holds.
    package let rootEntity: String
    /// `SELECT COUNT(*)` of the table's rows whose `Z_ENT` is NULL or no concrete entity's.
    package let countQuery: SQL

    /// One check per root table of a store's layout, sorted by table name.
    ///
    /// - Parameter layout: The store's layout, read from its `Z_PRIMARYKEY`.
    /// - Returns: The checks.
    /// - Complexity: O(*e*) in the number of entities; running each query scans its table.
    package static func checks(of layout: StoreSchema) -> [EntityNumberCheck] {
        layout.tables.values.sorted { $0.name < $1.name }.compactMap { table in
            guard let root = layout.entities[table.rootEntity] else { return nil }
            return EntityNumberCheck(
                table: table.name, rootEntity: root.name,
                countQuery: "SELECT COUNT(*) FROM \(SQL.identifier(table.name)) WHERE \(layout.strayRows(of: root))")
        }
    }

    /// What is wrong with the table, or `nil` when it has no stray rows.
    ///
    /// - Parameter stray: The result of ``countQuery``.
    /// - Returns: A `MigrationError` with code `storeFailure` naming the table and the count.
    package func failure(stray: Int64) -> MigrationError? {
        guard stray > 0 else { return nil }
        return MigrationError(
            .storeFailure,
            "\(stray) row(s) of \(table) have an entity number (Z_ENT) that no entity of \(rootEntity)'s hierarchy has "
                + "in Z_PRIMARYKEY")
    }

    /// Refuses a store with stray rows: one error naming every table that has some.
    ///
    /// - Parameter failures: The checks of the tables that have stray rows, with their failures.
    /// - Returns: The error to throw, or `nil` when there are none.
    package static func refusal(_ failures: [(check: EntityNumberCheck, failure: MigrationError)]) -> MigrationError? {
        guard !failures.isEmpty else { return nil }
        let advice =
            "the store is damaged and was not migrated: run tern verify to list the rows, then repair "
            + "Z_PRIMARYKEY or restore a backup"
        if failures.count == 1 { return MigrationError(.storeFailure, failures[0].failure.message + "; " + advice) }
        return MigrationError(
            .storeFailure,
            "Rows of \(failures.map(\.check.table).joined(separator: ", ")) have entity numbers (Z_ENT) that the "
                + "store's Z_PRIMARYKEY does not give them; " + advice,
            failures: failures.map(\.failure))
    }
}

extension EntityNumberCheck {
    /// Runs every check of a layout and throws the refusal if any table has stray rows.
    ///
    /// - Parameters:
    ///   - layout: The store's layout before the migration.
    ///   - count: Runs a `COUNT(*)` query on the store.
    /// - Throws: ``TernMigration/MigrationError`` with code `storeFailure`, or what `count` throws.
    /// - Complexity: One scan of each root table.
    package static func requireNoStrayRows(in layout: StoreSchema, count: (SQL) throws -> Int64) throws {
        var failures: [(check: EntityNumberCheck, failure: MigrationError)] = []
        for check in checks(of: layout) {
            if let failure = check.failure(stray: try count(check.countQuery)) { failures.append((check, failure)) }
        }
        if let refusal = refusal(failures) { throw refusal }
    }
}

extension StoreSchema {
    /// The condition on a root table's rows whose entity number (`Z_ENT`) is NULL or none of the
    /// concrete (not abstract) entities of the root's hierarchy has: rows no entity owns. Plain
    /// SQL for SQLite and PostgreSQL (no empty `IN` list). A table that is the root's alone has
    /// none: its every row is the root's (``EntityLayout/isOnlyEntityOfTable``).
    ///
    /// - Parameter root: The root entity's layout.
    /// - Returns: The condition, for a `WHERE` over the root's table.
    package func strayRows(of root: EntityLayout) -> SQL {
        if root.isOnlyEntityOfTable { return "FALSE" }
        let numbers = root.hierarchyNumbers.filter { number in
            entityNames[number].flatMap { entities[$0] }.map { !$0.isAbstract } ?? false
        }
        guard !numbers.isEmpty else { return "TRUE" }
        return "\"Z_ENT\" IS NULL OR \"Z_ENT\" NOT IN (\(SQL.joined(numbers.map { "\($0)" })))"
    }

    /// The updates that give the rows of each table that is one entity's alone (a root without
    /// subentities) the entity's number where their `Z_ENT` disagrees
    /// (``EntityLayout/mislabelledRows(alias:)``): Core Data reads them as that entity's objects,
    /// and an in-place migration then rewrites them as such. Plain SQL for SQLite and PostgreSQL,
    /// to run inside the migration's transaction.
    ///
    /// - Parameter names: The tables the migration reads by entity number
    ///   (``TableMigrationPlan/tablesReadByEntityNumber(fillsWithoutUpdate:)``): any other table
    ///   keeps its rows' numbers, and costs no scan.
    /// - Returns: One `UPDATE` per such table among `names`, sorted by table name.
    /// - Complexity: O(*t*) in the number of tables; running each scans its table.
    package func relabellingStatements(of names: Set<String>) -> [SQL] {
        tables.values.sorted { $0.name < $1.name }.compactMap { table in
            guard names.contains(table.name), let root = entities[table.rootEntity],
                let mislabelled = root.mislabelledRows()
            else { return nil }
            return "UPDATE \(SQL.identifier(table.name)) SET \"Z_ENT\" = \(root.number) WHERE \(mislabelled)"
        }
    }
}
