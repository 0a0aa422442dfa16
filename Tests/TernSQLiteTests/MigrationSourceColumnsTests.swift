import Foundation
import TernCore
import TernMigration
import TernTestSupport
import Testing

@testable import TernSQLite

/// Mapped migrations read only the source columns that mappings and policies say they read, and
/// still read any other attribute when asked.
@Suite struct MigrationSourceColumnsTests {
    static func model() throws -> VersionedModel {
        try VersionedModel("Items") {
            ModelVersion("Item") {
                Entity("Item") {
                    Attribute("name", .string)
                    Attribute("count", .integer64)
                    Attribute("note", .string)
                }
            }
            ModelVersion("Item 2") {
                Entity("Label") {
                    Attribute("text", .string)
                    Attribute("count", .integer64)
                }
            }
        }
    }

    /// Declares that it reads `name` only, but reads `note` too.
    struct LabelPolicy: EntityMigrationPolicy {
        func sourceAttributes(for mapping: EntityMapping) -> Set<String>? { ["name"] }

        func createDestinationInstances(
            forSource source: RowReference, mapping: EntityMapping, manager: any MigrationManager
        )
            throws(MigrationError)
        {
            let label = try manager.insertDestinationInstance(ofEntity: "Label")
            guard case .value(.string(let name)?) = try manager.sourceValue(forKeyPath: ["name"], of: source),
                case .value(.string(let note)?) = try manager.sourceValue(forKeyPath: ["note"], of: source)
            else { throw MigrationError(.evaluationFailed, "missing name or note") }
            try manager.setDestinationValue(.string(name + "/" + note), forAttribute: "text", of: label)
            manager.associate(source: source, withDestination: label, mapping: mapping)
        }
    }

    func itemStore(in directory: TemporaryDirectory, model: VersionedModel) async throws -> URL {
        let url = directory.path("Items.sqlite")
        let rows = (1...7).map { index in
            StoreRow(
                reference: RowReference(entityName: "Item", primaryKey: Int64(index)), version: 1,
                attributes: [
                    "name": .string("item \(index)"), "count": .integer(Int64(index)),
                    "note": .string(index % 2 == 0 ? "even" : "odd"),
                ])
        }
        try await MigrationStores.make(at: url, model: model.versions[0].model, rows: rows)
        return url
    }

    static func mapping(_ entityMapping: String) throws -> StepMapping {
        try StepMapping(
            jsonData: Data(
                """
                {"source": "Item", "destination": "Item 2", "passes": [{"name": "One", "entityMappings": [\(entityMapping)]}]}
                """.utf8))
    }

    @Test func aPageHoldsOnlyTheColumnsAskedFor() async throws {
        let directory = try TemporaryDirectory()
        let model = try Self.model()
        let url = try await itemStore(in: directory, model: model)
        let store = try SQLiteStore(at: url, model: model.versions[0].model, configuration: .readOnly)
        let values = try await store.isolated { store in
            let page = try MigrationSourcePage(entity: "Item", attributes: ["count"], in: store)
            try page.read(from: store, after: 2, limit: 3)
            return try page.indices.map { index in
                (
                    page.keys[index], try page.value(ofAttribute: "count", at: index, in: store),
                    try page.value(ofAttribute: "name", at: index, in: store)
                )
            }
        }
        #expect(values.map(\.0) == [3, 4, 5])
        #expect(values.map(\.1) == [.some(.integer(3)), .some(.integer(4)), .some(.integer(5))])
        #expect(values.allSatisfy { $0.2 == nil })  // not selected: the engine reads it from the row
    }

    @Test func aPolicyReadsAnAttributeItDidNotDeclare() async throws {
        let directory = try TemporaryDirectory()
        let model = try Self.model()
        let url = try await itemStore(in: directory, model: model)
        var options = MigrationOptions()
        options.policies.register(LabelPolicy(), named: "LabelPolicy")
        let mapping = try Self.mapping(
            #"{"name": "ItemToLabel", "kind": "custom", "source": "Item", "destination": "Label", "policy": "LabelPolicy"}"#
        )
        try await SQLiteStoreMigrator().migrateStore(at: url, model: model, mappings: [mapping], options: options)
        let labels = try await MigrationStores.rows(of: "Label", at: url, model: model.versions[1].model)
        #expect(
            labels.map { $0.attributes["text"] }
                == (1...7).map { .string("item \($0)/\($0 % 2 == 0 ? "even" : "odd")") })
    }

    @Test func aFilterReadsColumnsTheExpressionsDoNot() async throws {
        let directory = try TemporaryDirectory()
        let model = try Self.model()
        let url = try await itemStore(in: directory, model: model)
        let mapping = try Self.mapping(
            #"""
            {"name": "ItemToLabel", "kind": "transform", "source": "Item", "destination": "Label", "filter": "note == 'even'",
             "attributes": {"count": "$source.count * 10", "text": "uppercase($source.name)"}}
            """#)
        try await SQLiteStoreMigrator().migrateStore(at: url, model: model, mappings: [mapping])
        let labels = try await MigrationStores.rows(of: "Label", at: url, model: model.versions[1].model)
        #expect(labels.map { $0.attributes["count"] } == [.integer(20), .integer(40), .integer(60)])
        #expect(labels.map { $0.attributes["text"] } == [.string("ITEM 2"), .string("ITEM 4"), .string("ITEM 6")])
    }
}

extension SQLiteStore {
    /// Runs `body` on the store's executor.
    fileprivate func isolated<Result: Sendable>(_ body: @Sendable (isolated SQLiteStore) throws -> Result) rethrows
        -> Result
    {
        try body(self)
    }
}
