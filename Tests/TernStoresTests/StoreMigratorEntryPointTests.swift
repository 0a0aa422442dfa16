import Foundation
import TernCore
import TernMigration
import TernPostgreSQL
import TernSQLite
import TernStores
import TernTestSupport
import Testing

/// `StoreLocation` reads what users type, and shows PostgreSQL URLs without their password.
@Suite struct StoreLocationTests {
    @Test func pathsAndPostgreSQLURLsAreTold() {
        #expect(StoreLocation("/tmp/Recipes.sqlite") == .file(URL(fileURLWithPath: "/tmp/Recipes.sqlite")))
        #expect(StoreLocation("Recipes.sqlite").fileURL == URL(fileURLWithPath: "Recipes.sqlite"))
        #expect(StoreLocation("postgres://app@db/recipes") == .postgreSQL("postgres://app@db/recipes"))
        #expect(StoreLocation("postgresql://db/recipes?schema=k") == .postgreSQL("postgresql://db/recipes?schema=k"))
        #expect(StoreLocation("postgres://db/recipes").fileURL == nil)
        // A folder named like a scheme is still a path.
        #expect(StoreLocation("postgres/recipes.sqlite").fileURL != nil)
    }

    @Test(arguments: [
        (
            "postgres://app:s3cret@db.example.com:5432/recipes?schema=k",
            "postgres://app:***@db.example.com:5432/recipes?schema=k"
        ),
        ("postgres://app@db.example.com/recipes", "postgres://app@db.example.com/recipes"),
        ("postgres://db.example.com/recipes", "postgres://db.example.com/recipes"),
        ("postgresql://u:p@h/d", "postgresql://u:***@h/d"),
    ])
    func descriptionsHideThePassword(connection: String, shown: String) {
        #expect(StoreLocation.postgreSQL(connection).description == shown)
        #expect(!shown.contains("s3cret"))
    }

    @Test func aFileIsDescribedByItsPath() {
        #expect(StoreLocation.file(URL(fileURLWithPath: "/data/Recipes.sqlite")).description == "/data/Recipes.sqlite")
    }
}

/// `StoreMigrator` is the one entry point for every store type: it finds the type, hands the
/// work to that type's migrator, and copies stores that move to or from PostgreSQL.
@Suite struct StoreMigratorEntryPointTests {
    /// Notes gain an optional `body` and lose `draft` between v1 and v2: an inferred step.
    static func model() throws -> VersionedModel {
        try VersionedModel("Notes") {
            ModelVersion("v1") {
                Entity("Note") {
                    Attribute("title", .string)
                    Attribute("draft", .boolean)
                }
            }
            ModelVersion("v2") {
                Entity("Note") {
                    Attribute("title", .string)
                    Attribute("body", .string)
                }
            }
        }
    }

    /// How many notes a store holds.
    static let count = 40

    /// The v1 rows.
    static var rows: [StoreRow] {
        (1...Int64(count)).map { key in
            StoreRow(
                reference: RowReference(entityName: "Note", primaryKey: key), version: 1,
                attributes: ["title": .string("note \(key)"), "draft": .bool(key % 2 == 0)])
        }
    }

    /// A v1 store of `kind` at `url`.
    static func notesStore(at url: URL, kind: StoreKind) async throws -> VersionedModel {
        let model = try Self.model()
        let v1 = try #require(model.version(named: "v1")).model
        let seed = url.deletingLastPathComponent().appendingPathComponent("seed-\(UUID().uuidString).sqlite")
        let store = try SQLiteStore(at: kind == .sqlite ? url : seed, model: v1)
        _ = try await store.save(StoreChangeSet(inserted: rows))
        if kind != .sqlite { _ = try await StoreFiles.copy(store, to: url, kind: kind) }
        return model
    }

    @Test(arguments: [StoreKind.sqlite, .binary, .xml])
    func everyFileTypeMigratesThroughTheOneEntryPoint(kind: StoreKind) async throws {
        let folder = try TemporaryDirectory()
        let url = folder.path("Notes.store")
        let model = try await Self.notesStore(at: url, kind: kind)
        let planned = try StoreMigrator().plan(forStoreAt: .file(url), model: model)
        #expect(planned.source == "v1" && !planned.steps.isEmpty)
        let report = try await StoreMigrator().migrateStore(at: .file(url), model: model)
        #expect(report.plan.source == "v1" && report.plan.destination == model.currentVersion.name)
        #expect(report.url == url)
        #expect(try StoreFiles.kind(ofStoreAt: url) == kind)
        let metadata = try StoreFiles.metadata(at: url)
        #expect(model.currentVersion.model.isCompatible(with: metadata))
        // Migrated once, it is left as it is.
        let again = try await StoreMigrator().migrateStore(at: .file(url), model: model)
        #expect(again.plan.isEmpty)
    }

    @Test func eventsStreamUntilTheMigrationFinishes() async throws {
        let folder = try TemporaryDirectory()
        let url = folder.path("Notes.binary")
        let model = try await Self.notesStore(at: url, kind: .binary)
        var finished: MigrationReport?
        var planned = false
        for try await event in StoreMigrator().events(migratingStoreAt: .file(url), model: model) {
            if case .planned = event { planned = true }
            if case .finished(let report) = event { finished = report }
        }
        #expect(planned)
        #expect(finished?.plan.destination == model.currentVersion.name)
    }

    @Test func aFileCannotBecomeAPostgreSQLStoreWithoutADestination() async throws {
        let folder = try TemporaryDirectory()
        let url = folder.path("Notes.sqlite")
        let model = try await Self.notesStore(at: url, kind: .sqlite)
        let before = try Data(contentsOf: url)
        let error = await #expect(throws: TernError.self) {
            try await StoreMigrator().migrateStore(at: .file(url), model: model, kind: .postgreSQL)
        }
        #expect(error?.code == .unsupported)
        #expect(error?.message.contains("postgres://") == true)
        #expect(try Data(contentsOf: url) == before)
    }
}

/// The entry point on a real PostgreSQL server: in place, and across types in both directions.
@Suite(.enabled(if: PostgreSQLTestServer.isAvailable, PostgreSQLTestServer.skipComment))
struct StoreMigratorPostgreSQLEntryPointTests {
    @Test func aFileMigratesIntoAPostgreSQLDestinationAndStaysAsItWas() async throws {
        let folder = try TemporaryDirectory()
        let url = folder.path("Notes.sqlite")
        let model = try await StoreMigratorEntryPointTests.notesStore(at: url, kind: .sqlite)
        let before = try Data(contentsOf: url)
        let destination = try PostgreSQLTestServer.freshStoreURL(prefix: "entry")
        let report = try await StoreMigrator().migrateStore(
            at: .file(url), model: model, options: MigrationOptions(destination: .postgreSQL(destination)))
        #expect(report.plan.source == "v1" && report.plan.destination == model.currentVersion.name)
        #expect(try Data(contentsOf: url) == before)
        let migrated = try PostgreSQLStore(url: destination, model: model.currentVersion.model, readOnly: true)
        #expect(try await migrated.count(StoreFetchRequest(entityName: "Note")) == StoreMigratorEntryPointTests.count)
        #expect(model.currentVersion.model.isCompatible(with: try PostgreSQLStore.metadata(at: destination)))

        // Back out into a file: SQLite unless told otherwise, at the current version already.
        let back = folder.path("Back.sqlite")
        let copied = try await StoreMigrator().migrateStore(
            at: .postgreSQL(destination), model: model, options: MigrationOptions(destination: .file(back)))
        #expect(copied.plan.isEmpty)
        #expect(try StoreFiles.kind(ofStoreAt: back) == .sqlite)
        let file = try SQLiteStore(at: back, model: model.currentVersion.model, configuration: .readOnly)
        #expect(try await file.count(StoreFetchRequest(entityName: "Note")) == StoreMigratorEntryPointTests.count)
    }

    @Test func aPostgreSQLStoreMigratesInItsOwnSchemaOnly() async throws {
        let connection = try PostgreSQLTestServer.freshStoreURL(prefix: "entry")
        let model = try StoreMigratorEntryPointTests.model()
        let v1 = try #require(model.version(named: "v1")).model
        let store = try PostgreSQLStore(url: connection, model: v1)
        _ = try await store.save(StoreChangeSet(inserted: StoreMigratorEntryPointTests.rows))
        let error = await #expect(throws: TernError.self) {
            try await StoreMigrator().migrateStore(at: .postgreSQL(connection), model: model, kind: .binary)
        }
        #expect(error?.code == .unsupported)
        let report = try await StoreMigrator().migrateStore(at: .postgreSQL(connection), model: model)
        #expect(report.plan.source == "v1" && !report.plan.steps.isEmpty)
        #expect(model.currentVersion.model.isCompatible(with: try PostgreSQLStore.metadata(at: connection)))
    }
}
