public import TernCore

/// How the entity mappings of a mapping model are ordered when it runs.
///
/// ```swift
/// var pass = MappingModel(name: "School", source: v1, destination: v2, entityMappings: shuffled)
/// pass.order = .dependencies
/// let ordering = pass.ordering(in: v2)   // Person, Student, Course, Class, Registration
/// ```
public enum MappingOrder: String, Sendable, Hashable, CaseIterable, Codable {
    /// The entity mappings run in the order they are listed, as Core Data runs them.
    case given
    /// An entity mapping runs after the mappings whose destination entity its own destination
    /// entity points to through a to-one relationship, or inherits from; ties keep the listed order.
    case dependencies
}

/// The order in which the entity mappings of a mapping model run, and the cycles that forced the
/// listed order.
public struct MappingOrdering: Sendable, Hashable {
    /// The entity mappings, in the order they run.
    public var entityMappings: [EntityMapping]
    /// The names of the mappings of each dependency cycle, in listed order; such mappings run in
    /// the listed order among themselves.
    public var cycles: [[String]]

    /// The ordering as plan changes: one per cycle, saying its mappings run in the listed order.
    ///
    /// - Parameter pass: The mapping model ordered.
    /// - Returns: One ``ModelChange`` per cycle, for the first mapping's destination entity.
    public func changes(pass: MappingModel) -> [ModelChange] {
        cycles.map { names in
            let entity = names.first.flatMap { pass.entityMapping(named: $0)?.destinationEntityName } ?? ""
            return ModelChange(
                .entityMapping, entity: entity,
                "pass \(pass.name): dependency cycle among \(names.joined(separator: ", ")); they run in the given order"
            )
        }
    }
}

extension MappingModel {
    // MARK: - Ordering

    /// The entity mappings in the order they run under ``order``.
    ///
    /// With ``MappingOrder/dependencies`` this is a stable topological sort: mapping *A* runs after
    /// mapping *B* when *A*'s destination entity (or one of its ancestors) has a to-one
    /// relationship to *B*'s destination entity, or inherits from it. Among mappings that are
    /// ready, the one listed first runs first. When only mappings in cycles are left, the one
    /// listed first runs, and its cycle is reported.
    ///
    /// - Parameter destination: The destination model.
    /// - Returns: The mappings in running order, and the cycles found.
    /// - Complexity: O(*m*² + *m* · *r*) for *m* mappings whose entities have *r* relationships.
    public func ordering(in destination: ManagedObjectModel) -> MappingOrdering {
        guard order == .dependencies else { return MappingOrdering(entityMappings: entityMappings, cycles: []) }
        let prerequisites = entityMappings.indices.map {
            Self.prerequisites(of: $0, among: entityMappings, in: destination)
        }
        var done = Set<Int>()
        var result: [Int] = []
        var cycles: [[Int]] = []
        while result.count < entityMappings.count {
            let waiting = entityMappings.indices.filter { !done.contains($0) }
            var next = waiting[0]
            if let ready = waiting.first(where: { prerequisites[$0].isSubset(of: done) }) {
                next = ready
            } else {
                let found =
                    waiting.lazy.map { Self.cycle(through: $0, prerequisites: prerequisites, done: done) }
                    .first { !$0.isEmpty } ?? [next]
                next = found[0]
                if !cycles.contains(found) { cycles.append(found) }
            }
            done.insert(next)
            result.append(next)
        }
        return MappingOrdering(
            entityMappings: result.map { entityMappings[$0] },
            cycles: cycles.map { $0.map { entityMappings[$0].name } })
    }

    // MARK: - Non public

    /// The indexes of the mappings a mapping must run after.
    private static func prerequisites(of index: Int, among mappings: [EntityMapping], in model: ManagedObjectModel)
        -> Set<Int>
    {
        guard let entity = mappings[index].destinationEntityName else { return [] }
        var targets = Set(model.allRelationships(of: entity).filter { !$0.isToMany }.map(\.destinationEntityName))
        targets.formUnion(model.ancestors(of: entity).map(\.name))
        targets.remove(entity)
        return Set(
            mappings.indices.filter { other in
                mappings[other].destinationEntityName.map(targets.contains) ?? false
            })
    }

    /// The waiting mappings on a cycle through a mapping, in listed order; empty when it is on none.
    private static func cycle(through start: Int, prerequisites: [Set<Int>], done: Set<Int>) -> [Int] {
        func reachable(from origin: Int) -> Set<Int> {
            var seen = Set<Int>()
            var stack = [origin]
            while let node = stack.popLast() {
                for next in prerequisites[node] where !done.contains(next) && seen.insert(next).inserted {
                    stack.append(next)
                }
            }
            return seen
        }
        let forward = reachable(from: start)
        guard forward.contains(start) else { return [] }
        return forward.filter { reachable(from: $0).contains(start) }.sorted()
    }
}
