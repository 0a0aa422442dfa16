import Foundation
package import TernCore
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
    ///   - largestKeys: Each source root entity's largest key (its `Z_MAX`, or its table's
    ///     largest `Z_PK` when larger), by entity number.
    ///   - rekeysMovedEntities: Whether an entity may move under another inheritance root: its
    ///     objects then get new keys (``KeyShift``), which the emitter must apply everywhere.
    ///   - changesExternalStorage: Whether an attribute may start or stop allowing external
    ///     storage (``ColumnValue/markedInline(_:)``, ``ColumnValue/resolvedExternal(_:)``, which
    ///     only SQLite's emitter writes).
    ///   - dropsLinks: Whether links to objects whose entity left a relationship's inheritance
    ///     tree may be dropped (``ColumnValue/droppedFor(_:entityColumn:numbers:)``,
    ///     ``JoinExclusion``, which only SQLite's emitter writes).
    /// - Throws: ``InPlaceUnsupported`` for what the plan cannot express; the step is then built
    ///   beside the store instead.
    /// - Complexity: O(*e* · *p*) in the number of entities and properties.
    package init(
        source: StoreSchema, destination: StoreSchema, mapping: MappingModel, largestKeys: [Int: Int64],
        rekeysMovedEntities: Bool = false, changesExternalStorage: Bool = false, dropsLinks: Bool = false
    ) throws(InPlaceUnsupported) {
        self.source = source
        self.destination = destination
        let builder = try PlanBuilder(
            source: source, destination: destination, mapping: mapping, largestKeys: largestKeys,
            rekeysMovedEntities: rekeysMovedEntities, changesExternalStorage: changesExternalStorage,
            dropsLinks: dropsLinks)
        var joins: [String: [JoinSource]] = [:]
        var orders: [String: [JoinOrder]] = [:]
        var joinShifts: [String: [JoinSource: JoinShift]] = [:]
        var exclusions: [String: [JoinSource: [JoinExclusion]]] = [:]
        for join in destination.joinTables.values {
            (joins[join.name], orders[join.name], joinShifts[join.name], exclusions[join.name]) =
                try builder.joinSources(of: join)
        }
        var copies: [String: [TableCopy]] = [:]
        for table in destination.tables.values { copies[table.name] = try builder.copies(into: table) }
        self.copies = copies
        var consumers: [String: Int] = [:]
        for copy in copies.values.joined() { consumers[copy.sourceTable, default: 0] += 1 }
        for case .foreignKey(let table, _, _, _) in joins.values.joined() { consumers[table, default: 0] += 1 }

        for table in destination.tables.values.sorted(by: { $0.name < $1.name }) {
            let tableCopies = copies[table.name] ?? []
            if tableCopies.count == 1, let copy = tableCopies.first, consumers[copy.sourceTable] == 1,
                let alteration = builder.alteration(of: table, from: copy)
            {
                alterations.append(alteration)
            } else {
                rebuilds.append(
                    TableRebuild(table: table, copy: tableCopies.first, movedCopies: Array(tableCopies.dropFirst())))
            }
            if !tableCopies.isEmpty { carriedKeys[table.name] = builder.largestKey(afterCopies: tableCopies) }
        }
        keyOffsets = builder.offsets.filter { $0.value != 0 }
        let altered = Set(alterations.map(\.table.name))
        replacedTables = Set(source.tables.keys).subtracting(altered)
        for join in destination.joinTables.values.sorted(by: { $0.name < $1.name }) {
            let sources = joins[join.name] ?? []
            if let kept = source.joinTables[join.name], kept.columns == join.columns, kept.orderColumns.isEmpty,
                joinShifts[join.name]?.isEmpty ?? true, exclusions[join.name]?.isEmpty ?? true,
                join.orderColumns.isEmpty,
                sources == [.joinTable(table: join.name, first: join.columns[0], second: join.columns[1])]
            {
                keptJoinTables.insert(join.name)
            } else {
                joinRebuilds.append(
                    JoinRebuild(
                        table: join, sources: sources, orders: orders[join.name] ?? [],
                        keyShifts: joinShifts[join.name] ?? [:],
                        exclusions: exclusions[join.name] ?? [:]))
            }
        }
        replacedTables.formUnion(Set(source.joinTables.keys).subtracting(keptJoinTables))
        // Exclusions read the objects' tables as they were: renamed aside, not altered.
        for exclusion in exclusions.values.flatMap(\.values).joined() where !replacedTables.contains(exclusion.table) {
            throw InPlaceUnsupported(
                "links to objects of table \(exclusion.table) are dropped while the table is altered")
        }
        derivedCounts = builder.derivedCounts()
    }
}

/// Works out column values and table operations for ``TableMigrationPlan``.
package struct PlanBuilder {
    package let source: StoreSchema
    package let destination: StoreSchema
    /// The entity mapping of each destination entity that receives source objects.
    package let mappings: [String: EntityMapping]
    /// The destination entity of each source entity whose objects are migrated.
    package let destinationOf: [String: String]
    /// Source entity numbers to destination entity numbers, for migrated entities.
    package let numbers: [Int: Int]
    /// Each source root table's largest key.
    package let largestKeys: [String: Int64]
    /// The key offset of each migrated source entity number (0 but for entities that moved under
    /// another inheritance root, see ``TableMigrationPlan/KeyShift``).
    package let offsets: [Int: Int64]
    /// Whether an attribute may start or stop allowing external storage.
    package let changesExternalStorage: Bool
    /// Whether links to objects whose entity left a relationship's inheritance tree may be dropped.
    package let dropsLinks: Bool

    package init(
        source: StoreSchema, destination: StoreSchema, mapping: MappingModel, largestKeys: [Int: Int64],
        rekeysMovedEntities: Bool, changesExternalStorage: Bool, dropsLinks: Bool
    ) throws(InPlaceUnsupported) {
        self.source = source
        self.destination = destination
        self.changesExternalStorage = changesExternalStorage
        self.dropsLinks = dropsLinks
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
        var tableKeys: [String: Int64] = [:]
        for layout in source.entities.values where layout.superNumber == 0 {
            tableKeys[layout.table] = max(tableKeys[layout.table] ?? 0, largestKeys[layout.number] ?? 0)
        }
        self.largestKeys = tableKeys
        // The source tables feeding each destination table: the first keeps its keys, the others
        // are offset one after the other.
        var feeding: [String: Set<String>] = [:]
        for (from, to) in destinationOf {
            guard let table = source.entities[from]?.table, let target = destination.entities[to]?.table else {
                continue
            }
            feeding[target, default: []].insert(table)
        }
        var tableOffsets: [String: Int64] = [:]
        for (target, tables) in feeding where tables.count > 1 {
            guard rekeysMovedEntities else {
                throw InPlaceUnsupported("table \(target) would receive rows of several tables, whose keys may clash")
            }
            var offset: Int64 = 0
            for table in Self.feedingOrder(tables, into: target) {
                tableOffsets[table + "\u{0}" + target] = offset
                offset += tableKeys[table] ?? 0
            }
        }
        var offsets: [Int: Int64] = [:]
        for (from, to) in destinationOf {
            guard let layout = source.entities[from], let target = destination.entities[to]?.table else { continue }
            offsets[layout.number] = tableOffsets[layout.table + "\u{0}" + target] ?? 0
        }
        self.offsets = offsets
    }

    /// The order in which source tables feed a destination table: the one of the same name
    /// (the root that stays) first, keeping its keys, then the others by name.
    package static func feedingOrder(_ tables: Set<String>, into target: String) -> [String] {
        tables.sorted { ($0 == target ? 0 : 1, $0) < ($1 == target ? 0 : 1, $1) }
    }

    /// The largest key a destination table's rows may have had: its sources' largest keys,
    /// offsets included.
    package func largestKey(afterCopies copies: [TableMigrationPlan.TableCopy]) -> Int64 {
        copies.map { $0.keyOffset + (largestKeys[$0.sourceTable] ?? 0) }.max() ?? 0
    }

    /// How references to the objects of a source entity and its subentities shift.
    ///
    /// - Parameters:
    ///   - entity: The source entity referred to.
    ///   - entityColumn: The referring row's column of the object's entity number, if any.
    ///   - destinationEntity: The destination relationship's entity: objects it no longer holds
    ///     are left out, as their links are dropped (see ``droppedNumbers(from:to:)``).
    /// - Throws: ``InPlaceUnsupported`` when the objects shift differently and no column says
    ///   which entity each reference is to.
    package func shift(toObjectsOf entity: String, entityColumn: String?, heldAs destinationEntity: String)
        throws(InPlaceUnsupported) -> TableMigrationPlan.KeyShift
    {
        let dropped = Set(try droppedNumbers(from: entity, to: destinationEntity))
        let numbers = concreteEntities(of: entity).compactMap { source.entities[$0.name]?.number }.filter {
            !dropped.contains($0)
        }
        let shift = TableMigrationPlan.KeyShift(
            entityColumn: entityColumn,
            offsets: Dictionary(uniqueKeysWithValues: numbers.map { ($0, offsets[$0] ?? 0) }))
        guard shift.uniformOffset != nil || entityColumn != nil else {
            throw InPlaceUnsupported("references to \(entity) objects would need new keys that differ by entity")
        }
        return shift
    }

    /// A source entity and its subentities that have objects.
    private func concreteEntities(of entity: String) -> [EntityDescription] {
        ([source.model.entity(named: entity)].compactMap { $0 } + source.model.allSubentities(of: entity)).filter {
            !$0.isAbstract
        }
    }

    /// The source entity numbers of the objects a source relationship to `sourceTarget` may refer
    /// to that a destination relationship to `destinationTarget` can no longer hold: their entity
    /// left its inheritance tree. Links to them are dropped (the objects stay), as in Core Data.
    ///
    /// - Throws: ``InPlaceUnsupported`` when links would be dropped and the emitter cannot.
    package func droppedNumbers(from sourceTarget: String, to destinationTarget: String) throws(InPlaceUnsupported)
        -> [Int]
    {
        let numbers = concreteEntities(of: sourceTarget).compactMap { entity -> Int? in
            guard let moved = destinationOf[entity.name], !destination.model.isKind(moved, of: destinationTarget) else {
                return nil
            }
            return source.entities[entity.name]?.number
        }
        guard numbers.isEmpty || dropsLinks else {
            throw InPlaceUnsupported(
                "links to objects that leave the inheritance tree of \(destinationTarget) would be dropped")
        }
        return numbers.sorted()
    }

    /// A join source's exclusion of the rows whose `column` refers to objects of `sourceEntity`
    /// (and its subentities) that `destinationEntity`'s tree no longer holds; nil when none.
    package func exclusion(_ column: String, of sourceEntity: String, heldAs destinationEntity: String)
        throws(InPlaceUnsupported) -> TableMigrationPlan.JoinExclusion?
    {
        let numbers = try droppedNumbers(from: sourceEntity, to: destinationEntity)
        guard !numbers.isEmpty, let table = source.entities[sourceEntity]?.table else { return nil }
        return TableMigrationPlan.JoinExclusion(column: column, table: table, numbers: numbers)
    }

    // MARK: - Entity tables

    /// Where a destination table's rows come from, and each column's value: one copy per source
    /// table, the one keeping its keys first; empty for a table that receives no objects.
    package func copies(into table: TableLayout) throws(InPlaceUnsupported) -> [TableMigrationPlan.TableCopy] {
        let entities = destination.entities.values.filter { $0.table == table.name && mappings[$0.name] != nil }
            .sorted { $0.number < $1.number }
        var copies: [String: TableMigrationPlan.TableCopy] = [:]
        for layout in entities {
            guard let mapping = mappings[layout.name], let from = mapping.sourceEntityName,
                let sourceLayout = source.entities[from]
            else { continue }
            var copy =
                copies[sourceLayout.table]
                ?? TableMigrationPlan.TableCopy(
                    sourceTable: sourceLayout.table, keyOffset: offsets[sourceLayout.number] ?? 0, sourceNumbers: [],
                    values: [:])
            copy.sourceNumbers.append(sourceLayout.number)
            for (column, value) in try columnValues(of: layout, from: sourceLayout, mapping: mapping) {
                copy.values[column, default: [:]][sourceLayout.number] = value
            }
            copies[sourceLayout.table] = copy
        }
        return Self.feedingOrder(Set(copies.keys), into: table.name).compactMap { sourceTable in
            guard var copy = copies[sourceTable] else { return nil }
            let renumbering = numbers.filter { copy.sourceNumbers.contains($0.key) }
            let entityValue: TableMigrationPlan.ColumnValue =
                renumbering.allSatisfy { $0.key == $0.value } ? .column("Z_ENT") : .renumbered("Z_ENT", renumbering)
            copy.values["Z_ENT"] = Dictionary(uniqueKeysWithValues: copy.sourceNumbers.map { ($0, entityValue) })
            return copy
        }
    }

    /// The destination columns of one entity's rows and their values.
    package func columnValues(of layout: EntityLayout, from sourceLayout: EntityLayout, mapping: EntityMapping)
        throws(InPlaceUnsupported) -> [String: TableMigrationPlan.ColumnValue]
    {
        let model = destination.model
        var values: [String: TableMigrationPlan.ColumnValue] = [:]
        let attributeMappings = Dictionary(
            mapping.effectiveAttributeMappings(in: model).compactMap { item in
                item.valueExpression.map { (item.name, $0) }
            },
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
                let old = try sourceAttribute(path, of: sourceLayout, for: column)
                switch (old.allowsExternalStorage, column.allowsExternalStorage) {
                case (false, true): values[column.column] = .markedInline(old.column)
                case (true, false): values[column.column] = .resolvedExternal(old.column)
                default: values[column.column] = .column(old.column)
                }
            case .call(.coalesce, let arguments)? where arguments.count == 2:
                guard case .source(let path) = arguments[0], case .literal(let value) = arguments[1] else {
                    fallthrough
                }
                let old = try sourceAttribute(path, of: sourceLayout, for: column)
                guard old.allowsExternalStorage == column.allowsExternalStorage else {
                    throw InPlaceUnsupported("\(column.name) changes how large values are stored and gets a default")
                }
                values[column.column] = .coalesce(old.column, try constant(value, for: column))
            default:
                throw InPlaceUnsupported("\(layout.name).\(column.name) is computed by an expression")
            }
        }
        let relationshipMappings = Dictionary(
            mapping.effectiveRelationshipMappings(in: model).compactMap { item in
                item.valueExpression.map { (item.name, $0) }
            },
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
            let shift = try shift(
                toObjectsOf: oldColumn.destination, entityColumn: oldColumn.entityColumn, heldAs: toOne.destination)
            // Links to objects that left the tree the to-one points into become NULL.
            let dropped = try droppedNumbers(from: oldColumn.destination, to: toOne.destination)
            func kept(_ value: TableMigrationPlan.ColumnValue) -> TableMigrationPlan.ColumnValue {
                guard !dropped.isEmpty else { return value }
                guard let oldEntityColumn = oldColumn.entityColumn else { return .constant(.null) }
                return .droppedFor(value, entityColumn: oldEntityColumn, numbers: dropped)
            }
            values[toOne.column] = kept(shift.isZero ? .column(oldColumn.column) : .shiftedKey(oldColumn.column, shift))
            if let entityColumn = toOne.entityColumn {
                if let oldEntityColumn = oldColumn.entityColumn {
                    values[entityColumn] = kept(.renumbered(oldEntityColumn, numbers))
                } else if let target = destinationOf[oldColumn.destination],
                    let number = destination.entities[target]?.number
                {
                    values[entityColumn] = kept(.constantWhereNotNull(oldColumn.column, .integer(Int64(number))))
                } else {
                    throw InPlaceUnsupported("the objects \(layout.name).\(toOne.name) refers to are not migrated")
                }
            }
            if let order = try orderValue(of: toOne, in: layout, oldColumn: oldColumn),
                let orderColumn = toOne.orderColumn
            {
                values[orderColumn] = kept(order)
            }
        }
        for toMany in layout.toManyRelationships {
            guard case .inverseForeignKey = toMany.storage, let expression = relationshipMappings[toMany.name] else {
                continue
            }
            guard model.relationship(named: toMany.name, inEntity: layout.name)?.inverseName != nil else {
                // Its foreign key is a column of the destination's table that no property names.
                throw InPlaceUnsupported("\(layout.name).\(toMany.name) is a to-many relationship without an inverse")
            }
            try checkInverseForeignKey(toMany, of: layout, expression: expression, sourceLayout: sourceLayout)
        }
        return values
    }

    // MARK: - Non public

    /// The columns holding values of an entity's rows (attributes, to-ones and their entity and order columns).
    package static func columns(of layout: EntityLayout, in schema: StoreSchema) -> Set<String> {
        var columns = Set(layout.attributes.map(\.column))
        for toOne in layout.toOneRelationships {
            columns.insert(toOne.column)
            if let entityColumn = toOne.entityColumn { columns.insert(entityColumn) }
            if let orderColumn = toOne.orderColumn { columns.insert(orderColumn) }
        }
        return columns
    }

    /// The source attribute column a `$source.name` path reads for a destination attribute column.
    private func sourceAttribute(_ path: [String], of sourceLayout: EntityLayout, for column: AttributeColumn)
        throws(InPlaceUnsupported) -> AttributeColumn
    {
        guard path.count == 1, let old = sourceLayout.attribute(named: path[0]), old.derivation == column.derivation
        else {
            throw InPlaceUnsupported("\(sourceLayout.name).\(path.joined(separator: ".")) is not a stored attribute")
        }
        guard old.allowsExternalStorage == column.allowsExternalStorage || changesExternalStorage else {
            throw InPlaceUnsupported("\(column.name) changes how large values are stored")
        }
        return old
    }

    /// A constant as the column stores it.
    private func constant(_ value: AttributeValue?, for column: AttributeColumn) throws(InPlaceUnsupported)
        -> DatabaseValue
    {
        guard let value else { return .null }
        guard let converted = try? value.converted(to: column.type),
            let stored = converted.databaseValue(for: column.type)
        else {
            throw InPlaceUnsupported("the default value of \(column.name) does not fit its type")
        }
        if column.allowsExternalStorage, case .blob(let bytes) = stored {
            // Kept inline, behind Core Data's inline marker: no file is written.
            guard changesExternalStorage else {
                throw InPlaceUnsupported("the default value of \(column.name) may go to an external file")
            }
            return .blob(Data([ExternalValueMarker.inline]) + bytes)
        }
        return stored
    }

    /// The source relationship a `destinationInstances($source.name)` expression reads.
    package func sourceRelationship(_ expression: ValueExpression, of sourceLayout: EntityLayout, for name: String)
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
    /// inverse's mapping: the inverse is mapped from a source relationship that can hold objects
    /// of the entity the layout's objects come from.
    private func inverseIsMapped(_ toOne: ToOneColumn, of layout: EntityLayout) throws(InPlaceUnsupported) -> Bool {
        guard let inverse = destination.model.relationship(named: toOne.name, inEntity: layout.name)?.inverseName else {
            return false
        }
        let from = mappings[layout.name]?.sourceEntityName
        let targets = [toOne.destination] + destination.model.allSubentities(of: toOne.destination).map(\.name)
        for target in targets {
            guard let mapping = mappings[target], let targetSource = mapping.sourceEntityName,
                let expression = mapping.effectiveRelationshipMappings(in: destination.model).first(where: {
                    $0.name == inverse
                })?
                .valueExpression
            else { continue }
            guard let from,
                let old = try? sourceRelationship(expression, of: try sourceEntityLayout(targetSource), for: inverse)
            else { return true }
            let reachable =
                [old.destinationEntityName] + source.model.allSubentities(of: old.destinationEntityName).map(\.name)
            if reachable.contains(from) { return true }
        }
        return false
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
                let expression = mapping.effectiveRelationshipMappings(in: model).first(where: {
                    $0.name == inverseName
                })?
                .valueExpression
            else { continue }
            let old = try sourceRelationship(expression, of: try sourceEntityLayout(from), for: inverseName)
            sourceNames.insert(old.name)
        }
        guard !sourceNames.isEmpty else { return .constant(.null) }
        guard sourceNames.count == 1, let oldName = sourceNames.first,
            let oldInverse = source.model.relationship(named: oldColumn.name, inEntity: layoutName(oldColumn, layout))?
                .inverseName,
            oldInverse == oldName
        else {
            throw InPlaceUnsupported("the order of \(toOne.destination).\(inverseName) comes from another relationship")
        }
        var order: String?
        if case .inverseForeignKey(_, _, let orderColumn)? = source.entities[oldColumn.destination]?.toMany(
            named: oldName)?.storage
        {
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
        guard let inverseName = destination.model.relationship(named: toMany.name, inEntity: layout.name)?.inverseName
        else {
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
                throw InPlaceUnsupported(
                    "\(layout.name).\(toMany.name) and its inverse come from unrelated relationships")
            }
        }
    }
}
