import Foundation
import TernCore
import TernMigration
import TernStores

/// The objects of a store at one version, by entity (each without its subentities) and key.
struct Snapshot {
    /// The rows of each concrete entity, by primary key.
    var rows: [String: [Int64: StoreRow]] = [:]

    /// Reads every object of a store.
    ///
    /// - Throws: ``MigrationTestError`` for an unknown version, or the store's error.
    /// - Complexity: O(*n*) in the store's objects, all held in memory (stores made for tests).
    init(of url: URL, model: VersionedModel, version: String) async throws {
        let versionModel = try MigrationTesting.model(version, of: model)
        let store = try StoreFiles.open(at: url, model: versionModel, isReadOnly: true)
        for entity in versionModel.entities where !entity.isAbstract {
            var request = StoreFetchRequest(entityName: entity.name)
            request.includesSubentities = false
            var byKey: [Int64: StoreRow] = [:]
            for row in try await store.fetch(request) where row.reference.entityName == entity.name {
                byKey[row.reference.primaryKey] = row
            }
            rows[entity.name] = byKey
        }
    }

    /// The number of objects of exactly an entity.
    func count(of entity: String) -> Int { rows[entity]?.count ?? 0 }
}

/// What a plan says must become of a store's objects, and the check that it did.
struct Accounting {
    let plan: MigrationPlan
    let model: VersionedModel
    let source: String

    /// Checks the objects carried over, then the values an inferred step carries unchanged.
    ///
    /// - Throws: ``MigrationTestError`` with code `objectsLost` or `valueChanged`.
    func check(before: Snapshot, after: Snapshot) throws(MigrationTestError) {
        var counts: [String: Int?] = [:]
        for (entity, rows) in before.rows { counts[entity] = rows.count }
        for step in plan.steps where step.kind != .none {
            let mappings = step.mappings.flatMap(\.entityMappings)
            counts = Self.carry(counts, through: mappings)
            // A policy may create objects of any entity: the counts of the others are unknown.
            if mappings.contains(where: { $0.policyName != nil }), let to = model.version(named: step.to)?.model {
                for entity in to.entities where counts[entity.name] == nil { counts[entity.name] = .some(nil) }
            }
        }
        let route = plan.steps.map { "\($0.from) → \($0.to)" }.joined(separator: ", ")
        for (entity, expected) in counts.sorted(by: { $0.key < $1.key }) {
            guard let expected, expected != after.count(of: entity) else { continue }
            throw MigrationTestError(
                .objectsLost,
                "\(source) (\(route)): \(entity) should hold \(expected) object(s) carried over, but holds "
                    + "\(after.count(of: entity)); check the entity mappings into \(entity)",
                sourceVersion: source, step: route, entity: entity)
        }
        if plan.steps.count == 1, let step = plan.steps.first, step.kind == .inferred, let mapping = step.mappings.first
        {
            try checkValues(of: mapping, step: step, before: before, after: after)
        }
    }

    /// The counts of each destination entity after a step's entity mappings: the sum of the
    /// counts of the entities copied or transformed into it without a filter (an add mapping adds
    /// none, unless a policy runs in the step), or nil (unknown) when a custom or filtered mapping
    /// also feeds it, or a source count is unknown.
    static func carry(_ counts: [String: Int?], through mappings: [EntityMapping]) -> [String: Int?] {
        var next: [String: Int?] = [:]
        // A policy may create objects of any entity: then an add mapping's count is unknown too.
        let runsPolicies = mappings.contains { $0.policyName != nil }
        for mapping in mappings {
            guard let destination = mapping.destinationEntityName else { continue }
            if mapping.kind == .add, !runsPolicies {
                // An add mapping without a policy creates no object (as in Core Data).
                next[destination] = next[destination] ?? 0
                continue
            }
            let exact = (mapping.kind == .copy || mapping.kind == .transform) && mapping.sourceFilter == nil
            guard exact, let source = mapping.sourceEntityName, let count = counts[source] ?? 0,
                let current = next[destination] ?? 0
            else {
                next[destination] = .some(nil)
                continue
            }
            next[destination] = current + count
        }
        return next
    }

    /// Checks that every attribute an inferred step carries unchanged (`$source.name` of the same
    /// type) has the same value, object by object (inferred steps keep keys).
    private func checkValues(of mapping: MappingModel, step: MigrationPlan.Step, before: Snapshot, after: Snapshot)
        throws(MigrationTestError)
    {
        guard let from = model.version(named: step.from)?.model, let to = model.version(named: step.to)?.model else {
            return
        }
        for entityMapping in mapping.entityMappings
        where entityMapping.kind == .copy || entityMapping.kind == .transform {
            guard let sourceEntity = entityMapping.sourceEntityName, let entity = entityMapping.destinationEntityName,
                let sources = before.rows[sourceEntity], let results = after.rows[entity]
            else { continue }
            for item in entityMapping.effectiveAttributeMappings(in: to) {
                guard case .source(let path)? = item.valueExpression, path.count == 1,
                    let old = from.attribute(named: path[0], inEntity: sourceEntity),
                    let new = to.attribute(named: item.name, inEntity: entity), old.type == new.type, !new.isDerived
                else { continue }
                let changed = sources.filter { key, row in
                    guard let result = results[key] else { return false }
                    return row.attributes[path[0]] != result.attributes[item.name]
                }
                guard let (key, _) = changed.min(by: { $0.key < $1.key }) else { continue }
                throw MigrationTestError(
                    .valueChanged,
                    "\(source) (\(step.from) → \(step.to)): \(changed.count) \(entity) object(s) have another \(item.name) "
                        + "than \(sourceEntity).\(path[0]) had, the first with key \(key); the plan carries the value unchanged",
                    sourceVersion: source, step: "\(step.from) → \(step.to)", entity: entity, property: item.name)
            }
        }
    }
}
