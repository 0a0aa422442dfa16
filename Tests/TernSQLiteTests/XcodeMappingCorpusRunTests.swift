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
    /// The corpus's mapping models that come with their model.
    static let items: [RealWorldCorpus.Item] = (try? RealWorldCorpus.items(of: .mappingModel).filter { $0.model != nil }) ?? []

    /// A policy registered under an app's class name: the default stages.
    struct TestPolicy: EntityMigrationPolicy {}

    /// The step of one mapping model, read twice: once to learn the policy class names it
    /// names, once with a test policy registered under each.
    static func step(_ item: RealWorldCorpus.Item, model: VersionedModel) throws -> (StepMapping, MigrationPolicyRegistry) {
        let unchecked = try StepMapping(xcodeMappingModelsAt: [item.url], in: model)
        var policies = CorpusPolicies.registry()
        for name in unchecked.passes.flatMap(\.entityMappings).compactMap(\.policyName) where policies.policy(named: name) == nil {
            policies.register(TestPolicy(), named: name)
        }
        return (try StepMapping(xcodeMappingModelsAt: [item.url], in: model, policies: policies), policies)
    }

    @Test func theCorpusHasMappingModelsWithTheirModels() {
        #expect(Self.items.count >= 20)
    }

    @Test(arguments: items)
    func readsBindsAndRuns(_ item: RealWorldCorpus.Item) async throws {
        let modelURL = try #require(item.modelURL)
        let model = try XcodeModel.readVersionedModel(at: modelURL)
        let (step, policies) = try Self.step(item, model: model)
        let sourceName = try #require(step.sourceVersion)
        let destinationName = try #require(step.destinationVersion)
        let source = try #require(model.version(named: sourceName)).model
        let destination = try #require(model.version(named: destinationName)).model
        let folder = try TemporaryDirectory()
        let url = folder.path("Sample.sqlite")
        do {
            let store = try SQLiteStore(at: url, model: source)
            _ = try await store.save(StoreChangeSet(inserted: SampleObjects.rows(for: source)))
        }
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
        var options = MigrationOptions()
        options.policies = policies
        let report = try await StoreMigrator().migrateStore(
            at: url, model: model, to: step.destinationVersion, mappings: [step], options: options)
        #expect(report.plan.steps.map(\.kind).contains(.mapping))
        let migrated = try SQLiteStore(at: url, model: destination)
        let targets = Set(step.passes.flatMap(\.entityMappings).compactMap(\.destinationEntityName))
        for target in targets.sorted() {
            var request = StoreFetchRequest(entityName: target)
            request.includesSubentities = false
            let rows = try await migrated.fetch(request).filter { $0.reference.entityName == target }
            // A step may also walk inferred steps after the mapping; counts stay as mapped when only one mapping writes the entity.
            let writers = step.passes.flatMap(\.entityMappings).filter { $0.destinationEntityName == target }
            if writers.count == 1, writers[0].kind != .add {
                #expect(rows.count == expected[target] ?? 0, "\(item): \(target)")
                for (attribute, values) in sourceValues[target] ?? [:] {
                    let written = rows.map { $0.attributes[attribute] }.map { $0.map(String.init(describing:)) ?? "nil" }.sorted()
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
