public import TernCore

/// Runs the passes of a migration step over any engine: the part of Core Data's
/// `NSMigrationManager` that does not depend on the store.
///
/// For each pass in order, the runner calls the three stages of each entity mapping's policy:
/// instance creation for every mapping, then relationships for every mapping, then the end of
/// every mapping. Associations persist across passes, so a later pass's `destinationInstances`
/// may name an earlier pass's mappings. Remove and add mappings create nothing.
///
/// ```swift
/// let manager = InMemoryMigrationManager(source: v1, rows: rows, destination: v2)
/// try MappingRunner(policies: policies).run(step.passes, manager: manager)
/// let migrated = manager.destinationRows
/// ```
public struct MappingRunner: Sendable {
    /// The custom policies entity mappings may name.
    public var policies: MigrationPolicyRegistry

    /// Creates a runner.
    ///
    /// - Parameter policies: The custom policies entity mappings may name.
    public init(policies: MigrationPolicyRegistry = MigrationPolicyRegistry()) {
        self.policies = policies
    }

    // MARK: - Running

    /// Runs mapping models one after the other into the manager's destination.
    ///
    /// Stage 1 of several entity mappings of one source entity runs in one walk over the source
    /// when they are independent (see ``EntityMigrationPolicy/createsInstancesIndependently(for:)``),
    /// even across passes: each source object is then read once for all of them. The result is
    /// the same as running them apart.
    ///
    /// - Parameters:
    ///   - passes: The mapping models, in order; each runs its entity mappings in the order of
    ///     ``MappingModel/ordering(in:)``.
    ///   - manager: The engine.
    /// - Throws: ``MigrationError`` from a policy, a value expression or the engine, naming the
    ///   mapping and property; ``MigrationError/Code/unknownPolicy`` before anything runs when a
    ///   mapping names a policy that is not registered.
    /// - Complexity: O(*n*) policy calls for *n* source objects.
    public func run(_ passes: [MappingModel], manager: any MigrationManager) throws(MigrationError) {
        let plan = try MappingWalkPlan(passes, policies: policies, destination: manager.destinationModel)
        for (index, (staged, walks)) in zip(plan.passes, plan.walks).enumerated() {
            for walk in walks { try Self.createInstances(walk, manager: manager) }
            for member in staged {
                if let compiled = member.compiled {
                    // Without relationship mappings the default stage 2 does nothing: skip the walk.
                    guard compiled.hasRelationships else { continue }
                    if try Self.setRelationshipsInBulk(of: member, plan: plan, pass: index, manager: manager) {
                        continue
                    }
                    try manager.forEachDestinationInstance(of: member.mapping) { destination throws(MigrationError) in
                        try compiled.setRelationships(of: destination, manager: manager)
                    }
                } else {
                    let (mapping, policy) = (member.mapping, member.policy)
                    try manager.forEachDestinationInstance(of: mapping) { destination throws(MigrationError) in
                        try policy.createRelationships(forDestination: destination, mapping: mapping, manager: manager)
                    }
                }
            }
            for member in staged { try member.policy.endEntityMapping(member.mapping, manager: manager) }
        }
    }

    // MARK: - Non public

    /// Stage 1 of the mappings of one walk over their source entity.
    private static func createInstances(_ walk: [StagedMapping], manager: any MigrationManager) throws(MigrationError) {
        let walk = Array(try createInstancesInBulk(walk, manager: manager))
        guard !walk.isEmpty else { return }
        let reader = SourceCursor(manager: manager)
        func create(_ member: StagedMapping, _ source: RowReference) throws(MigrationError) {
            if let compiled = member.compiled {
                try compiled.createInstance(forSource: source, manager: manager, reader: reader)
            } else {
                try member.policy.createDestinationInstances(
                    forSource: source, mapping: member.mapping, manager: manager)
            }
        }
        let attributePolicies = walk.map(\.attributePolicy)
        if walk.count == 1, let member = walk.first, member.attributePolicy == nil {
            try manager.forEachSourceInstance(of: member.mapping, readingAttributes: member.sourceAttributes) {
                source throws(MigrationError) in
                try create(member, source)
            }
            return
        }
        var attributes: Set<String>? = []
        for member in walk {
            guard let read = member.sourceAttributes else {
                attributes = nil
                break
            }
            attributes?.formUnion(read)
        }
        if attributePolicies.contains(where: { $0 != nil }) {
            // The engine runs the attribute policies itself, a page at a time where it can.
            try manager.createDestinationInstances(
                of: walk.map(\.mapping), attributePolicies: attributePolicies, readingAttributes: attributes
            ) { index, source throws(MigrationError) in
                try create(walk[index], source)
            }
            return
        }
        try manager.forEachSourceInstance(of: walk.map(\.mapping), readingAttributes: attributes) {
            index, source throws(MigrationError) in
            try create(walk[index], source)
        }
    }
}

extension MappingRunner {
    /// Runs stage 1 of the first mappings of a walk in bulk where the engine can
    /// (``BulkMappingEngine``), and returns the rest of the walk.
    ///
    /// Only a prefix of the walk may go: across mappings, a source object's destinations are
    /// ordered by when their associations were made, and a mapping run in bulk makes all of its
    /// own before the walk's later mappings make any. A mapping stays in Swift when it has a
    /// custom or attribute policy, when another mapping of the walk writes the same destination
    /// table (the Swift path interleaves their keys), or when it has no SQL form.
    static func createInstancesInBulk(_ walk: [StagedMapping], manager: any MigrationManager)
        throws(MigrationError) -> ArraySlice<StagedMapping>
    {
        var rest = walk[...]
        guard let engine = manager as? any BulkMappingEngine else { return rest }
        while let member = rest.first,
            case .success(let bulk) = bulkForm(
                of: member, before: rest.dropFirst(), sourceModel: manager.sourceModel,
                destinationModel: manager.destinationModel),
            try engine.createDestinationInstancesInBulk(bulk)
        {
            rest.removeFirst()
        }
        return rest
    }

    /// Runs stage 2 of a default-policy mapping in SQL where the engine can
    /// (``BulkRelationshipEngine``); returns whether it did.
    private static func setRelationshipsInBulk(
        of member: StagedMapping, plan: MappingWalkPlan, pass: Int, manager: any MigrationManager
    ) throws(MigrationError) -> Bool {
        guard let engine = manager as? any BulkRelationshipEngine,
            case .success(let bulk) = relationshipForm(
                of: member, plan: plan, pass: pass, sourceModel: manager.sourceModel,
                destinationModel: manager.destinationModel)
        else { return false }
        return try engine.setRelationshipsInBulk(bulk)
    }

    /// The SQL form of a mapping's stage 2, or why it has none.
    private static func relationshipForm(
        of member: StagedMapping, plan: MappingWalkPlan, pass: Int, sourceModel: ManagedObjectModel,
        destinationModel: ManagedObjectModel
    ) -> Result<BulkRelationships, BulkMapping.Reason> {
        guard member.compiled != nil, member.attributePolicy == nil else {
            return .failure(BulkMapping.Reason(text: "it has a custom policy"))
        }
        let candidates = plan.passes[...pass].joined().map { staged in
            BulkRelationships.Candidate(
                mapping: staged.mapping, makesOnePerSource: staged.compiled != nil || staged.attributePolicy != nil)
        }
        return BulkRelationships.analyze(
            member.mapping, lookingUpIn: candidates, sourceModel: sourceModel, destinationModel: destinationModel)
    }

    /// The SQL form of the first mapping of what is left of a walk, or why it has none.
    private static func bulkForm(
        of member: StagedMapping, before later: ArraySlice<StagedMapping>, sourceModel: ManagedObjectModel,
        destinationModel: ManagedObjectModel
    ) -> Result<BulkMapping, BulkMapping.Reason> {
        guard member.compiled != nil, member.attributePolicy == nil else {
            return .failure(BulkMapping.Reason(text: "it has a custom policy"))
        }
        if let other = later.first(where: { $0.destinationRoot == member.destinationRoot }) {
            return .failure(
                BulkMapping.Reason(
                    text:
                        "\(other.mapping.name) writes the same table in the same walk over \(member.mapping.sourceEntityName ?? "its source")"
                ))
        }
        return BulkMapping.analyze(member.mapping, sourceModel: sourceModel, destinationModel: destinationModel)
    }

    /// Which entity mappings of a step would run as one `INSERT … SELECT` on an engine that runs
    /// every SQL form it is given (SQLite), which would set their relationships in SQL, and why
    /// the others would not: what `tern plan` shows.
    ///
    /// The data can still send a mapping back to Swift (a value the statement cannot handle as
    /// Swift does), and a mapping that follows one of its walk's Swift mappings stays in Swift.
    ///
    /// - Parameters:
    ///   - passes: The step's mapping models.
    ///   - policies: The custom policies.
    ///   - sourceModel: The source model.
    ///   - destinationModel: The destination model.
    ///   - runsFilterAsSQL: Whether the store's fetch translation has an SQL form for a filter of
    ///     a source entity (the engine asks its own at run time).
    /// - Returns: Each entity mapping that reads a source, in the order stage 1 runs them.
    /// - Throws: ``MigrationError`` when a mapping names a policy that is not registered.
    package static func sqlForecast(
        _ passes: [MappingModel], policies: MigrationPolicyRegistry, sourceModel: ManagedObjectModel,
        destinationModel: ManagedObjectModel, runsFilterAsSQL: (FetchPredicate, _ entity: String) -> Bool
    ) throws(MigrationError) -> [SQLForecast] {
        let plan = try MappingWalkPlan(passes, policies: policies, destination: destinationModel)
        var result: [SQLForecast] = []
        for walk in plan.walks.joined() {
            var inSQL = true
            for (index, member) in walk.enumerated() {
                var forecast = SQLForecast(mapping: member.mapping.name, reason: nil, relationships: nil)
                if member.mapping.effectiveRelationshipMappings(in: destinationModel).contains(where: {
                    $0.valueExpression != nil
                }) {
                    switch relationshipForm(
                        of: member, plan: plan, pass: member.pass, sourceModel: sourceModel,
                        destinationModel: destinationModel)
                    {
                    case .success: forecast.relationships = .sql
                    case .failure(let reason): forecast.relationships = .swift(reason.text)
                    }
                }
                defer { result.append(forecast) }
                guard inSQL else {
                    forecast.reason = "an earlier mapping of its walk over the source runs in Swift"
                    continue
                }
                switch bulkForm(
                    of: member, before: walk[(index + 1)...], sourceModel: sourceModel,
                    destinationModel: destinationModel)
                {
                case .success(let bulk):
                    if let filter = bulk.filter, !runsFilterAsSQL(filter, bulk.sourceEntity) {
                        inSQL = false
                        forecast.reason = "its filter has no SQL form on this store: \(filter)"
                    }
                case .failure(let reason):
                    inSQL = false
                    forecast.reason = reason.text
                }
            }
        }
        return result
    }

    /// How one entity mapping would run on a SQL engine (``sqlForecast(_:policies:sourceModel:destinationModel:runsFilterAsSQL:)``).
    package struct SQLForecast: Sendable, Equatable {
        /// Where a mapping's relationships would be set.
        package enum Relationships: Sendable, Equatable {
            /// One statement per relationship.
            case sql
            /// Object by object in Swift, for the reason given.
            case swift(String)
        }

        /// The entity mapping's name.
        package var mapping: String
        /// Why stage 1 stays in Swift; nil when it runs as one `INSERT … SELECT`.
        package var reason: String?
        /// Where stage 2 sets the relationships; nil when the mapping has none to set.
        package var relationships: Relationships?

        /// Creates a forecast.
        package init(mapping: String, reason: String?, relationships: Relationships?) {
            self.mapping = mapping
            self.reason = reason
            self.relationships = relationships
        }
    }
}

/// A source object as value expressions read it, through its engine.
public struct SourceObject: ExpressionSource {
    /// The engine.
    public let manager: any MigrationManager
    /// The source object's handle.
    public let reference: RowReference

    /// Reads a key path through the engine; the empty path is the object itself.
    public func expressionValue(forKeyPath keyPath: [String]) throws(MigrationError) -> ExpressionValue {
        guard !keyPath.isEmpty else { return .objects([reference]) }
        return try manager.sourceValue(followingUnions: keyPath, of: reference)
    }
}

extension MigrationManager {
    /// The value at a key path that may hold union operators (``ValueExpression/unionOperators``):
    /// the part before one is read through the engine, and the rest for each of its objects.
    ///
    /// - Throws: ``MigrationError`` with code ``MigrationError/Code/evaluationFailed`` when the
    ///   part before a union does not give objects, or the part after gives values.
    /// - Complexity: One engine read per object the union goes through.
    func sourceValue(followingUnions keyPath: [String], of source: RowReference) throws(MigrationError)
        -> ExpressionValue
    {
        guard let index = keyPath.firstIndex(where: ValueExpression.unionOperators.contains) else {
            return try sourceValue(forKeyPath: keyPath, of: source)
        }
        let head = Array(keyPath[..<index])
        let tail = Array(keyPath[(index + 1)...])
        let objects: [RowReference]
        switch head.isEmpty ? .objects([source]) : try sourceValue(forKeyPath: head, of: source) {
        case .objects(let references): objects = references
        case .value(nil): objects = []
        default:
            throw MigrationError(
                .evaluationFailed, "\(keyPath[index]) needs objects before it, such as a to-many relationship")
        }
        var seen: Set<RowReference> = []
        var result: [RowReference] = []
        for object in objects {
            switch try sourceValue(followingUnions: tail, of: object) {
            case .objects(let references):
                for reference in references where seen.insert(reference).inserted { result.append(reference) }
            case .value(nil):
                continue
            default:
                throw MigrationError(
                    .evaluationFailed, "\(keyPath[index]) needs a relationship after it; it gives objects")
            }
        }
        return .objects(result)
    }
}

extension MigrationManager {
    /// A source object as `$source` for value expressions.
    ///
    /// - Parameter reference: The source object's handle.
    public func source(_ reference: RowReference) -> SourceObject {
        SourceObject(manager: self, reference: reference)
    }
}

extension EntityMapping {
    // MARK: - Effective property mappings

    /// The attribute mappings that run: for a copy, `$source.<name>` for every stored attribute
    /// of the destination entity; otherwise ``attributeMappings``.
    ///
    /// - Parameter destination: The destination model.
    /// - Complexity: O(*p*) in the number of attributes.
    public func effectiveAttributeMappings(in destination: ManagedObjectModel) -> [PropertyMapping] {
        guard kind == .copy, let entity = destinationEntityName else { return attributeMappings }
        return destination.allAttributes(of: entity).filter { !$0.isTransient && !$0.isDerived }.map {
            PropertyMapping($0.name, .source(keyPath: [$0.name]))
        }
    }

    /// The relationship mappings that run: for a copy, `destinationInstances($source.<name>)` for
    /// every stored relationship of the destination entity; otherwise ``relationshipMappings``.
    ///
    /// - Parameter destination: The destination model.
    /// - Complexity: O(*p*) in the number of relationships.
    public func effectiveRelationshipMappings(in destination: ManagedObjectModel) -> [PropertyMapping] {
        guard kind == .copy, let entity = destinationEntityName else { return relationshipMappings }
        return destination.allRelationships(of: entity).filter { !$0.isTransient }.map {
            PropertyMapping($0.name, .call(.destinationInstances, [.source(keyPath: [$0.name])]))
        }
    }
}
