import Foundation
import Synchronization
import TernCore
import TernMigration
import TernTestSupport
import Testing

@testable import TernSQLite

/// Associations kept as runs: dense keys, gaps, several destinations per source, a destination
/// of several sources, lookups in every direction, each destination's stage 2 run once; the
/// SQLite engine gives what the in-memory reference engine gives.
@Suite struct MigrationAssociationTests {
    static func model() throws -> VersionedModel {
        try VersionedModel("Items") {
            ModelVersion("v1") {
                Entity("Item") { Attribute("n", .integer64) }
            }
            ModelVersion("v2") {
                Entity("Copy") {
                    Attribute("n", .integer64)
                    Relationship("twins", to: "Twin", inverse: "copy").toMany()
                }
                Entity("Twin") {
                    Attribute("n", .integer64)
                    Attribute("origin", .integer64)
                    Attribute("others", .integer64)
                    Relationship("copy", to: "Copy", inverse: "twins")
                }
            }
        }
    }

    /// Keys 1…150 (more than two runs), then gaps, then keys far apart.
    static let keys: [Int64] = Array(1...150) + [152, 200, 201, 202, 300, 1_000, 5_000]

    /// Stage 1 makes two twins per item (and ties every tenth item to the first twin too);
    /// stage 2 records what the lookups give.
    struct TwinPolicy: EntityMigrationPolicy {
        let calls: Calls

        func createDestinationInstances(forSource source: RowReference, mapping: EntityMapping, manager: any MigrationManager)
            throws(MigrationError)
        {
            guard case .value(let n?) = try manager.sourceValue(forKeyPath: ["n"], of: source) else { return }
            for _ in 0..<2 {
                let twin = try manager.insertDestinationInstance(ofEntity: "Twin")
                try manager.setDestinationValue(n, forAttribute: "n", of: twin)
                manager.associate(source: source, withDestination: twin, mapping: mapping)
            }
            if case .integer(let number) = n, number % 10 == 0 {
                manager.associate(source: source, withDestination: RowReference(entityName: "Twin", primaryKey: 1), mapping: mapping)
            }
        }

        func createRelationships(forDestination destination: RowReference, mapping: EntityMapping, manager: any MigrationManager)
            throws(MigrationError)
        {
            calls.record(destination)
            let sources = manager.sourceInstances(forMapping: mapping.name, destinationInstance: destination)
            try manager.setDestinationValue(
                .integer(sources.reduce(0) { $0 &* 7 &+ $1.primaryKey }), forAttribute: "origin", of: destination)
            let copies = manager.destinationInstances(forMapping: "ItemToCopy", sourceInstances: Array(sources.prefix(1)))
            try manager.setDestinationRelationship("copy", of: destination, to: copies)
            let all = manager.destinationInstances(forMapping: nil, sourceInstances: sources)
            try manager.setDestinationValue(
                .integer(all.reduce(0) { $0 &* 5 &+ $1.primaryKey }), forAttribute: "others", of: destination)
        }
    }

    /// The destinations stage 2 saw, in order.
    final class Calls: Sendable {
        private let seen = Mutex<[RowReference]>([])
        func record(_ reference: RowReference) { seen.withLock { $0.append(reference) } }
        var all: [RowReference] { seen.withLock { $0 } }
    }

    static func mapping() -> StepMapping {
        let pass = MappingModel(name: "Split", entityMappings: [
            EntityMapping(
                name: "ItemToCopy", kind: .transform, source: "Item", destination: "Copy",
                attributes: [PropertyMapping("n", .source(keyPath: ["n"]))]),
            EntityMapping(name: "ItemToTwins", kind: .custom, source: "Item", destination: "Twin", policy: "Twins"),
            EntityMapping(kind: .remove, source: "Item", destination: nil),
        ])
        return StepMapping(from: "v1", to: "v2", passes: [pass])
    }

    @Test(arguments: [1, 7, 1000])
    func runsGiveWhatTheReferenceEngineGives(batchSize: Int) async throws {
        let model = try Self.model()
        let rows = Self.keys.map { key in
            StoreRow(reference: RowReference(entityName: "Item", primaryKey: key), version: 1, attributes: ["n": .integer(key)])
        }
        let directory = try TemporaryDirectory()
        let url = directory.path("Items.sqlite")
        try await MigrationStores.make(at: url, model: model.versions[0].model, rows: rows)

        let calls = Calls()
        var options = MigrationOptions(batchSize: batchSize)
        options.policies.register(TwinPolicy(calls: calls), named: "Twins")
        try await StoreMigrator().migrateStore(at: url, model: model, mappings: [Self.mapping()], options: options)

        let referenceCalls = Calls()
        var policies = MigrationPolicyRegistry()
        policies.register(TwinPolicy(calls: referenceCalls), named: "Twins")
        let v2 = model.versions[1].model
        let reference = InMemoryMigrationManager(source: model.versions[0].model, rows: rows, destination: v2)
        try MappingRunner(policies: policies).run(Self.mapping().passes, manager: reference)

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
        #expect(twins.count == Self.keys.count * 2)
        #expect(twins == twins.sorted { $0.primaryKey < $1.primaryKey })
        #expect(Set(twins).count == twins.count)
        let copies = try await MigrationStores.rows(of: "Copy", at: url, model: v2)
        #expect(copies.map { $0.toMany["twins"]?.count ?? 0 } == Array(repeating: 2, count: Self.keys.count))
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
