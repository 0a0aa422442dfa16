/// Resolves dotted key paths (`title`, `recipe.title`, `ingredients.name`) over a graph of
/// objects or rows, for evaluating predicates and sorts in Swift.
///
/// A path through a to-many relationship gives one value per object reached; a path ending at
/// a relationship gives the related objects' ID URIs; the empty path (`SELF`) gives the
/// object's own ID URI.
package struct KeyPathResolver<Node> {
    let model: ManagedObjectModel
    let entityName: (Node) -> String
    let identity: (Node) -> AttributeValue?
    let attribute: (Node, String) -> AttributeValue?
    let related: (Node, String) -> [Node]

    /// Creates a resolver over nodes of any kind (rows, objects).
    package init(
        model: ManagedObjectModel, entityName: @escaping (Node) -> String,
        identity: @escaping (Node) -> AttributeValue?,
        attribute: @escaping (Node, String) -> AttributeValue?, related: @escaping (Node, String) -> [Node]
    ) {
        self.model = model
        self.entityName = entityName
        self.identity = identity
        self.attribute = attribute
        self.related = related
    }

    package func value(of root: Node, at keyPath: String) throws(TernError) -> PredicateValue {
        guard !keyPath.isEmpty else { return .single(identity(root)) }
        var nodes = [root]
        var isMany = false
        let names = keyPath.split(separator: ".").map(String.init)
        for (index, name) in names.enumerated() {
            let isLast = index == names.count - 1
            var next: [Node] = []
            var values: [AttributeValue?] = []
            for node in nodes {
                let entity = entityName(node)
                switch model.property(named: name, inEntity: entity) {
                case .attribute?:
                    guard isLast else { throw unknown(keyPath, entity) }
                    values.append(attribute(node, name))
                case .relationship(let relationship)?:
                    isMany = isMany || relationship.isToMany
                    let targets = related(node, name)
                    if isLast {
                        values += relationship.isToMany ? targets.map(identity) : [targets.first.flatMap(identity)]
                    } else {
                        next += targets
                    }
                default:
                    throw unknown(keyPath, entity)
                }
            }
            if isLast { return isMany ? .many(values) : .single(values.first ?? nil) }
            nodes = next
        }
        return isMany ? .many([]) : .single(nil)
    }

    private func unknown(_ keyPath: String, _ entity: String) -> TernError {
        TernError(
            .invalidPredicate, "\(entity) has no key path \(keyPath); check the predicate or sort", entity: entity)
    }
}

/// A row of a ``RowTable`` seen through key paths.
struct RowValues: PredicateEvaluable {
    let row: StoreRow
    let table: RowTable
    let model: ManagedObjectModel
    let storeIdentifier: String

    func predicateValue(forKeyPath keyPath: String) throws(TernError) -> PredicateValue {
        let table = self.table
        let identifier = storeIdentifier
        let resolver = KeyPathResolver<StoreRow>(
            model: model, entityName: \.reference.entityName,
            identity: { row in
                .uri(
                    ObjectID(
                        entityName: row.reference.entityName, storeIdentifier: identifier,
                        primaryKey: row.reference.primaryKey
                    ).uriRepresentation)
            },
            attribute: { row, name in row.attributes[name] },
            related: { row, name in
                ((row.toOne[name].map { [$0] } ?? []) + (row.toMany[name] ?? [])).compactMap(table.row(for:))
            })
        return try resolver.value(of: row, at: keyPath)
    }
}

/// A state seen through its own attributes, for sorting rows of several stores.
struct StateValues: PredicateEvaluable {
    let state: ObjectState

    func predicateValue(forKeyPath keyPath: String) -> PredicateValue { .single(state.attributes[keyPath]) }
}

extension ManagedObject: PredicateEvaluable {
    /// The value at a key path, for predicates and sorts evaluated in memory.
    ///
    /// `title` reads an attribute, `recipe.title` follows to-one relationships, `ingredients.name`
    /// gives one value per related object; a path ending at a relationship gives the related
    /// objects' ID URIs. Faults reached on the way fire (see ``ManagedObject``).
    ///
    /// - Parameter keyPath: A dotted key path, or the empty string for the object itself.
    /// - Returns: A single value, or several through a to-many relationship.
    /// - Throws: ``TernError/Code/invalidPredicate`` when the entity has no such key path.
    public func predicateValue(forKeyPath keyPath: String) throws(TernError) -> PredicateValue {
        guard let graph else { return .single(nil) }
        let resolver = KeyPathResolver<ManagedObject>(
            model: graph.model, entityName: \.schema.name,
            identity: { .uri($0.objectID.uriRepresentation) },
            attribute: { object, name in
                object.loadForAccess() ? object.values[name] : nil
            },
            related: { object, name in
                guard object.loadForAccess() else { return [] }
                let ids = (object.toOne[name].map { [$0] } ?? []) + (object.toMany[name] ?? [])
                return ids.map(graph.object(for:))
            })
        return try resolver.value(of: self, at: keyPath)
    }
}
