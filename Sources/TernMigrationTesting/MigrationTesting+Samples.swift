import Foundation
public import TernCore

extension MigrationTesting {
    // MARK: - Sample objects

    /// Valid sample objects for every concrete entity of a model version: `count` objects each,
    /// with a value for every required attribute (and for two optional ones in three), links for
    /// every required relationship (and most optional ones), both sides of each inverse pair kept
    /// consistent, to-many counts within their bounds, and keys numbered per inheritance root.
    ///
    /// Values are deterministic and distinct per object (so uniqueness constraints hold), within
    /// each attribute's minimum and maximum and length bounds. An attribute with a pattern takes
    /// its default value; a required one without a default cannot be sampled.
    ///
    /// ```swift
    /// let objects = try MigrationTesting.sampleObjects(for: recipes.version(named: "v1")!.model, count: 5)
    /// ```
    ///
    /// - Parameters:
    ///   - model: The model version.
    ///   - count: How many objects of each concrete entity.
    /// - Returns: The objects, as rows to save into a store.
    /// - Throws: ``MigrationTestError`` with code ``MigrationTestError/Code/cannotSample`` for a
    ///   required attribute with a pattern and no default.
    /// - Complexity: O(*e* · *n* · *p*) for *e* entities of *n* objects and *p* properties.
    public static func sampleObjects(for model: ManagedObjectModel, count: Int) throws(MigrationTestError) -> [StoreRow]
    {
        var builder = SampleBuilder(model: model, count: max(0, count))
        try builder.build()
        return builder.orderedRows
    }
}

/// Builds the sample objects of one model.
private struct SampleBuilder {
    let model: ManagedObjectModel
    let count: Int
    /// The rows by entity, in key order.
    var rows: [String: [StoreRow]] = [:]
    /// The concrete entities, in model order.
    var concrete: [EntityDescription] { model.entities.filter { !$0.isAbstract } }

    init(model: ManagedObjectModel, count: Int) {
        self.model = model
        self.count = count
    }

    var orderedRows: [StoreRow] { concrete.flatMap { rows[$0.name] ?? [] } }

    mutating func build() throws(MigrationTestError) {
        var nextKey: [String: Int64] = [:]
        for entity in concrete {
            let root = model.rootEntity(of: entity.name)?.name ?? entity.name
            var list: [StoreRow] = []
            for index in 0..<count {
                let key = (nextKey[root] ?? 0) + 1
                nextKey[root] = key
                var row = StoreRow(reference: RowReference(entityName: entity.name, primaryKey: key))
                for attribute in model.allAttributes(of: entity.name)
                where !attribute.isTransient && !attribute.isDerived {
                    if let value = try Self.value(of: attribute, entity: entity.name, index: index, key: key) {
                        row.attributes[attribute.name] = value
                    }
                }
                list.append(row)
            }
            rows[entity.name] = list
        }
        for entity in concrete {
            for relationship in model.allRelationships(of: entity.name) where !relationship.isTransient {
                link(entity.name, relationship)
            }
        }
    }

    // MARK: - Attributes

    /// The sample value of an attribute for the object at an index, made from its key (unique in
    /// its inheritance root, so that constraints an abstract parent declares hold too); nil to
    /// leave it empty.
    static func value(of attribute: AttributeDescription, entity: String, index: Int, key: Int64)
        throws(MigrationTestError)
        -> AttributeValue?
    {
        if attribute.isOptional, index % 3 == 2 { return nil }
        if attribute.regularExpression != nil {
            if let value = attribute.defaultValue { return value }
            if attribute.isOptional { return nil }
            throw MigrationTestError(
                .cannotSample,
                "\(entity).\(attribute.name) is required and must match a pattern, but has no default value to follow; "
                    + "give it a default value or make the objects yourself",
                entity: entity, property: attribute.name)
        }
        let number = key
        switch attribute.type {
        case .integer16, .integer32, .integer64:
            return .integer(clamp(number, attribute))
        case .double, .float:
            return .double(Double(clamp(number, attribute)) + (attribute.maximum == nil ? 0.25 : 0))
        case .decimal:
            return .decimal(Decimal(clamp(number, attribute)))
        case .boolean:
            return .bool(index % 2 == 0)
        case .date:
            return .date(Date(timeIntervalSinceReferenceDate: 700_000_000 + Double(number) * 3_600.5))
        case .string:
            return .string(text("\(entity) \(attribute.name) \(number)", attribute))
        case .binary, .transformable:
            return .data(Data("\(entity).\(attribute.name).\(number)".utf8))
        case .uuid:
            return .uuid(UUID(uuid: uuidBytes(Int(number))))
        case .uri:
            return .uri(
                URL(string: "https://example.com/\(entity.lowercased())/\(number)") ?? URL(fileURLWithPath: "/"))
        default:
            return attribute.defaultValue
        }
    }

    /// A number within an attribute's minimum and maximum.
    static func clamp(_ number: Int64, _ attribute: AttributeDescription) -> Int64 {
        var value = number
        if case .integer(let minimum)? = attribute.minimum { value = max(value, minimum) }
        if case .double(let minimum)? = attribute.minimum { value = max(value, Int64(minimum.rounded(.up))) }
        if case .integer(let maximum)? = attribute.maximum { value = min(value, maximum) }
        if case .double(let maximum)? = attribute.maximum { value = min(value, Int64(maximum.rounded(.down))) }
        return value
    }

    /// A text within an attribute's length bounds (its minimum and maximum are lengths).
    static func text(_ base: String, _ attribute: AttributeDescription) -> String {
        var text = base
        if case .integer(let minimum)? = attribute.minimum, text.utf16.count < minimum {
            text += String(repeating: "x", count: Int(minimum) - text.utf16.count)
        }
        if case .integer(let maximum)? = attribute.maximum, maximum >= 0, text.utf16.count > maximum {
            // Keep the distinct end (the object's number).
            text = String(text.suffix(Int(maximum)))
        }
        return text
    }

    /// Sixteen bytes that differ per object.
    static func uuidBytes(_ number: Int) -> uuid_t {
        let value = UInt64(number)
        return (
            0x7E, 0x27, 0x4E, 0x00, 0x00, 0x00, 0x40, 0x00, 0x80, 0x00, UInt8(value >> 40 & 0xFF),
            UInt8(value >> 32 & 0xFF),
            UInt8(value >> 24 & 0xFF), UInt8(value >> 16 & 0xFF), UInt8(value >> 8 & 0xFF), UInt8(value & 0xFF)
        )
    }

    // MARK: - Relationships

    /// Links the objects of an entity through a relationship, and its inverse to match. Each pair
    /// of inverse relationships is linked once: from the to-one side (each of its objects takes
    /// one link, round robin), between sides of the same kind from the required one, then from
    /// the one whose name sorts first.
    mutating func link(_ entity: String, _ relationship: RelationshipDescription) {
        let targets =
            ([model.entity(named: relationship.destinationEntityName)].compactMap { $0 }
            + model.allSubentities(of: relationship.destinationEntityName)).filter { !$0.isAbstract }.map(\.name)
        let inverse = relationship.inverseName.flatMap {
            model.relationship(named: $0, inEntity: relationship.destinationEntityName)
        }
        if let inverse {
            let mine = entity + "." + relationship.name
            let theirs = relationship.destinationEntityName + "." + inverse.name
            // The to-one side leads; between two sides of the same kind, the required one, then
            // the first name.
            if relationship.isToMany && !inverse.isToMany { return }
            if relationship.isToMany == inverse.isToMany {
                if inverse.isRequired && !relationship.isRequired { return }
                if inverse.isRequired == relationship.isRequired, theirs < mine { return }
            }
        }
        let pool = targets.flatMap { rows[$0] ?? [] }.map(\.reference)
        guard !pool.isEmpty, let total = rows[entity]?.count else { return }
        for index in 0..<total {
            let linked: [RowReference]
            if relationship.isToMany {
                let wanted = max(relationship.minCount, relationship.isRequired || index % 3 != 2 ? 1 : 0)
                let allowed = relationship.maxCount > 0 ? min(wanted, relationship.maxCount) : wanted
                linked = (0..<min(allowed, pool.count)).map { pool[(index + $0) % pool.count] }
            } else {
                // Every object links when its inverse to-many needs objects (round robin then gives each one).
                let needed =
                    relationship.isRequired
                    || (inverse.map { $0.isToMany && ($0.isRequired || $0.minCount > 0) } ?? false)
                linked = needed || index % 3 != 2 ? [pool[index % pool.count]] : []
            }
            guard !linked.isEmpty, let source = rows[entity]?[index].reference else { continue }
            if relationship.isToMany {
                rows[entity]?[index].toMany[relationship.name] = linked
            } else {
                rows[entity]?[index].toOne[relationship.name] = linked[0]
            }
            if let inverse { setInverse(inverse, of: linked, to: source) }
        }
    }

    /// Records the inverse links to a source object on its destination objects.
    private mutating func setInverse(
        _ inverse: RelationshipDescription, of objects: [RowReference], to source: RowReference
    ) {
        for object in objects {
            guard var list = rows[object.entityName], let position = list.firstIndex(where: { $0.reference == object })
            else {
                continue
            }
            if inverse.isToMany {
                list[position].toMany[inverse.name, default: []].append(source)
            } else {
                list[position].toOne[inverse.name] = source
            }
            rows[object.entityName] = list
        }
    }
}
