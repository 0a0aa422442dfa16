import Foundation
import TernCore
import TernMigration
import TernPostgreSQL
import TernStores
import TernTestSupport
import Testing

/// Every forward Xcode mapping model of the real-world corpus, run on a PostgreSQL store of
/// sample objects with its mappings compiled to SQL (#24) and without: the same store, row for
/// row, and many of the real apps' entity mappings run as SQL. Custom policies get the default
/// stages here (a mapping with one stays in Swift either way); the SQLite run of the corpus
/// (`XcodeMappingCorpusSQLTests`) has the apps' own.
@Suite(.enabled(if: PostgreSQLTestServer.isAvailable, PostgreSQLTestServer.skipComment))
struct PostgreSQLCorpusMappingTests {
    /// A policy with the default stages, registered under each class name a mapping names.
    struct DefaultPolicy: EntityMigrationPolicy {}

    /// The mapping model of an item, with a default policy under each policy name it names.
    static func step(_ item: RealWorldCorpus.Item, model: VersionedModel) throws -> (
        StepMapping, MigrationPolicyRegistry
    ) {
        let unchecked = try StepMapping(xcodeMappingModelsAt: [item.url], in: model)
        var policies = MigrationPolicyRegistry()
        for name in Set(unchecked.passes.flatMap(\.entityMappings).compactMap(\.policyName)) {
            policies.register(DefaultPolicy(), named: name)
        }
        return (try StepMapping(xcodeMappingModelsAt: [item.url], in: model, policies: policies), policies)
    }

    /// Migrates a new PostgreSQL store of `rows`; returns its contents, the mappings that ran
    /// as SQL, or the migration's error code.
    static func migrate(
        _ rows: [StoreRow], model: VersionedModel, step: StepMapping, policies: MigrationPolicyRegistry,
        compiled: Bool
    ) async throws -> Result<(contents: [String: [String]], asSQL: [String]), MigrationError> {
        let url = try PostgreSQLTestServer.freshStoreURL(prefix: "corpus")
        defer { try? PostgreSQLStore.destroy(at: url) }
        let source = try #require(step.sourceVersion.flatMap { model.version(named: $0) }).model
        do {
            let store = try PostgreSQLStore(url: url, model: source)
            _ = try await store.save(StoreChangeSet(inserted: rows))
        }
        var options = MigrationOptions(environment: ExpressionEnvironment(now: Date(timeIntervalSinceReferenceDate: 0)))
        options.policies = policies
        options.compilesMappingsToSQL = compiled
        let events = EventLog()
        do {
            _ = try await PostgreSQLMigrator().migrateStore(
                at: url, model: model, to: step.destinationVersion, mappings: [step], options: options,
                onEvent: { events.append($0) })
        } catch let error as MigrationError {
            return .failure(error)
        }
        let destination = try #require(step.destinationVersion.flatMap { model.version(named: $0) }).model
        let store = try PostgreSQLStore(url: url, model: destination, readOnly: true)
        return .success((try await PostgreSQLMigrationTests.contents(of: store), events.asSQL))
    }

    @Test func everyMappingModelGivesTheSwiftPathsStore() async throws {
        var ranAsSQL = 0
        for item in try RealWorldCorpus.items(of: .mappingModel) {
            guard let model = try item.mappingModelsModel(), let (step, policies) = try? Self.step(item, model: model),
                let sourceName = step.sourceVersion, let destinationName = step.destinationVersion,
                let from = model.versions.firstIndex(where: { $0.name == sourceName }),
                let to = model.versions.firstIndex(where: { $0.name == destinationName }), from < to,
                model.versions[from].model.entityVersionHashes != model.versions[to].model.entityVersionHashes
            else { continue }  // Untranslatable, the same entities, or a mapping back to an older version.
            let rows = SampleObjects.rows(for: model.versions[from].model)
            let sql = try await Self.migrate(rows, model: model, step: step, policies: policies, compiled: true)
            let swift = try await Self.migrate(rows, model: model, step: step, policies: policies, compiled: false)
            switch (sql, swift) {
            case (.success(let sql), .success(let swift)):
                #expect(sql.contents == swift.contents, "\(item): ran as SQL \(sql.asSQL)")
                #expect(swift.asSQL.isEmpty)
                ranAsSQL += sql.asSQL.count
            case (.failure(let sql), .failure(let swift)):
                // Without the app's policy a step may not run; it must fail the same way.
                #expect(sql.code == swift.code, "\(item): \(sql) against \(swift)")
            default:
                Issue.record("\(item): \(sql) against \(swift)")
            }
        }
        #expect(ranAsSQL >= 60, "\(ranAsSQL) entity mappings of the corpus ran as SQL")
    }
}
