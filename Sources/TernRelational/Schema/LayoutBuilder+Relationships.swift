package import TernCore

extension LayoutBuilder {
    // MARK: - To-many relationships without an inverse

    /// Plans the foreign key of each to-many relationship without an inverse: Core Data keeps it
    /// in the destination's table, `Z<n><NAME>` (*n* the declaring entity's number). An existing
    /// store may hold a join table instead (`Z_<n><NAME>`, as Tern wrote before), which is kept.
    ///
    /// - Throws: ``TernError`` with code `schemaMismatch` when an existing store has neither.
    /// - Complexity: O(*r*) in the number of relationships.
    package mutating func planForeignKeysOfToManyWithoutInverse() throws(TernError) {
        for entity in model.entities {
            for relationship in entity.relationships
            where relationship.isToMany && !relationship.isTransient && inverse(of: relationship) == nil {
                let key = PropertyKey(entity: entity.name, property: relationship.name)
                let number = try number(of: entity.name)
                let destination = relationship.destinationEntityName
                let table = table(of: destination)
                let base = "Z\(number)" + relationship.name.uppercased()
                if let actualColumns {
                    let existing = actualColumns[table] ?? []
                    if !Self.suffixed(base, upTo: existing.count).contains(where: existing.contains) {
                        let join = try joinTableWithoutInverse(relationship, number: number)
                        guard let columns = actualColumns[join.name], join.columns.allSatisfy(columns.contains),
                            join.orderColumns.allSatisfy(columns.contains)
                        else {
                            throw TernError(
                                .schemaMismatch,
                                "The store has no column for \(key.description), a to-many relationship without an "
                                    + "inverse: looked for column \(base) in table \(table) and for join table "
                                    + "\(join.name); " + Self.advice)
                        }
                        joinTables[join.name] = join
                        storages[key] = .joinTable(
                            table: join.name, sourceColumn: join.columns[0], destinationColumn: join.columns[1],
                            orderColumn: join.orderColumns.first)
                        continue
                    }
                }
                foreignKeyPlans[table, default: []].append(
                    ForeignKeyPlan(key: key, destination: destination, base: base, isOrdered: relationship.isOrdered))
            }
        }
    }

    /// The join table a store may keep a to-many without an inverse in: `Z_<n><NAME>` with
    /// columns `Z_<n><NAME>` (the sources) and `Z_<m><NAME>` (the destinations, `1` appended
    /// when both names are the same), and `Z_FOK_<m><NAME>` when ordered.
    private func joinTableWithoutInverse(
        _ relationship: RelationshipDescription, number: Int
    ) throws(TernError) -> JoinTableLayout {
        let name = relationship.name.uppercased()
        let source = "Z_\(number)" + name
        var destination = "Z_\(try self.number(of: relationship.destinationEntityName))" + name
        if destination == source { destination += "1" }
        let order = relationship.isOrdered ? ["Z_FOK_" + destination.dropFirst(2)] : []
        return JoinTableLayout(name: source, columns: [source, destination], orderColumns: order)
    }

    // MARK: - Many-to-many relationships

    /// One side of a many-to-many relationship.
    package struct ManyToManySide {
        var relationship: RelationshipDescription
        /// The entity that declares it.
        var entity: String
        var number: Int
        var key: PropertyKey { PropertyKey(entity: entity, property: relationship.name) }
    }

    /// Whether a side of a many-to-many names its join table: the side whose declaring entity's
    /// name sorts first; between two relationships of the same entity, the one whose name sorts
    /// last (Core Data's choice in every store of the corpus, see `docs/SQLiteStore.md`).
    package static func namesJoinTable(_ side: ManyToManySide, over other: ManyToManySide) -> Bool {
        side.entity == other.entity ? side.relationship.name >= other.relationship.name : side.entity < other.entity
    }

    /// Adds the join table of every many-to-many relationship, in Core Data's order (by the
    /// naming side's entity name, then relationship name), the columns of each told apart from
    /// all join columns named before with a numeric suffix (`Z_4CURRENCIES1`).
    ///
    /// - Throws: ``TernError`` with code `schemaMismatch` when an existing store has no join
    ///   table for a relationship, named by either side, with its columns.
    /// - Complexity: O(*r* log *r*) in the number of relationships.
    package mutating func addJoinTables() throws(TernError) {
        var used: Set<String> = []
        for entity in model.entities.sorted(by: { $0.name < $1.name }) {
            for relationship in entity.relationships.sorted(by: { $0.name < $1.name })
            where relationship.isToMany && !relationship.isTransient {
                guard let inverse = inverse(of: relationship), inverse.isToMany else { continue }
                let inverseEntity = declaringEntity(of: inverse.name, in: relationship.destinationEntityName)
                let side = ManyToManySide(
                    relationship: relationship, entity: entity.name, number: try number(of: entity.name))
                let other = ManyToManySide(
                    relationship: inverse, entity: inverseEntity, number: try number(of: inverseEntity))
                guard Self.namesJoinTable(side, over: other) else { continue }
                try addJoinTable(named: side, other: other, used: &used)
            }
        }
    }

    /// Adds the join table a side names: `Z_<n><NAME>`, with a column for the side's objects
    /// (`Z_<n><INVERSE>`) and one for the other side's (`Z_<m><NAME>`), and the order column of
    /// each ordered side (`Z_FOK_` + the column of the objects it orders, without `Z_`).
    private mutating func addJoinTable(
        named side: ManyToManySide, other: ManyToManySide, used: inout Set<String>
    ) throws(TernError) {
        var owner = side
        var inverse = other
        var table = "Z_\(owner.number)" + owner.relationship.name.uppercased()
        var firstBase = "Z_\(owner.number)" + inverse.relationship.name.uppercased()
        var secondBase = "Z_\(inverse.number)" + owner.relationship.name.uppercased()
        var first = Self.unique(firstBase, in: &used)
        var second = Self.unique(secondBase, in: &used)
        if let actualColumns {
            if actualColumns[table] == nil {
                // The other side names the table (as Tern named some before).
                let otherTable = "Z_\(other.number)" + other.relationship.name.uppercased()
                guard actualColumns[otherTable] != nil else {
                    throw TernError(
                        .schemaMismatch,
                        "The store has no join table for the many-to-many relationship \(side.key.description) "
                            + "and its inverse \(other.key.description): looked for \(table) and \(otherTable); "
                            + Self.advice)
                }
                (owner, inverse, table) = (other, side, otherTable)
                (firstBase, secondBase) = (secondBase, firstBase)
                (first, second) = (second, first)
            }
            let existing = actualColumns[table] ?? []
            (first, second) = try Self.joinColumns(
                expected: (first, second), bases: (firstBase, secondBase), among: existing, table: table, side: owner)
        }
        let ownerOrder = owner.relationship.isOrdered ? "Z_FOK_" + second.dropFirst(2) : nil
        let inverseOrder = inverse.relationship.isOrdered ? "Z_FOK_" + first.dropFirst(2) : nil
        if let actualColumns, let existing = actualColumns[table] {
            for order in [ownerOrder, inverseOrder].compactMap({ $0 }) where !existing.contains(order) {
                throw TernError(
                    .schemaMismatch,
                    "Join table \(table) has no order column \(order) for the ordered many-to-many relationship "
                        + "\(owner.key.description); " + Self.advice)
            }
        }
        joinTables[table] = JoinTableLayout(
            name: table, columns: [first, second], orderColumns: [ownerOrder, inverseOrder].compactMap { $0 })
        storages[owner.key] = .joinTable(
            table: table, sourceColumn: first, destinationColumn: second, orderColumn: ownerOrder)
        if inverse.key != owner.key {
            storages[inverse.key] = .joinTable(
                table: table, sourceColumn: second, destinationColumn: first, orderColumn: inverseOrder)
        }
    }

    /// The two columns of an existing join table: the expected names when the table has them,
    /// else the base names or suffixed ones, each column once.
    private static func joinColumns(
        expected: (String, String), bases: (String, String), among existing: Set<String>, table: String,
        side: ManyToManySide
    ) throws(TernError) -> (String, String) {
        var claimed: Set<String> = []
        var found: [String?] = [expected.0, expected.1].map { existing.contains($0) ? $0 : nil }
        for name in found.compactMap({ $0 }) { claimed.insert(name) }
        let baseNames = [bases.0, bases.1]
        for index in found.indices where found[index] == nil {
            found[index] = suffixed(baseNames[index], upTo: existing.count).first {
                existing.contains($0) && !claimed.contains($0)
            }
            if let name = found[index] { claimed.insert(name) }
        }
        guard let first = found[0], let second = found[1] else {
            let missing = found[0] == nil ? expected.0 : expected.1
            throw TernError(
                .schemaMismatch,
                "Join table \(table) has no column \(missing) (or with another numeric suffix) for the many-to-many "
                    + "relationship \(side.key.description); " + advice)
        }
        return (first, second)
    }
}
