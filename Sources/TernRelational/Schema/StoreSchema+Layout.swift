package import TernCore

extension StoreSchema {
    /// An entity's number and its parent's, as `Z_PRIMARYKEY` records them.
    package struct EntityNumber: Sendable, Hashable {
        /// `Z_ENT`.
        package var number: Int
        /// `Z_SUPER`: the parent's number, 0 for a root.
        package var superNumber: Int

        /// Creates an entity's numbers.
        package init(number: Int, superNumber: Int) {
            self.number = number
            self.superNumber = superNumber
        }
    }

    /// Entity numbers as Core Data assigns them to a new store: depth first, each entity before
    /// its subentities, roots and siblings sorted by name, starting at 1.
    ///
    /// - Parameter model: The model.
    /// - Returns: Each entity's number and its parent's.
    /// - Complexity: O(*n*²) in the number of entities.
    package static func assignedNumbers(for model: ManagedObjectModel) -> [String: EntityNumber] {
        var numbers: [String: EntityNumber] = [:]
        var next = 1
        for root in model.entities where model.parent(of: root.name) == nil {
            for entity in [root] + model.allSubentities(of: root.name) where numbers[entity.name] == nil {
                let parent = model.parent(of: entity.name).flatMap { numbers[$0.name]?.number } ?? 0
                numbers[entity.name] = EntityNumber(number: next, superNumber: parent)
                next += 1
            }
        }
        return numbers
    }

    /// Maps a model onto tables.
    ///
    /// - Parameters:
    ///   - model: The model.
    ///   - numbers: Each entity's number: read from `Z_PRIMARYKEY`, or ``assignedNumbers(for:)``.
    ///   - otherNames: Names of numbered entities the model lacks (history entities…).
    ///   - actualColumns: For an existing store, each table's columns: each property is mapped
    ///     onto them, Core Data's names expected and its variants accepted (see
    ///     `docs/SQLiteStore.md`, "Names"). Nil for a new store, which gets Core Data's names.
    /// - Throws: ``TernError`` with code `schemaMismatch` when an entity has no number, a
    ///   property has no column (the message names it and what was looked for) or a name cannot
    ///   be used in SQL.
    /// - Complexity: O(*n* · *p*) in the number of entities and properties.
    package init(
        model: ManagedObjectModel, numbers: [String: EntityNumber], otherNames: [Int: String] = [:],
        actualColumns: [String: Set<String>]? = nil
    ) throws(TernError) {
        self.model = model
        var builder = LayoutBuilder(model: model, numbers: numbers, actualColumns: actualColumns)
        try builder.checkNames()
        try builder.planForeignKeysOfToManyWithoutInverse()
        for root in model.entities where model.parent(of: root.name) == nil {
            try builder.addTable(root: root)
        }
        try builder.addJoinTables()
        var entities: [String: EntityLayout] = [:]
        for entity in model.entities {
            entities[entity.name] = try builder.entityLayout(entity)
        }
        self.entities = entities
        self.tables = builder.tables
        self.joinTables = builder.joinTables
        var names = otherNames
        for (name, number) in numbers { names[number.number] = name }
        self.entityNames = names
        if let actualColumns { try verify(against: actualColumns) }
    }

    /// Checks that every table and column the layout needs exists.
    private func verify(against actualColumns: [String: Set<String>]) throws(TernError) {
        let needed =
            tables.values.map { ($0.name, $0.columns.map(\.name), "entity \($0.rootEntity) and its subentities") }
            + joinTables.values.map { ($0.name, $0.columns + $0.orderColumns, "a many-to-many relationship") }
        for (table, columns, owner) in needed.sorted(by: { $0.0 < $1.0 }) {
            let advice = "the model does not match the store, migrate it first."
            guard let existing = actualColumns[table] else {
                throw TernError(.schemaMismatch, "The store has no table \(table) for \(owner); " + advice)
            }
            for column in columns where !existing.contains(column) {
                throw TernError(.schemaMismatch, "Table \(table) has no column \(column) for \(owner); " + advice)
            }
        }
    }
}
