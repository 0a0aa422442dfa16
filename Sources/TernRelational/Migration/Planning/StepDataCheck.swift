package import TernCore
package import TernMigration

/// One count an inferred step takes of the store before it writes, for a change that Core Data's
/// lightweight migration decides from the data rather than from the models: a relationship that
/// is new and required or becomes required, to-many bounds that tighten, links that a relationship
/// can no longer hold, integers that a narrower type cannot hold.
///
/// A required to-one relationship that objects lack refuses the step, as Core Data's validation
/// error 134110 does; the rest is relaxed as Core Data relaxes it (the objects and values are kept
/// as they are, the links dropped) and reported as a ``TernMigration/MigrationWarning`` with its
/// count. Attributes that become required are ``RequiredValueCheck``'s. The queries are
/// dialect-free: SQLite and PostgreSQL each run them with their own `COUNT(*)`.
///
/// ```swift
/// let findings = try StepDataCheck.evaluate(mapping, source: layout, destination: v2, step: ("v1", "v2")) { query in
///     try connection.fetchValue(query)?.int64 ?? 0
/// }
/// ```
package struct StepDataCheck: Sendable, Hashable {
    /// What a check counts.
    package enum Finding: Sendable, Hashable {
        /// Objects without a link in a required to-one relationship: refuses the step.
        case missingLink
        /// Objects that get an empty new required to-many relationship.
        case emptyToMany(bounds: String)
        /// Objects holding a count that the to-many relationship's new bounds do not allow.
        case countOutOfBounds(bounds: String)
        /// Links to objects that are not of the relationship's new destination entity.
        case droppedLinks(destination: String)
        /// Values that the attribute's new type cannot hold.
        case valuesOutOfRange(AttributeType)
    }

    /// What the check counts.
    package var finding: Finding
    /// The source entity's name.
    package var sourceEntity: String
    /// The destination entity's name.
    package var entity: String
    /// The destination property's name.
    package var property: String
    /// The query counting the objects (or links) concerned: one row, one column.
    package var countQuery: SQL

    /// Whether a count above zero refuses the step.
    package var isRefusal: Bool { finding == .missingLink }

    /// The error for objects found without a link.
    ///
    /// - Parameters:
    ///   - count: How many objects lack one.
    ///   - step: The step's source and destination version names.
    package func failure(count: Int64, step: (from: String, to: String)) -> MigrationError {
        MigrationError(
            .constraintViolated,
            "\(entity).\(property) is required in \(step.to), but \(count) \(sourceEntity) object(s) have none; "
                + "make it optional in \(step.to), link those objects before migrating, "
                + "or add a mapping for \(step.from) → \(step.to) that fills it",
            entity: entity, property: property, version: step.to)
    }

    /// The warning for what was found.
    ///
    /// - Parameter count: How many objects or links are concerned.
    package func warning(count: Int64) -> MigrationWarning {
        let place = "\(entity).\(property)"
        let (kind, message): (MigrationWarning.Kind, String) =
            switch finding {
            case .missingLink:
                (.relaxedCount, "\(count) \(sourceEntity) object(s) have no \(place)")
            case .emptyToMany(let bounds):
                (
                    .relaxedCount,
                    "\(count) \(sourceEntity) object(s) get an empty \(place), which must hold \(bounds) object(s); "
                        + "they are kept as they are, as Core Data's lightweight migration keeps them"
                )
            case .countOutOfBounds(let bounds):
                (
                    .relaxedCount,
                    "\(count) \(sourceEntity) object(s) hold a number of objects in \(place) that it no longer allows "
                        + "(\(bounds)); they are kept as they are, as Core Data's lightweight migration keeps them"
                )
            case .droppedLinks(let destination):
                (
                    .droppedLinks,
                    "\(count) link(s) of \(place) to objects that are not \(destination) objects are dropped (the objects stay)"
                )
            case .valuesOutOfRange(let type):
                (
                    .valuesOutOfRange,
                    type == .boolean
                        ? "\(count) \(sourceEntity) object(s) have a \(property) value other than 0 and 1, "
                            + "which reads as true, as in Core Data"
                        : "\(count) \(sourceEntity) object(s) have a \(property) value outside \(type.xcodeName)'s range; "
                            + "it is kept as stored, as in Core Data"
                )
            }
        return MigrationWarning(kind, entity: entity, property: property, count: Int(clamping: count), message)
    }

    // MARK: - Running

    /// What the counts of a step found: the refusals and the warnings.
    package struct Findings: Sendable, Hashable {
        /// One error per entity and property whose objects the destination refuses.
        package var failures: [MigrationError] = []
        /// What the step relaxes or drops, with counts.
        package var warnings: [MigrationWarning] = []

        /// Findings with nothing found.
        package init() {}
    }

    /// Counts everything an inferred step decides from the data: the attributes that become
    /// required (``RequiredValueCheck``) and every check of ``checks(of:source:destination:)``.
    ///
    /// - Parameters:
    ///   - mapping: The step's inferred mapping.
    ///   - source: The store's layout before the step.
    ///   - destination: The destination model.
    ///   - step: The step's source and destination version names, for the messages.
    ///   - count: Runs a count query on the store.
    /// - Returns: The refusals and warnings; checks that count nothing add neither.
    /// - Throws: What `count` throws.
    /// - Complexity: One `count` call per check.
    package static func evaluate(
        _ mapping: MappingModel, source: StoreSchema, destination: ManagedObjectModel, step: (from: String, to: String),
        count: (SQL) throws -> Int64
    ) throws -> Findings {
        var findings = Findings()
        for check in RequiredValueCheck.checks(of: mapping, source: source, destination: destination) {
            let missing = try count(check.countQuery)
            if missing > 0 { findings.failures.append(check.failure(missing: missing, step: step)) }
        }
        for check in checks(of: mapping, source: source, destination: destination) {
            let found = try count(check.countQuery)
            guard found > 0 else { continue }
            if check.isRefusal {
                findings.failures.append(check.failure(count: found, step: step))
            } else {
                findings.warnings.append(check.warning(count: found))
            }
        }
        return findings
    }

    /// Whether a step has anything to count, judged from the models alone (a layout of the
    /// source model as a new store would have it): when not, the store need not be opened.
    ///
    /// - Parameters:
    ///   - mapping: The step's inferred mapping.
    ///   - source: The source model.
    ///   - destination: The destination model.
    /// - Complexity: O(*e* · *p*) in the number of entities and properties.
    package static func hasChecks(_ mapping: MappingModel, source: ManagedObjectModel, destination: ManagedObjectModel)
        -> Bool
    {
        guard let layout = try? StoreSchema(model: source, numbers: StoreSchema.assignedNumbers(for: source)) else {
            return true
        }
        return !RequiredValueCheck.checks(of: mapping, source: layout, destination: destination).isEmpty
            || !checks(of: mapping, source: layout, destination: destination).isEmpty
    }

    /// ``evaluate(_:source:destination:step:count:)``, throwing when the step is refused.
    ///
    /// - Returns: The warnings.
    /// - Throws: ``TernMigration/MigrationError/dataRefusal(_:step:)`` gathering each failure, or what `count` throws.
    /// - Complexity: One `count` call per check.
    package static func require(
        _ mapping: MappingModel, source: StoreSchema, destination: ManagedObjectModel, step: (from: String, to: String),
        count: (SQL) throws -> Int64
    ) throws -> [MigrationWarning] {
        let findings = try evaluate(mapping, source: source, destination: destination, step: step, count: count)
        if !findings.failures.isEmpty { throw MigrationError.dataRefusal(findings.failures, step: step) }
        return findings.warnings
    }
}

extension MigrationPlan {
    /// The plan with its first step checked against the store's data: the step's refusals join
    /// its problems and its warnings are set. Later steps are checked when they run, on the data
    /// the steps before them wrote. The store is not read when the two versions show there is
    /// nothing to count (``StepDataCheck/hasChecks(_:source:destination:)``).
    ///
    /// - Parameters:
    ///   - model: The versioned model the plan was made with.
    ///   - findings: Counts the first step's checks on the store, given the step's mapping and
    ///     its source and destination models (called for an inferred first step only).
    /// - Throws: What `findings` throws.
    package func checkingFirstStep(
        in model: VersionedModel,
        _ findings: (_ step: Step, _ mapping: MappingModel, _ from: ManagedObjectModel, _ to: ManagedObjectModel) throws
            -> StepDataCheck.Findings
    ) rethrows -> MigrationPlan {
        guard var first = steps.first, first.kind == .inferred, first.problems.isEmpty,
            let mapping = first.mappings.first,
            let from = model.version(named: first.from)?.model, let to = model.version(named: first.to)?.model,
            StepDataCheck.hasChecks(mapping, source: from, destination: to)
        else { return self }
        let found = try findings(first, mapping, from, to)
        first.problems += found.failures
        first.warnings = found.warnings
        var plan = self
        plan.steps[0] = first
        return plan
    }
}
