/// A migration forecast: which version wrote the store, the version it migrates to, and each step
/// with its kind and its changes. Making a plan touches nothing.
///
/// Plans come from ``MigrationPlanner``. A plan whose steps all have mappings is executable;
/// otherwise ``requireExecutable()`` explains what is missing. Its JSON (`Encodable`, keys as
/// `tern plan --json` prints them) is
/// `{"source": NAME, "destination": NAME, "steps": [{"from", "to", "kind", "changes": [STRING], "problems": [STRING],
/// "warnings": [STRING]}]}`.
///
/// ```swift
/// let plan = try MigrationPlanner(model: recipes).plan(storeHashes: metadata.versionHashes)
/// print(plan)
/// // Migration from v1 to v3 in 1 step:
/// //   1. v1 → v3 (inferred)
/// //      - rename attribute Recipe.name to title
/// ```
///
/// ## Topics
///
/// ### Steps
/// - ``Step``
/// - ``StepKind``
public struct MigrationPlan: Sendable, Hashable, Codable, CustomStringConvertible {
    /// The name of the version that wrote the store.
    public var source: String
    /// The name of the version the store migrates to.
    public var destination: String
    /// The steps in order; empty when the store is already at the destination version.
    public var steps: [Step]

    /// How a step migrates.
    public enum StepKind: String, Sendable, Hashable, Codable, CaseIterable {
        /// With an inferred mapping (Core Data's lightweight migration).
        case inferred
        /// With an explicit mapping (one or several passes).
        case mapping
        /// Nothing stored changes: only the store's metadata is updated.
        case none
    }

    /// One step of a plan: from one version to a later one.
    public struct Step: Sendable, Hashable, Codable {
        /// The version the step starts from.
        public var from: String
        /// The version the step ends at.
        public var to: String
        /// How the step migrates.
        public var kind: StepKind
        /// The changes the step makes.
        public var changes: [ModelChange]
        /// What stops the step from running: the non-inferable changes, each naming the entity,
        /// the property, the reason and a mapping to write. Empty for a runnable step.
        public var problems: [MigrationError]
        /// What the step relaxes or drops in this store, with counts: empty until the plan is
        /// checked against a store's data (`StoreMigrator`'s `plan(forStoreAt:…)` and the
        /// migrators do it for the step they are about to run).
        public var warnings: [MigrationWarning] = []
        /// The mapping models the step runs, in order: one inferred model, or the passes of an
        /// explicit mapping. Not part of the JSON form.
        public var mappings: [MappingModel]

        /// Creates a step.
        ///
        /// - Parameters:
        ///   - from: The version the step starts from.
        ///   - to: The version the step ends at.
        ///   - kind: How the step migrates.
        ///   - changes: The changes it makes.
        ///   - problems: What stops it from running.
        ///   - mappings: The mapping models it runs.
        public init(
            from: String, to: String, kind: StepKind, changes: [ModelChange], problems: [MigrationError] = [],
            mappings: [MappingModel] = []
        ) {
            self.from = from
            self.to = to
            self.kind = kind
            self.changes = changes
            self.problems = problems
            self.mappings = mappings
        }

        /// Decodes a step from its JSON form; changes, problems and warnings come back as text only and
        /// the mapping models are empty.
        public init(from decoder: any Decoder) throws {
            let container = try decoder.container(keyedBy: CodingKeys.self)
            from = try container.decode(String.self, forKey: .from)
            to = try container.decode(String.self, forKey: .to)
            kind = try container.decode(StepKind.self, forKey: .kind)
            let texts = try container.decodeIfPresent([String].self, forKey: .changes) ?? []
            changes = texts.map { ModelChange(ModelChange.Kind("unknown"), entity: "", $0) }
            let problemTexts = try container.decodeIfPresent([String].self, forKey: .problems) ?? []
            problems = problemTexts.map { MigrationError(.notInferable, $0) }
            let warningTexts = try container.decodeIfPresent([String].self, forKey: .warnings) ?? []
            warnings = warningTexts.map {
                MigrationWarning(MigrationWarning.Kind("unknown"), entity: "", property: "", count: 0, $0)
            }
            mappings = []
        }

        /// Encodes the step as `tern plan --json` prints it: changes, problems and warnings as text.
        public func encode(to encoder: any Encoder) throws {
            var container = encoder.container(keyedBy: CodingKeys.self)
            try container.encode(from, forKey: .from)
            try container.encode(to, forKey: .to)
            try container.encode(kind, forKey: .kind)
            try container.encode(changes.map(\.summary), forKey: .changes)
            try container.encode(problems.map(\.message), forKey: .problems)
            try container.encode(warnings.map(\.message), forKey: .warnings)
        }

        private enum CodingKeys: String, CodingKey {
            case from, to, kind, changes, problems, warnings
        }
    }

    /// Creates a plan.
    ///
    /// - Parameters:
    ///   - source: The version that wrote the store.
    ///   - destination: The version it migrates to.
    ///   - steps: The steps in order.
    public init(source: String, destination: String, steps: [Step]) {
        self.source = source
        self.destination = destination
        self.steps = steps
    }

    // MARK: - Checking

    /// Whether the store needs no migration.
    public var isEmpty: Bool { steps.isEmpty }

    /// Whether every step can run.
    public var isExecutable: Bool { steps.allSatisfy(\.problems.isEmpty) }

    /// Throws unless every step can run.
    ///
    /// - Throws: ``MigrationError`` whose ``MigrationError/failures`` are the problems of every
    ///   step that cannot run, each with its step's versions: with code
    ///   ``MigrationError/Code/constraintViolated`` when the problems are one step's objects lacking
    ///   a value the destination requires (found by checking the store's data), otherwise
    ///   ``MigrationError/Code/notInferable``.
    /// - Complexity: O(*n*) in the number of problems.
    public func requireExecutable() throws(MigrationError) {
        var failures: [MigrationError] = []
        for step in steps {
            for problem in step.problems {
                var located = problem
                located.versionName = located.versionName ?? "\(step.from) → \(step.to)"
                failures.append(located)
            }
        }
        guard failures.isEmpty else {
            if failures.allSatisfy({ $0.code == .constraintViolated }),
                let step = steps.first(where: { !$0.problems.isEmpty }),
                step.problems.count == failures.count
            {
                throw MigrationError.dataRefusal(step.problems, step: (step.from, step.to))
            }
            throw MigrationError(
                .notInferable,
                "The store cannot migrate from \(source) to \(destination): \(failures.count) change(s) cannot be inferred; "
                    + "add a mapping (tern migrate --mapping FILE) for the steps named below",
                failures: failures)
        }
    }

    // MARK: - Printing

    /// The plan in words: the versions, then each step with its kind, changes, problems and warnings.
    public var description: String { description(notes: []) }

    /// ``description`` with extra lines under each step (`tern plan` adds how its entity
    /// mappings run).
    ///
    /// - Parameter notes: The lines of each step, by step index; missing steps get none.
    package func description(notes: [[String]]) -> String {
        guard !steps.isEmpty else { return "The store is already at version \(destination); nothing to migrate." }
        var lines = ["Migration from \(source) to \(destination) in \(steps.count) step(s):"]
        for (index, step) in steps.enumerated() {
            let status = step.problems.isEmpty ? "" : ", cannot run"
            lines.append("  \(index + 1). \(step.from) → \(step.to) (\(step.kind.rawValue)\(status))")
            lines += step.changes.map { "     - \($0.summary)" }
            lines += step.problems.map { "     ! \($0.message)" }
            lines += step.warnings.map { "     warning: \($0.message)" }
            if index < notes.count { lines += notes[index].map { "     " + $0 } }
        }
        return lines.joined(separator: "\n")
    }
}

extension MigrationError {
    /// The error that refuses a step because objects in the store lack values the destination
    /// requires, gathering each failure: `The step v1 → v2 cannot run, nothing was written: …`.
    ///
    /// - Parameters:
    ///   - failures: One error per entity and property, each with its count.
    ///   - step: The step's source and destination version names.
    /// - Returns: An error with code ``Code/constraintViolated``, naming the entity and property
    ///   when there is one failure.
    package static func dataRefusal(_ failures: [MigrationError], step: (from: String, to: String)) -> MigrationError {
        MigrationError(
            .constraintViolated,
            "The step \(step.from) → \(step.to) cannot run, nothing was written: "
                + failures.map(\.message).joined(separator: "; "),
            entity: failures.count == 1 ? failures[0].entityName : nil,
            property: failures.count == 1 ? failures[0].propertyName : nil, version: step.to, failures: failures)
    }
}
