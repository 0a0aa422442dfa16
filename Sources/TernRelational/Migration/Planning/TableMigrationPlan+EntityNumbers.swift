extension TableMigrationPlan {
    /// The source tables whose rows the plan selects or updates by their entity number (`Z_ENT`):
    /// tables a rebuild, a join rebuild or a derived count reads, and tables altered in place
    /// with an `UPDATE` of some rows (a rewritten column, an added column filled per entity), or
    /// whose entity no longer has the table to itself afterwards.
    ///
    /// A table that is one entity's alone and is only altered by statements that touch no row
    /// (`ALTER TABLE … ADD`, `RENAME` or `DROP COLUMN`, a constant default) is not among them: its
    /// rows stay that entity's whatever their `Z_ENT`, and an in-place migration need not relabel
    /// them (``StoreSchema/relabellingStatements(of:)``).
    ///
    /// - Parameter fillsWithoutUpdate: Whether the store adds a column (of an alteration, with its
    ///   values per source entity number) without an `UPDATE` of the table's rows: a declared
    ///   default.
    /// - Returns: The names of the source tables.
    /// - Complexity: O(*n*) in the size of the plan.
    package func tablesReadByEntityNumber(
        fillsWithoutUpdate: (TableAlteration, ColumnLayout, [Int: DatabaseValue]) -> Bool
    ) -> Set<String> {
        var tables: Set<String> = []
        for rebuild in rebuilds {
            for copy in (rebuild.copy.map { [$0] } ?? []) + rebuild.movedCopies { tables.insert(copy.sourceTable) }
        }
        for rebuild in joinRebuilds {
            for source in rebuild.sources {
                if case .foreignKey(let table, _, _, _) = source { tables.insert(table) }
            }
            for exclusion in rebuild.exclusions.values.joined() { tables.insert(exclusion.table) }
        }
        for count in derivedCounts { tables.formUnion([count.table, count.countedTable]) }
        for alteration in alterations {
            let updatesRows =
                !alteration.rewrittenColumns.isEmpty
                || alteration.addedColumns.contains {
                    !$0.values.isEmpty && !fillsWithoutUpdate(alteration, $0.column, $0.values)
                }
            let before = source.tables[alteration.table.name].flatMap { source.entities[$0.rootEntity] }
            let after = destination.entities[alteration.table.rootEntity]
            let staysAlone = (after?.isOnlyEntityOfTable ?? false) && before?.number == after?.number
            if updatesRows || !staysAlone { tables.insert(alteration.table.name) }
        }
        return tables
    }
}
