import Foundation
import TernCore
import TernFormats
import TernMigration
import TernSQLite
import TernTestSupport
import Testing

/// Every Xcode mapping model of the corpus with its model: read, bound to its two versions and
/// run on a store of its source version that Tern made with sample objects. Mapping models
/// that name a custom policy run with a test policy registered under its class name: one that
/// does what the app's class does (``CorpusPolicies``), or else the default stages.
@Suite struct XcodeMappingCorpusRunTests {
    /// The corpus's mapping models.
    static let items: [RealWorldCorpus.Item] = (try? RealWorldCorpus.items(of: .mappingModel)) ?? []

    /// The mapping models whose expressions Tern cannot translate (see XcodeMappingCorpusTests).
    static let untranslatable: Set<String> = ["ResearchKit__AppCore/APCMappingModel4ToModel6.xcmappingmodel"]

    /// Entities of which no sample objects are made, with why.
    static let excludedEntities: [String: Set<String>] = [
        // CareKit 2.1 links a HealthKit linkage to an OCKCDHealthKitTask, a new entity no 2.0 task
        // becomes: a 2.0 store with linkages cannot migrate, in Core Data either (the app has none).
        "carekit-apple__CareKit/2.0_2.1_Mapping.xcmappingmodel": ["OCKCDHealthKitLinkage"]
    ]

    /// The model of a mapping model: the one its manifest names, or else the model of its folder
    /// whose versions the mapping model's embedded models match, as Core Data finds them by hash.
    static func model(of item: RealWorldCorpus.Item) throws -> VersionedModel? {
        try item.mappingModelsModel()
    }

    /// A policy registered under an app's class name: the default stages.
    struct TestPolicy: EntityMigrationPolicy {}

    /// The step of one mapping model, read twice: once to learn the policy class names it
    /// names, once with a test policy registered under each.
    static func step(_ item: RealWorldCorpus.Item, model: VersionedModel) throws -> (
        StepMapping, MigrationPolicyRegistry
    ) {
        let unchecked = try StepMapping(xcodeMappingModelsAt: [item.url], in: model)
        var policies = CorpusPolicies.registry()
        for name in unchecked.passes.flatMap(\.entityMappings).compactMap(\.policyName)
        where policies.policy(named: name) == nil {
            policies.register(TestPolicy(), named: name)
        }
        return (try StepMapping(xcodeMappingModelsAt: [item.url], in: model, policies: policies), policies)
    }

    /// A store of the source version with sample objects (but of ``excludedEntities``), made by Tern.
    static func sampleStore(
        of item: RealWorldCorpus.Item, source: ManagedObjectModel, in folder: TemporaryDirectory
    ) async throws -> URL {
        let url = folder.path("Sample.sqlite")
        let store = try SQLiteStore(at: url, model: source)
        _ = try await store.save(
            StoreChangeSet(
                inserted: SampleObjects.rows(for: source, excluding: Self.excludedEntities[item.description] ?? [])))
        return url
    }

    @Test func theCorpusHasMappingModelsWithTheirModels() throws {
        #expect(Self.items.count >= 36)
        let bound = try Self.items.filter { try Self.model(of: $0) != nil }
        #expect(
            bound.count == Self.items.count,
            "\(Set(Self.items.map(\.description)).subtracting(bound.map(\.description)).sorted())")
    }

    @Test(arguments: items)
    func readsBindsAndRuns(_ item: RealWorldCorpus.Item) async throws {
        let model = try #require(try Self.model(of: item), "no model of the folder matches \(item)")
        guard !Self.untranslatable.contains(item.description) else {
            #expect(throws: MigrationError.self) { try StepMapping(xcodeMappingModelsAt: [item.url], in: model) }
            return
        }
        let (step, policies) = try Self.step(item, model: model)
        let sourceName = try #require(step.sourceVersion)
        let destinationName = try #require(step.destinationVersion)
        let source = try #require(model.version(named: sourceName)).model
        let destination = try #require(model.version(named: destinationName)).model
        let folder = try TemporaryDirectory()
        let url = try await Self.sampleStore(of: item, source: source, in: folder)
        // What each entity mapping reads: the source objects of exactly its entity that pass its filter.
        var expected: [String: Int] = [:]
        var sourceValues: [String: [String: [AttributeValue?]]] = [:]
        let reader = try SQLiteStore(at: url, model: source)
        for mapping in step.passes.flatMap(\.entityMappings) {
            guard let entity = mapping.sourceEntityName, let target = mapping.destinationEntityName else { continue }
            var request = StoreFetchRequest(entityName: entity, predicate: mapping.sourceFilter)
            request.includesSubentities = false
            let rows = try await reader.fetch(request).filter { $0.reference.entityName == entity }
            expected[target, default: 0] += rows.count
            for property in mapping.attributeMappings {
                guard case .source(let path)? = property.valueExpression, path.count == 1,
                    source.attribute(named: path[0], inEntity: entity) != nil
                else { continue }
                sourceValues[target, default: [:]][property.name, default: []] += rows.map { $0.attributes[path[0]] }
            }
        }
        let migrated: any PersistentStore
        if source.entityVersionHashes == destination.entityVersionHashes {
            // Two versions with the same entities (XcodeGen's test model): nothing to migrate.
            let plan = try MigrationPlanner(model: model, mappings: [step]).plan(
                storeHashes: source.entityVersionHashes, to: destinationName)
            #expect(plan.steps.isEmpty)
            return
        } else if let from = model.versions.firstIndex(where: { $0.name == sourceName }),
            let to = model.versions.firstIndex(where: { $0.name == destinationName }), from > to
        {
            // A mapping back to an older version (CoreStore's demo migrates both ways), which Tern's
            // planner never does to a store: the engine runs it into a store of the older version.
            let manager = InMemoryMigrationManager(
                source: source, rows: SampleObjects.rows(for: source), destination: destination)
            try MappingRunner(policies: policies).run(step.passes, manager: manager)
            let store = try SQLiteStore(at: folder.path("Older.sqlite"), model: destination)
            _ = try await store.save(StoreChangeSet(inserted: manager.destinationRows))
            migrated = store
        } else {
            var options = MigrationOptions()
            options.policies = policies
            let report = try await SQLiteStoreMigrator().migrateStore(
                at: url, model: model, to: step.destinationVersion, mappings: [step], options: options)
            #expect(report.plan.steps.map(\.kind).contains(.mapping))
            migrated = try SQLiteStore(at: url, model: destination)
        }
        let targets = Set(step.passes.flatMap(\.entityMappings).compactMap(\.destinationEntityName))
        for target in targets.sorted() {
            var request = StoreFetchRequest(entityName: target)
            request.includesSubentities = false
            let rows = try await migrated.fetch(request).filter { $0.reference.entityName == target }
            // A step may also walk inferred steps after the mapping; counts stay as mapped when only one mapping writes the entity.
            let writers = step.passes.flatMap(\.entityMappings).filter { $0.destinationEntityName == target }
            if writers.count == 1, writers[0].kind != .add {
                #expect(rows.count == expected[target] ?? 0, "\(item): \(target)")
                // A custom policy may change what it copies (CareKit's sets schemaVersion): values are checked without one.
                for (attribute, values) in writers[0].policyName == nil ? sourceValues[target] ?? [:] : [:] {
                    let written = rows.map { $0.attributes[attribute] }.map {
                        $0.map(String.init(describing:)) ?? "nil"
                    }.sorted()
                    let read = values.map { $0.map(String.init(describing:)) ?? "nil" }.sorted()
                    #expect(written == read, "\(item): \(target).\(attribute)")
                }
            } else if writers.allSatisfy({ $0.kind == .add }) {
                // An add mapping creates nothing by itself, as in Core Data: only a policy's objects.
                let policyMade = step.passes.flatMap(\.entityMappings).contains { $0.policyName != nil }
                #expect(policyMade || rows.isEmpty, "\(item): \(target)")
            }
        }
    }
}
