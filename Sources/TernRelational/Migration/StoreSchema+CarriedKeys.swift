package import TernMigration

extension StoreSchema {
    /// The largest key each destination root table's source roots ever gave, for a step from
    /// this layout that keeps keys: the `Z_MAX` each table must keep at least.
    ///
    /// - Parameters:
    ///   - passes: The step's mapping models.
    ///   - largestKeys: This layout's `Z_MAX` by entity number.
    ///   - destination: The destination layout.
    /// - Returns: The smallest `Z_MAX` of each destination root table, by table name.
    /// - Complexity: O(*m*) in the number of entity mappings.
    package func carriedKeys(
        of passes: [MappingModel], largestKeys: [Int: Int64], into destination: StoreSchema
    ) -> [String: Int64] {
        var carried: [String: Int64] = [:]
        for mapping in passes.flatMap(\.entityMappings) where mapping.kind == .copy || mapping.kind == .transform {
            guard let from = mapping.sourceEntityName, let to = mapping.destinationEntityName,
                let root = entities[from]?.rootName, let rootNumber = entities[root]?.number,
                let table = destination.entities[to]?.table
            else { continue }
            carried[table] = max(carried[table] ?? 0, largestKeys[rootNumber] ?? 0)
        }
        return carried
    }
}
