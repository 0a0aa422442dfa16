public import Foundation
public import TernCore

/// Importing records from TSV, CSV and JSON files, with upsert by uniqueness key.
extension ObjectContext {
    /// Imports a record file into the context's stores, all or nothing, in one save.
    ///
    /// Records are read in batches (TSV and CSV stream; JSON is parsed whole, see
    /// ``JSONRecordReader``). A record whose uniqueness key — ``RecordImportOptions/uniqueBy``, or
    /// the entity's first uniqueness constraint — matches an object in the store or earlier in the
    /// file updates that object with the values the record gives; keys the record leaves out stay
    /// as they are. Other records insert objects. Relationships: `_id` names a record for
    /// references inside the file (`"recipe": "Recipe/p1"`), a `relationship.attribute` key (such
    /// as `recipe.uid`) finds the destination by that attribute, and nested JSON objects create or
    /// update related objects (in array order for ordered relationships; see `docs/Import.md`).
    ///
    /// Nothing is saved until every record has been read and converted; any error rolls the
    /// context back, so the store is left untouched. The changes are held in the context until the
    /// single save, so memory grows with the number of records imported. With
    /// ``RecordImportOptions/savesEachBatch`` each batch is saved as it is read instead: memory
    /// stays bounded, and an error keeps the batches saved before it.
    ///
    /// A TSV or CSV file whose records can only insert (no uniqueness key, no relationship or
    /// derived column, no required relationship) streams instead: batches of records are
    /// converted, validated as the save would and written through
    /// ``/TernCore/ObjectContext/batchInsert(entityName:options:batches:)`` in one transaction,
    /// still all or nothing, in memory bounded by a batch.
    ///
    /// ```swift
    /// let summary = try await context.importRecords(
    ///     from: url, options: RecordImportOptions(format: .json), progress: progress)
    /// print(summary.insertedCount, summary.updatedCount)
    /// ```
    ///
    /// - Parameters:
    ///   - url: The record file.
    ///   - options: Its format, entity and matching key.
    ///   - progress: Updated as records are read (bytes for TSV and CSV, records for JSON).
    /// - Returns: What was inserted, updated and deleted.
    /// - Throws: ``RecordError`` naming the file, line and column (and entity and attribute) of the
    ///   first bad record, or ``RecordError/Code/saveFailed`` when the store refuses the save.
    /// - Complexity: O(*n*) records, with one store query per record that has a key or a reference.
    public func importRecords(
        from url: URL, options: RecordImportOptions, progress: Progress? = nil
    ) async throws -> RecordImportSummary {
        precondition(!hasChanges, "importRecords needs a context without unsaved changes")
        var importer = RecordImporter(model: coordinator.model, options: options, path: url.path)
        do {
            switch options.format {
            case .tsv, .csv:
                guard options.entityName != nil else {
                    throw RecordError(
                        .unknownKey, "a \(options.format.rawValue) file holds one entity; name it", path: url.path)
                }
                let reader = try DelimitedRecordReader(
                    contentsOf: url, dialect: options.format == .tsv ? .tsv : .csv)
                try importer.checkHeader(reader.header)
                progress?.totalUnitCount = Int64(
                    (try? FileManager.default.attributesOfItem(atPath: url.path)[.size] as? Int) ?? 0)
                if let plan = importer.streamingPlan(header: reader.header, in: self) {
                    return try await importStreaming(reader, plan: plan, path: url.path, progress: progress)
                }
                while case let batch = try reader.nextBatch(maxCount: options.batchSize), !batch.isEmpty {
                    for record in batch { _ = try await importer.upsert(record, entityName: nil, in: self) }
                    try await importer.saveBatchIfAsked(in: self, path: url.path)
                    progress?.completedUnitCount = reader.bytesRead
                }
            case .json:
                let reader = try JSONRecordReader(contentsOf: url)
                progress?.totalUnitCount = Int64(reader.count)
                while case let batch = reader.nextBatch(maxCount: options.batchSize), !batch.isEmpty {
                    for record in batch {
                        if let only = options.entityName, let name = record.entityName, name != only { continue }
                        _ = try await importer.upsert(record, entityName: nil, in: self)
                    }
                    try await importer.saveBatchIfAsked(in: self, path: url.path)
                    progress?.completedUnitCount += Int64(batch.count)
                }
            }
            try importer.resolvePendingReferences()
        } catch {
            rollback()
            throw error
        }
        do {
            try await save()
        } catch {
            rollback()
            let kept = options.savesEachBatch ? "the batches before it are saved" : "nothing was imported"
            throw RecordError(
                .saveFailed, "the store refused the import: \(error); \(kept)", path: url.path, underlyingError: error)
        }
        return importer.summary
    }
}

/// The state of one import: objects matched by key, `_id` names, references still to wire.
struct RecordImporter {
    let model: ManagedObjectModel
    let options: RecordImportOptions
    let path: String
    var summary = RecordImportSummary()
    private var byKey: [String: [[AttributeValue]: ManagedObject]] = [:]
    private var localIDs: [String: ManagedObject] = [:]
    private var matched: Set<ObjectID> = []
    private var pending:
        [(object: ManagedObject, relationship: RelationshipDescription, names: [String], line: Int, column: Int?)] = []
    /// The properties found for each entity and key: finding one walks the entity's ancestors.
    private var properties: [String: [String: Property]] = [:]

    init(model: ManagedObjectModel, options: RecordImportOptions, path: String) {
        self.model = model
        self.options = options
        self.path = path
    }

    /// Checks a TSV or CSV header against the entity before any row is read.
    mutating func checkHeader(_ header: [String]) throws(RecordError) {
        guard let name = options.entityName else { return }
        let entity = try entity(named: name, line: 1)
        for (index, key) in header.enumerated() {
            _ = try property(key, of: entity, line: 1, column: index + 1)
        }
    }

    /// Inserts or updates the object a record describes, with its nested records.
    ///
    /// - Parameters:
    ///   - record: The record.
    ///   - entityName: The entity when the record is nested, or nil for the file's or options' one.
    ///   - reusing: For a nested record without a key, an existing object to update.
    mutating func upsert(
        _ record: ImportRecord, entityName: String?, reusing: ManagedObject? = nil, in context: isolated ObjectContext
    ) async throws -> ManagedObject {
        guard let name = entityName ?? record.entityName ?? options.entityName else {
            throw RecordError(
                .unknownKey, "the file does not name the records' entity; give the entity", path: path,
                line: record.line)
        }
        let entity = try self.entity(named: name, line: record.line)
        var values: [String: AttributeValue?] = [:]
        var links: [(RelationshipDescription, String?, RecordValue, Int?)] = []
        for (key, value) in record.fields where key != "_id" {
            let column = record.columns[key]
            switch try property(key, of: entity, line: record.line, column: column) {
            case .attribute(let attribute):
                values[key] = try convert(value, attribute, entity: name, record: record, column: column)
            case .relationship(let relationship, let attribute):
                links.append((relationship, attribute, value, column))
            }
        }
        let key = matchingKey(of: name)
        let keyValues = key.isEmpty ? nil : key.map { values[$0] ?? nil }.compactMap { $0 }
        var object = reusing
        if object == nil, let keyValues, keyValues.count == key.count {
            object = byKey[name]?[keyValues]
            if object == nil {
                var request = FetchRequest(
                    entityName: name,
                    predicate: .and(
                        zip(key, keyValues).map {
                            .compare(.keyPath($0), .equalTo, .constant($1))
                        }))
                request.fetchLimit = 1
                request.includesPendingChanges = false
                object = try await context.fetch(request).first
            }
        }
        let target: ManagedObject
        if let object {
            target = object
            if target.isFault { try await context.fulfillFaults(for: [target.objectID]) }
            if !target.isInserted, matched.insert(target.objectID).inserted { summary.updated[name, default: 0] += 1 }
        } else {
            target = context.insert(name)
            summary.inserted[name, default: 0] += 1
        }
        if let keyValues, keyValues.count == key.count { byKey[name, default: [:]][keyValues] = target }
        if case .text(let local)? = record.fields["_id"] { localIDs[local] = target }
        // The merge policy decides between a record and an object saved before the import.
        let inStore = !target.isInserted && !target.hasChanges
        if inStore, options.mergePolicy == .error {
            throw RecordError(
                .conflict, "the record matches a \(name) already in the store; choose a merge policy that merges them",
                path: path, line: record.line)
        }
        if inStore, options.mergePolicy == .rollback { return target }
        let fillsOnly = inStore && options.mergePolicy == .storeTrumps
        for (attribute, value) in values where !(fillsOnly && target[attribute: attribute] != nil) {
            do {
                try target.setValue(value, forAttribute: attribute)
            } catch {
                throw RecordError(
                    .invalidValue, "\(name).\(attribute): \(error.message)", path: path,
                    line: record.line, column: record.columns[attribute], underlyingError: error)
            }
        }
        for (relationship, attribute, value, column) in links
        where
            !(fillsOnly
            && (relationship.isToMany
                ? !target.objectIDs(for: relationship.name).isEmpty : target[toOne: relationship.name] != nil))
        {
            try await link(
                target, relationship, by: attribute, to: value, line: record.line, column: column, in: context)
        }
        return target
    }

    /// Saves the batch just read when ``RecordImportOptions/savesEachBatch`` asks for it, and lets
    /// go of the objects matched by key (later records find them in the store).
    mutating func saveBatchIfAsked(in context: isolated ObjectContext, path: String) async throws {
        guard options.savesEachBatch else { return }
        do {
            try await context.save()
        } catch {
            throw RecordError(
                .saveFailed, "the store refused a batch of the import: \(error); the batches before it are saved",
                path: path,
                underlyingError: error)
        }
        byKey = [:]
    }

    /// Wires the `_id` references once every record has been read.
    func resolvePendingReferences() throws(RecordError) {
        for reference in pending {
            var objects: [ManagedObject] = []
            for local in reference.names {
                guard let object = localIDs[local] else {
                    throw RecordError(
                        .unresolvedReference,
                        "\(reference.object.entity.name).\(reference.relationship.name) refers to an _id no record has; check the reference",
                        path: path, line: reference.line, column: reference.column)
                }
                objects.append(object)
            }
            if reference.relationship.isToMany {
                reference.object.setObjects(objects, for: reference.relationship.name)
            } else {
                reference.object[toOne: reference.relationship.name] = objects.first
            }
        }
    }

    /// How a TSV or CSV import streams into the store when every record can only insert, or nil
    /// when records may match objects (a uniqueness key), name relationships or derived
    /// attributes, or when batches are saved one by one.
    ///
    /// Then no record depends on another or on the store, and validating each batch as it is
    /// read is what the one save would check: the required and rule-checked attributes (no
    /// relationship is required, no constraint can break).
    func streamingPlan(header: [String], in context: isolated ObjectContext) -> StreamedImportPlan? {
        guard !options.savesEachBatch, options.uniqueBy == nil, context.parent == nil, let name = options.entityName,
            let entity = model.entity(named: name), context.coordinator.store(forEntity: name) != nil
        else { return nil }
        guard ([entity] + model.ancestors(of: name)).allSatisfy({ $0.uniquenessConstraints.isEmpty }),
            model.allRelationships(of: name).allSatisfy({ $0.isTransient || !$0.isRequired })
        else { return nil }
        var columns: [AttributeDescription?] = []
        for key in header {
            if key == "_id" {
                columns.append(nil)
                continue
            }
            guard case .attribute(let attribute)? = properties[name]?[key], !attribute.isDerived else { return nil }
            columns.append(attribute)
        }
        let given = Set(columns.compactMap { $0?.name })
        // Two keys naming one attribute take the record-by-record path, which reports it.
        guard given.count == columns.count(where: { $0 != nil }) else { return nil }
        var defaults: [String: AttributeValue] = [:]
        for attribute in model.allAttributes(of: name)
        where !attribute.isTransient && !attribute.isDerived && !given.contains(attribute.name) {
            if let value = attribute.defaultValue { defaults[attribute.name] = value }
        }
        let checked = model.allAttributes(of: name).filter { attribute in
            !attribute.isDerived && !(attribute.isTransient && attribute.defaultValue != nil)
                && (!attribute.isOptional || attribute.minimum != nil || attribute.maximum != nil
                    || attribute.regularExpression != nil)
        }
        return StreamedImportPlan(
            entityName: name, columns: columns,
            defaults: defaults.sorted { $0.key < $1.key }.map { ($0.key, $0.value) }, checked: checked)
    }

    // MARK: - Non public

    /// What a record key names.
    private enum Property {
        case attribute(AttributeDescription)
        case relationship(RelationshipDescription, byAttribute: String?)
    }

    private func entity(named name: String, line: Int) throws(RecordError) -> EntityDescription {
        guard let entity = model.entity(named: name) else {
            throw RecordError(
                .unknownKey, "the model has no entity named '\(name)'; check the entity name", path: path, line: line)
        }
        guard !entity.isAbstract else {
            throw RecordError(
                .unknownKey, "\(name) is abstract; list records under a concrete entity", path: path, line: line)
        }
        return entity
    }

    private mutating func property(
        _ key: String, of entity: EntityDescription, line: Int, column: Int?
    ) throws(RecordError) -> Property {
        if let known = properties[entity.name]?[key] { return known }
        let found = try findProperty(key, of: entity, line: line, column: column)
        properties[entity.name, default: [:]][key] = found
        return found
    }

    private func findProperty(_ key: String, of entity: EntityDescription, line: Int, column: Int?) throws(RecordError)
        -> Property
    {
        if key == "_id" { return .attribute(AttributeDescription(name: "_id", type: .string)) }
        if let attribute = model.allAttributes(of: entity.name).first(where: { $0.name == key }), !attribute.isTransient
        {
            return .attribute(attribute)
        }
        let parts = key.split(separator: ".", maxSplits: 1).map(String.init)
        if let relationship = model.allRelationships(of: entity.name).first(where: { $0.name == parts[0] }),
            !relationship.isTransient
        {
            guard parts.count == 2 else { return .relationship(relationship, byAttribute: nil) }
            guard !relationship.isToMany,
                model.allAttributes(of: relationship.destinationEntityName).contains(where: { $0.name == parts[1] })
            else {
                throw RecordError(
                    .unknownKey,
                    "'\(key)' must name a to-one relationship and an attribute of \(relationship.destinationEntityName)",
                    path: path, line: line, column: column)
            }
            return .relationship(relationship, byAttribute: parts[1])
        }
        throw RecordError(
            .unknownKey, "\(entity.name) has no attribute or relationship named '\(key)'; check the name",
            path: path, line: line, column: column)
    }

    /// The attributes that identify an object of an entity; empty when it has none.
    func matchingKey(of entityName: String) -> [String] {
        if entityName == options.entityName, let uniqueBy = options.uniqueBy { return uniqueBy }
        var name: String? = entityName
        while let current = name, let entity = model.entity(named: current) {
            if let constraint = entity.uniquenessConstraints.first(where: { constraint in
                constraint.allSatisfy { attribute in
                    model.allAttributes(of: entityName).contains { $0.name == attribute }
                }
            }) {
                return constraint
            }
            name = entity.parentName
        }
        return []
    }

    private func convert(
        _ value: RecordValue, _ attribute: AttributeDescription, entity: String, record: ImportRecord, column: Int?
    ) throws(RecordError) -> AttributeValue? {
        try Self.convert(value, attribute, entity: entity, path: path, line: record.line, column: column)
    }

    /// A record value converted to an attribute's type, or nil for no value.
    ///
    /// - Throws: ``RecordError`` with code `invalidValue` when the value does not convert, or is
    ///   missing for a required attribute.
    static func convert(
        _ value: RecordValue, _ attribute: AttributeDescription, entity: String, path: String, line: Int, column: Int?
    ) throws(RecordError) -> AttributeValue? {
        guard let converted = value.attributeValue(for: attribute.type) else {
            throw RecordError(
                .invalidValue,
                "\(entity).\(attribute.name) needs a value of type \(attribute.type.xcodeName); fix the value",
                path: path, line: line, column: column)
        }
        if converted == nil, !attribute.isOptional {
            throw RecordError(
                .invalidValue, "\(entity).\(attribute.name) is required but has no value; give one",
                path: path, line: line, column: column)
        }
        return converted
    }

    /// Sets one relationship from a record value.
    private mutating func link(
        _ object: ManagedObject, _ relationship: RelationshipDescription, by attribute: String?, to value: RecordValue,
        line: Int, column: Int?, in context: isolated ObjectContext
    ) async throws {
        let name = relationship.name
        let destination = relationship.destinationEntityName
        func invalid() -> RecordError {
            RecordError(
                .invalidValue,
                "\(object.entity.name).\(name) needs \(relationship.isToMany ? "an array of records or _ids" : "a record, an _id or null")",
                path: path, line: line, column: column)
        }
        if let attribute {
            guard let type = model.allAttributes(of: destination).first(where: { $0.name == attribute })?.type,
                let converted = value.attributeValue(for: type)
            else { throw invalid() }
            guard let converted else {
                object[toOne: name] = nil
                return
            }
            var found = matchingKey(of: destination) == [attribute] ? byKey[destination]?[[converted]] : nil
            if found == nil {
                var request = FetchRequest(
                    entityName: destination, predicate: .compare(.keyPath(attribute), .equalTo, .constant(converted)))
                request.fetchLimit = 1
                request.includesPendingChanges = false
                found = try await context.fetch(request).first
            }
            guard let found else {
                throw RecordError(
                    .unresolvedReference,
                    "no \(destination) has the \(attribute) that \(object.entity.name).\(name).\(attribute) gives; import it first",
                    path: path, line: line, column: column)
            }
            object[toOne: name] = found
            return
        }
        switch (value, relationship.isToMany) {
        case (.null, false): object[toOne: name] = nil
        case (.null, true): object.setObjects([], for: name)
        case (.text(let local), false): pending.append((object, relationship, [local], line, column))
        case (.record(let nested), false):
            let existing = matchingKey(of: destination).isEmpty ? object[toOne: name] : nil
            object[toOne: name] = try await upsert(nested, entityName: destination, reusing: existing, in: context)
        case (.list(let items), true):
            if items.allSatisfy({ if case .text = $0 { true } else { false } }) {
                pending.append(
                    (
                        object, relationship, items.compactMap { if case .text(let s) = $0 { s } else { nil } }, line,
                        column
                    ))
                return
            }
            let keyless = matchingKey(of: destination).isEmpty
            var old = keyless ? object.objects(for: name) : []
            if !relationship.isOrdered { old.sort { ($0.objectID.primaryKey ?? 0) < ($1.objectID.primaryKey ?? 0) } }
            if !old.isEmpty { try await context.fulfillFaults(for: old.map(\.objectID)) }
            var objects: [ManagedObject] = []
            for (index, item) in items.enumerated() {
                guard case .record(let nested) = item else { throw invalid() }
                let reuse = index < old.count ? old[index] : nil
                objects.append(try await upsert(nested, entityName: destination, reusing: reuse, in: context))
            }
            object.setObjects(objects, for: name)
            if relationship.deleteRule == .cascade {
                for leftover in old.dropFirst(items.count) {
                    context.delete(leftover)
                    summary.deleted[destination, default: 0] += 1
                }
            }
        default: throw invalid()
        }
    }
}
