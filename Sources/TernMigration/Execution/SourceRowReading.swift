public import TernCore

/// The reading of source rows that every engine shares: key paths through to-one relationships,
/// and filters evaluated over key paths.
///
/// An engine gives a way to load one source row; this walks `$source.a.b.c` over it exactly as
/// ``InMemoryMigrationManager`` and the SQLite engine both need.
///
/// ```swift
/// let value = try SourceRowReading.value(forKeyPath: ["owner", "name"], of: car, in: model) { reference in
///     rows[reference]
/// }
/// ```
public enum SourceRowReading {
    /// The value at a key path of a source row, following to-one relationships.
    ///
    /// - Parameters:
    ///   - keyPath: Property names; the empty path gives the object itself.
    ///   - source: The source object.
    ///   - model: The source model.
    ///   - row: Loads a source row; nil for a row that does not exist.
    /// - Returns: A value, or the objects of a relationship.
    /// - Throws: ``MigrationError`` when the key path does not exist, or from `row`.
    /// - Complexity: One `row` call per key path component.
    public static func value(
        forKeyPath keyPath: [String], of source: RowReference, in model: ManagedObjectModel,
        row: (RowReference) throws(MigrationError) -> StoreRow?
    ) throws(MigrationError) -> ExpressionValue {
        var current = source
        for (index, name) in keyPath.enumerated() {
            let isLast = index == keyPath.count - 1
            guard let loaded = try row(current) else { return .value(nil) }
            switch model.property(named: name, inEntity: current.entityName) {
            case .attribute? where isLast:
                return .value(loaded.attributes[name])
            case .relationship(let relationship)?:
                let targets = relationship.isToMany ? loaded.toMany[name] ?? [] : loaded.toOne[name].map { [$0] } ?? []
                if isLast { return .objects(targets) }
                guard !relationship.isToMany else { break }
                guard let next = targets.first else { return .value(nil) }
                current = next
                continue
            default:
                break
            }
            throw MigrationError(
                .evaluationFailed, "\(current.entityName) has no key path \(keyPath.joined(separator: "."))",
                entity: current.entityName)
        }
        return .objects([current])
    }

    /// Whether a source object passes an entity mapping's filter (true without a filter).
    ///
    /// - Parameters:
    ///   - reference: The source object.
    ///   - mapping: The entity mapping.
    ///   - manager: The engine that reads the object's key paths.
    /// - Throws: ``MigrationError`` with code ``MigrationError/Code/invalidMapping`` when the filter
    ///   cannot be evaluated.
    public static func passesFilter(
        _ reference: RowReference, of mapping: EntityMapping, manager: any MigrationManager
    ) throws(MigrationError) -> Bool {
        guard let filter = mapping.sourceFilter else { return true }
        do {
            return try filter.evaluate(with: RowPredicateValues(manager: manager, reference: reference))
        } catch {
            throw MigrationError(
                .invalidMapping, "The filter cannot be evaluated: \(error.message)", mapping: mapping.name,
                entity: reference.entityName, underlyingError: error)
        }
    }

    /// A source row seen through dotted key paths, for filters.
    private struct RowPredicateValues: PredicateEvaluable {
        let manager: any MigrationManager
        let reference: RowReference

        func predicateValue(forKeyPath keyPath: String) throws(TernError) -> PredicateValue {
            let path = keyPath.split(separator: ".").map(String.init)
            do {
                switch try manager.sourceValue(forKeyPath: path, of: reference) {
                case .value(let value): return .single(value)
                case .objects(let objects):
                    // Through to-one relationships alone a key path names one object or none,
                    // which `owner == nil` compares, as a store's fetch does.
                    let values = objects.map { AttributeValue.string($0.description) }
                    return Self.isToOne(path, from: reference.entityName, in: manager.sourceModel)
                        ? .single(values.first) : .many(values)
                case .destinationInstances: return .single(nil)
                }
            } catch {
                throw TernError(.invalidPredicate, error.message, entity: reference.entityName, underlyingError: error)
            }
        }

        /// Whether every relationship of a key path from an entity is a to-one relationship.
        private static func isToOne(_ path: [String], from entity: String, in model: ManagedObjectModel) -> Bool {
            var entity = entity
            for name in path {
                guard let relationship = model.relationship(named: name, inEntity: entity) else { continue }
                if relationship.isToMany { return false }
                entity = relationship.destinationEntityName
            }
            return true
        }
    }
}
