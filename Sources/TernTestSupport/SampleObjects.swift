import Foundation
public import TernCore

/// Sample objects for any model: a few objects of every concrete entity, every stored attribute
/// set to a value of its type (within its minimum and maximum), every to-one relationship and
/// every to-many one that no to-one inverse fills pointing at an object of its destination.
///
/// What corpus tests store in a store of a model they know nothing else about, to run a
/// migration on objects of every kind.
///
/// ```swift
/// let rows = SampleObjects.rows(for: v1, perEntity: 3)
/// _ = try await store.save(StoreChangeSet(inserted: rows))
/// ```
public enum SampleObjects {
    /// The sample objects of a model.
    ///
    /// - Parameters:
    ///   - model: The model.
    ///   - perEntity: How many objects of each concrete entity.
    ///   - excluded: Entities to make no objects of (nor links to).
    /// - Returns: The rows, keys unique across the model, relationships consistent with their inverses.
    /// - Complexity: O(*e* × *n* × *p*) for *e* entities, *n* objects each and *p* properties.
    public static func rows(for model: ManagedObjectModel, perEntity: Int = 3, excluding excluded: Set<String> = [])
        -> [StoreRow]
    {
        let concrete = model.entities.filter { !$0.isAbstract && !excluded.contains($0.name) }.map(\.name).sorted()
        var keys: [String: [Int64]] = [:]
        var next: Int64 = 1
        for name in concrete {
            keys[name] = (0..<perEntity).map { _ in
                defer { next += 1 }
                return next
            }
        }
        /// The object `index` of the first concrete entity that is a kind of `entity`.
        func target(_ entity: String, _ index: Int) -> RowReference? {
            guard let name = concrete.first(where: { model.isKind($0, of: entity) }), let list = keys[name],
                !list.isEmpty
            else {
                return nil
            }
            return RowReference(entityName: name, primaryKey: list[index % list.count])
        }
        var rows: [StoreRow] = []
        for name in concrete {
            for (index, key) in (keys[name] ?? []).enumerated() {
                var row = StoreRow(reference: RowReference(entityName: name, primaryKey: key), version: 1)
                for attribute in model.allAttributes(of: name) where !attribute.isTransient && !attribute.isDerived {
                    if let value = value(for: attribute, number: key, entity: name) {
                        row.attributes[attribute.name] = value
                    }
                }
                for relationship in model.allRelationships(of: name) where !relationship.isTransient {
                    let inverse = relationship.inverseName.flatMap {
                        model.relationship(named: $0, inEntity: relationship.destinationEntityName)
                    }
                    guard let object = target(relationship.destinationEntityName, index) else { continue }
                    if !relationship.isToMany {
                        // A one-to-one is set from both sides alike: object i of each points at object i of the other.
                        row.toOne[relationship.name] = object
                    } else if inverse == nil || inverse?.isToMany == true {
                        // A many-to-many is set from both sides alike: object i of each holds object i of the other.
                        row.toMany[relationship.name] = [object]
                    }
                }
                rows.append(row)
            }
        }
        return rows
    }

    // MARK: - Non public

    /// A value of the attribute's type for the object of key `number` (unique across the
    /// model, so that uniqueness constraints hold), within the attribute's bounds.
    private static func value(for attribute: AttributeDescription, number: Int64, entity: String) -> AttributeValue? {
        switch attribute.type {
        case .integer16, .integer32, .integer64:
            var value = number
            if case .integer(let minimum)? = attribute.minimum { value = max(value, minimum) }
            if case .integer(let maximum)? = attribute.maximum { value = min(value, maximum) }
            return .integer(value)
        case .double, .float:
            var value = Double(number) + 0.5
            if case .double(let minimum)? = attribute.minimum { value = max(value, minimum) }
            if case .double(let maximum)? = attribute.maximum { value = min(value, maximum) }
            return .double(value)
        case .decimal:
            return .decimal(Decimal(number) + Decimal(sign: .plus, exponent: -2, significand: 25))
        case .string:
            var text = "\(entity).\(attribute.name) \(number)"
            if case .integer(let maximum)? = attribute.maximum, maximum >= 0, text.count > Int(maximum) {
                text = String(text.prefix(Int(maximum)))
            }
            if attribute.regularExpression != nil { return attribute.defaultValue }
            return .string(text)
        case .boolean:
            return .bool(number % 2 == 0)
        case .date:
            return .date(Date(timeIntervalSinceReferenceDate: Double(number) * 86_400 + 0.5))
        case .binary:
            return .data(Data("\(entity).\(attribute.name) \(number)".utf8))
        case .uuid:
            return .uuid(UUID(uuidString: String(format: "00000000-0000-4000-8000-%012d", number)) ?? UUID())
        case .uri:
            return URL(string: "https://example.com/\(entity)/\(number)").map { .uri($0) }
        case .transformable, .objectID, .composite, .undefined:
            return attribute.isOptional ? nil : attribute.defaultValue
        }
    }
}
