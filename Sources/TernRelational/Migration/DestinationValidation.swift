import TernCore
package import TernMigration

/// The check at the end of an entity mapping that every engine writing tables runs: the objects
/// the mapping created have a value for each required attribute and to-one relationship of the
/// destination model.
///
/// The engine says which objects lack a value in a column (a query over its own tables); the
/// check gathers one failure per object and property, as Core Data's validation reports them.
///
/// ```swift
/// try DestinationValidation.validate(mapping, schema: schema) { layout, column in
///     try keysWithoutValue(in: layout.table, column: column)
/// }
/// ```
package enum DestinationValidation {
    /// Checks the destination objects an entity mapping created.
    ///
    /// - Parameters:
    ///   - mapping: The entity mapping.
    ///   - schema: The destination layout (its model is the destination model).
    ///   - missing: The keys of the mapping's objects of the layout's entity whose column is
    ///     empty, in key order, at most 100.
    /// - Throws: ``TernMigration/MigrationError`` whose failures name each invalid object and
    ///   property, or what `missing` throws.
    /// - Complexity: One `missing` call per required property.
    package static func validate(
        _ mapping: EntityMapping, schema: StoreSchema,
        missing: (_ layout: EntityLayout, _ column: String) throws -> [Int64]
    ) throws {
        guard let entity = mapping.destinationEntityName, let layout = try? schema.entity(named: entity) else { return }
        let model = schema.model
        var checks: [(property: String, column: String)] = []
        for attribute in model.allAttributes(of: entity) where !attribute.isOptional && !attribute.isTransient {
            if let column = layout.attribute(named: attribute.name) { checks.append((attribute.name, column.column)) }
        }
        for relationship in model.allRelationships(of: entity) where relationship.isRequired {
            if let column = layout.toOne(named: relationship.name) { checks.append((relationship.name, column.column)) }
        }
        var failures: [MigrationError] = []
        for check in checks {
            for key in try missing(layout, check.column) {
                failures.append(
                    MigrationError(
                        .evaluationFailed, "\(entity) \(key) \(check.property) is required but has no value",
                        entity: entity, property: check.property))
            }
        }
        guard failures.isEmpty else {
            throw MigrationError(
                .evaluationFailed, "\(failures.count) migrated object(s) are invalid in the destination model",
                mapping: mapping.name, failures: failures)
        }
    }
}
