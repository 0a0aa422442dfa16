package import TernCore

/// Works out tables, columns and indexes, entity by entity, with Core Data's names: for a new
/// store the names Core Data gives, for an existing store the store's own columns, Core Data's
/// names expected and their variants accepted (`docs/SQLiteStore.md`, "Names").
package struct LayoutBuilder {
    /// A property declared by an entity.
    package struct PropertyKey: Hashable {
        var entity: String
        var property: String

        /// `Entity.property`, for messages.
        var description: String { "\(entity).\(property)" }
    }

    /// A to-many relationship without an inverse, kept as a foreign key in its destination's table.
    package struct ForeignKeyPlan {
        /// The relationship, by the entity that declares it.
        var key: PropertyKey
        /// The destination entity.
        var destination: String
        /// The column's name before any suffix: `Z<n><NAME>`.
        var base: String
        /// Whether the relationship is ordered.
        var isOrdered: Bool
    }

    package let model: ManagedObjectModel
    package let numbers: [String: StoreSchema.EntityNumber]
    /// For an existing store, each table's columns; nil for a new store.
    package let actualColumns: [String: Set<String>]?
    package var tables: [String: TableLayout] = [:]
    package var joinTables: [String: JoinTableLayout] = [:]
    /// The column of each stored attribute and to-one relationship, by declaring entity.
    package var columns: [PropertyKey: String] = [:]
    /// The `Z<n>_` entity column of to-one relationships whose destination has subentities.
    package var entityColumns: [PropertyKey: String] = [:]
    /// The `Z_FOK_` order column of to-one relationships whose inverse is an ordered to-many.
    package var orderColumns: [PropertyKey: String] = [:]
    /// Where to-many relationships without a to-one inverse live, by declaring entity.
    package var storages: [PropertyKey: ToManyMapping.Storage] = [:]
    /// The foreign keys of to-many relationships without an inverse, by destination root table.
    package var foreignKeyPlans: [String: [ForeignKeyPlan]] = [:]

    package init(
        model: ManagedObjectModel, numbers: [String: StoreSchema.EntityNumber], actualColumns: [String: Set<String>]?
    ) {
        self.model = model
        self.numbers = numbers
        self.actualColumns = actualColumns
    }

    package static let advice = "the model does not match the store, migrate it first."

    package func number(of entity: String) throws(TernError) -> Int {
        guard let number = numbers[entity]?.number else {
            throw TernError(
                .schemaMismatch,
                "Z_PRIMARYKEY has no row for entity \(SQL.quoted(entity)); the model does not match the store.")
        }
        return number
    }

    package func checkNames() throws(TernError) {
        for entity in model.entities {
            let names =
                [entity.name] + entity.attributes.map(\.name) + entity.relationships.map(\.name)
                + entity.fetchIndexes.map(\.name)
            for name in names where name.isEmpty || name.utf8.contains(0) {
                throw TernError(
                    .schemaMismatch,
                    "Entity \(SQL.quoted(entity.name)) uses a name that is empty or holds a NUL "
                        + "character, which SQLite cannot use; rename it.")
            }
        }
    }

    /// The table of an entity: its inheritance root's (`Z` + uppercased root name).
    package func table(of entity: String) -> String {
        "Z" + (model.rootEntity(of: entity)?.name ?? entity).uppercased()
    }

    /// The inverse of a relationship, if the model has it.
    package func inverse(of relationship: RelationshipDescription) -> RelationshipDescription? {
        relationship.inverseName.flatMap { model.relationship(named: $0, inEntity: relationship.destinationEntityName) }
    }

    /// The entity that declares a property an entity has (itself or an ancestor).
    package func declaringEntity(of property: String, in entityName: String) -> String {
        let chain = [entityName] + model.ancestors(of: entityName).map(\.name)
        return chain.first { name in
            guard let entity = model.entity(named: name) else { return false }
            return entity.attribute(named: property) != nil || entity.relationship(named: property) != nil
        } ?? entityName
    }

    /// A name and the same name with numeric suffixes, as Core Data tells clashing names apart.
    ///
    /// - Complexity: O(*count*).
    package static func suffixed(_ base: String, upTo count: Int) -> [String] {
        [base] + (0..<max(count, 1)).map { base + String($0 + 1) }
    }

    /// The first name not used yet (`base`, then `base1`, `base2`…), which it marks used.
    package static func unique(_ base: String, in used: inout Set<String>) -> String {
        var name = base
        var suffix = 0
        while used.contains(name) {
            suffix += 1
            name = base + String(suffix)
        }
        used.insert(name)
        return name
    }

    // MARK: - Entities

    package mutating func entityLayout(_ entity: EntityDescription) throws(TernError) -> EntityLayout {
        let root = model.rootEntity(of: entity.name) ?? entity
        let number = try number(of: entity.name)
        var hierarchyNumbers = [number]
        for subentity in model.allSubentities(of: entity.name) {
            hierarchyNumbers.append(try self.number(of: subentity.name))
        }
        var attributes: [AttributeColumn] = []
        for attribute in model.allAttributes(of: entity.name) where Self.isStored(attribute) {
            let key = PropertyKey(
                entity: declaringEntity(of: attribute.name, in: entity.name), property: attribute.name)
            guard let column = columns[key] else { continue }
            attributes.append(
                AttributeColumn(
                    name: attribute.name, type: attribute.type, column: column,
                    allowsExternalStorage: attribute.allowsExternalBinaryDataStorage,
                    derivation: attribute.derivationExpression))
        }
        var toOnes: [ToOneColumn] = []
        var toManys: [ToManyMapping] = []
        for relationship in model.allRelationships(of: entity.name) where !relationship.isTransient {
            let declaring = declaringEntity(of: relationship.name, in: entity.name)
            let key = PropertyKey(entity: declaring, property: relationship.name)
            if !relationship.isToMany {
                guard let column = columns[key] else { continue }
                toOnes.append(
                    ToOneColumn(
                        name: relationship.name, destination: relationship.destinationEntityName, column: column,
                        entityColumn: entityColumns[key], orderColumn: orderColumns[key]))
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

    package func toManyMapping(
        _ relationship: RelationshipDescription, declaredBy declaring: String
    ) throws(TernError) -> ToManyMapping {
        let destination = relationship.destinationEntityName
        let key = PropertyKey(entity: declaring, property: relationship.name)
        let storage: ToManyMapping.Storage
        if let inverse = inverse(of: relationship), !inverse.isToMany {
            let inverseKey = PropertyKey(
                entity: declaringEntity(of: inverse.name, in: destination), property: inverse.name)
            guard let column = columns[inverseKey] else {
                throw TernError(.schemaMismatch, "The inverse of \(key.description) has no column.")
            }
            storage = .inverseForeignKey(
                table: table(of: destination), column: column,
                orderColumn: relationship.isOrdered ? orderColumns[inverseKey] : nil)
        } else if let planned = storages[key] {
            storage = planned
        } else {
            throw TernError(.schemaMismatch, "\(key.description) has no table or column in the store; " + Self.advice)
        }
        return ToManyMapping(
            name: relationship.name, destination: destination, isOrdered: relationship.isOrdered, storage: storage)
    }

    package static func isStored(_ attribute: AttributeDescription) -> Bool {
        !attribute.isTransient && attribute.type != .undefined && attribute.type != .composite
    }
}
