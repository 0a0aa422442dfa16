package import TernCore

/// How a model's entities map onto the tables and columns of a Core Data SQLite store.
///
/// A schema is built from a model plus, for an existing store, its `Z_PRIMARYKEY` rows (entity
/// numbers are read, never recomputed) and its tables' actual columns; for a new store the
/// numbers are assigned as Core Data does (depth first, siblings sorted by name).
package struct StoreSchema: Sendable {
    /// The model the schema maps.
    package let model: ManagedObjectModel
    /// The layout of each entity, by name.
    package let entities: [String: EntityLayout]
    /// Entity names by entity number (`Z_ENT`), including rows of `Z_PRIMARYKEY` the model lacks.
    package let entityNames: [Int: String]
    /// The tables of the inheritance roots, by table name.
    package let tables: [String: TableLayout]
    /// The many-to-many join tables, by table name.
    package let joinTables: [String: JoinTableLayout]

    // MARK: - Looking up entities

    /// The layout of an entity.
    ///
    /// - Throws: ``TernError`` with code `schemaMismatch` for an entity the schema lacks.
    package func entity(named name: String) throws(TernError) -> EntityLayout {
        guard let layout = entities[name] else {
            throw TernError(
                .schemaMismatch, "The store's model has no entity \(SQL.quoted(name)); check the entity name.")
        }
        return layout
    }

    /// The layout of the entity with that number (`Z_ENT`).
    ///
    /// - Throws: ``TernError`` with code `schemaMismatch` for an unknown number.
    package func entity(number: Int) throws(TernError) -> EntityLayout {
        guard let name = entityNames[number], let layout = entities[name] else {
            throw TernError(.schemaMismatch, "No entity of the model has number \(number) (Z_ENT) in this store.")
        }
        return layout
    }
}

extension StoreSchema {
    // MARK: - Primary-key counters

    /// The inheritance roots' counters among `Z_PRIMARYKEY` rows, by root name.
    ///
    /// - Parameter rows: `Z_ENT` and `Z_MAX` of each row; rows of entities that are not a root of
    ///   the model (subentities, history tables) are left out.
    /// - Complexity: O(*n*) in the number of rows.
    package func lastPrimaryKeys(fromCounters rows: [[DatabaseValue]]) -> [String: Int64] {
        var keys: [String: Int64] = [:]
        for row in rows where row.count == 2 {
            guard let number = row[0].int64, let name = entityNames[Int(number)],
                let layout = entities[name], layout.rootName == layout.name
            else { continue }
            keys[name] = max(keys[name] ?? 0, row[1].int64 ?? 0)
        }
        return keys
    }

    /// The entity number (`Z_ENT`) of each root named in `keys` with its key above 0, in number
    /// order: the counters a copy raises. Names that are not a root are left out.
    package func rootCounters(_ keys: [String: Int64]) -> [(number: Int, key: Int64)] {
        keys.compactMap { name, key in
            entities[name].flatMap { $0.rootName == name && key > 0 ? (number: $0.number, key: key) : nil }
        }.sorted { $0.number < $1.number }
    }
}

/// Where one entity's objects live.
package struct EntityLayout: Sendable, Hashable {
    /// The entity's name.
    package let name: String
    /// The entity's number (`Z_ENT`).
    package let number: Int
    /// The parent entity's number, 0 for a root.
    package let superNumber: Int
    /// The name of the inheritance root, whose table holds the entity's rows.
    package let rootName: String
    /// The root table (`Z` + uppercased root name).
    package let table: String
    /// Whether the entity has no instances of its own.
    package let isAbstract: Bool
    /// The numbers of the entity and all its descendants.
    package let hierarchyNumbers: [Int]
    /// The stored attributes (own and inherited), sorted by name.
    package let attributes: [AttributeColumn]
    /// The to-one relationships (own and inherited), sorted by name.
    package let toOneRelationships: [ToOneColumn]
    /// The to-many relationships (own and inherited), sorted by name.
    package let toManyRelationships: [ToManyMapping]

    /// The attribute with that name.
    package func attribute(named name: String) -> AttributeColumn? {
        attributes.first { $0.name == name }
    }

    /// The to-one relationship with that name.
    package func toOne(named name: String) -> ToOneColumn? {
        toOneRelationships.first { $0.name == name }
    }

    /// The to-many relationship with that name.
    package func toMany(named name: String) -> ToManyMapping? {
        toManyRelationships.first { $0.name == name }
    }
}

/// The column of an attribute.
package struct AttributeColumn: Sendable, Hashable {
    /// The attribute's name.
    package let name: String
    /// The attribute's type.
    package let type: AttributeType
    /// The column (`Z` + uppercased name, with a numeric suffix when sibling entities clash).
    package let column: String
    /// Whether large values may be stored in files beside the store.
    package let allowsExternalStorage: Bool
    /// The derivation expression of a derived attribute, which writers leave to the store.
    package let derivation: String?
}

/// The columns of a to-one relationship.
package struct ToOneColumn: Sendable, Hashable {
    /// The relationship's name.
    package let name: String
    /// The destination entity's name.
    package let destination: String
    /// The column holding the destination's `Z_PK`.
    package let column: String
    /// The column holding the destination's `Z_ENT` (`Z<n>_<NAME>`), when the destination has subentities.
    package let entityColumn: String?
    /// The column holding the object's position in its inverse, when the inverse is an ordered
    /// to-many (`Z_FOK_<NAME>`).
    package var orderColumn: String? = nil
}

/// How a to-many relationship is stored.
package struct ToManyMapping: Sendable, Hashable {
    /// Where the references live.
    package enum Storage: Sendable, Hashable {
        /// One-to-many: the inverse to-one's column in the destination's table, with an
        /// order column (`Z_FOK_<INVERSE>`) for an ordered relationship. A to-many without an
        /// inverse is stored the same way, in a column of the destination's table that no
        /// property names (`Z<n><NAME>`, *n* the number of the entity that declares it).
        case inverseForeignKey(table: String, column: String, orderColumn: String?)
        /// Many-to-many: a join table with a column for each side, and an order column for an
        /// ordered relationship.
        case joinTable(table: String, sourceColumn: String, destinationColumn: String, orderColumn: String?)
    }

    /// The relationship's name.
    package let name: String
    /// The destination entity's name.
    package let destination: String
    /// Whether the relationship keeps its objects in order.
    package let isOrdered: Bool
    /// Where the references live.
    package let storage: Storage
}

/// One table of an inheritance root.
package struct TableLayout: Sendable, Hashable {
    /// The table's name.
    package let name: String
    /// The root entity's name.
    package let rootEntity: String
    /// The columns in Core Data's order, after `Z_PK`, `Z_ENT`, `Z_OPT`.
    package let columns: [ColumnLayout]
    /// The indexes to create with the table.
    package let indexes: [IndexLayout]
}

/// One column of a table.
package struct ColumnLayout: Sendable, Hashable {
    /// The column's name.
    package let name: String
    /// The declared SQL type (`INTEGER`, `TIMESTAMP`, `DECIMAL`, `FLOAT`, `VARCHAR`, `BLOB`).
    package let type: String
}

/// An index of a table.
package struct IndexLayout: Sendable, Hashable {
    /// The index's name.
    package let name: String
    /// The indexed columns, each with its collation and order text (`ZNAME COLLATE BINARY ASC`).
    package let columns: [(name: String, suffix: String)]
    /// Whether the index is unique.
    package let isUnique: Bool

    package static func == (lhs: Self, rhs: Self) -> Bool {
        lhs.name == rhs.name && lhs.isUnique == rhs.isUnique
            && lhs.columns.map(\.name) == rhs.columns.map(\.name)
            && lhs.columns.map(\.suffix) == rhs.columns.map(\.suffix)
    }

    package func hash(into hasher: inout Hasher) {
        hasher.combine(name)
    }
}

/// A many-to-many join table.
package struct JoinTableLayout: Sendable, Hashable {
    /// The table's name (`Z_<n><RELATIONSHIP>`).
    package let name: String
    /// The first column (the owning side's objects), then the second.
    package let columns: [String]
    /// Order columns of ordered sides.
    package let orderColumns: [String]
}
