import TernCore
import TernMigration
import TernRelational

extension SQLiteMigrationEngine {
    // MARK: - Attribute policies

    /// Stage 1 of a walk's mappings: the attribute policies run here a page of source rows at a
    /// time (values from the page by position, rows through their entity's prepared INSERT), the
    /// other mappings through `body`.
    func createDestinationInstances(
        of mappings: [EntityMapping], attributePolicies: [(any AttributeMigrationPolicy)?],
        readingAttributes attributes: Set<String>?, otherwise body: (Int, RowReference) throws(MigrationError) -> Void
    ) throws(MigrationError) {
        var routes: [AttributeRoute?] = []
        for (mapping, policy) in zip(mappings, attributePolicies) {
            routes.append(
                try policy.map { policy throws(MigrationError) in try attributeRoute(for: mapping, policy: policy) })
        }
        try walk(mappings, readingAttributes: attributes, routes: routes, body)
    }

    /// Stage 1 of an attribute policy for one source object, outside a walk of the engine's own.
    func createDestinationInstance(
        forSource source: RowReference, mapping: EntityMapping, policy: any AttributeMigrationPolicy
    ) throws(MigrationError) -> RowReference {
        let route = try attributeRoute(for: mapping, policy: policy)
        if let page, let row = pageIndex(of: source, in: page) {
            if route.page !== page { route.locate(in: page) }
            return try insertRow(route, row: row, of: page)
        }
        var sources: [AttributeValue?] = []
        for name in route.sourceNames { sources.append(try sourceAttribute(name, of: source, mapping: mapping)) }
        return try insertRow(route, sources: sources, source: source)
    }

    /// Makes the destination object of the source row at a position of the page under an
    /// attribute policy's mapping: its values decoded from the page, computed by the policy and
    /// bound straight to the INSERT (converted only when the type differs from the column's),
    /// and its association recorded.
    ///
    /// - Returns: The destination object.
    @discardableResult
    func insertRow(_ route: AttributeRoute, row: Int, of page: MigrationSourcePage) throws(MigrationError)
        -> RowReference
    {
        // Filled as a local and moved back at the end: no access check per value, buffer reused.
        var sources: [AttributeValue?] = []
        swap(&sources, &route.sourceValues)
        defer { swap(&sources, &route.sourceValues) }
        let store = self.source
        for position in sources.indices {
            if let attribute = route.pageAttributes[position] {
                sources[position] = try Self.storeWork {
                    try page.value(atAttribute: attribute, row: row, in: store)
                }
            } else {
                let reference = RowReference(entityName: page.entityName, primaryKey: page.keys[row])
                sources[position] = try sourceAttribute(
                    route.sourceNames[position], of: reference, mapping: route.mapping)
            }
        }
        return try insertRow(route, sources: sources, sourceEntity: page.entityName, sourceKey: page.keys[row])
    }

    // MARK: - Non public

    /// Makes one destination object from the source values of one object (see ``insertRow(_:row:of:)``).
    private func insertRow(_ route: AttributeRoute, sources: [AttributeValue?], source: RowReference)
        throws(MigrationError) -> RowReference
    {
        try insertRow(route, sources: sources, sourceEntity: source.entityName, sourceKey: source.primaryKey)
    }

    private func insertRow(_ route: AttributeRoute, sources: [AttributeValue?], sourceEntity: String, sourceKey: Int64)
        throws(MigrationError) -> RowReference
    {
        var results: [AttributeValue?] = []
        swap(&results, &route.destinationValues)
        defer { swap(&results, &route.destinationValues) }
        for position in results.indices { results[position] = nil }
        do throws(MigrationError) {
            try route.policy.destinationValues(from: sources, into: &results)
        } catch {
            throw error.located(mapping: route.mapping.name, property: nil)
        }
        let plan = route.plan
        // A row another mapping of the walk left pending goes first: it has the smaller key.
        try flush()
        let (key, version) = try newKey(in: plan)
        try Self.sqlite { () throws(SQLiteError) in
            try plan.bindDefaults(key: key, version: version, skipping: route.isSet)
        }
        if !plan.perRowDefaults.isEmpty {
            for (slot, column, value) in plan.perRowDefaults where !route.isSet[slot] {
                let stored = try databaseValue(value, column)
                try Self.sqlite { () throws(SQLiteError) in try plan.bind(stored, at: slot) }
            }
        }
        for position in results.indices {
            guard let slot = route.slots[position] else { continue }
            let value = results[position]
            // Values of their column's type go straight to SQLite; the others are converted.
            if try Self.sqlite({ () throws(SQLiteError) in try plan.bindDirectly(value, at: slot) }) { continue }
            guard let column = plan.columns[slot] else { continue }
            do throws(MigrationError) {
                let stored = try storedValue(value, column, entity: plan.layout.name)
                try Self.sqlite { () throws(SQLiteError) in try plan.bind(stored, at: slot) }
            } catch {
                plan.discardRow()
                throw error.located(mapping: route.mapping.name, property: column.name)
            }
        }
        try Self.sqlite { () throws(SQLiteError) in try plan.insertBoundRow() }
        // Called directly, not through a closure: this runs once per row.
        do {
            try associations.associate(
                sourceEntity: sourceEntity, sourceKey: sourceKey, destinationEntity: plan.layout.name,
                destinationKey: key, mapping: route.mapping.name)
        } catch {
            throw Self.storeFailure(error)
        }
        return RowReference(entityName: plan.layout.name, primaryKey: key)
    }

    /// The value of a source attribute read through its key path, for an attribute policy.
    private func sourceAttribute(_ name: String, of source: RowReference, mapping: EntityMapping)
        throws(MigrationError) -> AttributeValue?
    {
        guard case .value(let value) = try sourceValue(forKeyPath: [name], of: source) else {
            throw MigrationError(
                .invalidMapping, "\(name) is not an attribute of \(source.entityName)", mapping: mapping.name,
                entity: source.entityName, property: name)
        }
        return value
    }

    /// The route of an attribute policy's mapping, worked out on its first use.
    private func attributeRoute(for mapping: EntityMapping, policy: any AttributeMigrationPolicy) throws(MigrationError)
        -> AttributeRoute
    {
        for route in attributeRoutes where route.mapping.name == mapping.name { return route }
        let entity = try AttributeMigrationRoute.destinationEntity(of: mapping)
        let plan = try insertPlan(of: entity)
        var slots: [Int?] = []
        for name in policy.destinationAttributeNames {
            do throws(MigrationError) {
                // Unknown names fail here; transient and derived ones have no column and are skipped.
                let (_, _, column) = try destinationAttribute(name, of: entity)
                slots.append(column == nil ? nil : plan.slot(of: name))
            } catch {
                throw error.located(mapping: mapping.name, property: name)
            }
        }
        let route = AttributeRoute(mapping: mapping, policy: policy, plan: plan, slots: slots)
        attributeRoutes.append(route)
        return route
    }
}

/// How an attribute policy's values travel for one entity mapping: where its source attributes
/// are in the page, which slots of the INSERT its destination attributes fill, and the two
/// value buffers, reused object after object.
final class AttributeRoute {
    /// The entity mapping.
    let mapping: EntityMapping
    /// The policy.
    let policy: any AttributeMigrationPolicy
    /// The INSERT of the destination entity.
    let plan: MigrationInsertPlan
    /// The source attributes the policy reads, in its order.
    let sourceNames: [String]
    /// The slot of each destination attribute the policy sets; nil for one without a column.
    let slots: [Int?]
    /// Whether the policy sets each slot of the INSERT (the first three never).
    let isSet: [Bool]
    /// The page the positions below are for.
    private(set) var page: MigrationSourcePage?
    /// The index of each source attribute in the page's plan; nil for one the page does not hold.
    private(set) var pageAttributes: [Int?] = []
    /// The source values of the current object.
    var sourceValues: [AttributeValue?]
    /// The destination values of the current object.
    var destinationValues: [AttributeValue?]

    init(mapping: EntityMapping, policy: any AttributeMigrationPolicy, plan: MigrationInsertPlan, slots: [Int?]) {
        self.mapping = mapping
        self.policy = policy
        self.plan = plan
        self.sourceNames = policy.sourceAttributeNames
        self.slots = slots
        var isSet = Array(repeating: false, count: plan.columns.count)
        for slot in slots { if let slot { isSet[slot] = true } }
        self.isSet = isSet
        self.sourceValues = Array(repeating: nil, count: sourceNames.count)
        self.destinationValues = Array(repeating: nil, count: slots.count)
    }

    /// Finds the policy's source attributes in a page.
    func locate(in page: MigrationSourcePage) {
        self.page = page
        pageAttributes = sourceNames.map { page.index(ofAttribute: $0) }
    }
}
