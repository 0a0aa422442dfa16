package import TernCore

extension StoreSchema {
    /// A row of `Z_PRIMARYKEY`, as an existing store (of any engine) records it.
    package struct PrimaryKeyRow: Sendable, Hashable {
        /// `Z_ENT`.
        package var number: Int
        /// `Z_NAME`.
        package var name: String
        /// `Z_SUPER`.
        package var superNumber: Int

        /// Creates a row.
        package init(number: Int, name: String, superNumber: Int) {
            self.number = number
            self.name = name
            self.superNumber = superNumber
        }
    }

    /// Maps a model onto an existing store: each entity gets the number of its `Z_PRIMARYKEY`
    /// row (matched by name, else by the entity's renaming identifier), other rows are kept as
    /// names the model lacks, and every table and column the layout needs must exist.
    ///
    /// - Parameters:
    ///   - model: The model the store was written with.
    ///   - primaryKeyRows: The store's `Z_PRIMARYKEY` rows.
    ///   - actualColumns: Each table's columns.
    /// - Throws: ``TernError`` with code `schemaMismatch` when an entity has no row or a table
    ///   or column is missing.
    /// - Complexity: O(*n* · *r*) in the number of entities and rows.
    package init(
        model: ManagedObjectModel, primaryKeyRows rows: [PrimaryKeyRow], actualColumns: [String: Set<String>]
    ) throws(TernError) {
        var numbers: [String: EntityNumber] = [:]
        var claimed: Set<Int> = []
        for entity in model.entities {
            let match =
                rows.first { $0.name == entity.name }
                ?? entity.renamingIdentifier.flatMap { old in rows.first { $0.name == old } }
            guard let match else {
                throw TernError(
                    .schemaMismatch,
                    "Z_PRIMARYKEY has no row for entity \(SQL.quoted(entity.name)); the model does not match "
                        + "the store, migrate it first.")
            }
            numbers[entity.name] = EntityNumber(number: match.number, superNumber: match.superNumber)
            claimed.insert(match.number)
        }
        var others: [Int: String] = [:]
        for row in rows where !claimed.contains(row.number) { others[row.number] = row.name }
        try self.init(model: model, numbers: numbers, otherNames: others, actualColumns: actualColumns)
    }

    /// The relationship a derivation counts: `pages.@count` (Xcode) or `count:(pages)` (archives).
    package static func countedRelationship(_ expression: String?) -> String? {
        let text = expression?.filter { !$0.isWhitespace } ?? ""
        if text.hasSuffix(".@count") { return String(text.dropLast(".@count".count)) }
        if text.hasPrefix("count:("), text.hasSuffix(")") { return String(text.dropFirst("count:(".count).dropLast()) }
        return nil
    }
}
