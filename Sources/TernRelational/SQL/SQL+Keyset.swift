extension SQL {
    /// One sort term of a keyset condition: the column, how it compares, and the bound value the
    /// position holds for it.
    package struct KeysetTerm {
        /// The column, to test for `NULL`.
        package var column: SQL
        /// The column as it compares in the sort's order (with its collation).
        package var compared: SQL
        /// Whether smaller values come first (`NULL` first ascending, last descending).
        package var ascending: Bool
        /// The position's value, bound; nil for `NULL`.
        package var bound: SQL?

        /// Creates a term.
        package init(column: SQL, compared: SQL, ascending: Bool, bound: SQL?) {
            (self.column, self.compared, self.ascending, self.bound) = (column, compared, ascending, bound)
        }
    }

    /// The condition "comes after the position" in the order of sort terms then the primary key,
    /// for keyset pagination: one alternative per term (the earlier terms tie, this one comes
    /// after), and a last one where all tie and the primary key is larger.
    ///
    /// - Parameters:
    ///   - terms: The sort terms with the position's values.
    ///   - primaryKeyColumn: The primary-key column (for example `t0.Z_PK`).
    ///   - primaryKey: The position's primary key.
    /// - Returns: A condition in parentheses.
    /// - Complexity: O(*k*²) in the number of terms.
    package static func keysetCondition(_ terms: [KeysetTerm], primaryKeyColumn: SQL, after primaryKey: Int64) -> SQL {
        var alternatives: [SQL] = []
        var ties: [SQL] = []
        for term in terms {
            let after: SQL
            switch (term.ascending, term.bound) {
            case (true, nil): after = "(" + term.column + " IS NOT NULL)"
            case (true, let bound?): after = "(" + term.compared + " > " + bound + ")"
            case (false, nil): after = "FALSE"
            case (false, let bound?): after = "(" + term.compared + " < " + bound + " OR " + term.column + " IS NULL)"
            }
            alternatives.append(SQL.joined(ties + [after], separator: " AND "))
            ties.append(term.bound.map { "(" + term.compared + " = " + $0 + ")" } ?? "(" + term.column + " IS NULL)")
        }
        alternatives.append(SQL.joined(ties + [primaryKeyColumn + " > \(primaryKey)"], separator: " AND "))
        return "(" + SQL.joined(alternatives, separator: " OR ") + ")"
    }
}
