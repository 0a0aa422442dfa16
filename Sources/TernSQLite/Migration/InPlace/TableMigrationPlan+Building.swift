import TernCore
package import TernMigration

extension TableMigrationPlan {
    /// Plans an inferred step on the tables of a store.
    ///
    /// Every destination column gets its value from the inferred mapping's value expressions, as
    /// the migration engine would compute them object by object: a renamed or moved attribute reads
    /// its source column, an added one takes its default, an attribute that became required takes
    /// `coalesce(column, default)`, a to-one keeps its foreign key (keys do not change) with entity
    /// numbers rewritten, and the order column of an ordered to-many counts positions.
    ///
    /// - Parameters:
    ///   - source: The store's layout (numbers as its `Z_PRIMARYKEY` records them).
    ///   - destination: The destination layout, numbered as Core Data numbers a new store.
    ///   - mapping: The step's inferred mapping model.
    ///   - largestKeys: Each source root entity's `Z_MAX`, by entity number.
    /// - Throws: ``InPlaceUnsupported`` for what the plan cannot express; the step is then built
    ///   beside the store instead.
    /// - Complexity: O(*e* · *p*) in the number of entities and properties.
    package init(
        source: StoreSchema, destination: StoreSchema, mapping: MappingModel, largestKeys: [Int: Int64]
    ) throws(InPlaceUnsupported) {
        self.source = source
        self.destination = destination
        let builder = try PlanBuilder(source: source, destination: destination, mapping: mapping)
        var joins: [String: [JoinSource]] = [:]
        var orders: [String: [JoinOrder]] = [:]
        for join in destination.joinTables.values { (joins[join.name], orders[join.name]) = try builder.joinSources(of: join) }
        var copies: [String: TableCopy] = [:]
        for table in destination.tables.values { copies[table.name] = try builder.copy(into: table) }
        var consumers: [String: Int] = [:]
        for copy in copies.values.compactMap({ $0 }) { consumers[copy.sourceTable, default: 0] += 1 }
        for case .foreignKey(let table, _, _, _) in joins.values.joined() { consumers[table, default: 0] += 1 }

        for table in destination.tables.values.sorted(by: { $0.name < $1.name }) {
            let copy = copies[table.name] ?? nil
            if let copy, consumers[copy.sourceTable] == 1,
                let alteration = builder.alteration(of: table, from: copy)
            {
                alterations.append(alteration)
            } else {
                rebuilds.append(TableRebuild(table: table, copy: copy))
            }
            if let copy {
                let keys = copy.sourceNumbers.compactMap { number -> Int64? in
                    guard let name = source.entityNames[number], let root = source.entities[name]?.rootName,
                        let rootNumber = source.entities[root]?.number
                    else { return nil }
                    return largestKeys[rootNumber]
                }
                carriedKeys[table.name] = keys.max() ?? 0
            }
        }
        let altered = Set(alterations.map(\.table.name))
        replacedTables = Set(source.tables.keys).subtracting(altered)
        for join in destination.joinTables.values.sorted(by: { $0.name < $1.name }) {
            let sources = joins[join.name] ?? []
            if let kept = source.joinTables[join.name], kept.columns == join.columns, kept.orderColumns.isEmpty,
                join.orderColumns.isEmpty, sources == [.joinTable(table: join.name, first: join.columns[0], second: join.columns[1])]
            {
                keptJoinTables.insert(join.name)
            } else {
                joinRebuilds.append(JoinRebuild(table: join, sources: sources, orders: orders[join.name] ?? []))
            }
        }
        replacedTables.formUnion(Set(source.joinTables.keys).subtracting(keptJoinTables))
        derivedCounts = builder.derivedCounts()
    }
}

/// Works out column values and table operations for ``TableMigrationPlan``.
private struct PlanBuilder {
    let source: StoreSchema
    let destination: StoreSchema
    /// The entity mapping of each destination entity that receives source objects.
    let mappings: [String: EntityMapping]
    /// The destination entity of each source entity whose objects are migrated.
    let destinationOf: [String: String]
    /// Source entity numbers to destination entity numbers, for migrated entities.
    let numbers: [Int: Int]

    init(source: StoreSchema, destination: StoreSchema, mapping: MappingModel) throws(InPlaceUnsupported) {
        self.source = source
        self.destination = destination
        var mappings: [String: EntityMapping] = [:]
        var destinationOf: [String: String] = [:]
        var numbers: [Int: Int] = [:]
        for entityMapping in mapping.entityMappings {
            switch entityMapping.kind {
            case .add, .remove: continue
            case .custom: throw InPlaceUnsupported("entity mapping \(entityMapping.name) runs a custom policy")
            case .copy, .transform: break
            }
            guard entityMapping.sourceFilter == nil, let from = entityMapping.sourceEntityName,
                let to = entityMapping.destinationEntityName, let sourceLayout = source.entities[from],
                let destinationLayout = destination.entities[to], mappings[to] == nil, destinationOf[from] == nil
            else { throw InPlaceUnsupported("entity mapping \(entityMapping.name) is not a plain copy of one entity") }
            mappings[to] = entityMapping
            destinationOf[from] = to
            numbers[sourceLayout.number] = destinationLayout.number
        }
        (self.mappings, self.destinationOf, self.numbers) = (mappings, destinationOf, numbers)
    }

    // MARK: - Entity tables

    /// Where a destination table's rows come from, and each column's value; nil for a table
    /// that receives no objects.
    func copy(into table: TableLayout) throws(InPlaceUnsupported) -> TableMigrationPlan.TableCopy? {
        let entities = destination.entities.values.filter { $0.table == table.name && mappings[$0.name] != nil }
            .sorted { $0.number < $1.number }
        guard !entities.isEmpty else { return nil }
        var sourceTables: Set<String> = []
        var copy = TableMigrationPlan.TableCopy(sourceTable: "", sourceNumbers: [], values: [:])
        for layout in entities {
            guard let mapping = mappings[layout.name], let from = mapping.sourceEntityName,
                let sourceLayout = source.entities[from]
            else { continue }
            sourceTables.insert(sourceLayout.table)
            copy.sourceNumbers.append(sourceLayout.number)
            for (column, value) in try columnValues(of: layout, from: sourceLayout, mapping: mapping) {
                copy.values[column, default: [:]][sourceLayout.number] = value
            }
        }
        guard sourceTables.count == 1, let sourceTable = sourceTables.first else {
            throw InPlaceUnsupported("table \(table.name) would receive rows of several tables, whose keys may clash")
        }
        copy.sourceTable = sourceTable
        let renumbering = numbers.filter { copy.sourceNumbers.contains($0.key) }
        let entityValue: TableMigrationPlan.ColumnValue =
            renumbering.allSatisfy { $0.key == $0.value } ? .column("Z_ENT") : .renumbered("Z_ENT", renumbering)
        copy.values["Z_ENT"] = Dictionary(uniqueKeysWithValues: copy.sourceNumbers.map { ($0, entityValue) })
        return copy
    }

    /// The destination columns of one entity's rows and their values.
    func columnValues(of layout: EntityLayout, from sourceLayout: EntityLayout, mapping: EntityMapping)
        throws(InPlaceUnsupported) -> [String: TableMigrationPlan.ColumnValue]
    {
        let model = destination.model
        var values: [String: TableMigrationPlan.ColumnValue] = [:]
        let attributeMappings = Dictionary(
            mapping.effectiveAttributeMappings(in: model).compactMap { item in item.valueExpression.map { (item.name, $0) } },
            uniquingKeysWith: { first, _ in first })
        for column in layout.attributes {
            guard let attribute = model.attribute(named: column.name, inEntity: layout.name) else { continue }
            switch attributeMappings[column.name] {
            case nil:
                if column.derivation != nil {
                    // A new derivation starts empty, as in a new store; a count is filled later (``derivedCounts``).
                    if let old = sourceLayout.attribute(named: column.name), old.derivation == column.derivation {
                        values[column.column] = .column(old.column)
                    } else {
                        values[column.column] = .constant(.null)
                    }
                } else {
                    values[column.column] = .constant(try constant(attribute.defaultValue, for: column))
                }
            case .source(let path)?:
                values[column.column] = .column(try sourceColumn(path, of: sourceLayout, for: column))
            case .call(.coalesce, let arguments)? where arguments.count == 2:
                guard case .source(let path) = arguments[0], case .literal(let value) = arguments[1] else { fallthrough }
                values[column.column] = .coalesce(
                    try sourceColumn(path, of: sourceLayout, for: column), try constant(value, for: column))
            default:
                throw InPlaceUnsupported("\(layout.name).\(column.name) is computed by an expression")
            }
        }
        let relationshipMappings = Dictionary(
            mapping.effectiveRelationshipMappings(in: model).compactMap { item in item.valueExpression.map { (item.name, $0) } },
            uniquingKeysWith: { first, _ in first })
        for toOne in layout.toOneRelationships {
            guard let expression = relationshipMappings[toOne.name] else {
                if try inverseIsMapped(toOne, of: layout) {
                    throw InPlaceUnsupported("\(layout.name).\(toOne.name) is filled only from its inverse")
                }
                continue
            }
            let old = try sourceRelationship(expression, of: sourceLayout, for: toOne.name)
            guard let oldColumn = sourceLayout.toOne(named: old.name) else {
                throw InPlaceUnsupported("\(layout.name).\(toOne.name) was to-many")
            }
            values[toOne.column] = .column(oldColumn.column)
            if let entityColumn = toOne.entityColumn {
                if let oldEntityColumn = oldColumn.entityColumn {
                    values[entityColumn] = .renumbered(oldEntityColumn, numbers)
                } else if let target = destinationOf[oldColumn.destination], let number = destination.entities[target]?.number {
                    values[entityColumn] = .constantWhereNotNull(oldColumn.column, .integer(Int64(number)))
                } else {
                    throw InPlaceUnsupported("the objects \(layout.name).\(toOne.name) refers to are not migrated")
                }
            }
            if let order = try orderValue(of: toOne, in: layout, oldColumn: oldColumn) {
                values["Z_FOK_" + toOne.name.uppercased()] = order
            }
        }
        for toMany in layout.toManyRelationships {
            guard case .inverseForeignKey = toMany.storage, let expression = relationshipMappings[toMany.name] else { continue }
            try checkInverseForeignKey(toMany, of: layout, expression: expression, sourceLayout: sourceLayout)
        }
        return values
    }

    // MARK: - Derived attributes

    /// The derived attributes counting a one-to-many that the destination adds (or whose
    /// derivation changes), for the entities that receive objects.
    func derivedCounts() -> [TableMigrationPlan.DerivedCount] {
        var counts: [TableMigrationPlan.DerivedCount] = []
        for layout in destination.entities.values.sorted(by: { $0.number < $1.number }) {
            guard let from = mappings[layout.name]?.sourceEntityName, let sourceLayout = source.entities[from] else { continue }
            for column in layout.attributes where column.derivation != nil {
                if let old = sourceLayout.attribute(named: column.name), old.derivation == column.derivation { continue }
                guard let counted = StoreSchema.countedRelationship(column.derivation),
                    case .inverseForeignKey(let table, let key, _)? = layout.toMany(named: counted)?.storage
                else { continue }
                counts.append(
                    TableMigrationPlan.DerivedCount(
                        table: layout.table, column: column.column, numbers: [layout.number], countedTable: table,
                        foreignKey: key))
            }
        }
        return counts
    }

    // MARK: - Altering instead of rebuilding

    /// The alteration that turns the source table into the destination table in place, or nil
    /// when the table must be rebuilt: rows would leave it, a column would be dropped, change
    /// its declared type or be read twice, or a value needs more than an `UPDATE`.
    func alteration(of table: TableLayout, from copy: TableMigrationPlan.TableCopy) -> TableMigrationPlan.TableAlteration? {
        guard copy.sourceTable == table.name, let sourceTable = source.tables[table.name] else { return nil }
        let rowNumbers = Set(source.entities.values.filter { $0.table == table.name && !$0.isAbstract }.map(\.number))
        guard rowNumbers.isSubset(of: Set(copy.sourceNumbers)) else { return nil }
        let sourceTypes = Dictionary(uniqueKeysWithValues: sourceTable.columns.map { ($0.name, $0.type) })
        var alteration = TableMigrationPlan.TableAlteration(
            table: table, renamedColumns: [], addedColumns: [], rewrittenColumns: [])
        var consumed: Set<String> = []
        for column in table.columns {
            let byEntity = copy.values[column.name] ?? [:]
            let kinds = Set(byEntity.values)
            if kinds.allSatisfy({ if case .constant = $0 { true } else { false } }) {
                guard sourceTypes[column.name] == nil else { return nil }
                var fill: [Int: DatabaseValue] = [:]
                for (number, value) in byEntity {
                    if case .constant(let constant) = value, constant != .null { fill[number] = constant }
                }
                alteration.addedColumns.append((column, fill))
                continue
            }
            guard kinds.count == 1, let value = kinds.first, value.sourceColumns.count == 1,
                let old = value.sourceColumns.first, sourceTypes[old] == column.type, consumed.insert(old).inserted
            else { return nil }
            // Rows of entities without the destination column must have no value in the source column.
            for number in copy.sourceNumbers where byEntity[number] == nil {
                guard let name = source.entityNames[number], let layout = source.entities[name],
                    !Self.columns(of: layout, in: source).contains(old)
                else { return nil }
            }
            if old != column.name {
                guard sourceTypes[column.name] == nil else { return nil }
                alteration.renamedColumns.append((old, column.name))
            }
            let numbers = Array(byEntity.keys).sorted()
            switch value {
            case .column: break
            case .coalesce(_, let constant):
                alteration.rewrittenColumns.append((column.name, .coalesce(column.name, constant), numbers))
            case .renumbered(_, let map):
                alteration.rewrittenColumns.append((column.name, .renumbered(column.name, map), numbers))
            default: return nil
            }
        }
        if case .renumbered(_, let map)? = copy.uniformValue(of: "Z_ENT") {
            alteration.rewrittenColumns.append(("Z_ENT", .renumbered("Z_ENT", map), copy.sourceNumbers))
        }
        alteration.rowNumbers = rowNumbers.sorted()
        alteration.droppedColumns = Set(sourceTypes.keys).subtracting(consumed).sorted()
        // Each dropped column and each UPDATE rewrites every row once; a rebuild copies the rows
        // once and builds the table's indexes again. Alter only when that costs no more.
        if !alteration.droppedColumns.isEmpty {
            let updates = alteration.rewrittenColumns.count
                + alteration.addedColumns.filter { !$0.values.isEmpty && !alteration.fillsByDefault($0.values) }.count
            guard alteration.droppedColumns.count + updates <= 1 + table.indexes.count else { return nil }
        }
        return alteration
    }

    // MARK: - Join tables

    /// Where the rows of a destination join table come from, and the values of its order columns.
    func joinSources(of join: JoinTableLayout) throws(InPlaceUnsupported)
        -> ([TableMigrationPlan.JoinSource], [TableMigrationPlan.JoinOrder])
    {
        var sources: [TableMigrationPlan.JoinSource] = []
        var orders: [TableMigrationPlan.JoinOrder] = []
        for layout in destination.entities.values.sorted(by: { $0.number < $1.number }) {
            guard let mapping = mappings[layout.name], let from = mapping.sourceEntityName,
                let sourceLayout = source.entities[from]
            else { continue }
            let expressions = mapping.effectiveRelationshipMappings(in: destination.model)
            for toMany in layout.toManyRelationships {
                guard case .joinTable(join.name, let mine, _, let myOrder) = toMany.storage,
                    let expression = expressions.first(where: { $0.name == toMany.name })?.valueExpression
                else { continue }
                let old = try sourceRelationship(expression, of: sourceLayout, for: toMany.name)
                if let myOrder {
                    // Positions among the owner's objects, in the source relationship's order.
                    guard case .joinTable(_, let own, let other, let oldOrder)? = sourceLayout.toMany(named: old.name)?.storage else {
                        throw InPlaceUnsupported("the ordered many-to-many \(layout.name).\(toMany.name) was not many-to-many")
                    }
                    orders.append(TableMigrationPlan.JoinOrder(column: myOrder, partition: own, order: oldOrder, item: other))
                }
                let isFirst = mine == join.columns[0]
                func oriented(_ own: String, _ other: String) -> (String, String) { isFirst ? (own, other) : (other, own) }
                let next: TableMigrationPlan.JoinSource
                if let toOne = sourceLayout.toOne(named: old.name) {
                    let (first, second) = oriented("Z_PK", toOne.column)
                    next = .foreignKey(table: sourceLayout.table, numbers: sourceLayout.hierarchyNumbers, first: first, second: second)
                } else if let oldMany = sourceLayout.toMany(named: old.name) {
                    switch oldMany.storage {
                    case .joinTable(let table, let own, let other, _):
                        let (first, second) = oriented(own, other)
                        next = .joinTable(table: table, first: first, second: second)
                    case .inverseForeignKey(let table, let column, _):
                        let numbers = source.entities[oldMany.destination]?.hierarchyNumbers ?? []
                        let (first, second) = oriented(column, "Z_PK")
                        next = .foreignKey(table: table, numbers: numbers, first: first, second: second)
                    }
                } else {
                    throw InPlaceUnsupported("\(layout.name).\(toMany.name) has no stored source")
                }
                if !sources.contains(next) { sources.append(next) }
            }
        }
        if !join.orderColumns.isEmpty {
            guard sources.count == 1, case .joinTable = sources[0], Set(orders.map(\.column)) == Set(join.orderColumns) else {
                throw InPlaceUnsupported("the ordered many-to-many \(join.name) has its objects from several sources")
            }
        }
        return (sources, orders)
    }

    // MARK: - Non public

    /// The columns holding values of an entity's rows (attributes, to-ones and their entity and order columns).
    static func columns(of layout: EntityLayout, in schema: StoreSchema) -> Set<String> {
        var columns = Set(layout.attributes.map(\.column))
        for toOne in layout.toOneRelationships {
            columns.insert(toOne.column)
            if let entityColumn = toOne.entityColumn { columns.insert(entityColumn) }
            columns.insert("Z_FOK_" + toOne.name.uppercased())
        }
        return columns
    }

    /// The source column a `$source.name` path reads for a destination attribute column.
    private func sourceColumn(_ path: [String], of sourceLayout: EntityLayout, for column: AttributeColumn)
        throws(InPlaceUnsupported) -> String
    {
        guard path.count == 1, let old = sourceLayout.attribute(named: path[0]), old.derivation == column.derivation else {
            throw InPlaceUnsupported("\(sourceLayout.name).\(path.joined(separator: ".")) is not a stored attribute")
        }
        guard old.allowsExternalStorage == column.allowsExternalStorage else {
            throw InPlaceUnsupported("\(column.name) changes how large values are stored")
        }
        return old.column
    }

    /// A constant as the column stores it.
    private func constant(_ value: AttributeValue?, for column: AttributeColumn) throws(InPlaceUnsupported) -> DatabaseValue {
        guard let value else { return .null }
        guard let converted = try? value.converted(to: column.type), let stored = converted.databaseValue(for: column.type) else {
            throw InPlaceUnsupported("the default value of \(column.name) does not fit its type")
        }
        if column.allowsExternalStorage, case .blob = stored {
            throw InPlaceUnsupported("the default value of \(column.name) may go to an external file")
        }
        return stored
    }

    /// The source relationship a `destinationInstances($source.name)` expression reads.
    private func sourceRelationship(_ expression: ValueExpression, of sourceLayout: EntityLayout, for name: String)
        throws(InPlaceUnsupported) -> RelationshipDescription
    {
        guard case .call(.destinationInstances, let arguments) = expression, arguments.count == 1,
            case .source(let path) = arguments[0], path.count == 1,
            let old = source.model.relationship(named: path[0], inEntity: sourceLayout.name)
        else { throw InPlaceUnsupported("relationship \(name) is computed by an expression") }
        for target in [source.model.entity(named: old.destinationEntityName)].compactMap({ $0 })
            + source.model.allSubentities(of: old.destinationEntityName) where !target.isAbstract
        {
            guard destinationOf[target.name] != nil else {
                throw InPlaceUnsupported("the \(target.name) objects of \(name) are not migrated")
            }
        }
        return old
    }

    /// Whether a destination to-one without a mapping would still be filled through its
    /// to-many inverse's mapping.
    private func inverseIsMapped(_ toOne: ToOneColumn, of layout: EntityLayout) throws(InPlaceUnsupported) -> Bool {
        guard let inverse = destination.model.relationship(named: toOne.name, inEntity: layout.name)?.inverseName else {
            return false
        }
        let targets = [toOne.destination] + destination.model.allSubentities(of: toOne.destination).map(\.name)
        return targets.contains { target in
            mappings[target]?.effectiveRelationshipMappings(in: destination.model).contains { $0.name == inverse } ?? false
        }
    }

    /// The order column value of a to-one whose inverse is an ordered to-many: positions among
    /// the objects of the same owner, in the source's order of the inverse.
    private func orderValue(of toOne: ToOneColumn, in layout: EntityLayout, oldColumn: ToOneColumn)
        throws(InPlaceUnsupported) -> TableMigrationPlan.ColumnValue?
    {
        let model = destination.model
        guard let inverseName = model.relationship(named: toOne.name, inEntity: layout.name)?.inverseName,
            let inverse = model.relationship(named: inverseName, inEntity: toOne.destination), inverse.isToMany,
            inverse.isOrdered
        else { return nil }
        let owners = [toOne.destination] + model.allSubentities(of: toOne.destination).map(\.name)
        var sourceNames: Set<String> = []
        for owner in owners {
            guard let mapping = mappings[owner], let from = mapping.sourceEntityName else { continue }
            guard
                let expression = mapping.effectiveRelationshipMappings(in: model).first(where: { $0.name == inverseName })?
                    .valueExpression
            else { continue }
            let old = try sourceRelationship(expression, of: try sourceEntityLayout(from), for: inverseName)
            sourceNames.insert(old.name)
        }
        guard !sourceNames.isEmpty else { return .constant(.null) }
        guard sourceNames.count == 1, let oldName = sourceNames.first,
            let oldInverse = source.model.relationship(named: oldColumn.name, inEntity: layoutName(oldColumn, layout))?.inverseName,
            oldInverse == oldName
        else { throw InPlaceUnsupported("the order of \(toOne.destination).\(inverseName) comes from another relationship") }
        var order: String?
        if case .inverseForeignKey(_, _, let orderColumn)? = source.entities[oldColumn.destination]?.toMany(named: oldName)?.storage {
            order = orderColumn
        }
        return .position(partition: oldColumn.column, order: order)
    }

    /// The source entity that has a to-one column, for looking up its relationship.
    private func layoutName(_ column: ToOneColumn, _ layout: EntityLayout) -> String {
        mappings[layout.name]?.sourceEntityName ?? layout.name
    }

    private func sourceEntityLayout(_ name: String) throws(InPlaceUnsupported) -> EntityLayout {
        guard let layout = source.entities[name] else { throw InPlaceUnsupported("the store has no entity \(name)") }
        return layout
    }

    /// Checks that a destination one-to-many reads the same foreign key as its inverse to-one.
    private func checkInverseForeignKey(
        _ toMany: ToManyMapping, of layout: EntityLayout, expression: ValueExpression, sourceLayout: EntityLayout
    ) throws(InPlaceUnsupported) {
        let old = try sourceRelationship(expression, of: sourceLayout, for: toMany.name)
        guard let inverseName = destination.model.relationship(named: toMany.name, inEntity: layout.name)?.inverseName else {
            return
        }
        let targets = [toMany.destination] + destination.model.allSubentities(of: toMany.destination).map(\.name)
        for target in targets {
            guard let mapping = mappings[target], let from = mapping.sourceEntityName else { continue }
            let inverseMapping = mapping.effectiveRelationshipMappings(in: destination.model)
                .first { $0.name == inverseName }?.valueExpression
            guard let inverseMapping else {
                throw InPlaceUnsupported("\(target).\(inverseName) is filled only from its inverse")
            }
            let oldInverse = try sourceRelationship(inverseMapping, of: try sourceEntityLayout(from), for: inverseName)
            guard old.inverseName == oldInverse.name else {
                throw InPlaceUnsupported("\(layout.name).\(toMany.name) and its inverse come from unrelated relationships")
            }
        }
    }
}
