public import TernCore
public import TernMigration

/// The mistakes in a versioned model that break migrations in the field, found before release:
/// a released version edited since, versions that cannot be told apart, a current version that
/// is not the newest, steps nothing can migrate, required properties added without a default,
/// and, for apps that sync with CloudKit, the rules `NSPersistentCloudKitContainer` enforces.
///
/// ```swift
/// let findings = ModelLint.findings(in: model, released: try XcodeModel.readVersionedModel(at: releasedBundle))
/// for finding in findings where finding.severity == .error { print(finding) }
/// ```
public enum ModelLint {
    /// One mistake found.
    public struct Finding: Sendable, Hashable, CustomStringConvertible {
        /// How bad a finding is.
        public enum Severity: String, Sendable, Hashable, Comparable {
            /// Breaks migrations (or sync): fix it before release.
            case error
            /// Likely to break them, or depends on the data.
            case warning

            /// Errors first.
            public static func < (lhs: Self, rhs: Self) -> Bool { lhs == .error && rhs == .warning }
        }

        /// A kind of finding. New kinds may be added in any release.
        public struct Rule: Hashable, Sendable, CustomStringConvertible {
            /// The rule's stable spelling.
            public let rawValue: String

            /// Creates a rule. Use the static members.
            package init(_ rawValue: String) { self.rawValue = rawValue }

            /// The rule's stable spelling.
            public var description: String { rawValue }

            /// A version that was released has other entity hashes now: it was edited afterwards.
            public static let editedReleasedVersion = Rule("editedReleasedVersion")
            /// Two versions have the same entity hashes: stores cannot tell them apart.
            public static let identicalHashes = Rule("identicalHashes")
            /// The current version is not the newest one in migration order.
            public static let currentNotNewest = Rule("currentNotNewest")
            /// No inference can do a step and no mapping covers it.
            public static let unmigratableStep = Rule("unmigratableStep")
            /// A required property is added without a default, in a step without a mapping.
            public static let requiredWithoutDefault = Rule("requiredWithoutDefault")
            /// A rule `NSPersistentCloudKitContainer` enforces is broken.
            public static let cloudKit = Rule("cloudKit")
        }

        /// How bad it is.
        public var severity: Severity
        /// Which rule it breaks.
        public var rule: Rule
        /// The version concerned.
        public var version: String?
        /// The entity concerned.
        public var entity: String?
        /// The property concerned.
        public var property: String?
        /// What is wrong and what to do, in one line.
        public var message: String

        /// The finding as `tern lint` prints it: `error: v2, Recipe.title: …`.
        public var description: String {
            let place = [version, [entity, property].compactMap { $0 }.joined(separator: ".")].compactMap { $0 }
                .filter { !$0.isEmpty }.joined(separator: ", ")
            return "\(severity.rawValue): " + (place.isEmpty ? "" : place + ": ") + message
        }
    }

    /// Every finding of a model, errors first, then by version and entity.
    ///
    /// - Parameters:
    ///   - model: The model as it is now.
    ///   - released: The model as released (read at a git tag), to find versions edited since.
    ///   - mappings: The app's explicit mappings, which cover the steps they name.
    ///   - cloudKit: Whether to check `NSPersistentCloudKitContainer`'s rules on the current version.
    /// - Returns: The findings; empty when there is nothing to fix.
    /// - Complexity: One plan per version, O(*v*²) hash comparisons for *v* versions.
    public static func findings(
        in model: VersionedModel, released: VersionedModel? = nil, mappings: [StepMapping] = [], cloudKit: Bool = false
    ) -> [Finding] {
        var findings: [Finding] = []
        if let released { findings += editedVersions(model, released: released) }
        findings += identicalVersions(model)
        findings += currentVersion(model)
        findings += steps(model, mappings: mappings)
        if cloudKit { findings += cloudKitRules(model.currentVersion) }
        return findings.enumerated().sorted { lhs, rhs in
            lhs.element.severity != rhs.element.severity
                ? lhs.element.severity < rhs.element.severity : lhs.offset < rhs.offset
        }.map(\.element)
    }

    // MARK: - Rules

    /// Versions released with other hashes than they have now, naming each changed property.
    static func editedVersions(_ model: VersionedModel, released: VersionedModel) -> [Finding] {
        var findings: [Finding] = []
        for old in released.versions {
            guard let now = model.version(named: old.name),
                now.model.entityVersionHashes != old.model.entityVersionHashes
            else {
                continue
            }
            let before = old.model.entityVersionHashes
            let after = now.model.entityVersionHashes
            for entity in Set(before.keys).union(after.keys).sorted() where before[entity] != after[entity] {
                let change: String
                let property: String?
                if before[entity] == nil {
                    (change, property) = ("entity \(entity) was added", nil)
                } else if after[entity] == nil {
                    (change, property) = ("entity \(entity) was removed", nil)
                } else {
                    let oldProperties = old.model.propertyVersionHashes(ofEntity: entity)
                    let newProperties = now.model.propertyVersionHashes(ofEntity: entity)
                    let changed = Set(oldProperties.keys).union(newProperties.keys).sorted()
                        .filter { oldProperties[$0] != newProperties[$0] }
                    property = changed.first
                    change =
                        changed.isEmpty
                        ? "entity \(entity) changed (its settings or parent)"
                        : "\(changed.map { "\(entity).\($0)" }.joined(separator: ", ")) changed"
                }
                findings.append(
                    Finding(
                        severity: .error, rule: .editedReleasedVersion, version: old.name, entity: entity,
                        property: property,
                        message:
                            "\(change) after the version was released, so stores it wrote no longer match any version "
                            + "(\"Can't find model for source store\"); restore the released version and make the change "
                            + "in a new version"))
            }
        }
        return findings
    }

    /// Pairs of versions whose hashes are the same.
    static func identicalVersions(_ model: VersionedModel) -> [Finding] {
        var findings: [Finding] = []
        for (index, version) in model.versions.enumerated() {
            for other in model.versions[(index + 1)...]
            where other.model.entityVersionHashes == version.model.entityVersionHashes {
                findings.append(
                    Finding(
                        severity: .warning, rule: .identicalHashes, version: other.name, entity: nil, property: nil,
                        message:
                            "has the same entity hashes as \(version.name), so a store cannot tell which wrote it; "
                            + "give the changed entity a versionHashModifier, or remove the redundant version"))
            }
        }
        return findings
    }

    /// A current version that is not the last in migration order.
    static func currentVersion(_ model: VersionedModel) -> [Finding] {
        guard let last = model.versions.last, last.name != model.currentVersion.name else { return [] }
        let order = model.hasExplicitOrder ? "migration order" : "name order (no order was given; pass --order)"
        return [
            Finding(
                severity: model.hasExplicitOrder ? .error : .warning, rule: .currentNotNewest,
                version: model.currentVersion.name,
                entity: nil, property: nil,
                message: "is the current version, but \(last.name) comes after it in \(order); stores of the newer "
                    + "versions would migrate back; make the newest version current")
        ]
    }

    /// Each historical version's plan to the current one: steps nothing can migrate, and required
    /// properties added without a default in inferred steps.
    static func steps(_ model: VersionedModel, mappings: [StepMapping]) -> [Finding] {
        var findings: [Finding] = []
        var seen: Set<String> = []
        let planner = MigrationPlanner(model: model, mappings: mappings)
        for version in model.versions where version.name != model.currentVersion.name {
            guard let plan = try? planner.plan(storeHashes: version.model.entityVersionHashes) else { continue }
            for step in plan.steps {
                for problem in step.problems where seen.insert("\(step.from)|\(step.to)|\(problem.message)").inserted {
                    findings.append(
                        Finding(
                            severity: .error, rule: .unmigratableStep, version: "\(step.from) → \(step.to)",
                            entity: problem.entityName, property: problem.propertyName, message: problem.message))
                }
                guard step.kind == .inferred else { continue }
                for change in step.changes
                where change.kind == .addProperty && change.summary.contains("(the store must have no ")
                    && seen.insert("\(step.from)|\(step.to)|\(change.summary)").inserted
                {
                    findings.append(
                        Finding(
                            severity: .warning, rule: .requiredWithoutDefault, version: "\(step.from) → \(step.to)",
                            entity: change.entityName, property: change.propertyName,
                            message:
                                "is added as required without a default value: a store with \(change.entityName) objects "
                                + "cannot migrate (Core Data's error 134110); give it a default value or add a mapping that fills it"
                        ))
                }
            }
        }
        return findings
    }

    /// The rules `NSPersistentCloudKitContainer` enforces on the model it syncs.
    static func cloudKitRules(_ version: ModelVersion) -> [Finding] {
        var findings: [Finding] = []
        func add(_ entity: String, _ property: String?, _ message: String) {
            findings.append(
                Finding(
                    severity: .error, rule: .cloudKit, version: version.name, entity: entity, property: property,
                    message: message))
        }
        for entity in version.model.entities {
            if !entity.uniquenessConstraints.isEmpty {
                add(entity.name, nil, "has uniqueness constraints, which CloudKit sync does not support; remove them")
            }
            for attribute in entity.attributes
            where !attribute.isTransient && !attribute.isOptional && attribute.defaultValue == nil {
                add(
                    entity.name, attribute.name,
                    "is required without a default value; CloudKit sync needs it optional or with a default")
            }
            for relationship in entity.relationships where !relationship.isTransient {
                if relationship.isRequired {
                    add(entity.name, relationship.name, "is required; CloudKit sync needs every relationship optional")
                }
                if relationship.inverseName == nil {
                    add(
                        entity.name, relationship.name,
                        "has no inverse; CloudKit sync needs an inverse for every relationship")
                }
                if relationship.deleteRule == .deny {
                    add(
                        entity.name, relationship.name, "has the Deny delete rule, which CloudKit sync does not support"
                    )
                }
                if relationship.isOrdered {
                    add(
                        entity.name, relationship.name,
                        "is ordered, which CloudKit sync does not support; order by an attribute")
                }
            }
        }
        return findings
    }
}
