package import TernCore
package import TernMigration

extension StepDataCheck {
    /// The checks an inferred step needs, for each entity mapping that carries objects over.
    ///
    /// - Parameters:
    ///   - mapping: The step's inferred mapping.
    ///   - source: The store's layout before the step.
    ///   - destination: The destination model.
    /// - Returns: The checks, in entity mapping order; each link counted once, from the side
    ///   whose entity and property names sort first.
    /// - Complexity: O(*e* · *p*) in the number of entities and properties.
    package static func checks(of mapping: MappingModel, source: StoreSchema, destination: ManagedObjectModel) -> [Self]
    {
        var builder = CheckBuilder(source: source, destination: destination, mapping: mapping)
        for entityMapping in mapping.entityMappings
        where entityMapping.kind == .copy || entityMapping.kind == .transform {
            guard let from = entityMapping.sourceEntityName, let to = entityMapping.destinationEntityName,
                let layout = source.entities[from], !layout.isAbstract
            else { continue }
            builder.addAttributeChecks(of: entityMapping, from: layout, to: to)
            builder.addRelationshipChecks(of: entityMapping, from: layout, to: to)
        }
        return builder.checks
    }
}

/// Gathers the checks of one step.
private struct CheckBuilder {
    package let source: StoreSchema
    package let destination: ManagedObjectModel
    /// The destination entity of each source entity whose objects carry over.
    package let destinationOf: [String: String]
    package var checks: [StepDataCheck] = []
    /// The links already counted, as the sorted pair of their relationship's sides.
    private var countedLinks: Set<[String]> = []

    package init(source: StoreSchema, destination: ManagedObjectModel, mapping: MappingModel) {
        self.source = source
        self.destination = destination
        var destinationOf: [String: String] = [:]
        for entityMapping in mapping.entityMappings
        where entityMapping.kind == .copy || entityMapping.kind == .transform {
            if let from = entityMapping.sourceEntityName, let to = entityMapping.destinationEntityName {
                destinationOf[from] = destinationOf[from] ?? to
            }
        }
        self.destinationOf = destinationOf
    }

    // MARK: - Attributes

    /// Integers carried into a type that cannot hold them all.
    package mutating func addAttributeChecks(of mapping: EntityMapping, from layout: EntityLayout, to entity: String) {
        for item in mapping.effectiveAttributeMappings(in: destination) {
            guard case .source(let path)? = item.valueExpression, path.count == 1,
                let new = destination.attribute(named: item.name, inEntity: entity),
                let old = source.model.attribute(named: path[0], inEntity: layout.name), old.type != new.type,
                let column = layout.attribute(named: path[0])?.column,
                let outside = Self.outsideRange(of: new.type, column: column)
            else { continue }
            append(.valuesOutOfRange(new.type), layout, entity, item.name, rowsWhere: outside)
        }
    }

    /// The condition on a column's values that a type cannot hold; nil for a type that holds every integer.
    package static func outsideRange(of type: AttributeType, column: String) -> SQL? {
        let value = SQL.identifier(column)
        switch type {
        case .boolean: return value + " NOT IN (0, 1)"
        case .integer16: return value + " NOT BETWEEN -32768 AND 32767"
        case .integer32: return value + " NOT BETWEEN -2147483648 AND 2147483647"
        default: return nil
        }
    }

    // MARK: - Relationships

    /// The relationship checks of one entity mapping.
    package mutating func addRelationshipChecks(of mapping: EntityMapping, from layout: EntityLayout, to entity: String)
    {
        let sourceNames = Dictionary(
            mapping.effectiveRelationshipMappings(in: destination).compactMap { item -> (String, String)? in
                guard case .call(.destinationInstances, let arguments)? = item.valueExpression,
                    case .source(let path)? = arguments.last, path.count == 1
                else { return nil }
                return (item.name, path[0])
            }, uniquingKeysWith: { first, _ in first })
        for relationship in destination.allRelationships(of: entity) where !relationship.isTransient {
            guard let sourceName = sourceNames[relationship.name],
                let old = source.model.relationship(named: sourceName, inEntity: layout.name)
            else {
                if relationship.isRequired, mapping.relationshipMappings.allSatisfy({ $0.name != relationship.name }) {
                    let finding: StepDataCheck.Finding =
                        relationship.isToMany ? .emptyToMany(bounds: relationship.allowedCountText) : .missingLink
                    append(finding, layout, entity, relationship.name, rowsWhere: nil)
                }
                continue
            }
            if !relationship.isToMany, relationship.isRequired, !old.isToMany, old.isOptional,
                let column = layout.toOne(named: sourceName)?.column
            {
                append(.missingLink, layout, entity, relationship.name, rowsWhere: SQL.identifier(column) + " IS NULL")
            }
            if relationship.isToMany, old.isToMany, relationship.tightensBounds(of: old),
                let condition = countCondition(old: sourceName, in: layout, allowedBy: relationship)
            {
                append(
                    .countOutOfBounds(bounds: relationship.allowedCountText), layout, entity, relationship.name,
                    rowsWhere: condition)
            }
            addDroppedLinks(of: relationship, entity: entity, from: old, in: layout)
        }
    }

    /// The links of `old` to objects that `relationship` can no longer hold.
    private mutating func addDroppedLinks(
        of relationship: RelationshipDescription, entity: String, from old: RelationshipDescription,
        in layout: EntityLayout
    ) {
        let target = old.destinationEntityName
        let leaving = ([source.model.entity(named: target)].compactMap { $0 } + source.model.allSubentities(of: target))
            .filter { candidate in
                guard !candidate.isAbstract, let now = destinationOf[candidate.name] else { return false }
                return !destination.isKind(now, of: relationship.destinationEntityName)
            }
            .compactMap { source.entities[$0.name]?.number }
        guard !leaving.isEmpty, let targetLayout = source.entities[target] else { return }
        let sides = [
            entity + "." + relationship.name,
            relationship.destinationEntityName + "." + (relationship.inverseName ?? ""),
        ]
        guard countedLinks.insert(sides.sorted()).inserted else { return }
        let numbers = SQL(unsafeSQL: leaving.sorted().map(String.init).joined(separator: ", "))
        let query: SQL
        if let toOne = layout.toOne(named: old.name) {
            let targetEntity: SQL =
                toOne.entityColumn.map { "s." + SQL.identifier($0) } ?? targetLayout.rowEntityNumber(alias: "d")
            query = """
                SELECT COUNT(*) FROM \(.identifier(layout.table)) AS s \
                JOIN \(.identifier(targetLayout.table)) AS d ON d."Z_PK" = s.\(.identifier(toOne.column)) \
                WHERE \(layout.rowFilter(includingSubentities: false, alias: "s")) AND \(targetEntity) IN (\(numbers))
                """
        } else if let toMany = layout.toMany(named: old.name) {
            query = Self.linkQuery(
                toMany, from: layout, to: targetLayout,
                where: targetLayout.rowEntityNumber(alias: "d") + " IN (" + numbers + ")")
        } else {
            return
        }
        checks.append(
            StepDataCheck(
                finding: .droppedLinks(destination: relationship.destinationEntityName), sourceEntity: layout.name,
                entity: entity, property: relationship.name, countQuery: query))
    }

    /// The condition on a source object (alias `s`) that its count in a to-many relationship is one
    /// the new relationship does not allow.
    private func countCondition(old: String, in layout: EntityLayout, allowedBy new: RelationshipDescription) -> SQL? {
        guard let toMany = layout.toMany(named: old), let target = source.entities[toMany.destination] else {
            return nil
        }
        let count: SQL =
            switch toMany.storage {
            case .inverseForeignKey(let table, let column, _):
                """
                (SELECT COUNT(*) FROM \(.identifier(table)) AS d WHERE d.\(.identifier(column)) = s."Z_PK" \
                AND \(target.rowFilter(alias: "d")))
                """
            case .joinTable(let table, let sourceColumn, _, _):
                "(SELECT COUNT(*) FROM \(.identifier(table)) AS j WHERE j.\(.identifier(sourceColumn)) = s.\"Z_PK\")"
            }
        let minimum = max(new.minCount, 1)
        var terms: [SQL] = [
            new.isRequired ? count + " < \(minimum)" : "(" + count + " > 0 AND " + count + " < \(minimum))"
        ]
        if new.maxCount > 0 { terms.append(count + " > \(new.maxCount)") }
        return "(" + SQL.joined(terms, separator: " OR ") + ")"
    }

    /// The count of the links of a to-many relationship from the objects of `layout` (alias `s`)
    /// to objects (alias `d`) that meet a condition.
    package static func linkQuery(
        _ toMany: ToManyMapping, from layout: EntityLayout, to target: EntityLayout, where condition: SQL
    )
        -> SQL
    {
        let owner = layout.rowFilter(includingSubentities: false, alias: "s")
        switch toMany.storage {
        case .inverseForeignKey(let table, let column, _):
            return """
                SELECT COUNT(*) FROM \(.identifier(table)) AS d JOIN \(.identifier(layout.table)) AS s \
                ON s."Z_PK" = d.\(.identifier(column)) WHERE \(owner) AND \(condition)
                """
        case .joinTable(let table, let sourceColumn, let destinationColumn, _):
            return """
                SELECT COUNT(*) FROM \(.identifier(table)) AS j JOIN \(.identifier(layout.table)) AS s \
                ON s."Z_PK" = j.\(.identifier(sourceColumn)) JOIN \(.identifier(target.table)) AS d \
                ON d."Z_PK" = j.\(.identifier(destinationColumn)) WHERE \(owner) AND \(condition)
                """
        }
    }

    /// Adds a check counting the source entity's objects, or those meeting a condition (alias `s`).
    private mutating func append(
        _ finding: StepDataCheck.Finding, _ layout: EntityLayout, _ entity: String, _ property: String,
        rowsWhere condition: SQL?
    ) {
        var query: SQL =
            "SELECT COUNT(*) FROM \(.identifier(layout.table)) AS s WHERE \(layout.rowFilter(includingSubentities: false, alias: "s"))"
        if let condition { query = query + " AND " + condition }
        checks.append(
            StepDataCheck(
                finding: finding, sourceEntity: layout.name, entity: entity, property: property, countQuery: query))
    }
}
