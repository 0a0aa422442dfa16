import Foundation
import TernCore
import TernFormats
import TernRelational
import TernTestSupport
import Testing

@testable import TernSQLite

/// The schema of a SQLite file as SQLite reports it: tables with their columns in order, indexes
/// with their columns.
struct DatabaseShape: Equatable {
    var tables: [String: [String]] = [:]
    var indexes: [String: [String]] = [:]
    var uniqueIndexes: Set<String> = []

    init(_ connection: Connection, skipping skipped: Set<String> = []) throws {
        let objects = try connection.fetchAll(
            "SELECT type, name, tbl_name FROM sqlite_master WHERE name NOT LIKE 'sqlite_%'")
        for object in objects {
            guard let type = object[0].string, let name = object[1].string, let table = object[2].string,
                !skipped.contains(table)
            else { continue }
            if type == "table" {
                tables[name] = try connection.fetchAll("SELECT name || ' ' || type FROM pragma_table_info(\(name))")
                    .compactMap { $0.first?.string }
            } else if type == "index" {
                indexes[name] = try connection.fetchAll("SELECT name FROM pragma_index_info(\(name))").compactMap {
                    $0.first?.string
                }
                if try connection.fetchValue("SELECT \"unique\" FROM pragma_index_list(\(table)) WHERE name = \(name)")
                    == .integer(1)
                {
                    uniqueIndexes.insert(name)
                }
            }
        }
    }
}

/// A fixture store with the model version that wrote it.
struct FixtureWithModel: Sendable, CustomStringConvertible {
    var expected: ExpectedStore
    var modelBundle: String
    var version: String
    var description: String { expected.description }

    func model() throws -> ManagedObjectModel {
        let versioned = try XcodeModel.readVersionedModel(at: Fixtures.url(modelBundle))
        return try #require(versioned.version(named: version)).model
    }

    static let all: [FixtureWithModel] = Fixtures.stores.compactMap { store in
        guard let bundle = store.model, let version = store.version,
            let expected = ExpectedStore.all.first(where: { $0.path == store.path })
        else { return nil }
        return FixtureWithModel(expected: expected, modelBundle: bundle, version: version)
    }
}

@Suite struct StoreSchemaTests {
    @Test(arguments: FixtureWithModel.all)
    func createsTheSameTablesAndIndexesAsCoreData(_ fixture: FixtureWithModel) async throws {
        let folder = try TemporaryDirectory()
        let original = try folder.copyStore(fixture.expected)
        let model = try fixture.model()
        let created = folder.path("created.sqlite")
        _ = try SQLiteStore(at: created, model: model)
        let expected = try DatabaseShape(Connection(path: original.path, configuration: .readOnly))
        let actual = try DatabaseShape(Connection(path: created.path, configuration: .readOnly))
        #expect(expected.tables.count >= 4)
        #expect(expected.tables["Z_PRIMARYKEY"]?.count == 4)
        #expect(actual.tables == expected.tables)
        #expect(actual.indexes == expected.indexes)
        #expect(actual.uniqueIndexes == expected.uniqueIndexes)
        // The very text Core Data writes, statement by statement.
        let text: SQL = "SELECT sql FROM sqlite_master WHERE sql IS NOT NULL"
        let expectedText = try Connection(path: original.path, configuration: .readOnly).fetchAll(text).compactMap {
            $0.first?.string
        }
        let actualText = try Connection(path: created.path, configuration: .readOnly).fetchAll(text).compactMap {
            $0.first?.string
        }
        #expect(Set(actualText) == Set(expectedText))
    }

    @Test func createsSampleModel2sTablesFromItsModelCache() async throws {
        let folder = try TemporaryDirectory()
        let original = try folder.copyStore(ExpectedStore.all[2])
        let model = try SQLiteStore(at: original, configuration: .readOnly).model
        let created = folder.path("created.sqlite")
        let store = try SQLiteStore(at: created, model: model)
        let book = RowReference(
            entityName: "Book", primaryKey: try await store.newPrimaryKeys(forEntity: "Book", count: 1)[0])
        let pages = try await store.newPrimaryKeys(forEntity: "Page", count: 2).map {
            RowReference(entityName: "Page", primaryKey: $0)
        }
        try await store.save(
            StoreChangeSet(
                inserted: [StoreRow(reference: book, toMany: ["pages": pages])]
                    + pages.map { StoreRow(reference: $0, toOne: ["book": book]) }))
        #expect(try await store.rows(for: [book]).first?.attributes["pagesCount"] == .integer(2))
        // Persistent history tables are not part of the model.
        let history: Set<String> = ["ACHANGE", "ATRANSACTION", "ATRANSACTIONSTRING"]
        let text: SQL = "SELECT sql FROM sqlite_master WHERE sql IS NOT NULL"
        let expected = try Connection(path: original.path, configuration: .readOnly).fetchAll(text)
            .compactMap { $0.first?.string }.filter { sql in !history.contains { sql.contains(" \($0) ") } }
        let actual = try Connection(path: created.path, configuration: .readOnly).fetchAll(text).compactMap {
            $0.first?.string
        }
        #expect(expected.count == 18)
        #expect(Set(actual) == Set(expected))
    }

    @Test(arguments: FixtureWithModel.all)
    func numbersEntitiesAsCoreData(_ fixture: FixtureWithModel) throws {
        let model = try fixture.model()
        let numbers = StoreSchema.assignedNumbers(for: model)
        for row in fixture.expected.primaryKeys {
            let name = numbers.first { $0.value.number == row.entity }?.key
            let entity = try #require(name)
            // SampleModel_V2's store keeps the old name of LuxuryCar (renamed from ExpensiveSportCar).
            let renamed = model.entity(named: entity)?.renamingIdentifier
            #expect(entity == row.name || renamed == row.name)
            #expect(numbers[entity]?.superNumber == row.superEntity)
        }
        #expect(numbers.count == fixture.expected.primaryKeys.count)
    }

    @Test(arguments: FixtureWithModel.all)
    func opensTheFixtureWithItsModel(_ fixture: FixtureWithModel) async throws {
        let folder = try TemporaryDirectory()
        let url = try folder.copyStore(fixture.expected)
        let store = try SQLiteStore(at: url, model: try fixture.model(), configuration: .readOnly)
        for row in fixture.expected.primaryKeys {
            let layout = try store.schema.entity(number: row.entity)
            #expect(layout.superNumber == row.superEntity)
            #expect(layout.table == "Z" + (store.model.rootEntity(of: layout.name)?.name.uppercased() ?? ""))
        }
    }

    @Test(arguments: ExpectedStore.all)
    func opensEveryFixtureThroughItsModelCache(_ expected: ExpectedStore) async throws {
        let folder = try TemporaryDirectory()
        let url = try folder.copyStore(expected)
        let store = try SQLiteStore(at: url, configuration: .readOnly)
        #expect(Set(store.model.entities.map(\.name)) == Set(expected.hashes.keys))
        for row in expected.primaryKeys where row.entity < 16000 {
            #expect(try store.schema.entity(number: row.entity).superNumber == row.superEntity)
        }
        #expect(await store.metadata().uuid == expected.uuid)
    }

    @Test func mapsInheritanceRelationshipsAndJoinTables() throws {
        let folder = try TemporaryDirectory()
        let url = try folder.copyStore(ExpectedStore.all[4])
        let model = try #require(FixtureWithModel.all.first { $0.version == "TestModel" }).model()
        let connection = try Connection(path: url.path, configuration: .readOnly)
        let schema = try connection.readSchema(model: model)
        let books = try #require(schema.entities["Author"]?.toMany(named: "books"))
        #expect(
            books.storage
                == .joinTable(
                    table: "Z_1BOOKS", sourceColumn: "Z_1AUTHORS", destinationColumn: "Z_2BOOKS", orderColumn: nil))
        let authors = try #require(schema.entities["Book"]?.toMany(named: "authors"))
        #expect(
            authors.storage
                == .joinTable(
                    table: "Z_1BOOKS", sourceColumn: "Z_2BOOKS", destinationColumn: "Z_1AUTHORS", orderColumn: nil))

        let sample = try #require(FixtureWithModel.all.first { $0.version == "SampleModel" })
        let carSchema = try StoreSchema(
            model: try sample.model(), numbers: StoreSchema.assignedNumbers(for: try sample.model()))
        let expensive = try carSchema.entity(named: "ExpensiveSportCar")
        #expect(expensive.table == "ZCAR")
        #expect(expensive.hierarchyNumbers == [3])
        #expect(try carSchema.entity(named: "Car").hierarchyNumbers == [1, 2, 3])
        #expect(expensive.toOne(named: "owner")?.column == "ZOWNER")
        #expect(expensive.attribute(named: "isLimitedEdition")?.column == "ZISLIMITEDEDITION")
        #expect(expensive.attribute(named: "currentDrivingSpeed") == nil)
        let cars = try #require(carSchema.entities["Person"]?.toMany(named: "cars"))
        #expect(cars.storage == .inverseForeignKey(table: "ZCAR", column: "ZOWNER", orderColumn: nil))
    }

    @Test func siblingPropertiesWithTheSameNameGetNumberedColumns() throws {
        let model = ManagedObjectModel(entities: [
            EntityDescription(name: "Message"),
            EntityDescription(
                name: "Text", parent: "Message", attributes: [AttributeDescription(name: "text", type: .string)]),
            EntityDescription(
                name: "Note", parent: "Message", attributes: [AttributeDescription(name: "text", type: .string)]),
            EntityDescription(
                name: "Item", relationships: [RelationshipDescription(name: "message", destination: "Message")]),
        ])
        let schema = try StoreSchema(model: model, numbers: StoreSchema.assignedNumbers(for: model))
        #expect(try schema.entity(named: "Note").attribute(named: "text")?.column == "ZTEXT")
        #expect(try schema.entity(named: "Text").attribute(named: "text")?.column == "ZTEXT1")
        #expect(try schema.entity(named: "Item").toOne(named: "message")?.entityColumn == "Z2_MESSAGE")
        #expect(schema.tables["ZMESSAGE"]?.columns.map(\.name) == ["ZTEXT", "ZTEXT1"])
    }

    @Test func aModelThatDoesNotMatchTheStoreFailsClearly() throws {
        let folder = try TemporaryDirectory()
        let url = try folder.copyStore(ExpectedStore.all[3])
        var model = try #require(FixtureWithModel.all.first { $0.version == "SampleModel3" }).model()
        model.entities[0].attributes.append(AttributeDescription(name: "nickname", type: .string))
        let connection = try Connection(path: url.path, configuration: .readOnly)
        let error = try #require(throws: TernError.self) { try connection.readSchema(model: model) }
        #expect(error.code == .schemaMismatch)
        #expect(error.message.contains("ZNICKNAME"))
        #expect(error.path == url.path)
        #expect(throws: TernError.self) { try SQLiteStore(at: url, model: model, configuration: .readOnly) }
    }

    @Test func numbersSiblingsByNameCaseSensitively() {
        let model = ManagedObjectModel(entities: [
            EntityDescription(name: "b"), EntityDescription(name: "A"), EntityDescription(name: "a", parent: "A"),
            EntityDescription(name: "B", parent: "A"),
        ])
        let numbers = StoreSchema.assignedNumbers(for: model)
        #expect(numbers["A"]?.number == 1)
        #expect(numbers["B"]?.number == 2)
        #expect(numbers["a"]?.number == 3)
        #expect(numbers["b"]?.number == 4)
        #expect(numbers["a"]?.superNumber == 1)
    }
}
