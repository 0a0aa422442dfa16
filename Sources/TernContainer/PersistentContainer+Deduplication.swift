public import TernCore

/// Merging duplicates that a sync or an old bug left in a store.
extension PersistentContainer {
    // MARK: - Removing duplicates

    /// Merges each group of objects of an entity that share a uniqueness key into one object.
    ///
    /// Objects are walked in key order, a batch at a time, and only the IDs of duplicates are
    /// kept; then the groups are merged a batch at a time in a background context, each batch in
    /// one save. In each group the `keeping` policy picks the winner; each other object (a loser):
    /// - fills the winner's empty attributes with its values;
    /// - hands over its relationships: references (any delete rule but cascade: tags, an author,
    ///   objects pointing at it) are re-pointed to the winner; owned objects (cascade: ingredients,
    ///   steps) move to the winner only when the winner has none, else they are deleted with
    ///   the loser, as the duplicates they are;
    /// - is deleted.
    ///
    /// Objects whose key has an empty value are never grouped. Objects that are not reachable
    /// through an inverse relationship are not re-pointed: give every relationship an inverse.
    ///
    /// ```swift
    /// let report = try await container.removeDuplicates(of: "Recipe", uniqueBy: ["uid"], keeping: .oldest)
    /// print(report.groupCount, report.removedCount)
    /// ```
    ///
    /// - Parameters:
    ///   - entityName: The entity (its subentities are included).
    ///   - key: The attributes that identify an object, such as the entity's uniqueness constraint.
    ///   - winner: Which object of a group survives.
    ///   - batchSize: How many objects are read, and how many groups merged, at a time.
    /// - Returns: How many groups were merged, objects removed and relationships re-pointed.
    /// - Throws: Store errors; the batches saved before the error stay merged.
    /// - Complexity: O(*n*) in the number of objects; memory proportional to the batch size plus
    ///   the number of duplicates.
    @concurrent
    public func removeDuplicates(
        of entityName: String, uniqueBy key: [String], keeping winner: DuplicateWinner = .oldest, batchSize: Int = 500
    ) async throws -> DeduplicationReport {
        precondition(!key.isEmpty, "a uniqueness key names at least one attribute")
        precondition(batchSize > 0, "a batch holds at least one object")
        let context = newBackgroundContext()
        let groups = try await context.perform { context in
            var request = FetchRequest(entityName: entityName, sortDescriptors: key.map { FetchSort(key: $0) })
            request.fetchBatchSize = batchSize
            var groups: [[ObjectID]] = []
            var current: (key: [AttributeValue], ids: [ObjectID])?
            try await context.forEachBatch(of: request) { objects in
                for object in objects {
                    let values = key.compactMap { object[attribute: $0] }
                    guard values.count == key.count else { continue }
                    if current?.key == values {
                        current?.ids.append(object.objectID)
                    } else {
                        if let done = current, done.ids.count > 1 { groups.append(done.ids) }
                        current = (values, [object.objectID])
                    }
                }
            }
            if let done = current, done.ids.count > 1 { groups.append(done.ids) }
            return groups
        }
        var report = DeduplicationReport()
        for start in stride(from: 0, to: groups.count, by: batchSize) {
            let batch = Array(groups[start..<min(start + batchSize, groups.count)])
            let merged = try await context.perform { context in
                var merged = DeduplicationReport()
                for group in batch { try await Self.merge(group, keeping: winner, into: &merged, in: context) }
                try await context.save()
                context.reset()
                return merged
            }
            report.groupCount += merged.groupCount
            report.removedCount += merged.removedCount
            report.repointedCount += merged.repointedCount
        }
        return report
    }

    // MARK: - Non public

    /// Merges one group of duplicates into its winner and deletes the others.
    private static func merge(
        _ ids: [ObjectID], keeping policy: DuplicateWinner, into report: inout DeduplicationReport,
        in context: isolated ObjectContext
    ) async throws {
        var objects: [ManagedObject] = []
        for id in ids.sorted(by: { ($0.primaryKey ?? .max) < ($1.primaryKey ?? .max) }) {
            objects.append(try await context.object(with: id))
        }
        let model = context.coordinator.model
        let candidates = objects.map { object in
            DuplicateCandidate(
                objectID: object.objectID,
                values: Dictionary(
                    model.allAttributes(of: object.entity.name).compactMap { attribute in
                        object[attribute: attribute.name].map { (attribute.name, $0) }
                    }, uniquingKeysWith: { first, _ in first }))
        }
        let chosen = policy.choose(candidates)
        guard let winner = objects.first(where: { $0.objectID == chosen }) else {
            preconditionFailure("the winner policy must pick one of the candidates' objectIDs")
        }
        for loser in objects where loser !== winner {
            for attribute in model.allAttributes(of: loser.entity.name)
            where !attribute.isTransient && winner[attribute: attribute.name] == nil {
                if let value = loser[attribute: attribute.name] { winner[attribute: attribute.name] = value }
            }
            for relationship in model.allRelationships(of: loser.entity.name) where !relationship.isTransient {
                report.repointedCount += hand(relationship, from: loser, to: winner)
            }
            context.delete(loser)
            report.removedCount += 1
        }
        report.groupCount += 1
    }

    /// Moves a loser's destinations of one relationship to the winner; returns how many moved.
    private static func hand(
        _ relationship: RelationshipDescription, from loser: ManagedObject, to winner: ManagedObject
    ) -> Int {
        let name = relationship.name
        let owned = relationship.deleteRule == .cascade
        if relationship.isToMany {
            let destinations = loser.objects(for: name)
            if destinations.isEmpty || (owned && !winner.objects(for: name).isEmpty) { return 0 }
            for destination in destinations {
                loser.remove(destination, from: name)
                winner.add(destination, to: name)
            }
            return destinations.count
        }
        guard let destination = loser[toOne: name], winner[toOne: name] == nil else { return 0 }
        loser[toOne: name] = nil
        winner[toOne: name] = destination
        return 1
    }
}

/// Which object of a group of duplicates survives ``PersistentContainer/removeDuplicates(of:uniqueBy:keeping:batchSize:)``.
///
/// ```swift
/// let keepLongest = DuplicateWinner.custom { candidates in
///     candidates.max { ($0.values["notes"]?.description.count ?? 0) < ($1.values["notes"]?.description.count ?? 0) }!.objectID
/// }
/// ```
public struct DuplicateWinner: Sendable {
    let choose: @Sendable ([DuplicateCandidate]) -> ObjectID

    /// The object saved first (the smallest primary key).
    public static let oldest = DuplicateWinner { $0[0].objectID }

    /// The object saved last (the largest primary key).
    public static let newest = DuplicateWinner { $0[$0.count - 1].objectID }

    /// The object a closure picks.
    ///
    /// - Parameter choose: Given the group, oldest first, returns the `objectID` of one of them.
    /// - Returns: The policy.
    public static func custom(_ choose: @escaping @Sendable ([DuplicateCandidate]) -> ObjectID) -> DuplicateWinner {
        DuplicateWinner(choose: choose)
    }
}

/// One object of a group of duplicates, as a ``DuplicateWinner`` sees it.
public struct DuplicateCandidate: Sendable, Hashable {
    /// The object's ID.
    public var objectID: ObjectID
    /// Its attribute values that are set.
    public var values: [String: AttributeValue]
}

/// What ``PersistentContainer/removeDuplicates(of:uniqueBy:keeping:batchSize:)`` did.
public struct DeduplicationReport: Sendable, Hashable {
    /// The number of groups of duplicates merged.
    public var groupCount = 0
    /// The number of objects deleted (each group keeps one).
    public var removedCount = 0
    /// The number of relationship destinations moved from a deleted object to its winner.
    public var repointedCount = 0

    /// Creates an empty report.
    public init() {}
}
