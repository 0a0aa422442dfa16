package import TernCore

extension StoreSchema {
    /// An entity's number and its parent's, as `Z_PRIMARYKEY` records them.
    package struct EntityNumber: Sendable, Hashable {
        /// `Z_ENT`.
        package var number: Int
        /// `Z_SUPER`: the parent's number, 0 for a root.
        package var superNumber: Int
    }

    /// Entity numbers as Core Data assigns them to a new store: depth first, each entity before
    /// its subentities, roots and siblings sorted by name, starting at 1.
    ///
    /// - Parameter model: The model.
    /// - Returns: Each entity's number and its parent's.
    /// - Complexity: O(*n*²) in the number of entities.
    package static func assignedNumbers(for model: ManagedObjectModel) -> [String: EntityNumber] {
        var numbers: [String: EntityNumber] = [:]
        var next = 1
        for root in model.entities where model.parent(of: root.name) == nil {
            for entity in [root] + model.allSubentities(of: root.name) where numbers[entity.name] == nil {
                let parent = model.parent(of: entity.name).flatMap { numbers[$0.name]?.number } ?? 0
                numbers[entity.name] = EntityNumber(number: next, superNumber: parent)
                next += 1
            }
        }
        return numbers
    }

    /// Maps a model onto tables.
    ///
    /// - Parameters:
    ///   - model: The model.
    ///   - numbers: Each entity's number: read from `Z_PRIMARYKEY`, or ``assignedNumbers(for:)``.
    ///   - otherNames: Names of numbered entities the model lacks (history entities…).
    ///   - actualColumns: For an existing store, each table's columns: every column the layout
    ///     needs must be there. Nil for a new store.
    /// - Throws: ``SQLiteError`` with code `schemaMismatch` when an entity has no number, a
    ///   property has no column or a name cannot be used in SQL.
    /// - Complexity: O(*n* · *p*) in the number of entities and properties.
    package init(
        model: ManagedObjectModel, numbers: [String: EntityNumber], otherNames: [Int: String] = [:],
        actualColumns: [String: Set<String>]? = nil
    ) throws(SQLiteError) {
        self.model = model
        var builder = LayoutBuilder(model: model, numbers: numbers)
        try builder.checkNames()
        for root in model.entities where model.parent(of: root.name) == nil {
            try builder.addTable(root: root)
        }
        var entities: [String: EntityLayout] = [:]
        for entity in model.entities {
            entities[entity.name] = try builder.entityLayout(entity)
        }
        self.entities = entities
        self.tables = builder.tables
        self.joinTables = builder.joinTables
        var names = otherNames
        for (name, number) in numbers { names[number.number] = name }
        self.entityNames = names
        if let actualColumns { try verify(against: actualColumns) }
    }

    /// Checks that every table and column the layout needs exists.
    private func verify(against actualColumns: [String: Set<String>]) throws(SQLiteError) {
        let needed = tables.values.map { ($0.name, $0.columns.map(\.name), "entity \($0.rootEntity) and its subentities") }
            + joinTables.values.map { ($0.name, $0.columns + $0.orderColumns, "a many-to-many relationship") }
        for (table, columns, owner) in needed.sorted(by: { $0.0 < $1.0 }) {
            let advice = "the model does not match the store, migrate it first."
            guard let existing = actualColumns[table] else {
                throw SQLiteError(.schemaMismatch, "The store has no table \(table) for \(owner); " + advice)
            }
            for column in columns where !existing.contains(column) {
                throw SQLiteError(.schemaMismatch, "Table \(table) has no column \(column) for \(owner); " + advice)
            }
        }
    }
}

/// Works out tables, columns and indexes, entity by entity.
private struct LayoutBuilder {
    /// A property declared by an entity.
    struct PropertyKey: Hashable {
        var entity: String
        var property: String
    }

    let model: ManagedObjectModel
    let numbers: [String: StoreSchema.EntityNumber]
    var tables: [String: TableLayout] = [:]
    var joinTables: [String: JoinTableLayout] = [:]
    /// The column of each stored attribute and to-one relationship, by declaring entity.
    var columns: [PropertyKey: String] = [:]
    /// The `Z<n>_` entity column of to-one relationships whose destination has subentities.
    var entityColumns: [PropertyKey: String] = [:]

    init(model: ManagedObjectModel, numbers: [String: StoreSchema.EntityNumber]) {
        self.model = model
        self.numbers = numbers
    }

    func number(of entity: String) throws(SQLiteError) -> Int {
        guard let number = numbers[entity]?.number else {
            throw SQLiteError(
                .schemaMismatch,
                "Z_PRIMARYKEY has no row for entity \(SQL.quoted(entity)); the model does not match the store.")
        }
        return number
    }

    func checkNames() throws(SQLiteError) {
        for entity in model.entities {
            let names = [entity.name] + entity.attributes.map(\.name) + entity.relationships.map(\.name)
                + entity.fetchIndexes.map(\.name)
            for name in names where name.isEmpty || name.utf8.contains(0) {
                throw SQLiteError(
                    .schemaMismatch, "Entity \(SQL.quoted(entity.name)) uses a name that is empty or holds a NUL "
                        + "character, which SQLite cannot use; rename it.")
            }
        }
    }

    /// The rank of an attribute type in Core Data's column order.
    static func rank(of type: AttributeType) -> Int {
        switch type {
        case .integer16, .integer32, .integer64, .boolean: 0
        case .date: 1
        case .decimal: 2
        case .double, .float: 3
        case .string, .uri: 4
        case .uuid: 5
        default: 6
        }
    }

    /// The declared SQL type of an attribute's column.
    static func sqlType(of type: AttributeType) -> String {
        switch type {
        case .integer16, .integer32, .integer64, .boolean: "INTEGER"
        case .date: "TIMESTAMP"
        case .decimal: "DECIMAL"
        case .double, .float: "FLOAT"
        case .string, .uri: "VARCHAR"
        default: "BLOB"
        }
    }

    static func isStored(_ attribute: AttributeDescription) -> Bool {
        !attribute.isTransient && attribute.type != .undefined && attribute.type != .composite
    }

    /// The inverse of a relationship, if the model has it.
    func inverse(of relationship: RelationshipDescription) -> RelationshipDescription? {
        relationship.inverseName.flatMap { model.relationship(named: $0, inEntity: relationship.destinationEntityName) }
    }

    /// The entity that declares a property an entity has (itself or an ancestor).
    func declaringEntity(of property: String, in entityName: String) -> String {
        let chain = [entityName] + model.ancestors(of: entityName).map(\.name)
        return chain.first { name in
            guard let entity = model.entity(named: name) else { return false }
            return entity.attribute(named: property) != nil || entity.relationship(named: property) != nil
        } ?? entityName
    }

    // MARK: - Tables

    mutating func addTable(root: EntityDescription) throws(SQLiteError) {
        let table = "Z" + root.name.uppercased()
        let hierarchy = [root] + model.allSubentities(of: root.name)
        var used: [String: Int] = [:]
        func unique(_ base: String) -> String {
            let count = used[base, default: 0]
            used[base] = count + 1
            return count == 0 ? base : base + String(count)
        }
        var groups: [(rank: Int, entity: Int, kind: Int, name: String, columns: [ColumnLayout])] = []
        var indexes: [IndexLayout] = []
        for (position, entity) in hierarchy.enumerated() {
            for attribute in entity.attributes where Self.isStored(attribute) {
                let column = unique("Z" + attribute.name.uppercased())
                columns[PropertyKey(entity: entity.name, property: attribute.name)] = column
                groups.append((
                    Self.rank(of: attribute.type), position, 0, attribute.name,
                    [ColumnLayout(name: column, type: Self.sqlType(of: attribute.type))]))
            }
            for relationship in entity.relationships where !relationship.isToMany && !relationship.isTransient {
                let key = PropertyKey(entity: entity.name, property: relationship.name)
                let column = unique("Z" + relationship.name.uppercased())
                columns[key] = column
                var group = [ColumnLayout(name: column, type: "INTEGER")]
                let destination = relationship.destinationEntityName
                if !model.subentities(of: destination).isEmpty {
                    let entityColumn = "Z\(try number(of: destination))_" + relationship.name.uppercased()
                    entityColumns[key] = entityColumn
                    group.append(ColumnLayout(name: entityColumn, type: "INTEGER"))
                }
                if let inverse = inverse(of: relationship), inverse.isToMany, inverse.isOrdered {
                    group.append(ColumnLayout(name: "Z_FOK_" + relationship.name.uppercased(), type: "INTEGER"))
                }
                groups.append((0, position, 1, relationship.name, group))
                indexes.append(IndexLayout(name: "\(table)_\(column)_INDEX", columns: [(column, "")], isUnique: false))
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
        groups.sort { ($0.rank, $0.entity, $0.kind, $0.name) < ($1.rank, $1.entity, $1.kind, $1.name) }
        tables[table] = TableLayout(
            name: table, rootEntity: root.name, columns: groups.flatMap(\.columns), indexes: indexes)
    }

    /// The fetch indexes and uniqueness constraints of an entity, on its root table.
    func entityIndexes(_ entity: EntityDescription, table: String) -> [IndexLayout] {
        func column(_ property: String) -> String? {
            columns[PropertyKey(entity: declaringEntity(of: property, in: entity.name), property: property)]
        }
        var indexes: [IndexLayout] = []
        for index in entity.fetchIndexes {
            let elements = index.elements.compactMap { element in
                column(element.property).map { ($0, element.isAscending ? " COLLATE BINARY ASC" : " COLLATE BINARY DESC") }
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

    // MARK: - Entities

    mutating func entityLayout(_ entity: EntityDescription) throws(SQLiteError) -> EntityLayout {
        let root = model.rootEntity(of: entity.name) ?? entity
        let number = try number(of: entity.name)
        var hierarchyNumbers = [number]
        for subentity in model.allSubentities(of: entity.name) { hierarchyNumbers.append(try self.number(of: subentity.name)) }
        var attributes: [AttributeColumn] = []
        for attribute in model.allAttributes(of: entity.name) where Self.isStored(attribute) {
            let key = PropertyKey(entity: declaringEntity(of: attribute.name, in: entity.name), property: attribute.name)
            guard let column = columns[key] else { continue }
            attributes.append(AttributeColumn(
                name: attribute.name, type: attribute.type, column: column,
                allowsExternalStorage: attribute.allowsExternalBinaryDataStorage, derivation: attribute.derivationExpression))
        }
        var toOnes: [ToOneColumn] = []
        var toManys: [ToManyMapping] = []
        for relationship in model.allRelationships(of: entity.name) where !relationship.isTransient {
            let declaring = declaringEntity(of: relationship.name, in: entity.name)
            let key = PropertyKey(entity: declaring, property: relationship.name)
            if !relationship.isToMany {
                guard let column = columns[key] else { continue }
                toOnes.append(ToOneColumn(
                    name: relationship.name, destination: relationship.destinationEntityName, column: column,
                    entityColumn: entityColumns[key]))
            } else {
                toManys.append(try toManyMapping(relationship, declaredBy: declaring))
            }
        }
        return EntityLayout(
            name: entity.name, number: number, superNumber: numbers[entity.name]?.superNumber ?? 0,
            rootName: root.name, table: "Z" + root.name.uppercased(), isAbstract: entity.isAbstract,
            hierarchyNumbers: hierarchyNumbers, attributes: attributes, toOneRelationships: toOnes,
            toManyRelationships: toManys)
    }

    mutating func toManyMapping(
        _ relationship: RelationshipDescription, declaredBy declaring: String
    ) throws(SQLiteError) -> ToManyMapping {
        let destination = relationship.destinationEntityName
        let destinationRoot = model.rootEntity(of: destination)?.name ?? destination
        if let inverse = inverse(of: relationship), !inverse.isToMany {
            let inverseKey = PropertyKey(entity: declaringEntity(of: inverse.name, in: destination), property: inverse.name)
            guard let column = columns[inverseKey] else {
                throw SQLiteError(
                    .schemaMismatch, "The inverse of \(SQL.quoted(declaring)).\(SQL.quoted(relationship.name)) has no column.")
            }
            return ToManyMapping(
                name: relationship.name, destination: destination, isOrdered: relationship.isOrdered,
                storage: .inverseForeignKey(
                    table: "Z" + destinationRoot.uppercased(), column: column,
                    orderColumn: relationship.isOrdered ? "Z_FOK_" + inverse.name.uppercased() : nil))
        }
        // Many-to-many: the side with the smaller (entity number, name) owns the join table.
        let inverse = inverse(of: relationship)
        let a = try number(of: declaring)
        let inverseDeclaring = inverse.map { declaringEntity(of: $0.name, in: destination) } ?? destination
        let b = try number(of: inverseDeclaring)
        let isOwner = inverse.map { (a, relationship.name) <= (b, $0.name) } ?? true
        let (ownerNumber, ownerName, otherNumber) = isOwner ? (a, relationship.name, b) : (b, inverse?.name ?? "", a)
        let otherName = isOwner ? (inverse?.name ?? relationship.name) : relationship.name
        let table = "Z_\(ownerNumber)" + ownerName.uppercased()
        let first = "Z_\(ownerNumber)" + otherName.uppercased()
        var second = "Z_\(otherNumber)" + ownerName.uppercased()
        if second == first { second += "1" }
        let ownerOrdered = isOwner ? relationship.isOrdered : (inverse?.isOrdered ?? false)
        let otherOrdered = isOwner ? (inverse?.isOrdered ?? false) : relationship.isOrdered
        let secondOrder = ownerOrdered ? "Z_FOK_" + second.dropFirst(2) : nil
        let firstOrder = otherOrdered ? "Z_FOK_" + first.dropFirst(2) : nil
        joinTables[table] = JoinTableLayout(
            name: table, columns: [first, second], orderColumns: [secondOrder, firstOrder].compactMap { $0 })
        let storage: ToManyMapping.Storage = isOwner
            ? .joinTable(table: table, sourceColumn: first, destinationColumn: second, orderColumn: secondOrder)
            : .joinTable(table: table, sourceColumn: second, destinationColumn: first, orderColumn: firstOrder)
        return ToManyMapping(
            name: relationship.name, destination: destination, isOrdered: relationship.isOrdered, storage: storage)
    }
}
