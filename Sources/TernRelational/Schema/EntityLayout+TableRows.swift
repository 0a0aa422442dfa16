/// Which rows of a root table are an entity's objects.
///
/// A root table holds the rows of one inheritance hierarchy. When the root has subentities the
/// table is shared, and each row's entity number (`Z_ENT`) tells whose object it is. When the
/// root has none, the table is the root's alone: Core Data selects its rows with no `Z_ENT` term,
/// so every row is one of the root's objects, even one whose `Z_ENT` disagrees (a store edited
/// by hand or written by another tool). Every reader, counter, checker and migration asks these
/// helpers rather than testing `Z_ENT` itself.
///
/// ```swift
/// let entity = layout.rowEntityNumber(alias: "t0")          // t0."Z_ENT", or 3 for an unshared table
/// let filter = layout.rowFilter(alias: "t0")                 // t0."Z_ENT" IN (3, 4), or TRUE
/// ```
extension EntityLayout {
    /// Whether the entity is the only entity of its table: a root without subentities, whose
    /// table's rows are all its objects whatever their `Z_ENT` says.
    package var isOnlyEntityOfTable: Bool { superNumber == 0 && hierarchyNumbers.count <= 1 }

    /// The expression giving the entity number of a row of the entity's table: the `Z_ENT`
    /// column of a shared table, the entity's own number for a table that is the entity's alone.
    ///
    /// - Parameter alias: The table's alias in the query, if any.
    /// - Returns: SQL for SQLite and PostgreSQL, to select in place of `Z_ENT`.
    package func rowEntityNumber(alias: String? = nil) -> SQL {
        isOnlyEntityOfTable ? SQL(unsafeSQL: String(number)) : Self.entityColumn(alias: alias)
    }

    /// The condition that selects the entity's rows in its table, or `nil` when every row of the
    /// table is one of them (the table is the entity's alone).
    ///
    /// - Parameters:
    ///   - includingSubentities: Whether the rows of its subentities are selected too.
    ///   - alias: The table's alias in the query, if any.
    /// - Returns: `Z_ENT = n` or `Z_ENT IN (…)`, plain SQL for SQLite and PostgreSQL, or `nil`.
    /// - Complexity: O(*s*) in the number of subentities.
    package func rowCondition(includingSubentities: Bool = true, alias: String? = nil) -> SQL? {
        if isOnlyEntityOfTable { return nil }
        let column = Self.entityColumn(alias: alias)
        let numbers = includingSubentities ? hierarchyNumbers : [number]
        if numbers.count == 1 { return column + SQL(unsafeSQL: " = \(numbers[0])") }
        return column + SQL(unsafeSQL: " IN (" + numbers.map(String.init).joined(separator: ", ") + ")")
    }

    /// ``rowCondition(includingSubentities:alias:)``, `TRUE` when every row of the table is the
    /// entity's: a term to put in a `WHERE` as it is.
    ///
    /// - Complexity: O(*s*) in the number of subentities.
    package func rowFilter(includingSubentities: Bool = true, alias: String? = nil) -> SQL {
        rowCondition(includingSubentities: includingSubentities, alias: alias) ?? "TRUE"
    }

    /// The condition on the rows of the entity's table whose `Z_ENT` is not the entity's number,
    /// when the table is the entity's alone: its objects that Core Data reads although their
    /// `Z_ENT` disagrees. `nil` for a shared table, where `Z_ENT` decides.
    ///
    /// - Parameter alias: The table's alias in the query, if any.
    package func mislabelledRows(alias: String? = nil) -> SQL? {
        guard isOnlyEntityOfTable else { return nil }
        let column = Self.entityColumn(alias: alias)
        return "(" + column + " IS NULL OR " + column + SQL(unsafeSQL: " <> \(number))")
    }

    /// `Z_ENT`, qualified with an alias if one is given.
    private static func entityColumn(alias: String?) -> SQL {
        (alias.map { SQL(unsafeSQL: $0 + ".") } ?? "") + SQL.identifier("Z_ENT")
    }
}
