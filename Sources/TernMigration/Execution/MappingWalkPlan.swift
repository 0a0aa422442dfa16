import TernCore

/// One entity mapping that reads source objects, as ``MappingRunner`` runs it: its policy, its
/// compiled property mappings for the default policy, and what the walk planning needs to know.
/// A class, so that a walk reaches its mappings object after object without copying them.
final class StagedMapping {
    /// The entity mapping.
    let mapping: EntityMapping
    /// Its policy.
    let policy: any EntityMigrationPolicy
    /// Its property mappings compiled, for the default policy; nil for a custom one.
    let compiled: CompiledEntityMapping?
    /// Its policy as an attribute policy, whose stage 1 the engine runs; nil for any other.
    let attributePolicy: (any AttributeMigrationPolicy)?
    /// The index of its pass.
    let pass: Int
    /// Whether stage 1 is independent of other mappings (``EntityMigrationPolicy/createsInstancesIndependently(for:)``).
    let isIndependent: Bool
    /// The root of the destination entity: the table stage 1 writes; nil when it creates nothing.
    let destinationRoot: String?
    /// The mappings whose objects its relationship mappings look up; nil when one may look up any.
    let lookedUpMappings: Set<String>?
    /// The source attributes stage 1 reads, with those of the filter; nil for every one.
    let sourceAttributes: Set<String>?

    /// Stages an entity mapping.
    ///
    /// - Throws: ``MigrationError`` with code ``MigrationError/Code/unknownPolicy`` when the
    ///   mapping names a policy that is not registered, or calls a selector its policy does not register.
    init(
        _ mapping: EntityMapping, pass: Int, policies: MigrationPolicyRegistry, destination: ManagedObjectModel
    ) throws(MigrationError) {
        self.mapping = mapping
        self.pass = pass
        policy = try policies.policy(for: mapping)
        // A policy() call whose selector the policy does not register fails before anything runs.
        let functions = policy.expressionFunctions
        for property in mapping.propertyMappings {
            for selector in property.valueExpression?.policySelectors ?? [] where functions[selector] == nil {
                throw MigrationError(
                    .unknownPolicy,
                    "'\(property.valueExpression.map(String.init(describing:)) ?? "")' calls \(selector), which the policy "
                        + "\(mapping.policyName ?? "of the mapping") does not register in its expressionFunctions",
                    mapping: mapping.name, entity: mapping.destinationEntityName, property: property.name)
            }
        }
        // The default policy's property mappings are compiled once, not read per object.
        compiled = policy is DefaultMigrationPolicy ? CompiledEntityMapping(mapping, destination: destination) : nil
        attributePolicy = policy as? any AttributeMigrationPolicy
        isIndependent = mapping.destinationEntityName != nil && policy.createsInstancesIndependently(for: mapping)
        destinationRoot = mapping.destinationEntityName.map { destination.rootEntity(of: $0)?.name ?? $0 }
        var looked: Set<String>? = []
        for property in mapping.effectiveRelationshipMappings(in: destination) {
            guard let expression = property.valueExpression, looked != nil else { continue }
            guard let names = Self.lookedUpMappings(in: expression) else {
                looked = nil
                continue
            }
            looked?.formUnion(names)
        }
        lookedUpMappings = looked
        if var attributes = compiled?.sourceAttributes ?? policy.sourceAttributes(for: mapping) {
            if let filter = mapping.sourceFilter {
                for keyPath in filter.keyPaths { attributes.insert(String(keyPath.prefix { $0 != "." })) }
            }
            sourceAttributes = attributes
        } else {
            sourceAttributes = nil
        }
    }

    /// The mapping names that `destinationInstances` calls of an expression name; nil when one
    /// names no mapping (any mapping) or computes the name.
    private static func lookedUpMappings(in expression: ValueExpression) -> Set<String>? {
        switch expression {
        case .source, .literal:
            return []
        case .negate(let operand):
            return lookedUpMappings(in: operand)
        case .arithmetic(_, let lhs, let rhs):
            guard let left = lookedUpMappings(in: lhs), let right = lookedUpMappings(in: rhs) else { return nil }
            return left.union(right)
        case .call(let function, let arguments):
            var names: Set<String> = []
            if function == .destinationInstances {
                guard arguments.count == 2, case .literal(.string(let name)?) = arguments[0] else { return nil }
                names.insert(name)
            }
            for argument in arguments {
                guard let inner = lookedUpMappings(in: argument) else { return nil }
                names.formUnion(inner)
            }
            return names
        }
    }
}

/// The walks over source objects that stage 1 of each pass makes: usually one per entity
/// mapping; one for several mappings of the same source entity when they are independent.
///
/// A mapping joins the walk of an earlier mapping of the same source entity, possibly of an
/// earlier pass, when running its stage 1 there cannot change what any mapping sees or makes:
/// - both mappings, and every mapping whose stage 1 runs between them, are independent
///   (``EntityMigrationPolicy/createsInstancesIndependently(for:)``), and none of those writes
///   the joining mapping's destination table (so primary keys are given as in order);
/// - no relationship mapping of the passes it moves ahead of looks up its objects (by its
///   name, or without a name).
///
/// The seeds' Event split (`Event` to `PrintedEvent` in one pass, to `TimeStampEvent` in the
/// next) is then one walk over `Event`: each row is read once, for both destination objects.
///
/// ```swift
/// let plan = try MappingWalkPlan(passes, policies: policies, destination: v2)
/// for walk in plan.walks[0] { … one source walk for walk.map(\.mapping) … }
/// ```
struct MappingWalkPlan {
    /// The mappings of each pass that read source objects, in running order: stages 2 and 3.
    let passes: [[StagedMapping]]
    /// The walks of stage 1 of each pass, each with the mappings it runs, in order.
    let walks: [[[StagedMapping]]]

    /// Stages every mapping of the passes and groups their stage 1 into walks.
    ///
    /// - Parameters:
    ///   - passes: The mapping models, in order.
    ///   - policies: The custom policies.
    ///   - destination: The destination model.
    /// - Throws: ``MigrationError`` with code ``MigrationError/Code/unknownPolicy`` for a policy
    ///   that is not registered, before anything runs.
    /// - Complexity: O(*m*²) for *m* entity mappings.
    init(_ passes: [MappingModel], policies: MigrationPolicyRegistry, destination: ManagedObjectModel)
        throws(MigrationError)
    {
        var staged: [[StagedMapping]] = []
        for (index, pass) in passes.enumerated() {
            var members: [StagedMapping] = []
            for mapping in pass.ordering(in: destination).entityMappings where Self.readsSource(mapping) {
                members.append(try StagedMapping(mapping, pass: index, policies: policies, destination: destination))
            }
            staged.append(members)
        }
        self.passes = staged
        let flat = staged.flatMap { $0 }
        // Each group holds positions in `flat`; the first is where the walk runs.
        var groups: [[Int]] = []
        for position in flat.indices {
            if let group = groups.firstIndex(where: { Self.canJoin(position, group: $0, in: flat, passes: staged) }) {
                groups[group].append(position)
            } else {
                groups.append([position])
            }
        }
        var walks: [[[StagedMapping]]] = Array(repeating: [], count: staged.count)
        for group in groups { walks[flat[group[0]].pass].append(group.map { flat[$0] }) }
        self.walks = walks
    }

    // MARK: - Non public

    /// Whether an entity mapping reads source objects.
    private static func readsSource(_ mapping: EntityMapping) -> Bool {
        switch mapping.kind {
        case .add, .remove: false
        case .copy, .transform: true
        case .custom: mapping.sourceEntityName != nil
        }
    }

    /// Whether the mapping at `position` may run its stage 1 in the walk of `group`.
    private static func canJoin(_ position: Int, group: [Int], in flat: [StagedMapping], passes: [[StagedMapping]])
        -> Bool
    {
        let joining = flat[position]
        let leader = flat[group[0]]
        guard joining.isIndependent, leader.isIndependent,
            joining.mapping.sourceEntityName == leader.mapping.sourceEntityName
        else { return false }
        // Everything whose stage 1 runs between the two is independent and writes other tables.
        for between in flat[group[0]..<position] {
            guard between.isIndependent, between.destinationRoot != joining.destinationRoot else { return false }
        }
        // The passes it moves ahead of end without looking up its objects.
        for pass in passes[leader.pass..<joining.pass] {
            for member in pass {
                guard member.isIndependent, let looked = member.lookedUpMappings, !looked.contains(joining.mapping.name)
                else { return false }
            }
        }
        return true
    }
}
