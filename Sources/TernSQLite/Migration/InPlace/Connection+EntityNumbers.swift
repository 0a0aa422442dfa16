import TernRelational

extension Connection {
    /// Checks, before a migration writes anything, that every row has an entity number its table's
    /// entities have (``EntityNumberCheck``).
    ///
    /// - Parameter layout: The store's layout before the migration.
    /// - Throws: ``TernMigration/MigrationError`` with code `storeFailure` naming each table with
    ///   stray rows; ``SQLiteError`` when counting fails.
    /// - Complexity: One scan of each root table.
    func checkEntityNumbers(of layout: StoreSchema) throws {
        try EntityNumberCheck.requireNoStrayRows(in: layout) { try fetchValue($0)?.int64 ?? 0 }
    }

    /// Gives the rows of each table that is one entity's alone (a root without subentities) the
    /// entity's number where their `Z_ENT` disagrees (``EntityLayout/mislabelledRows(alias:)``):
    /// Core Data reads them as that entity's objects, and an in-place migration then rewrites
    /// them as such. Run inside the migration's transaction.
    ///
    /// - Parameters:
    ///   - layout: The store's layout before the migration.
    ///   - names: The tables the migration reads by entity number
    ///     (``TableMigrationPlan/tablesReadByEntityNumber(fillsWithoutUpdate:)``); others are left.
    /// - Throws: ``SQLiteError`` when an update fails.
    /// - Complexity: One scan of each such table.
    func relabelRowsOfUnsharedTables(of layout: StoreSchema, among names: Set<String>) throws(SQLiteError) {
        for statement in layout.relabellingStatements(of: names) { try execute(statement) }
    }
}
