import Foundation
import TernCore
import TernMigration
import TernPostgreSQL
import TernSQLite
import TernStores
import TernTestSupport
import Testing

/// PostgreSQL stores decide from their data as SQLite stores do: the plan counts the links a
/// relationship whose destination changed can no longer hold, the migration drops them and
/// reports their number, and a new required attribute is refused only when there are objects.
@Suite(.enabled(if: PostgreSQLTestServer.isAvailable, PostgreSQLTestServer.skipComment))
struct PostgreSQLDataDecidedMigrationTests {
    static func ref(_ entity: String, _ key: Int64) -> RowReference {
        RowReference(entityName: entity, primaryKey: key)
    }

    @Test(arguments: [MigrationStrategy.automatic, .rebuild])
    func dropsAndCountsTheLinksAsSQLiteDoes(strategy: MigrationStrategy) async throws {
        // Without albums the new required name refuses nothing; the links are on artwork only.
        var model = try AlbumCovers.model(requiredName: true)
        let folder = try TemporaryDirectory()
        let art = [StoreRow(reference: Self.ref("Artwork", 1)), StoreRow(reference: Self.ref("Image", 2))]
        let (_, empty) = try await PostgreSQLMigrationTests.stores(model, version: "v1", rows: art, in: folder)
        let plan = try PostgreSQLMigrator().plan(forStoreAt: empty, model: model)
        #expect(plan.isExecutable && plan.steps.first?.warnings == [], "\(plan)")
        try await PostgreSQLMigrator().migrateStore(
            at: empty, model: model, options: MigrationOptions(strategy: strategy))
        try PostgreSQLStore.destroy(at: empty)

        // With albums, the required name is refused, naming the count, before anything is written.
        let albums = [
            StoreRow(reference: Self.ref("Album", 1), toOne: ["cover": Self.ref("Artwork", 1)]),
            StoreRow(reference: Self.ref("Album", 2), toOne: ["cover": Self.ref("Image", 2)]),
        ]
        let second = try TemporaryDirectory()
        let (sqlite, postgreSQL) = try await PostgreSQLMigrationTests.stores(
            model, version: "v1", rows: art + albums, in: second)
        let error = await #expect(throws: MigrationError.self) {
            try await PostgreSQLMigrator().migrateStore(
                at: postgreSQL, model: model, options: MigrationOptions(strategy: strategy))
        }
        #expect(error?.message.contains("Album.name is required in v2, but 2 Album object(s) have no value") == true)

        // With a default, the links decide: one dropped, on both stores alike.
        model = try AlbumCovers.model(requiredName: true, nameDefault: .string("untitled"))
        let warnings = try #require(
            try PostgreSQLMigrator().plan(forStoreAt: postgreSQL, model: model).steps.first?.warnings)
        #expect(warnings.map { "\($0.kind)|\($0.propertyName)|\($0.count)" } == ["droppedLinks|cover|1"])
        #expect(try StoreMigrator().plan(forStoreAt: .file(sqlite), model: model).steps.first?.warnings == warnings)
        let report = try await PostgreSQLMigrator().migrateStore(
            at: postgreSQL, model: model, options: MigrationOptions(strategy: strategy))
        #expect(report.droppedLinks == 1 && report.warnings == warnings)
        let store = try PostgreSQLStore(url: postgreSQL, model: model.currentVersion.model)
        let rows = try await store.fetch(StoreFetchRequest(entityName: "Album")).sorted { $0.reference < $1.reference }
        #expect(rows.map { $0.toOne["cover"] } == [nil, Self.ref("Image", 2)])
        #expect(rows.map { $0.attributes["name"] } == [.string("untitled"), .string("untitled")])
        try PostgreSQLStore.destroy(at: postgreSQL)
    }
}
