package import TernCore

extension RowPlan {
    /// Fills in the to-many relationships of rows read with these plans: one read per
    /// relationship for each chunk of rows that have it, not one per row.
    ///
    /// - Parameters:
    ///   - rows: Rows of one root table, their to-many relationships not read yet.
    ///   - plans: The plan each row was read with, by position.
    ///   - chunkSize: The most source keys one read is given (a store's bound-parameter limit).
    ///   - references: Reads a relationship's destinations for some source keys, by source key;
    ///     a key without destinations is left out.
    /// - Throws: What `references` throws.
    /// - Complexity: One `references` call per relationship and chunk; O(*n*) otherwise.
    package static func loadToMany(
        of rows: inout [PackedRow], plans: [RowPlan], chunkSize: Int,
        references: (ToManyMapping, [Int64]) throws -> [Int64: [RowReference]]
    ) throws {
        var groups: [ToManyMapping: [Int]] = [:]
        for (index, plan) in plans.enumerated() {
            for relationship in plan.toMany { groups[relationship, default: []].append(index) }
        }
        for (relationship, indices) in groups {
            for start in stride(from: 0, to: indices.count, by: max(1, chunkSize)) {
                let chunk = indices[start..<min(start + max(1, chunkSize), indices.count)]
                let found = try references(relationship, chunk.map { rows[$0].reference.primaryKey })
                for index in chunk {
                    // An absent key is an empty relationship.
                    if let destinations = found[rows[index].reference.primaryKey] {
                        rows[index].toMany[relationship.name] = destinations
                    }
                }
            }
        }
    }
}
