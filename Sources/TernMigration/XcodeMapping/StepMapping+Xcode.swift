public import Foundation
public import TernCore

/// Reading and writing Xcode mapping models: `.xcmappingmodel` bundles and compiled `.cdm` files
/// (see "Xcode mapping models" in `docs/MappingFormat.md`).
///
/// ```swift
/// var policies = MigrationPolicyRegistry()
/// policies.register(LabelPolicy(), named: "Events.LabelPolicy")
/// let step = try StepMapping(
///     xcodeMappingModelsAt: [stepOne, stepTwo], in: events, policies: policies)
/// let plan = try MigrationPlanner(model: events, mappings: [step]).plan(storeHashes: hashes)
/// ```
extension StepMapping {
    /// The file extensions of Xcode mapping models: the bundle Xcode edits and the file it compiles.
    public static let xcodeMappingExtensions: Set<String> = ["xcmappingmodel", "cdm"]

    /// Reads Xcode mapping models as the passes of one step, bound to the model's versions.
    ///
    /// Each mapping model becomes a pass, in the order given, named after its file. An
    /// `.xcmappingmodel` names its versions by the paths of their `.xcdatamodel`s; a `.cdm` by
    /// its entities' version hashes. Expressions Xcode autogenerates are made as Xcode makes them
    /// when it compiles; archived expressions are translated; `entityMigrationPolicyClassName`
    /// names a policy of `policies`, and `FUNCTION($entityPolicy, "selector:", …)` one of its
    /// ``EntityMigrationPolicy/expressionFunctions``.
    ///
    /// - Parameters:
    ///   - urls: The mapping models, one per pass, for the same two versions.
    ///   - model: The versioned model.
    ///   - policies: The policies custom entity mappings name; nil to read without checking them
    ///     (the migration then refuses a policy that is not registered).
    /// - Throws: ``MigrationError``: ``MigrationError/Code/unreadableMappingFile`` for a file
    ///   that is not a mapping model; ``MigrationError/Code/unknownVersion`` when its versions
    ///   are not the model's, or two files map different versions;
    ///   ``MigrationError/Code/invalidMapping`` or ``MigrationError/Code/unknownPolicy`` with one
    ///   failure per expression that cannot be translated, policy or selector that is not
    ///   registered, or property that does not fit the models, each naming the mapping model
    ///   (its path), the entity mapping, the property and the expression.
    /// - Complexity: O(*n*) in the size of the files, plus validating against the models.
    public init(xcodeMappingModelsAt urls: [URL], in model: VersionedModel, policies: MigrationPolicyRegistry? = nil)
        throws(MigrationError)
    {
        var passes: [MappingModel] = []
        var versions: (source: String, destination: String)?
        for url in urls {
            let description = try XcodeMappingDescription(contentsOf: url)
            let bound = try XcodeMappingBinder(description: description, model: model, policies: policies)
                .mappingModel()
            if let versions, versions != (bound.source.name, bound.destination.name) {
                var error = MigrationError(
                    .unknownVersion,
                    "The Xcode mapping model \(description.name) maps \(bound.source.name) → \(bound.destination.name), "
                        + "but the passes before it map \(versions.source) → \(versions.destination); give one step's mapping models together"
                )
                error.path = url.path
                throw error
            }
            versions = (bound.source.name, bound.destination.name)
            passes.append(bound.mapping)
        }
        guard let versions else {
            throw MigrationError(.unreadableMappingFile, "No Xcode mapping model was given")
        }
        let step = StepMapping(from: versions.source, to: versions.destination, passes: passes)
        do {
            self = try step.resolved(in: model)
        } catch {
            var located = error
            if urls.count == 1 { located.path = located.path ?? urls[0].path }
            throw located
        }
    }

    /// The two versions an Xcode mapping model is for, without translating its expressions:
    /// what Core Data matches when it looks for a step's mapping model in a bundle.
    ///
    /// - Parameters:
    ///   - url: The `.xcmappingmodel` or `.cdm`.
    ///   - model: The versioned model.
    /// - Returns: The source and destination version names.
    /// - Throws: ``MigrationError`` with code ``MigrationError/Code/unreadableMappingFile`` or
    ///   ``MigrationError/Code/unknownVersion`` when the file is unreadable or not for this model.
    public static func xcodeMappingVersions(at url: URL, in model: VersionedModel) throws(MigrationError)
        -> (source: String, destination: String)
    {
        let description = try XcodeMappingDescription(contentsOf: url)
        let versions = try XcodeMappingBinder(description: description, model: model, policies: nil).versions()
        return (versions.source.name, versions.destination.name)
    }

    /// The Xcode mapping models directly in a folder, sorted by name: where Core Data looks for a
    /// step's mapping model (an app's bundle), and where Xcode keeps them beside the model.
    ///
    /// - Parameter directory: The folder.
    /// - Returns: The `.xcmappingmodel` bundles and `.cdm` files in it; empty when it cannot be read.
    /// - Complexity: O(*n*) in the number of files in the folder.
    public static func xcodeMappingModels(in directory: URL) -> [URL] {
        let names = (try? FileManager.default.contentsOfDirectory(atPath: directory.path)) ?? []
        return names.sorted().filter { xcodeMappingExtensions.contains(($0 as NSString).pathExtension.lowercased()) }
            .map { directory.appendingPathComponent($0) }
    }

    // MARK: - Writing

    /// Writes one pass of the step as an `.xcmappingmodel` bundle that Xcode opens.
    ///
    /// Every expression is archived explicitly (none is left for Xcode to autogenerate); the
    /// source and destination models are recorded by the paths `modelPath/<version>.xcdatamodel`.
    ///
    /// - Parameters:
    ///   - url: The bundle to write, ending in `.xcmappingmodel`; replaced when it exists.
    ///   - pass: The index of the pass to write.
    ///   - modelPath: The path of the `.xcdatamodeld` that Xcode records, relative to the project;
    ///     nil to record the versions' names alone.
    /// - Throws: ``MigrationError`` with code ``MigrationError/Code/invalidMapping`` for an
    ///   expression that Core Data cannot evaluate (such as `formatDate()`, which a policy
    ///   function must do), naming the entity mapping and property, and
    ///   ``MigrationError/Code/unreadableMappingFile`` when the bundle cannot be written.
    /// - Complexity: O(*n*) in the size of the pass.
    public func writeXcodeMappingModel(to url: URL, pass: Int = 0, modelPath: String? = nil) throws(MigrationError) {
        guard passes.indices.contains(pass) else {
            throw MigrationError(
                .invalidMapping, "The step has \(passes.count) pass(es); there is no pass \(pass) to write")
        }
        let prefix = modelPath.map { $0.hasSuffix("/") ? $0 : $0 + "/" } ?? ""
        let description = try XcodeMappingDescription(
            passes[pass], path: url.path,
            sourceModelPath: sourceVersion.map { prefix + $0 + ".xcdatamodel" },
            destinationModelPath: destinationVersion.map { prefix + $0 + ".xcdatamodel" })
        let xml = try description.xmlData()
        do {
            let manager = FileManager.default
            if manager.fileExists(atPath: url.path) { try manager.removeItem(at: url) }
            try manager.createDirectory(at: url, withIntermediateDirectories: true)
            try xml.write(to: url.appendingPathComponent(XcodeMappingDescription.documentName), options: .atomic)
        } catch {
            var failure = MigrationError(
                .unreadableMappingFile, "The mapping model bundle cannot be written; check the folder")
            failure.path = url.path
            throw failure
        }
    }
}

extension XcodeMappingDescription {
    /// Reads an `.xcmappingmodel` bundle or a `.cdm` file.
    ///
    /// - Throws: ``MigrationError`` with code ``MigrationError/Code/unreadableMappingFile`` and the path.
    init(contentsOf url: URL) throws(MigrationError) {
        let name = url.deletingPathExtension().lastPathComponent
        let isBundle = url.pathExtension.lowercased() == "xcmappingmodel"
        let file = isBundle ? url.appendingPathComponent(Self.documentName) : url
        let data: Data
        do {
            let size = try file.resourceValues(forKeys: [.fileSizeKey]).fileSize ?? 0
            guard size <= StepMapping.maximumFileSize else {
                throw MigrationError.unreadableXcodeMapping(
                    "it is larger than \(StepMapping.maximumFileSize) bytes", path: url.path)
            }
            data = try Data(contentsOf: file)
        } catch let error as MigrationError {
            throw error
        } catch {
            throw MigrationError.unreadableXcodeMapping(
                isBundle
                    ? "the bundle has no readable \(Self.documentName)" : "the file cannot be read; check the path",
                path: url.path)
        }
        if isBundle {
            try self.init(xmlData: data, name: name, path: url.path)
        } else {
            try self.init(compiledArchive: data, name: name, path: url.path)
        }
    }

    /// The description of a bound mapping model, for writing.
    ///
    /// - Throws: ``MigrationError`` with code ``MigrationError/Code/invalidMapping`` for an
    ///   expression Core Data cannot evaluate.
    init(_ mapping: MappingModel, path: String, sourceModelPath: String?, destinationModelPath: String?)
        throws(MigrationError)
    {
        var entities: [EntityMappingDescription] = []
        for entity in mapping.entityMappings {
            func describe(_ properties: [PropertyMapping]) throws(MigrationError) -> [PropertyMappingDescription] {
                var result: [PropertyMappingDescription] = []
                for property in properties {
                    do throws(XcodeExpressionTranslation.Refusal) {
                        let node = try property.valueExpression.map(XcodeExpressionTranslation.node)
                        result.append(PropertyMappingDescription(name: property.name, expression: node))
                    } catch {
                        throw MigrationError(
                            .invalidMapping,
                            "'\(property.valueExpression.map(String.init(describing:)) ?? "")' cannot be written "
                                + "to an Xcode mapping model: \(error.reason)",
                            mapping: entity.name, entity: entity.destinationEntityName, property: property.name,
                            underlyingError: error)
                    }
                }
                return result
            }
            // Xcode writes Undefined for the mappings whose kind their entities tell, and compiles them so.
            let types: [EntityMapping.Kind: EntityMappingDescription.MappingType] = [
                .add: .undefined, .remove: .undefined, .copy: .copy, .transform: .undefined, .custom: .custom,
            ]
            var described = EntityMappingDescription(
                name: entity.name, type: types[entity.kind] ?? .transform, sourceEntityName: entity.sourceEntityName,
                sourceEntityVersionHash: entity.sourceEntityName.flatMap { mapping.sourceEntityVersionHashes[$0] },
                destinationEntityName: entity.destinationEntityName,
                destinationEntityVersionHash: entity.destinationEntityName.flatMap {
                    mapping.destinationEntityVersionHashes[$0]
                },
                filterPredicate: entity.sourceFilter?.description, policyClassName: entity.policyName,
                userInfo: entity.userInfo)
            described.attributeMappings = try describe(entity.attributeMappings)
            described.relationshipMappings = try describe(entity.relationshipMappings)
            entities.append(described)
        }
        self.init(
            name: mapping.name, path: path, sourceModelPath: sourceModelPath,
            destinationModelPath: destinationModelPath,
            entityMappings: entities)
    }
}
