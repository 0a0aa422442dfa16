package import TernCore
package import TernMigration

/// One count an inferred step needs before it writes: the objects of an entity without a value
/// for an attribute that the destination requires and the step does not fill.
///
/// Core Data's lightweight migration infers an attribute that becomes required without a default
/// value, and fails when an object has no value for it. Tern counts such objects first, in any SQL
/// store (the checks are dialect-free; each store runs its own `COUNT(*)`), and refuses with every
/// failing entity and property before anything is written. An attribute that becomes required
/// with a default is not checked (objects without a value take it), nor one that was already
/// required (the step does not change it).
package struct RequiredValueCheck: Sendable, Hashable {
    /// The table of the source entity's rows.
    package var table: String
    /// The source entity's number (`Z_ENT`).
    package var entityNumber: Int
    /// The condition selecting the source entity's rows in its table
    /// (``EntityLayout/rowFilter(includingSubentities:alias:)``).
    package var rowFilter: SQL
    /// The source column that must hold a value; nil when no object has one (a new attribute).
    package var column: String?
    /// The source entity's name.
    package var sourceEntity: String
    /// The destination entity's name.
    package var entity: String
    /// The destination attribute's name.
    package var property: String
    /// The value expression the mapping gives the attribute, for the suggested mapping.
    package var expression: String

    /// The checks an inferred step needs.
    ///
    /// - Parameters:
    ///   - mapping: The step's inferred mapping.
    ///   - source: The store's layout before the step.
    ///   - destination: The destination model.
    /// - Complexity: O(*e* · *p*) in the number of entities and attributes.
    package static func checks(of mapping: MappingModel, source: StoreSchema, destination: ManagedObjectModel) -> [Self]
    {
        var checks: [Self] = []
        for entityMapping in mapping.entityMappings
        where entityMapping.kind == .copy || entityMapping.kind == .transform {
            guard let from = entityMapping.sourceEntityName, let to = entityMapping.destinationEntityName,
                let layout = source.entities[from], !layout.isAbstract
            else { continue }
            let expressions = Dictionary(
                entityMapping.effectiveAttributeMappings(in: destination).compactMap { item in
                    item.valueExpression.map { (item.name, $0) }
                },
                uniquingKeysWith: { first, _ in first })
            for attribute in destination.allAttributes(of: to)
            where !attribute.isOptional && !attribute.isTransient && !attribute.isDerived {
                var check = Self(
                    table: layout.table, entityNumber: layout.number,
                    rowFilter: layout.rowFilter(includingSubentities: false), column: nil, sourceEntity: from,
                    entity: to,
                    property: attribute.name, expression: "…")
                switch expressions[attribute.name] {
                case .source(let path)? where path.count == 1:
                    guard let old = source.model.attribute(named: path[0], inEntity: from), old.isOptional,
                        let column = layout.attribute(named: path[0])?.column
                    else { continue }
                    check.column = column
                    check.expression = "$source.\(path[0])"
                case nil where attribute.defaultValue == nil:
                    break
                default:
                    continue
                }
                checks.append(check)
            }
        }
        return checks
    }

    /// The query counting the objects without a value (one row, one column).
    package var countQuery: SQL {
        let query: SQL = "SELECT COUNT(*) FROM \(.identifier(table)) WHERE \(rowFilter)"
        guard let column else { return query }
        return query + " AND \(.identifier(column)) IS NULL"
    }

    /// The error for objects found without a value.
    ///
    /// - Parameters:
    ///   - missing: How many objects lack a value.
    ///   - step: The step's source and destination version names.
    package func failure(missing: Int64, step: (from: String, to: String)) -> MigrationError {
        MigrationError(
            .constraintViolated,
            "\(entity).\(property) is required in \(step.to), but \(missing) \(sourceEntity) object(s) have no value for it; "
                + "give \(property) a default value in \(step.to), fill the values before migrating, "
                + "or add a mapping for \(step.from) → \(step.to) such as \(property) = coalesce(\(expression), <value>)",
            entity: entity, property: property, version: step.to)
    }
}
