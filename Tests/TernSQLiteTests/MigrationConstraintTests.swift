import Foundation
import TernCore
import TernMigration
import TernRelational
import TernTestSupport
import Testing

@testable import TernSQLite

/// Rules the destination version adds (required values, uniqueness constraints), checked as Core
/// Data's lightweight migration checks them, before anything is written.
@Suite struct MigrationConstraintTests {
    static func ref(_ key: Int) -> RowReference { RowReference(entityName: "Item", primaryKey: Int64(key)) }

    /// Items whose `count` and `label` are optional in v1 and required in v2 (with the defaults given).
    static func items(countDefault: AttributeValue? = nil, labelDefault: AttributeValue? = nil) throws -> VersionedModel
    {
        try VersionedModel("Items") {
            ModelVersion("v1") {
                Entity("Item") {
                    Attribute("count", .integer32)
                    Attribute("label", .string)
                }
            }
            ModelVersion("v2") {
                Entity("Item") {
                    countDefault.map { Attribute("count", .integer32).required().default($0) }
                        ?? Attribute("count", .integer32).required()
                    labelDefault.map { Attribute("label", .string).required().default($0) }
                        ?? Attribute("label", .string).required()
                }
            }
        }
    }

    /// Four items: 1 complete, 2 without count, 3 empty, 4 complete.
    static let rows = [
        StoreRow(reference: ref(1), attributes: ["count": .integer(3), "label": .string("a")]),
        StoreRow(reference: ref(2), attributes: ["label": .string("b")]),
        StoreRow(reference: ref(3)),
        StoreRow(reference: ref(4), attributes: ["count": .integer(4), "label": .string("d")]),
    ]

    static func store(_ model: VersionedModel, rows: [StoreRow], in directory: TemporaryDirectory) async throws -> URL {
        let url = directory.path("Items.sqlite")
        try await MigrationStores.make(at: url, model: try #require(model.versions.first?.model), rows: rows)
        return url
    }

    @Test(arguments: [MigrationStrategy.automatic, .rebuild])
    func requiredWithoutADefaultAndEmptyValuesIsRefusedBeforeWriting(_ strategy: MigrationStrategy) async throws {
        let directory = try TemporaryDirectory()
        let model = try Self.items()
        let url = try await Self.store(model, rows: Self.rows, in: directory)
        let before = try StoreContents(of: url)
        let error = await #expect(throws: MigrationError.self) {
            try await SQLiteStoreMigrator().migrateStore(
                at: url, model: model, options: MigrationOptions(strategy: strategy))
        }
        let refusal = try #require(error)
        #expect(refusal.code == .constraintViolated)
        let failures = refusal.failures.map {
            "\($0.entityName ?? "")|\($0.propertyName ?? "")|\($0.versionName ?? "")"
        }
        #expect(Set(failures) == ["Item|count|v2", "Item|label|v2"])
        let count = try #require(refusal.failures.first { $0.propertyName == "count" })
        #expect(count.message.contains("2 Item object(s) have no value"), "\(count.message)")
        #expect(count.message.contains("coalesce($source.count, <value>)"), "\(count.message)")
        let label = try #require(refusal.failures.first { $0.propertyName == "label" })
        #expect(label.message.contains("1 Item object(s) have no value"), "\(label.message)")
        #expect(refusal.message.contains("nothing was written"))
        // The store is exactly as it was: same rows, same version.
        let differences = try StoreContents(of: url).differences(from: before)
        #expect(differences.isEmpty, "\(differences)")
        #expect(try SQLiteStoreMigrator().plan(forStoreAt: url, model: model).source == "v1")
        let leftovers = try FileManager.default.contentsOfDirectory(atPath: directory.url.path).filter {
            $0.contains("migrating")
        }
        #expect(leftovers.isEmpty)
    }

    @Test func requiredWithoutADefaultMigratesInPlaceWhenEveryObjectHasAValue() async throws {
        let directory = try TemporaryDirectory()
        let model = try Self.items()
        let rows = [Self.rows[0], Self.rows[3]]
        let url = try await Self.store(model, rows: rows, in: directory)
        try await InPlaceMigrationTests.compare(url, model: model)
        let report = try await SQLiteStoreMigrator().migrateStore(
            at: url, model: model, options: MigrationOptions(strategy: .inPlace))
        #expect(report.inPlaceSteps == [0])
        let migrated = try await MigrationStores.rows(
            of: "Item", at: url, model: try #require(model.version(named: "v2")?.model))
        #expect(migrated.map(\.reference.primaryKey) == [1, 4])
        #expect(migrated.map { $0.attributes["count"] } == [.integer(3), .integer(4)])
        #expect(migrated.map { $0.attributes["label"] } == [.string("a"), .string("d")])
    }

    @Test func requiredWithADefaultFillsTheEmptyValuesInPlace() async throws {
        let directory = try TemporaryDirectory()
        let model = try Self.items(countDefault: .integer(7), labelDefault: .string("none"))
        let url = try await Self.store(model, rows: Self.rows, in: directory)
        try await InPlaceMigrationTests.compare(url, model: model)
        let report = try await SQLiteStoreMigrator().migrateStore(
            at: url, model: model, options: MigrationOptions(strategy: .inPlace))
        #expect(report.inPlaceSteps == [0])
        let migrated = try await MigrationStores.rows(
            of: "Item", at: url, model: try #require(model.version(named: "v2")?.model))
        #expect(migrated.map(\.reference.primaryKey) == [1, 2, 3, 4])
        #expect(migrated.map { $0.attributes["count"] } == [.integer(3), .integer(7), .integer(7), .integer(4)])
        #expect(migrated.map { $0.attributes["label"] } == [.string("a"), .string("b"), .string("none"), .string("d")])
    }

    @Test func aLaterStepOfAChainThatFindsEmptyValuesLeavesTheStoreAtItsVersion() async throws {
        let model = try VersionedModel("Notes") {
            ModelVersion("v1") { Entity("Item") { Attribute("label", .string) } }
            ModelVersion("v2") {
                Entity("Item") {
                    Attribute("label", .string)
                    Attribute("note", .string)
                }
            }
            ModelVersion("v3") {
                Entity("Item") {
                    Attribute("label", .string)
                    Attribute("note", .string).required()
                }
            }
        }
        let directory = try TemporaryDirectory()
        let url = directory.path("Notes.sqlite")
        let rows = [StoreRow(reference: Self.ref(1), attributes: ["label": .string("a")])]
        try await MigrationStores.make(at: url, model: try #require(model.versions.first?.model), rows: rows)
        let before = try StoreContents(of: url)
        let error = await #expect(throws: MigrationError.self) {
            try await SQLiteStoreMigrator().migrateStore(at: url, model: model)
        }
        #expect(error?.code == .constraintViolated)
        #expect(error?.failures.first?.message.contains("Item.note is required in v3, but 1 Item object(s)") == true)
        #expect(try StoreContents(of: url).differences(from: before).isEmpty)
        #expect(try SQLiteStoreMigrator().plan(forStoreAt: url, model: model).source == "v1")
    }

    // MARK: - Uniqueness constraints

    static func people() throws -> VersionedModel {
        try VersionedModel("People") {
            ModelVersion("v1") {
                Entity("Person") {
                    Attribute("email", .string)
                    Attribute("name", .string)
                }
            }
            ModelVersion("v2") {
                Entity("Person") {
                    Attribute("email", .string)
                    Attribute("name", .string)
                    Unique("email")
                }
            }
        }
    }

    static func person(_ key: Int, _ email: String?) -> StoreRow {
        var attributes: [String: AttributeValue] = ["name": .string("person \(key)")]
        if let email { attributes["email"] = .string(email) }
        return StoreRow(reference: RowReference(entityName: "Person", primaryKey: Int64(key)), attributes: attributes)
    }

    @Test func aNewUniquenessConstraintWithDuplicatesIsRefusedAndTheStoreUnchanged() async throws {
        let directory = try TemporaryDirectory()
        let model = try Self.people()
        let rows = [
            Self.person(1, "a@x"), Self.person(2, "b@x"), Self.person(3, "a@x"), Self.person(4, "a@x"),
            Self.person(5, "c@x"), Self.person(6, "c@x"), Self.person(7, nil), Self.person(8, nil),
        ]
        let url = directory.path("People.sqlite")
        try await MigrationStores.make(at: url, model: try #require(model.versions.first?.model), rows: rows)
        let before = try StoreContents(of: url)
        let error = await #expect(throws: MigrationError.self) {
            try await SQLiteStoreMigrator().migrateStore(
                at: url, model: model, options: MigrationOptions(strategy: .inPlace))
        }
        #expect(error?.code == .constraintViolated)
        #expect(error?.entityName == "Person" && error?.propertyName == "email")
        #expect(
            error?.message.contains("uniqueness constraint on (email) in v2, but 5 objects share 2 value(s)") == true,
            "\(String(describing: error))")
        #expect(try StoreContents(of: url).differences(from: before).isEmpty)
    }

    @Test func aNewUniquenessConstraintWithoutDuplicatesMigratesInPlace() async throws {
        let directory = try TemporaryDirectory()
        let model = try Self.people()
        let rows = [Self.person(1, "a@x"), Self.person(2, "b@x"), Self.person(3, nil), Self.person(4, nil)]
        let url = directory.path("People.sqlite")
        try await MigrationStores.make(at: url, model: try #require(model.versions.first?.model), rows: rows)
        try await InPlaceMigrationTests.compare(url, model: model)
        let report = try await SQLiteStoreMigrator().migrateStore(
            at: url, model: model, options: MigrationOptions(strategy: .inPlace))
        #expect(report.inPlaceSteps == [0])
        let migrated = try await MigrationStores.rows(
            of: "Person", at: url, model: try #require(model.version(named: "v2")?.model))
        #expect(migrated.map { $0.attributes["email"] } == [.string("a@x"), .string("b@x"), nil, nil])
        #expect(
            migrated.map { $0.attributes["name"] } == (1...4).map { Optional(AttributeValue.string("person \($0)")) })
        let connection = try Connection(path: url.path, configuration: .readOnly)
        let sql = try connection.fetchValue("SELECT sql FROM sqlite_master WHERE name = 'Z_Person_UNIQUE_email'")?
            .string
        #expect(sql?.hasPrefix("CREATE UNIQUE INDEX") == true)
    }

    /// People with duplicate e-mail addresses (5 objects share 2 values), and two without one.
    static let peopleWithDuplicates = [
        person(1, "a@x"), person(2, "b@x"), person(3, "a@x"), person(4, "a@x"),
        person(5, "c@x"), person(6, "c@x"), person(7, nil), person(8, nil),
    ]

    @Test func aNewUniquenessConstraintWithDuplicatesIsRefusedWhenTheStepIsBuiltBeside() async throws {
        let directory = try TemporaryDirectory()
        let model = try Self.people()
        let url = directory.path("People.sqlite")
        try await MigrationStores.make(
            at: url, model: try #require(model.versions.first?.model), rows: Self.peopleWithDuplicates)
        let before = try StoreContents(of: url)
        let recorder = EventRecorder()
        let error = await #expect(throws: MigrationError.self) {
            try await SQLiteStoreMigrator().migrateStore(
                at: url, model: model, options: MigrationOptions(strategy: .rebuild), onEvent: { recorder.record($0) })
        }
        // Counted on the store's rows before the new file is written: no entity mapping started.
        #expect(!recorder.events.contains { if case .entityMappingStarted = $0 { true } else { false } })
        #expect(error?.code == .constraintViolated)
        #expect(error?.entityName == "Person" && error?.propertyName == "email" && error?.versionName == "v2")
        #expect(
            error?.message.contains("uniqueness constraint on (email) in v2, but 5 objects share 2 value(s)") == true,
            "\(String(describing: error))")
        #expect(error?.message.contains("removeDuplicates") == true)
        #expect(try StoreContents(of: url).differences(from: before).isEmpty)
        let leftovers = try FileManager.default.contentsOfDirectory(atPath: directory.url.path).filter {
            $0.contains("migrating")
        }
        #expect(leftovers.isEmpty)
    }

    /// A mapped step whose expression makes e-mail addresses clash: "A@x" and "a@x" both become "a@x".
    static let lowercasingStep = #"""
        {"source": "v1", "destination": "v2", "passes": [{"name": "Only", "entityMappings": [
          {"name": "PersonToPerson", "kind": "transform", "source": "Person", "destination": "Person",
           "attributes": {"email": "lowercase($source.email)", "name": "$source.name"}}]}]}
        """#

    @Test func aMappedStepWhoseValuesClashIsRefusedBeforeTheSwap() async throws {
        let directory = try TemporaryDirectory()
        let model = try Self.people()
        let url = directory.path("People.sqlite")
        let rows = [Self.person(1, "A@x"), Self.person(2, "a@x"), Self.person(3, "b@x"), Self.person(4, nil)]
        try await MigrationStores.make(at: url, model: try #require(model.versions.first?.model), rows: rows)
        let before = try StoreContents(of: url)
        let mapping = try StepMapping(jsonData: Data(Self.lowercasingStep.utf8))
        let error = await #expect(throws: MigrationError.self) {
            try await SQLiteStoreMigrator().migrateStore(at: url, model: model, mappings: [mapping])
        }
        #expect(error?.code == .constraintViolated)
        #expect(error?.entityName == "Person" && error?.propertyName == "email")
        #expect(
            error?.message.contains("uniqueness constraint on (email) in v2, but 2 objects share 1 value(s)") == true,
            "\(String(describing: error))")
        #expect(error?.message.contains("mapping that makes the values unique") == true)
        #expect(try StoreContents(of: url).differences(from: before).isEmpty)
        #expect(try SQLiteStoreMigrator().plan(forStoreAt: url, model: model).source == "v1")
        let leftovers = try FileManager.default.contentsOfDirectory(atPath: directory.url.path).filter {
            $0.contains("migrating")
        }
        #expect(leftovers.isEmpty)

        // Unique values pass, and the destination has the constraint's unique index.
        try FileManager.default.removeItem(at: url)
        try await MigrationStores.make(
            at: url, model: try #require(model.versions.first?.model),
            rows: [Self.person(1, "A@x"), Self.person(2, "b@x")])
        try await SQLiteStoreMigrator().migrateStore(at: url, model: model, mappings: [mapping])
        let migrated = try await MigrationStores.rows(
            of: "Person", at: url, model: try #require(model.version(named: "v2")?.model))
        #expect(migrated.map { $0.attributes["email"] } == [.string("a@x"), .string("b@x")])
        let connection = try Connection(path: url.path, configuration: .readOnly)
        let sql = try connection.fetchValue("SELECT sql FROM sqlite_master WHERE name = 'Z_Person_UNIQUE_email'")?
            .string
        #expect(sql?.hasPrefix("CREATE UNIQUE INDEX") == true)
    }
}
