public import Foundation
import TernCore

/// Reading and writing step mappings as JSON mapping files (`docs/MappingFormat.md`).
///
/// ```json
/// {"source": "Event 1", "destination": "Event 2",
///  "passes": [{"name": "StepOne", "entityMappings": [
///      {"name": "EventToStamp", "kind": "transform", "source": "Event", "destination": "StampEvent",
///       "attributes": {"stamp": "timeInterval($source.timeStamp)"}}]}]}
/// ```
extension StepMapping {
    /// The largest mapping file read, in bytes.
    public static let maximumFileSize = 16 << 20

    // MARK: - Reading

    /// Reads a step mapping from the JSON of a mapping file.
    ///
    /// A file holds either `passes` (several mapping models) or the `entityMappings` of a single
    /// one at the top level. Value expressions are parsed; they are checked against the models by
    /// ``resolved(in:)``.
    ///
    /// - Parameter jsonData: The file's contents.
    /// - Throws: ``MigrationError`` with code ``MigrationError/Code/unreadableMappingFile`` for
    ///   JSON that does not follow the format (naming the place), and
    ///   ``MigrationError/Code/invalidExpression`` or ``MigrationError/Code/invalidMapping`` for a
    ///   value expression, kind or filter that does not parse (naming the mapping and property).
    /// - Complexity: O(*n*) in the size of the file.
    public init(jsonData: Data) throws(MigrationError) {
        guard jsonData.count <= Self.maximumFileSize else {
            throw MigrationError(
                .unreadableMappingFile, "The mapping file is larger than \(Self.maximumFileSize) bytes")
        }
        let file: MappingFileJSON
        do {
            file = try JSONDecoder().decode(MappingFileJSON.self, from: jsonData)
        } catch let error as DecodingError {
            throw MigrationError(
                .unreadableMappingFile, "The mapping file is not valid: \(Self.describe(error))", underlyingError: error
            )
        } catch {
            throw MigrationError(.unreadableMappingFile, "The mapping file is not valid JSON", underlyingError: error)
        }
        var passes: [MappingModel] = []
        if let filePasses = file.passes {
            for pass in filePasses { passes.append(try pass.mappingModel()) }
        } else if let entityMappings = file.entityMappings {
            let single = MappingModelJSON(
                name: file.name ?? "Mapping", sourceHashes: file.sourceHashes,
                destinationHashes: file.destinationHashes,
                entityMappings: entityMappings, order: file.order)
            passes.append(try single.mappingModel())
        } else {
            throw MigrationError(
                .unreadableMappingFile, "The mapping file has neither \"passes\" nor \"entityMappings\"")
        }
        self.init(from: file.source, to: file.destination, passes: passes)
    }

    /// Reads a mapping file.
    ///
    /// - Parameter url: The file's location.
    /// - Throws: ``MigrationError`` with code ``MigrationError/Code/unreadableMappingFile`` and the
    ///   path when the file cannot be read, and the errors of ``init(jsonData:)``.
    /// - Complexity: O(*n*) in the size of the file.
    public init(contentsOf url: URL) throws(MigrationError) {
        let data: Data
        do {
            let size = try url.resourceValues(forKeys: [.fileSizeKey]).fileSize ?? 0
            guard size <= Self.maximumFileSize else {
                var error = MigrationError(
                    .unreadableMappingFile, "The mapping file is larger than \(Self.maximumFileSize) bytes")
                error.path = url.path
                throw error
            }
            data = try Data(contentsOf: url)
        } catch let error as MigrationError {
            throw error
        } catch {
            var failure = MigrationError(.unreadableMappingFile, "The mapping file cannot be read; check the path")
            failure.path = url.path
            throw failure
        }
        do {
            try self.init(jsonData: data)
        } catch {
            var located = error
            located.path = url.path
            throw located
        }
    }

    // MARK: - Writing

    /// The step mapping as the JSON of a mapping file, keys sorted, with each pass's entity hashes
    /// when it has them.
    ///
    /// - Returns: UTF-8 JSON that ``init(jsonData:)`` reads back to an equal step mapping.
    /// - Throws: ``MigrationError`` with code ``MigrationError/Code/unreadableMappingFile`` if
    ///   encoding fails.
    /// - Complexity: O(*n*) in the size of the mappings.
    public func jsonData() throws(MigrationError) -> Data {
        let file = MappingFileJSON(
            source: sourceVersion, destination: destinationVersion, passes: passes.map(MappingModelJSON.init))
        let encoder = JSONEncoder()
        encoder.outputFormatting = [.sortedKeys, .prettyPrinted, .withoutEscapingSlashes]
        do {
            return try encoder.encode(file)
        } catch {
            throw MigrationError(
                .unreadableMappingFile, "The mapping could not be encoded as JSON", underlyingError: error)
        }
    }

    /// Writes the step mapping to a mapping file, atomically: JSON, or, to a path ending in
    /// `.xcmappingmodel`, an Xcode mapping model bundle of its one pass
    /// (``writeXcodeMappingModel(to:pass:modelPath:)``).
    ///
    /// - Parameter url: Where to write.
    /// - Throws: ``MigrationError`` with code ``MigrationError/Code/unreadableMappingFile`` and the
    ///   path; ``MigrationError/Code/invalidMapping`` for a step of several passes written to an
    ///   `.xcmappingmodel` (write each pass on its own) or an expression Xcode's form cannot hold.
    /// - Complexity: O(*n*) in the size of the mappings.
    public func write(to url: URL) throws(MigrationError) {
        if url.pathExtension.lowercased() == "xcmappingmodel" {
            guard passes.count == 1 else {
                var error = MigrationError(
                    .invalidMapping,
                    "An Xcode mapping model holds one pass and the step has \(passes.count); write each with "
                        + "writeXcodeMappingModel(to:pass:modelPath:)")
                error.path = url.path
                throw error
            }
            try writeXcodeMappingModel(to: url)
            return
        }
        let data = try jsonData()
        do {
            try data.write(to: url, options: .atomic)
        } catch {
            var failure = MigrationError(.unreadableMappingFile, "The mapping file cannot be written; check the folder")
            failure.path = url.path
            throw failure
        }
    }

    // MARK: - Non public

    private static func describe(_ error: DecodingError) -> String {
        func place(_ path: [any CodingKey]) -> String {
            path.isEmpty
                ? "the top level" : path.map { $0.intValue.map { "[\($0)]" } ?? $0.stringValue }.joined(separator: ".")
        }
        switch error {
        case .typeMismatch(_, let context), .valueNotFound(_, let context):
            return "wrong or missing value at \(place(context.codingPath))"
        case .keyNotFound(let key, let context):
            return "\"\(key.stringValue)\" is missing at \(place(context.codingPath))"
        case .dataCorrupted(let context):
            return context.codingPath.isEmpty ? "not JSON" : "bad value at \(place(context.codingPath))"
        @unknown default:
            return "unexpected content"
        }
    }
}

/// The top level of a mapping file.
private struct MappingFileJSON: Codable {
    var source: String?
    var destination: String?
    var passes: [MappingModelJSON]?
    var name: String?
    var sourceHashes: [String: Data]?
    var destinationHashes: [String: Data]?
    var entityMappings: [EntityMappingJSON]?
    var order: String?

    init(source: String?, destination: String?, passes: [MappingModelJSON]) {
        self.source = source
        self.destination = destination
        self.passes = passes
    }
}

/// One mapping model (pass) in a mapping file.
private struct MappingModelJSON: Codable {
    var name: String
    var sourceHashes: [String: Data]?
    var destinationHashes: [String: Data]?
    var entityMappings: [EntityMappingJSON]
    var order: String?

    init(
        name: String, sourceHashes: [String: Data]?, destinationHashes: [String: Data]?,
        entityMappings: [EntityMappingJSON], order: String?
    ) {
        self.name = name
        self.order = order
        self.sourceHashes = sourceHashes
        self.destinationHashes = destinationHashes
        self.entityMappings = entityMappings
    }

    init(_ model: MappingModel) {
        name = model.name
        sourceHashes = model.sourceEntityVersionHashes.isEmpty ? nil : model.sourceEntityVersionHashes
        destinationHashes = model.destinationEntityVersionHashes.isEmpty ? nil : model.destinationEntityVersionHashes
        entityMappings = model.entityMappings.map(EntityMappingJSON.init)
        order = model.order == .given ? nil : model.order.rawValue
    }

    func mappingModel() throws(MigrationError) -> MappingModel {
        var mappings: [EntityMapping] = []
        for mapping in entityMappings { mappings.append(try mapping.entityMapping()) }
        var model = MappingModel(
            name: name, sourceHashes: sourceHashes ?? [:], destinationHashes: destinationHashes ?? [:],
            entityMappings: mappings)
        if let order {
            guard let known = MappingOrder(rawValue: order) else {
                let orders = MappingOrder.allCases.map(\.rawValue).joined(separator: ", ")
                throw MigrationError(
                    .unreadableMappingFile, "Unknown order '\(order)' in mapping model \(name); use one of \(orders)")
            }
            model.order = known
        }
        return model
    }
}

/// One entity mapping in a mapping file; property mappings are objects from name to expression text.
private struct EntityMappingJSON: Codable {
    var name: String?
    var kind: String
    var source: String?
    var destination: String?
    var filter: String?
    var attributes: [String: String?]?
    var relationships: [String: String?]?
    var policy: String?
    var userInfo: [String: String]?

    init(_ mapping: EntityMapping) {
        name = mapping.name
        kind = mapping.kind.rawValue
        source = mapping.sourceEntityName
        destination = mapping.destinationEntityName
        filter = mapping.sourceFilter?.description
        attributes = Self.object(mapping.attributeMappings)
        relationships = Self.object(mapping.relationshipMappings)
        policy = mapping.policyName
        userInfo = mapping.userInfo.isEmpty ? nil : mapping.userInfo
    }

    func entityMapping() throws(MigrationError) -> EntityMapping {
        guard let kind = EntityMapping.Kind(rawValue: kind) else {
            let known = EntityMapping.Kind.allCases.map(\.rawValue).joined(separator: ", ")
            throw MigrationError(
                .invalidMapping, "Unknown entity mapping kind '\(kind)'; use one of \(known)", mapping: name)
        }
        let mappingName = name ?? EntityMapping.defaultName(kind: kind, source: source, destination: destination)
        var predicate: FetchPredicate?
        if let filter {
            do {
                predicate = try FetchPredicate(filter)
            } catch {
                throw MigrationError(
                    .invalidMapping, "The filter does not parse: \(error.message)", mapping: mappingName,
                    entity: source, underlyingError: error)
            }
        }
        var mapping = EntityMapping(
            name: mappingName, kind: kind, source: source, destination: destination, filter: predicate,
            attributes: try Self.properties(attributes, mapping: mappingName, entity: destination),
            relationships: try Self.properties(relationships, mapping: mappingName, entity: destination),
            policy: policy)
        mapping.userInfo = userInfo ?? [:]
        return mapping
    }

    private static func properties(_ object: [String: String?]?, mapping: String, entity: String?)
        throws(MigrationError)
        -> [PropertyMapping]
    {
        var result: [PropertyMapping] = []
        for (name, text) in (object ?? [:]).sorted(by: { $0.key < $1.key }) {
            guard let text else {
                result.append(PropertyMapping(name, nil))
                continue
            }
            do {
                result.append(PropertyMapping(name, try ValueExpression(text)))
            } catch {
                var located = error.located(mapping: mapping, property: name)
                located.entityName = entity
                throw located
            }
        }
        return result
    }

    private static func object(_ mappings: [PropertyMapping]) -> [String: String?]? {
        guard !mappings.isEmpty else { return nil }
        var result: [String: String?] = [:]
        for mapping in mappings { result[mapping.name] = .some(mapping.valueExpression?.description) }
        return result
    }
}
