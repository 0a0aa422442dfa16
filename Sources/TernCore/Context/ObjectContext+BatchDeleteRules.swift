/// Delete rules for batch deletes, applied to rows rather than objects.
extension ObjectContext {
    // MARK: - Non public

    /// The change set that deletes `rows` with their relationships' delete rules applied:
    /// cascaded rows deleted too, nullified inverses updated, deny rules checked.
    ///
    /// - Returns: The change set, and the changed relationship names of each updated row.
    /// - Throws: ``TernError/Code/validationFailed`` listing every deny rule that refuses.
    func deleteRules(
        deleting rows: [StoreRow], in store: any PersistentStore
    ) async throws -> (StoreChangeSet, [ObjectID: Set<String>]) {
        var deleted = Dictionary(rows.map { ($0.reference, $0) }) { first, _ in first }
        // Cascades, level by level, until no new row is reached.
        var frontier = rows
        while !frontier.isEmpty {
            var reached: Set<RowReference> = []
            for row in frontier {
                for relationship in storedRelationships(of: row) where relationship.deleteRule == .cascade {
                    reached.formUnion(destinations(of: row, through: relationship).filter { deleted[$0] == nil })
                }
            }
            frontier = try await store.rows(for: reached.sorted())
            for row in frontier { deleted[row.reference] = row }
        }
        var denials: [TernError] = []
        var inverses: [RowReference: [(inverse: String, deleted: RowReference)]] = [:]
        for row in deleted.values.sorted(by: { $0.reference < $1.reference }) {
            for relationship in storedRelationships(of: row).sorted(by: { $0.name < $1.name }) {
                let survivors = destinations(of: row, through: relationship).filter { deleted[$0] == nil }
                guard !survivors.isEmpty else { continue }
                switch relationship.deleteRule {
                case .deny:
                    denials.append(
                        TernError(
                            .validationFailed,
                            "\(row.reference.entityName).\(relationship.name) of \(row.reference) denies the deletion while it holds "
                                + "\(survivors.count) object(s)",
                            objectID: store.objectID(row.reference), property: relationship.name))
                case .nullify:
                    guard let inverse = relationship.inverseName else { continue }
                    for survivor in survivors { inverses[survivor, default: []].append((inverse, row.reference)) }
                case .cascade, .noAction:
                    break
                }
            }
        }
        if !denials.isEmpty {
            throw TernError(
                .validationFailed,
                "\(denials.count) deny rule(s) refuse the batch delete; delete or unlink the objects they hold first",
                objectID: nil, failures: denials)
        }
        var updated: [StoreRow] = []
        var changedKeys: [ObjectID: Set<String>] = [:]
        for var row in try await store.rows(for: inverses.keys.sorted()) {
            for (inverse, reference) in inverses[row.reference] ?? [] {
                if row.toOne[inverse] == reference { row.toOne[inverse] = nil }
                row.toMany[inverse]?.removeAll { $0 == reference }
                changedKeys[store.objectID(row.reference), default: []].insert(inverse)
            }
            updated.append(row)
        }
        return (StoreChangeSet(updated: updated, deleted: deleted.mapValues(\.version)), changedKeys)
    }

    private func storedRelationships(of row: StoreRow) -> [RelationshipDescription] {
        graph.schema(for: row.reference.entityName).relationships.values.filter { !$0.isTransient }
    }

    private func destinations(of row: StoreRow, through relationship: RelationshipDescription) -> [RowReference] {
        relationship.isToMany ? row.toMany[relationship.name] ?? [] : row.toOne[relationship.name].map { [$0] } ?? []
    }
}
