import Foundation
public import TernCore

/// The explicit mapping of one migration step: the mapping models (passes) that take a store from
/// one model version to another, run in order into one destination.
///
/// A step mapping is what a JSON mapping file holds (see `docs/MappingFormat.md`) and what
/// ``MigrationPlanner`` takes for the steps it should not infer. Versions are named, so a file
/// can be written by hand; ``resolved(in:)`` binds it to a versioned model, recording the entity
/// hashes and checking every pass.
///
/// ```swift
/// let step = try StepMapping(contentsOf: URL(fileURLWithPath: "EventSplit.json"))
/// let bound = try step.resolved(in: events)
/// let plan = try MigrationPlanner(model: events, mappings: [bound]).plan(storeHashes: hashes)
/// ```
///
/// ## Topics
///
/// ### Reading and writing
/// - ``init(jsonData:)``
/// - ``init(contentsOf:)``
/// - ``jsonData()``
/// - ``write(to:)``
public struct StepMapping: Sendable, Hashable {
    /// The name of the version the step starts from; nil when only the passes' hashes tell it.
    public var sourceVersion: String?
    /// The name of the version the step ends at; nil when only the passes' hashes tell it.
    public var destinationVersion: String?
    /// The mapping models, run one after the other into the same destination.
    public var passes: [MappingModel]

    /// Creates a step mapping.
    ///
    /// - Parameters:
    ///   - source: The name of the version the step starts from.
    ///   - destination: The name of the version the step ends at.
    ///   - passes: The mapping models, in the order they run.
    public init(from source: String?, to destination: String?, passes: [MappingModel]) {
        self.sourceVersion = source
        self.destinationVersion = destination
        self.passes = passes
    }

    // MARK: - Binding to a model

    /// The step bound to a versioned model: version names and entity hashes filled in, every
    /// pass checked against the two versions.
    ///
    /// - Parameter model: The versioned model.
    /// - Returns: The step with both version names and every pass's entity hashes.
    /// - Throws: ``MigrationError`` with code ``MigrationError/Code/unknownVersion`` when a
    ///   version cannot be found (by name, or by the passes' hashes), and
    ///   ``MigrationError/Code/invalidMapping`` when a pass was made for other models or does
    ///   not fit them (see ``MappingModel/validate(source:destination:otherPasses:)``).
    /// - Complexity: That of validating every pass, plus hashing each version.
    public func resolved(in model: VersionedModel) throws(MigrationError) -> StepMapping {
        let source = try version(named: sourceVersion, hashes: \.sourceEntityVersionHashes, in: model, role: "source")
        let destination = try version(
            named: destinationVersion, hashes: \.destinationEntityVersionHashes, in: model, role: "destination")
        let sourceHashes = source.model.entityVersionHashes
        let destinationHashes = destination.model.entityVersionHashes
        var bound = StepMapping(from: source.name, to: destination.name, passes: [])
        var problems: [MigrationError] = []
        for (index, var pass) in passes.enumerated() {
            if !pass.sourceEntityVersionHashes.isEmpty && pass.sourceEntityVersionHashes != sourceHashes
                || !pass.destinationEntityVersionHashes.isEmpty
                    && pass.destinationEntityVersionHashes != destinationHashes
            {
                problems.append(
                    MigrationError(
                        .invalidMapping,
                        "The pass \(pass.name) was made for other versions than \(source.name) → \(destination.name); "
                            + "its entity hashes differ. Recreate it for these versions", mapping: pass.name))
            }
            pass.sourceEntityVersionHashes = sourceHashes
            pass.destinationEntityVersionHashes = destinationHashes
            var others = passes
            others.remove(at: index)
            problems += pass.validationProblems(
                source: source.model, destination: destination.model, otherPasses: others)
            bound.passes.append(pass)
        }
        var names: Set<String> = []
        for pass in passes {
            for mapping in pass.entityMappings where !names.insert(mapping.name).inserted {
                problems.append(
                    MigrationError(
                        .invalidMapping, "Two entity mappings of the step are named \(mapping.name)",
                        mapping: mapping.name))
            }
        }
        guard problems.isEmpty else {
            throw MigrationError(
                .invalidMapping,
                "The mapping from \(source.name) to \(destination.name) does not fit the model (\(problems.count) problem(s))",
                failures: problems)
        }
        return bound
    }

    // MARK: - Non public

    private func version(
        named name: String?, hashes: KeyPath<MappingModel, [String: Data]>, in model: VersionedModel, role: String
    ) throws(MigrationError) -> ModelVersion {
        if let name {
            guard let version = model.version(named: name) else {
                let known = model.versions.map(\.name).joined(separator: ", ")
                throw MigrationError(
                    .unknownVersion,
                    "The mapping's \(role) version \(name) is not in the model \(model.name) (\(known))",
                    version: name)
            }
            return version
        }
        guard let recorded = passes.first(where: { !$0[keyPath: hashes].isEmpty })?[keyPath: hashes],
            let version = model.version(matchingHashes: recorded)
        else {
            throw MigrationError(
                .unknownVersion,
                "The mapping names no \(role) version and its entity hashes match none of \(model.name)'s versions; "
                    + "add \"\(role)\": \"<version name>\" to the mapping file")
        }
        return version
    }
}
