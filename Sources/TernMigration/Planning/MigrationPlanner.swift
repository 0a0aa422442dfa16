public import Foundation
public import TernCore

/// Plans migrations over a versioned model: finds the version that wrote a store, refuses
/// downgrades, and chooses the steps to the target version.
///
/// As Core Data does, the planner infers one migration straight from the store's version to the
/// target (renames chained through the versions between when their order is explicit, from the
/// two versions alone otherwise). It walks the chain of versions only
/// where a registered ``StepMapping`` covers a step (the mappings' versions name the chain), or,
/// when the direct inference is impossible, through an order it knows: a model whose
/// ``/TernCore/VersionedModel/hasExplicitOrder`` is true (built in Swift, or read with an explicit
/// order). Then each step uses its mapping or is inferred on its own. It never walks an order
/// guessed from version names: with such a model, an impossible direct step stays one step whose
/// ``MigrationPlan/Step/problems`` name each change that needs a mapping.
///
/// ```swift
/// let planner = MigrationPlanner(model: recipes, mappings: [try StepMapping(contentsOf: split).resolved(in: recipes)])
/// let plan = try planner.plan(storeHashes: metadata.versionHashes, to: "v5")
/// try plan.requireExecutable()
/// ```
public struct MigrationPlanner: Sendable {
    /// The versioned model, versions in migration order.
    public var model: VersionedModel
    /// The explicit mappings, each for a step between two of the model's versions.
    public var mappings: [StepMapping]

    /// Creates a planner.
    ///
    /// - Parameters:
    ///   - model: The versioned model.
    ///   - mappings: Explicit mappings for some steps, bound to the model with
    ///     ``StepMapping/resolved(in:)`` (the planner resolves those that are not).
    public init(model: VersionedModel, mappings: [StepMapping] = []) {
        self.model = model
        self.mappings = mappings
    }

    // MARK: - Planning

    /// Plans the migration of a store to a version.
    ///
    /// - Parameters:
    ///   - storeHashes: The entity version hashes the store's metadata records.
    ///   - target: The version to migrate to; the model's current version when nil.
    /// - Returns: The plan; empty when the store is already at the target. Steps that cannot run
    ///   carry their ``MigrationPlan/Step/problems``.
    /// - Throws: ``MigrationError`` with code ``MigrationError/Code/unknownSourceVersion`` when no
    ///   version wrote the store (naming the closest one and the entities that differ),
    ///   ``MigrationError/Code/downgradeRefused`` when a version newer than the target wrote it,
    ///   ``MigrationError/Code/unknownVersion`` for an unknown target or mapping version, and
    ///   ``MigrationError/Code/invalidMapping`` for a mapping that does not fit the model.
    /// - Complexity: O(*v*) inferences over *v* versions at worst.
    public func plan(storeHashes: [String: Data], to target: String? = nil) throws(MigrationError) -> MigrationPlan {
        let targetName = target ?? model.currentVersionName
        guard let targetIndex = model.versions.firstIndex(where: { $0.name == targetName }) else {
            let known = model.versions.map(\.name).joined(separator: ", ")
            throw MigrationError(
                .unknownVersion, "The model \(model.name) has no version \(targetName) (versions: \(known))",
                version: targetName)
        }
        if model.versions[targetIndex].model.entityVersionHashes == storeHashes {
            return MigrationPlan(source: targetName, destination: targetName, steps: [])
        }
        guard let source = model.version(matchingHashes: storeHashes),
            let sourceIndex = model.versions.firstIndex(where: { $0.name == source.name })
        else {
            let closest = model.closestVersion(toHashes: storeHashes)
            throw MigrationError(
                .unknownSourceVersion,
                "No version of \(model.name) wrote this store; the closest is \(closest.version.name), which differs in "
                    + "\(closest.differingEntities.joined(separator: ", ")). Add the model version that wrote the store",
                version: closest.version.name)
        }
        guard sourceIndex < targetIndex else {
            throw MigrationError(
                .downgradeRefused,
                "The store was written by \(source.name), which is newer than \(targetName); Tern never downgrades a store. "
                    + "Open it with \(source.name) or a later version",
                version: source.name)
        }
        var resolved: [StepMapping] = []
        for mapping in mappings { resolved.append(try mapping.resolved(in: model)) }
        return MigrationPlan(
            source: source.name, destination: targetName,
            steps: try steps(from: sourceIndex, to: targetIndex, mappings: resolved))
    }

    /// Plans the migration of a store, from its metadata.
    ///
    /// - Parameters:
    ///   - metadata: The store's metadata.
    ///   - target: The version to migrate to; the model's current version when nil.
    /// - Returns: The plan.
    /// - Throws: The errors of ``plan(storeHashes:to:)``.
    /// - Complexity: That of ``plan(storeHashes:to:)``.
    public func plan(for metadata: StoreMetadata, to target: String? = nil) throws(MigrationError) -> MigrationPlan {
        try plan(storeHashes: metadata.versionHashes, to: target)
    }

    // MARK: - Non public

    /// The steps between two version indexes.
    private func steps(from start: Int, to end: Int, mappings: [StepMapping]) throws(MigrationError) -> [MigrationPlan
        .Step]
    {
        let versions = model.versions
        func index(of name: String?) -> Int? { versions.firstIndex { $0.name == name } }
        var starts: [Int: (end: Int, mapping: StepMapping)] = [:]
        for mapping in mappings {
            guard let from = index(of: mapping.sourceVersion), let to = index(of: mapping.destinationVersion),
                from >= start, from < to, to <= end
            else { continue }
            if let existing = starts[from], existing.end >= to { continue }
            starts[from] = (to, mapping)
        }
        var result: [MigrationPlan.Step] = []
        var position = start
        while position < end {
            if let (to, mapping) = starts[position] {
                result.append(mappedStep(mapping, from: position, to: to))
                position = to
                continue
            }
            let segmentEnd = starts.keys.filter { $0 > position }.min() ?? end
            let direct = inferredStep(from: position, to: segmentEnd)
            // The chain between is walked only in an order the app gave, never in one guessed from names.
            if direct.problems.isEmpty || segmentEnd == position + 1 || !model.hasExplicitOrder {
                result.append(direct)
                position = segmentEnd
                continue
            }
            for index in position..<segmentEnd { result.append(inferredStep(from: index, to: index + 1)) }
            position = segmentEnd
        }
        return result
    }

    /// An inferred step between two versions, renames chained through the versions between when
    /// the model's order is explicit; with a guessed order, from the two versions alone, as Core
    /// Data infers (a version guessed to lie between must not drop what it lacks).
    private func inferredStep(from start: Int, to end: Int) -> MigrationPlan.Step {
        let from = model.versions[start]
        let to = model.versions[end]
        if from.model.entityVersionHashes == to.model.entityVersionHashes {
            return MigrationPlan.Step(from: from.name, to: to.name, kind: .none, changes: [])
        }
        let intermediates = model.hasExplicitOrder ? model.versions[(start + 1)..<end].map(\.model) : []
        let inference = MappingInference(
            from: from.model, to: to.model, through: intermediates, name: "\(from.name) to \(to.name)")
        return MigrationPlan.Step(
            from: from.name, to: to.name, kind: .inferred, changes: inference.changes,
            problems: inference.issues.map { issue in
                var located = issue
                located.versionName = "\(from.name) → \(to.name)"
                return located
            }, mappings: [inference.mapping])
    }

    /// A step that runs an explicit mapping.
    private func mappedStep(_ mapping: StepMapping, from start: Int, to end: Int) -> MigrationPlan.Step {
        var changes: [ModelChange] = []
        let destination = model.versions[end].model
        for pass in mapping.passes {
            let ordering = pass.ordering(in: destination)
            changes += ordering.changes(pass: pass)
            for entityMapping in ordering.entityMappings {
                let source = entityMapping.sourceEntityName ?? "nothing"
                let destination = entityMapping.destinationEntityName ?? "nothing"
                let filter = entityMapping.sourceFilter.map { " where \($0)" } ?? ""
                let policy = entityMapping.policyName.map { " with policy \($0)" } ?? ""
                changes.append(
                    ModelChange(
                        .entityMapping, entity: entityMapping.destinationEntityName ?? source,
                        "pass \(pass.name): \(entityMapping.kind.rawValue) \(source) → \(destination)\(filter)\(policy) (\(entityMapping.name))"
                    ))
            }
        }
        return MigrationPlan.Step(
            from: model.versions[start].name, to: model.versions[end].name, kind: .mapping, changes: changes,
            mappings: mapping.passes)
    }
}
