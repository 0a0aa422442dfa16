import Foundation
import TernCore
import TernMigration
import TernPostgreSQL
import TernSQLite
import TernStores
import TernTestSupport
import Testing

/// An entity that leaves the inheritance tree a relationship points into (``ZooVersions``), on
/// PostgreSQL: the move builds beside the store on the server, the links to the moved objects
/// are dropped and the objects kept, as on SQLite, row for row.
@Suite(.enabled(if: PostgreSQLTestServer.isAvailable, PostgreSQLTestServer.skipComment))
struct PostgreSQLMovedEntityLinkTests {
    @Test(arguments: [false, true])
    func linksToObjectsThatLeaveTheTreeAreDroppedAsOnSQLite(dogUnderPet: Bool) async throws {
        let model = try ZooVersions.model(dogUnderPet: dogUnderPet)
        let v2 = try #require(model.version(named: "v2")?.model)
        let folder = try TemporaryDirectory()
        let (sqlite, postgreSQL) = try await PostgreSQLMigrationTests.stores(
            model, version: "v1", rows: ZooVersions.rows, in: folder)
        let options = MigrationOptions(batchSize: 2)
        let expected = try await StoreMigrator().migrateStore(at: .file(sqlite), model: model, options: options)
        let report = try await PostgreSQLMigrator().migrateStore(at: postgreSQL, model: model, options: options)
        #expect(report.plan.steps.flatMap(\.changes).filter { $0.kind == .dropLinks }.count == 3)
        #expect(report.objectsPerStep == expected.objectsPerStep)
        // Row for row as on SQLite, but for the moved dogs' keys: under Pet, SQLite's in-place
        // move shifts them past Pet's keys, the beside build on the server keeps them (both unique).
        let fromSQLite = try await PostgreSQLMigrationTests.contents(
            of: try SQLiteStore(at: sqlite, model: v2, configuration: .readOnly))
        let fromPostgreSQL = try await PostgreSQLMigrationTests.contents(
            of: try PostgreSQLStore(url: postgreSQL, model: v2, readOnly: true))
        #expect(fromPostgreSQL.filter { $0.key != "Dog" } == fromSQLite.filter { $0.key != "Dog" })
        let withoutKeys = { (lines: [String]?) in (lines ?? []).map { $0.drop { $0 != " " } } }
        #expect(withoutKeys(fromPostgreSQL["Dog"]) == withoutKeys(fromSQLite["Dog"]))
        #expect(fromSQLite["Zoo"]?.count == 2)
        // Every object is still there; no link names a dog any more.
        let store = try PostgreSQLStore(url: postgreSQL, model: v2, readOnly: true)
        #expect(try await store.count(StoreFetchRequest(entityName: "Dog")) == 2)
        let zoos = try await store.fetch(StoreFetchRequest(entityName: "Zoo"))
        #expect(zoos.allSatisfy { zoo in zoo.toMany.values.joined().allSatisfy { $0.entityName != "Dog" } })
        #expect(zoos.map { $0.attributes["residentCount"] } == [.integer(2), .integer(1)])
        try PostgreSQLStore.destroy(at: postgreSQL)
    }
}
