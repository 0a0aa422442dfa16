package import TernCore

extension LayoutBuilder {
    /// One column of a root table that a property needs, before its name is settled.
    package struct ColumnSlot {
        enum Kind {
            case attribute(AttributeDescription)
            case toOne(RelationshipDescription)
            case foreignKey(ForeignKeyPlan)
        }

        var kind: Kind
        /// The declaring entity and the property, for messages and the layout's maps.
        var key: PropertyKey
        /// The entity's position in its hierarchy, depth first.
        var position: Int
        /// Core Data's name before a suffix.
        var base: String
        /// Core Data's name: `base`, suffixed when an earlier property of the hierarchy has it.
        var expected: String
        /// The name settled on.
        var name: String

        var what: String {
            switch kind {
            case .attribute: "the attribute \(key.description)"
            case .toOne: "the to-one relationship \(key.description)"
            case .foreignKey: "\(key.description), a to-many relationship without an inverse,"
            }
        }
    }

    /// A run of columns placed together in Core Data's column order.
    package typealias ColumnGroup = (rank: Int, position: Int, kind: Int, name: String, columns: [ColumnLayout])

    /// The rank of an attribute type in Core Data's column order: integers and booleans, then
    /// dates and floating-point numbers (sorted by name together), decimals, strings, UUIDs,
    /// transformable and other values, binary data.
    package static func rank(of type: AttributeType) -> Int {
        switch type {
        case .integer16, .integer32, .integer64, .boolean: 0
        case .date, .double, .float: 1
        case .decimal: 2
        case .string, .uri: 4
        case .uuid: 5
        case .binary: 7
        default: 6
        }
    }

    /// The declared SQL type of an attribute's column.
    package static func sqlType(of type: AttributeType) -> String {
        switch type {
        case .integer16, .integer32, .integer64, .boolean: "INTEGER"
        case .date: "TIMESTAMP"
        case .decimal: "DECIMAL"
        case .double, .float: "FLOAT"
        case .string, .uri: "VARCHAR"
        default: "BLOB"
        }
    }

    // MARK: - Tables

    package mutating func addTable(root: EntityDescription) throws(TernError) {
        let table = "Z" + root.name.uppercased()
        var existing: Set<String>?
        if let actualColumns {
            guard let columns = actualColumns[table] else {
                throw TernError(
                    .schemaMismatch,
                    "The store has no table \(table) for entity \(root.name) and its subentities; " + Self.advice)
            }
            existing = columns
        }
        let hierarchy = [root] + model.allSubentities(of: root.name)
        var slots = try columnSlots(of: hierarchy, table: table)
        if let existing { try Self.settle(&slots, among: existing, table: table) }
        var groups: [ColumnGroup] = []
        var indexes: [IndexLayout] = []
        for slot in slots {
            let name = slot.name
            let index = IndexLayout(name: "\(table)_\(name)_INDEX", columns: [(name, "")], isUnique: false)
            switch slot.kind {
            case .attribute(let attribute):
                columns[slot.key] = name
                groups.append(
                    (
                        Self.rank(of: attribute.type), slot.position, 0, attribute.name,
                        [ColumnLayout(name: name, type: Self.sqlType(of: attribute.type))]
                    ))
            case .toOne(let relationship):
                columns[slot.key] = name
                var group = [ColumnLayout(name: name, type: "INTEGER")]
                let destination = relationship.destinationEntityName
                if !model.subentities(of: destination).isEmpty {
                    let prefix = "Z\(try number(of: destination))_"
                    let entityColumn = try Self.companion(
                        prefix + name.dropFirst(), or: prefix + relationship.name.uppercased(), of: slot, in: existing,
                        table: table)
                    entityColumns[slot.key] = entityColumn
                    group.append(ColumnLayout(name: entityColumn, type: "INTEGER"))
                }
                groups.append((0, slot.position, 1, relationship.name, group))
                if let inverse = inverse(of: relationship), inverse.isToMany, inverse.isOrdered {
                    let order = try Self.companion(
                        "Z_FOK_" + name.dropFirst(), or: "Z_FOK_" + relationship.name.uppercased(), of: slot,
                        in: existing,
                        table: table)
                    orderColumns[slot.key] = order
                    groups.append(
                        (0, slot.position, 3, relationship.name, [ColumnLayout(name: order, type: "INTEGER")]))
                }
                indexes.append(index)
            case .foreignKey(let plan):
                groups.append((0, slot.position, 2, name, [ColumnLayout(name: name, type: "INTEGER")]))
                var order: String?
                if plan.isOrdered {
                    let column = try Self.companion(
                        "Z_FOK_" + name.dropFirst(), or: "Z_FOK_" + plan.base.dropFirst(), of: slot, in: existing,
                        table: table)
                    groups.append((0, slot.position, 3, name, [ColumnLayout(name: column, type: "INTEGER")]))
                    order = column
                }
                storages[plan.key] = .inverseForeignKey(table: table, column: name, orderColumn: order)
                indexes.append(index)
            }
        }
        for (position, entity) in hierarchy.enumerated() {
            for attribute in entity.attributes where Self.isStored(attribute) && attribute.isIndexed {
                let column = columns[PropertyKey(entity: entity.name, property: attribute.name)] ?? ""
                indexes.append(IndexLayout(name: "\(table)_\(column)_INDEX", columns: [(column, "")], isUnique: false))
            }
            if position == 0, hierarchy.count > 1 {
                indexes.append(IndexLayout(name: "\(table)_Z_ENT_INDEX", columns: [("Z_ENT", "")], isUnique: false))
            }
        }
        for entity in hierarchy {
            indexes += entityIndexes(entity, table: table)
        }
        groups.sort { ($0.rank, $0.position, $0.kind, $0.name) < ($1.rank, $1.position, $1.kind, $1.name) }
        tables[table] = TableLayout(
            name: table, rootEntity: root.name, columns: groups.flatMap(\.columns), indexes: indexes)
    }

    /// The columns a hierarchy's properties need, in Core Data's order of naming (entity by
    /// entity, depth first; attributes, to-one relationships, then the foreign keys of to-many
    /// relationships without an inverse that point into the entity), each with Core Data's name.
    package func columnSlots(of hierarchy: [EntityDescription], table: String) throws(TernError) -> [ColumnSlot] {
        var used: Set<String> = []
        var slots: [ColumnSlot] = []
        func add(_ kind: ColumnSlot.Kind, _ key: PropertyKey, _ position: Int, _ base: String) {
            let expected = Self.unique(base, in: &used)
            slots.append(
                ColumnSlot(kind: kind, key: key, position: position, base: base, expected: expected, name: expected))
        }
        let plans = foreignKeyPlans[table] ?? []
        for (position, entity) in hierarchy.enumerated() {
            for attribute in entity.attributes where Self.isStored(attribute) {
                add(
                    .attribute(attribute), PropertyKey(entity: entity.name, property: attribute.name), position,
                    "Z" + attribute.name.uppercased())
            }
            for relationship in entity.relationships where !relationship.isToMany && !relationship.isTransient {
                add(
                    .toOne(relationship), PropertyKey(entity: entity.name, property: relationship.name), position,
                    "Z" + relationship.name.uppercased())
            }
            for plan in plans where plan.destination == entity.name {
                add(.foreignKey(plan), plan.key, position, plan.base)
            }
        }
        return slots
    }

    /// Settles each slot on a column of an existing table: Core Data's name when the table has it,
    /// else the base name or a suffixed one that no other property took.
    ///
    /// - Throws: ``TernError`` with code `schemaMismatch` naming the property that has no column.
    /// - Complexity: O(*s* · *c*) for *s* slots and *c* columns.
    package static func settle(_ slots: inout [ColumnSlot], among existing: Set<String>, table: String)
        throws(TernError)
    {
        var claimed: Set<String> = []
        for index in slots.indices {
            slots[index].name = existing.contains(slots[index].expected) ? slots[index].expected : ""
            claimed.insert(slots[index].name)
        }
        for index in slots.indices where slots[index].name.isEmpty {
            let slot = slots[index]
            let candidates = suffixed(slot.base, upTo: existing.count)
            guard let found = candidates.first(where: { existing.contains($0) && !claimed.contains($0) }) else {
                throw TernError(
                    .schemaMismatch,
                    "Table \(table) has no column for \(slot.what): looked for \(slot.expected), \(slot.base) or "
                        + "\(slot.base) with a numeric suffix; " + advice)
            }
            slots[index].name = found
            claimed.insert(found)
        }
    }

    /// The name of a column that goes with a property's column (its entity or order column):
    /// `expected` for a new store; in an existing table `expected`, else `fallback`.
    package static func companion(
        _ expected: String, or fallback: String, of slot: ColumnSlot, in existing: Set<String>?, table: String
    ) throws(TernError) -> String {
        guard let existing, !existing.contains(expected) else { return expected }
        guard existing.contains(fallback) else {
            throw TernError(
                .schemaMismatch,
                "Table \(table) has no column \(expected)" + (fallback == expected ? "" : " or \(fallback)")
                    + " for \(slot.what); " + advice)
        }
        return fallback
    }

    /// The fetch indexes and uniqueness constraints of an entity, on its root table.
    package func entityIndexes(_ entity: EntityDescription, table: String) -> [IndexLayout] {
        func column(_ property: String) -> String? {
            columns[PropertyKey(entity: declaringEntity(of: property, in: entity.name), property: property)]
        }
        var indexes: [IndexLayout] = []
        for index in entity.fetchIndexes {
            let elements = index.elements.compactMap { element in
                column(element.property).map {
                    ($0, element.isAscending ? " COLLATE BINARY ASC" : " COLLATE BINARY DESC")
                }
            }
            guard elements.count == index.elements.count, !elements.isEmpty else { continue }
            indexes.append(IndexLayout(name: "Z_\(entity.name)_\(index.name)", columns: elements, isUnique: false))
        }
        for constraint in entity.uniquenessConstraints {
            let elements = constraint.compactMap { property in column(property).map { ($0, " COLLATE BINARY ASC") } }
            guard elements.count == constraint.count, !elements.isEmpty else { continue }
            let name = "Z_\(entity.name)_UNIQUE_" + constraint.joined(separator: "_")
            indexes.append(IndexLayout(name: name, columns: elements, isUnique: true))
        }
        return indexes
    }
}
