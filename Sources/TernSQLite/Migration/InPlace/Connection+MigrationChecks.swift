import TernCore
import TernMigration
import TernRelational

extension Connection {
    // MARK: - Rules of the destination version

    /// Counts, before an inferred step writes anything, what the step decides from the data
    /// (``StepDataCheck``): the objects without a value for an attribute or a to-one relationship
    /// that the step makes required without filling it refuse the step; the rest (relaxed bounds,
    /// dropped links, integers a narrower type cannot hold) comes back as warnings.
    ///
    /// Core Data's lightweight migration infers an attribute that becomes required without a
    /// default value, and fails when an object has no value for it (validation error 134110). Tern
    /// does the same, but counts the objects first and refuses with every failing entity and
    /// property, so the store is never touched. An attribute that becomes required with a default
    /// is not checked: objects without a value take the default.
    ///
    /// - Parameters:
    ///   - mapping: The step's inferred mapping.
    ///   - source: The store's layout before the step.
    ///   - destination: The destination model.
    ///   - step: The step's source and destination version names, for the message.
    /// - Returns: The step's warnings, with their counts.
    /// - Throws: ``TernMigration/MigrationError`` with code `constraintViolated`, whose
    ///   `failures` name each entity and property with the number of objects lacking a value;
    ///   ``SQLiteError`` when counting fails.
    /// - Complexity: One `COUNT(*)` over an entity's rows per check.
    func checkData(
        of mapping: MappingModel, source: StoreSchema, destination: ManagedObjectModel, step: (from: String, to: String)
    ) throws -> [MigrationWarning] {
        try StepDataCheck.require(mapping, source: source, destination: destination, step: step) { query in
            try fetchValue(query)?.int64 ?? 0
        }
    }

    /// What ``checkData(of:source:destination:step:)`` would find, without throwing for refusals.
    ///
    /// - Throws: ``SQLiteError`` when counting fails.
    /// - Complexity: One `COUNT(*)` over an entity's rows per check.
    func dataFindings(
        of mapping: MappingModel, source: StoreSchema, destination: ManagedObjectModel, step: (from: String, to: String)
    ) throws -> StepDataCheck.Findings {
        try StepDataCheck.evaluate(mapping, source: source, destination: destination, step: step) { query in
            try fetchValue(query)?.int64 ?? 0
        }
    }

    /// Checks, before a uniqueness constraint's index is created, that no two objects share its
    /// values (Core Data creates the index and the migration fails on duplicates).
    ///
    /// - Parameters:
    ///   - check: The constraint's check.
    ///   - version: The destination version's name, for the message.
    /// - Throws: ``TernMigration/MigrationError`` with code `constraintViolated` naming the entity,
    ///   the properties and the number of clashing value groups and objects (the caller rolls back).
    /// - Complexity: O(*n* log *n*) in the table's rows.
    func checkUnique(_ check: UniquenessCheck, version: String) throws {
        let row = try fetchAll(check.countQuery).first
        if let failure = check.failure(groups: row?[0].int64 ?? 0, objects: row?[1].int64 ?? 0, version: version) {
            throw failure
        }
    }

    /// Checks, before an inferred step writes anything, that the values its new uniqueness
    /// constraints cover are unique: the count of ``checkUnique(_:version:)`` over the rows the
    /// step would give each table, computed from the store's own rows.
    ///
    /// - Parameters:
    ///   - plan: The step's plan over the store.
    ///   - version: The destination version's name, for the message.
    /// - Throws: ``TernMigration/MigrationError`` with code `constraintViolated`; ``SQLiteError``
    ///   when counting fails.
    /// - Complexity: O(*n* log *n*) in the rows of each table with a uniqueness constraint.
    func checkUnique(before plan: TableMigrationPlan, version: String) throws {
        let existing = Set(plan.source.tables.values.flatMap { $0.indexes.filter(\.isUnique).map(\.name) })
        for (name, check) in UniquenessCheck.checks(of: plan.destination).sorted(by: { $0.key < $1.key })
        where !existing.contains(name) {
            guard let copies = plan.copies[check.table], !copies.isEmpty else { continue }
            let names = check.columns.indices.map { "c\($0)" }
            let selections = copies.map { copy -> SQL in
                let values = zip(check.columns, names).map { column, name in
                    copy.sql(of: column, constant: Self.constant) + " AS \(SQL.identifier(name))"
                }
                // Every row of a table that is one entity's alone is that entity's, whatever its Z_ENT.
                let root = plan.source.tables[copy.sourceTable].flatMap { plan.source.entities[$0.rootEntity] }
                let owned: SQL =
                    root?.isOnlyEntityOfTable == true ? "TRUE" : "Z_ENT IN (\(Self.list(copy.sourceNumbers)))"
                return "SELECT \(SQL.joined(values)) FROM \(.identifier(copy.sourceTable)) WHERE \(owned)"
            }
            let rows: SQL = "(\(SQL.joined(selections, separator: " UNION ALL "))) AS migrated"
            let row = try fetchAll(UniquenessCheck.countQuery(from: rows, columns: names)).first
            if let failure = check.failure(groups: row?[0].int64 ?? 0, objects: row?[1].int64 ?? 0, version: version) {
                throw failure
            }
        }
    }
}
