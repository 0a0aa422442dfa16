import Foundation
import TernCore
import TernMigration
import TernRelational
import TernTestSupport
import Testing

@testable import TernSQLite

/// Associations kept as runs: dense keys, gaps, several destinations per source, a destination
/// of several sources, lookups in every direction, each destination's stage 2 run once; the
/// SQLite engine gives what the in-memory reference engine gives.
@Suite struct MigrationAssociationTests {
    @Test(arguments: [1, 7, 1000])
    func runsGiveWhatTheReferenceEngineGives(batchSize: Int) async throws {
        let model = try TwinVersions.model()
        let rows = TwinVersions.rows
        let directory = try TemporaryDirectory()
        let url = directory.path("Items.sqlite")
        try await MigrationStores.make(at: url, model: model.versions[0].model, rows: rows)

        let calls = TwinVersions.Calls()
        var options = MigrationOptions(batchSize: batchSize)
        options.policies.register(TwinVersions.TwinPolicy(calls: calls), named: "Twins")
        try await SQLiteStoreMigrator().migrateStore(
            at: url, model: model, mappings: [TwinVersions.mapping()], options: options)

        let referenceCalls = TwinVersions.Calls()
        var policies = MigrationPolicyRegistry()
        policies.register(TwinVersions.TwinPolicy(calls: referenceCalls), named: "Twins")
        let v2 = model.versions[1].model
        let reference = InMemoryMigrationManager(source: model.versions[0].model, rows: rows, destination: v2)
        try MappingRunner(policies: policies).run(TwinVersions.mapping().passes, manager: reference)

        for entity in ["Copy", "Twin"] {
            let migrated = try await MigrationStores.rows(of: entity, at: url, model: v2)
            let expected = reference.destinationRows.filter { $0.reference.entityName == entity }
            #expect(migrated.count == expected.count)
            #expect(migrated.map(\.reference) == expected.map(\.reference))
            #expect(migrated.map(\.attributes) == expected.map(\.attributes), "\(entity)")
            #expect(migrated.map(\.toOne) == expected.map(\.toOne), "\(entity)")
        }
        // Each twin once, in creation order, though the first one has several sources.
        let twins = calls.all
        #expect(twins.count == TwinVersions.keys.count * 2)
        #expect(twins == twins.sorted { $0.primaryKey < $1.primaryKey })
        #expect(Set(twins).count == twins.count)
        let copies = try await MigrationStores.rows(of: "Copy", at: url, model: v2)
        #expect(copies.map { $0.toMany["twins"]?.count ?? 0 } == Array(repeating: 2, count: TwinVersions.keys.count))
        let store = try SQLiteStore(at: url, model: v2, configuration: .readOnly)
        let leftover = try await store.hasTable("TERN_ASSOCIATION")
        #expect(!leftover)
    }
}

extension SQLiteStore {
    /// Whether the store has a table of that name.
    fileprivate func hasTable(_ name: String) throws -> Bool {
        try connection.fetchValue("SELECT 1 FROM sqlite_master WHERE name = \(name)") != nil
    }
}
