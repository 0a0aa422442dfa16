import TernCore
import TernMigration

extension PlanBuilder {
    // MARK: - Join tables

    /// Where the rows of a destination join table come from, the values of its order columns, how
    /// the keys of each source shift, and the rows each source leaves out.
    package func joinSources(of join: JoinTableLayout) throws(InPlaceUnsupported) -> (
        [TableMigrationPlan.JoinSource], [TableMigrationPlan.JoinOrder],
        [TableMigrationPlan.JoinSource: TableMigrationPlan.JoinShift],
        [TableMigrationPlan.JoinSource: [TableMigrationPlan.JoinExclusion]]
    ) {
        var sources: [TableMigrationPlan.JoinSource] = []
        var orders: [TableMigrationPlan.JoinOrder] = []
        var shifts: [TableMigrationPlan.JoinSource: TableMigrationPlan.JoinShift] = [:]
        var exclusions: [TableMigrationPlan.JoinSource: [TableMigrationPlan.JoinExclusion]] = [:]
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
                    guard
                        case .joinTable(_, let own, let other, let oldOrder)? = sourceLayout.toMany(named: old.name)?
                            .storage
                    else {
                        throw InPlaceUnsupported(
                            "the ordered many-to-many \(layout.name).\(toMany.name) was not many-to-many")
                    }
                    orders.append(
                        TableMigrationPlan.JoinOrder(column: myOrder, partition: own, order: oldOrder, item: other))
                }
                let isFirst = mine == join.columns[0]
                func oriented<Value>(_ own: Value, _ other: Value) -> (Value, Value) {
                    isFirst ? (own, other) : (other, own)
                }
                let next: TableMigrationPlan.JoinSource
                let shift: (first: TableMigrationPlan.KeyShift, second: TableMigrationPlan.KeyShift)
                // The owners' and the objects' entities in the destination, for the links dropped.
                let owner = declaringEntity(of: toMany.name, from: layout.name, in: destination.model)
                var excluded: [TableMigrationPlan.JoinExclusion?] = []
                if let toOne = sourceLayout.toOne(named: old.name) {
                    let (first, second) = oriented("Z_PK", toOne.column)
                    next = .foreignKey(
                        table: sourceLayout.table, numbers: sourceLayout.hierarchyNumbers, first: first, second: second)
                    shift = oriented(
                        try self.shift(toObjectsOf: sourceLayout.name, entityColumn: "Z_ENT", heldAs: owner),
                        try self.shift(
                            toObjectsOf: toOne.destination, entityColumn: toOne.entityColumn, heldAs: toMany.destination
                        ))
                    excluded = [
                        try exclusion("Z_PK", of: sourceLayout.name, heldAs: owner),
                        try exclusion(toOne.column, of: toOne.destination, heldAs: toMany.destination),
                    ]
                } else if let oldMany = sourceLayout.toMany(named: old.name) {
                    switch oldMany.storage {
                    case .joinTable(let table, let own, let other, _):
                        let (first, second) = oriented(own, other)
                        next = .joinTable(table: table, first: first, second: second)
                        let oldOwner = declaringEntity(of: old.name, from: sourceLayout.name, in: source.model)
                        shift = oriented(
                            try self.shift(toObjectsOf: oldOwner, entityColumn: nil, heldAs: owner),
                            try self.shift(
                                toObjectsOf: oldMany.destination, entityColumn: nil, heldAs: toMany.destination))
                        excluded = [
                            try exclusion(own, of: oldOwner, heldAs: owner),
                            try exclusion(other, of: oldMany.destination, heldAs: toMany.destination),
                        ]
                    case .inverseForeignKey(let table, let column, _):
                        let numbers = source.entities[oldMany.destination]?.hierarchyNumbers ?? []
                        let (first, second) = oriented(column, "Z_PK")
                        next = .foreignKey(table: table, numbers: numbers, first: first, second: second)
                        let inverse = old.inverseName.flatMap { source.entities[oldMany.destination]?.toOne(named: $0) }
                        shift = oriented(
                            try self.shift(
                                toObjectsOf: inverse?.destination ?? sourceLayout.name,
                                entityColumn: inverse?.entityColumn,
                                heldAs: owner),
                            try self.shift(
                                toObjectsOf: oldMany.destination, entityColumn: "Z_ENT", heldAs: toMany.destination))
                        excluded = [
                            try exclusion(column, of: inverse?.destination ?? sourceLayout.name, heldAs: owner),
                            try exclusion("Z_PK", of: oldMany.destination, heldAs: toMany.destination),
                        ]
                    }
                } else {
                    throw InPlaceUnsupported("\(layout.name).\(toMany.name) has no stored source")
                }
                if !sources.contains(next) { sources.append(next) }
                for exclusion in excluded.compactMap({ $0 }) where !(exclusions[next]?.contains(exclusion) ?? false) {
                    exclusions[next, default: []].append(exclusion)
                }
                if !shift.first.isZero || !shift.second.isZero {
                    shifts[next] = TableMigrationPlan.JoinShift(first: shift.first, second: shift.second)
                }
            }
        }
        if !join.orderColumns.isEmpty {
            guard sources.count == 1, case .joinTable = sources[0], Set(orders.map(\.column)) == Set(join.orderColumns)
            else {
                throw InPlaceUnsupported("the ordered many-to-many \(join.name) has its objects from several sources")
            }
        }
        return (sources, orders, shifts, exclusions)
    }

    /// The entity that declares a relationship an entity has (itself or an ancestor).
    private func declaringEntity(of relationship: String, from entity: String, in model: ManagedObjectModel) -> String {
        var name = entity
        while let description = model.entity(named: name) {
            if description.relationships.contains(where: { $0.name == relationship }) { return name }
            guard let parent = description.parentName else { break }
            name = parent
        }
        return entity
    }
}
