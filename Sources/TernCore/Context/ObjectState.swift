/// The stored state of one object with its relationships as object IDs: what a context keeps
/// as a snapshot and what parent and child contexts exchange.
struct ObjectState: Hashable, Sendable {
    var id: ObjectID
    var version: Int64
    var attributes: PackedAttributes
    var toOne: [String: ObjectID]
    var toMany: [String: [ObjectID]]

    init(
        id: ObjectID, version: Int64 = 0, attributes: PackedAttributes,
        toOne: [String: ObjectID] = [:], toMany: [String: [ObjectID]] = [:]
    ) {
        self.id = id
        self.version = version
        self.attributes = attributes
        self.toOne = toOne
        self.toMany = toMany
    }

    /// The state of a store row, its references turned into IDs of that store.
    ///
    /// - Parameters:
    ///   - row: The row.
    ///   - storeIdentifier: The identifier of the store it comes from.
    ///   - keys: The attribute keys of the row's entity.
    init(row: StoreRow, storeIdentifier: String, keys: AttributeKeys) {
        self.init(row: row, keys: keys) {
            ObjectID(entityName: $0.entityName, storeIdentifier: storeIdentifier, primaryKey: $0.primaryKey)
        }
    }

    /// The state of a store row, its references turned into IDs by `id`.
    ///
    /// - Parameters:
    ///   - row: The row.
    ///   - keys: The attribute keys of the row's entity.
    ///   - id: Makes the ID of a row of the store.
    init(row: StoreRow, keys: AttributeKeys, id: (RowReference) -> ObjectID) {
        self.init(
            id: id(row.reference), version: row.version,
            attributes: PackedAttributes(keys: keys, dictionary: row.attributes),
            toOne: row.toOne.isEmpty ? [:] : row.toOne.mapValues(id),
            toMany: row.toMany.isEmpty ? [:] : row.toMany.mapValues { $0.map(id) })
    }

    /// The row of this state, with IDs replaced through `permanent` and empty to-manys left out.
    func row(mapping permanent: [ObjectID: ObjectID]) -> StoreRow? {
        func rowReference(_ id: ObjectID) -> RowReference? { (permanent[id] ?? id).rowReference }
        guard let reference = rowReference(id) else { return nil }
        return StoreRow(
            reference: reference, version: version, attributes: attributes.dictionary,
            toOne: toOne.compactMapValues(rowReference),
            toMany: toMany.filter { !$0.value.isEmpty }.mapValues { $0.compactMap(rowReference) })
    }

    /// The state with every ID replaced through `mapping`.
    func replacingIDs(_ mapping: [ObjectID: ObjectID]) -> ObjectState {
        var copy = self
        copy.id = mapping[id] ?? id
        copy.toOne = toOne.mapValues { mapping[$0] ?? $0 }
        copy.toMany = toMany.mapValues { $0.map { mapping[$0] ?? $0 } }
        return copy
    }

    /// Whether the state's ID or relationships may hold IDs of the mapping: its ID is mapped,
    /// or it has relationships.
    func mentionsIDs(of mapping: [ObjectID: ObjectID]) -> Bool {
        !toOne.isEmpty || !toMany.isEmpty || (id.isTemporary && mapping[id] != nil)
    }

    /// The value of a property as a comparable thing, for change tracking.
    func value(of property: String) -> AnyHashable? {
        if let value = attributes[property] { return value }
        if let value = toOne[property] { return value }
        if let value = toMany[property], !value.isEmpty { return value }
        return nil
    }
}

extension ObjectState {
    /// The state of a packed row, adopting its values when they are packed in the order of
    /// `keys` (the usual case), else rearranging them.
    ///
    /// - Parameters:
    ///   - row: The row.
    ///   - keys: The attribute keys of the row's entity.
    ///   - id: Makes the ID of a row of the store.
    init(packed row: PackedRow, keys: AttributeKeys, id: (RowReference) -> ObjectID) {
        self.init(
            id: id(row.reference), version: row.version,
            attributes: row.attributes.keys.matches(keys)
                ? row.attributes : PackedAttributes(keys: keys, dictionary: row.attributes.dictionary),
            toOne: row.toOne.isEmpty ? [:] : row.toOne.mapValues(id),
            toMany: row.toMany.isEmpty ? [:] : row.toMany.mapValues { $0.map(id) })
    }
}
