import Foundation
import Synchronization
import TernCore
import TernMigration
import TernRelational
import TernSQLite
import TernStores
import TernTestSupport
import Testing

@testable import TernPostgreSQL

/// Turns `minutes` (an integer) into text such as "25 min": the Swift policy of the v4 → v5 step.
struct MinutesAsText: EntityMigrationPolicy {
    func createDestinationInstances(
        forSource source: RowReference, mapping: EntityMapping, manager: any MigrationManager
    )
        throws(MigrationError)
    {
        try DefaultMigrationPolicy.createInstance(forSource: source, mapping: mapping, manager: manager)
        guard let destination = manager.destinationInstances(forMapping: mapping.name, sourceInstances: [source]).first,
            case .value(.integer(let minutes)?) = try manager.sourceValue(forKeyPath: ["minutes"], of: source)
        else { return }
        try manager.setDestinationValue(.string("\(minutes) min"), forAttribute: "minutes", of: destination)
    }
}

/// Fails on the second recipe, after the first has been written: a failure in the middle of a step.
private struct FailsOnSecondRecipe: EntityMigrationPolicy {
    func createDestinationInstances(
        forSource source: RowReference, mapping: EntityMapping, manager: any MigrationManager
    )
        throws(MigrationError)
    {
        guard source.primaryKey < 2 else { throw MigrationError(.evaluationFailed, "planted failure") }
        try DefaultMigrationPolicy.createInstance(forSource: source, mapping: mapping, manager: manager)
    }
}

/// Migrations of PostgreSQL stores on a real server give what the same migrations give on
/// SQLite, row for row and value for value; failures leave the old store.
@Suite(.enabled(if: PostgreSQLTestServer.isAvailable, PostgreSQLTestServer.skipComment))
struct PostgreSQLMigrationTests {
    static let customStep = #"""
        {"source": "v4", "destination": "v5", "passes": [{"name": "Only", "entityMappings": [
          {"name": "RecipeToRecipe", "kind": "custom", "source": "Recipe", "destination": "Recipe", "policy": "MinutesAsText",
           "attributes": {"heading": "$source.title", "servings": "$source.servings", "notes": "$source.notes"},
           "relationships": {"ingredients": "destinationInstances(\"IngredientToIngredient\", $source.ingredients)"}},
          {"name": "IngredientToIngredient", "kind": "copy", "source": "Ingredient", "destination": "Ingredient"}]}]}
        """#

    /// A SQLite store and a PostgreSQL store holding the same rows of a version.
    static func stores(
        _ model: VersionedModel, version: String, rows: [StoreRow], in folder: TemporaryDirectory
    ) async throws -> (sqlite: URL, postgreSQL: String) {
        let versionModel = try #require(model.version(named: version)).model
        let url = folder.path("Recipes.sqlite")
        let sqlite = try SQLiteStore(at: url, model: versionModel)
        _ = try await sqlite.save(StoreChangeSet(inserted: rows))
        let postgreSQL = try PostgreSQLTestServer.freshStoreURL(prefix: "migrate")
        let store = try PostgreSQLStore(url: postgreSQL, model: versionModel)
        _ = try await store.save(StoreChangeSet(inserted: rows))
        return (url, postgreSQL)
    }

    /// Every row of every entity of a store, without row versions, in key order.
    static func contents(of store: any PersistentStore) async throws -> [String: [String]] {
        var contents: [String: [String]] = [:]
        for entity in store.model.entities where !entity.isAbstract {
            var request = StoreFetchRequest(entityName: entity.name)
            request.includesSubentities = false
            contents[entity.name] = try await store.fetch(request).sorted { $0.reference < $1.reference }.map { row in
                "\(row.reference) \(row.attributes.sorted { $0.key < $1.key }) \(row.toOne.sorted { $0.key < $1.key }) "
                    + "\(row.toMany.sorted { $0.key < $1.key })"
            }
        }
        return contents
    }

    /// The contents of both stores after migrating, which must be equal and not empty.
    static func expectSameContents(sqlite: URL, postgreSQL: String, model: ManagedObjectModel) async throws {
        let fromSQLite = try await contents(of: try SQLiteStore(at: sqlite, model: model, configuration: .readOnly))
        let fromPostgreSQL = try await contents(of: try PostgreSQLStore(url: postgreSQL, model: model, readOnly: true))
        #expect(fromPostgreSQL == fromSQLite)
        #expect(fromSQLite.values.reduce(0) { $0 + $1.count } > 0)
    }

    @Test(arguments: ["v1", "v2", "v3", "v4"])
    func inferredChainsRunInPlaceInOneTransactionAsOnSQLite(version: String) async throws {
        let model = try RecipeVersions.model()
        let folder = try TemporaryDirectory()
        let (sqlite, postgreSQL) = try await Self.stores(
            model, version: version, rows: RecipeVersions.rows(for: version), in: folder)
        let before = try PostgreSQLStore.metadata(at: postgreSQL)
        let options = MigrationOptions(batchSize: 2)
        let expected = try await StoreMigrator().migrateStore(at: .file(sqlite), model: model, options: options)
        let events = EventLog()
        let progress = Progress(totalUnitCount: 1)
        let report = try await PostgreSQLMigrator().migrateStore(
            at: postgreSQL, model: model, options: options, progress: progress, onEvent: { events.append($0) })
        #expect(progress.fractionCompleted == 1)
        #expect(report.plan == expected.plan)
        #expect(report.inPlaceSteps == Array(report.plan.steps.indices) && !report.plan.steps.isEmpty)
        #expect(report.objectsPerStep == expected.objectsPerStep)
        #expect(events.startedSteps == report.plan.steps.indices.map { $0 })
        #expect(events.finishedSteps == events.startedSteps)
        let v5 = try #require(model.version(named: "v5")).model
        let after = try PostgreSQLStore.metadata(at: postgreSQL)
        #expect(v5.isCompatible(with: after))
        #expect(after.uuid == before.uuid && after.storeType == StoreKind.postgreSQL.rawValue)
        let journal = MigrationJournal(metadata: after).entries.map { "\($0.from)→\($0.to):\($0.kind):\($0.checksum)" }
        let sqliteJournal = MigrationJournal(metadata: try SQLiteStore.metadata(at: sqlite)).entries
            .map { "\($0.from)→\($0.to):\($0.kind):\($0.checksum)" }
        #expect(journal == sqliteJournal && !journal.isEmpty)
        try await Self.expectSameContents(sqlite: sqlite, postgreSQL: postgreSQL, model: v5)
        // The migrated store opens with the new model and gives keys after the old ones.
        let store = try PostgreSQLStore(url: postgreSQL, model: v5)
        #expect(try await store.newPrimaryKeys(forEntity: "Recipe", count: 1) == [4])
        let again = try await PostgreSQLMigrator().migrateStore(at: postgreSQL, model: model)
        #expect(again.plan.isEmpty)
        try PostgreSQLStore.destroy(at: postgreSQL)
    }

    /// The text of an added string default: quotes, backslashes (also before `x`, as in a byte
    /// escape), a newline and characters outside ASCII.
    static let awkwardText = "it's \\ a 'quoted' \\x41 \\' back\\slash\nünïcødé 🦆 ''"

    @Test func addedAttributesOfEveryTypeAreFilledByTheirDefaultWithoutRewritingRowsAsOnSQLite() async throws {
        let date = Date(timeIntervalSinceReferenceDate: 123_456.789)
        let token = try #require(UUID(uuidString: "E621E1F8-C36C-495A-93FC-0C247A3E6E5F"))
        let bytes = Data([0, 1, 0x5c, 0x27, 0x78, 0xff])
        let defaults: [String: AttributeValue] = [
            "priority": .integer(-3), "ratio": .double(0.1), "price": .decimal(Decimal(string: "12.25") ?? 0),
            "motto": .string(Self.awkwardText), "active": .bool(true), "since": .date(date), "blob": .data(bytes),
            "token": .uuid(token), "huge": .double(-.infinity),
        ]
        let model = try VersionedModel("Items") {
            ModelVersion("v1") { Entity("Item") { Attribute("label", .string) } }
            ModelVersion("v2") {
                Entity("Item") {
                    Attribute("label", .string)
                    Attribute("priority", .integer64).default(.integer(-3))
                    Attribute("ratio", .double).default(.double(0.1))
                    Attribute("huge", .double).default(.double(-.infinity))
                    Attribute("price", .decimal).default(.decimal(Decimal(string: "12.25") ?? 0))
                    Attribute("motto", .string).default(.string(Self.awkwardText))
                    Attribute("active", .boolean).default(.bool(true))
                    Attribute("since", .date).default(.date(date))
                    Attribute("blob", .binary).default(.data(bytes))
                    Attribute("token", .uuid).default(.uuid(token))
                }
            }
        }
        let folder = try TemporaryDirectory()
        let rows = (1...3).map { PostgreSQLInPlaceChangeTests.row("Item", $0, ["label": .string("item \($0)")]) }
        let (sqlite, postgreSQL) = try await Self.stores(model, version: "v1", rows: rows, in: folder)
        let connection = try TernPostgreSQL.Connection(try PostgreSQLLocation(postgreSQL))
        let versions: SQL = #"SELECT "Z_PK", xmin::text FROM "ZITEM" ORDER BY 1"#
        let before = try connection.fetchAll(versions)
        let options = MigrationOptions(strategy: .inPlace)
        try await StoreMigrator().migrateStore(at: .file(sqlite), model: model, options: options)
        let report = try await PostgreSQLMigrator().migrateStore(at: postgreSQL, model: model, options: options)
        #expect(report.inPlaceSteps == [0])
        // The defaults were read from the catalog: no row was rewritten, and no column keeps one.
        #expect(try connection.fetchAll(versions) == before)
        let kept = try connection.fetchValue(
            """
            SELECT COUNT(*) FROM information_schema.columns \
            WHERE table_schema = current_schema() AND table_name = 'ZITEM' AND column_default IS NOT NULL
            """)
        #expect(kept?.int64 == 0)
        let v2 = try #require(model.version(named: "v2")).model
        try await Self.expectSameContents(sqlite: sqlite, postgreSQL: postgreSQL, model: v2)
        let migrated = try await PostgreSQLStore(url: postgreSQL, model: v2, readOnly: true).fetch(
            StoreFetchRequest(entityName: "Item"))
        #expect(migrated.count == 3)
        for row in migrated {
            for (name, value) in defaults { #expect(row.attributes[name] == value, "\(name)") }
        }
        try PostgreSQLStore.destroy(at: postgreSQL)
    }

    @Test func theRebuildStrategyBuildsBesideAndSwapsInAsOnSQLite() async throws {
        let model = try RecipeVersions.model()
        let folder = try TemporaryDirectory()
        let (sqlite, postgreSQL) = try await Self.stores(
            model, version: "v3", rows: RecipeVersions.rows(for: "v3"), in: folder)
        var options = MigrationOptions(batchSize: 2)
        options.strategy = .rebuild
        try await StoreMigrator().migrateStore(at: .file(sqlite), model: model, options: options)
        let report = try await PostgreSQLMigrator().migrateStore(at: postgreSQL, model: model, options: options)
        #expect(report.inPlaceSteps.isEmpty && report.objectsPerStep == [9])
        let v5 = try #require(model.version(named: "v5")).model
        #expect(v5.isCompatible(with: try PostgreSQLStore.metadata(at: postgreSQL)))
        try await Self.expectSameContents(sqlite: sqlite, postgreSQL: postgreSQL, model: v5)
        try PostgreSQLStore.destroy(at: postgreSQL)
    }

    @Test(arguments: ["v1", "v3", "v4"])
    func aChainWithAMappedStepStreamsAndSwapsInAsOnSQLite(version: String) async throws {
        let model = try RecipeVersions.model(breaking: true)
        let folder = try TemporaryDirectory()
        let (sqlite, postgreSQL) = try await Self.stores(
            model, version: version, rows: RecipeVersions.rows(for: version), in: folder)
        var options = MigrationOptions(batchSize: 2)
        options.policies.register(MinutesAsText(), named: "MinutesAsText")
        let mapping = try StepMapping(jsonData: Data(Self.customStep.utf8))
        let expected = try await StoreMigrator().migrateStore(
            at: .file(sqlite), model: model, mappings: [mapping], options: options)
        let report = try await PostgreSQLMigrator().migrateStore(
            at: postgreSQL, model: model, mappings: [mapping], options: options)
        #expect(report.plan == expected.plan)
        #expect(report.plan.steps.last?.kind == .mapping && report.inPlaceSteps.isEmpty)
        #expect(report.objectsPerStep == expected.objectsPerStep)
        let v5 = model.versions[4].model
        let metadata = try PostgreSQLStore.metadata(at: postgreSQL)
        #expect(v5.isCompatible(with: metadata) && metadata.storeType == StoreKind.postgreSQL.rawValue)
        #expect(MigrationJournal(metadata: metadata).entries.map(\.to).last == "v5")
        try await Self.expectSameContents(sqlite: sqlite, postgreSQL: postgreSQL, model: v5)
        let store = try PostgreSQLStore(url: postgreSQL, model: v5)
        var request = StoreFetchRequest(entityName: "Recipe")
        request.sortDescriptors = [FetchSort(key: "heading")]
        let minutes = try await store.fetch(request).map { $0.attributes["minutes"] }
        #expect(minutes == [.string("10 min"), .string("20 min"), .string("30 min")])
        try PostgreSQLStore.destroy(at: postgreSQL)
    }

    @Test func aFailureInTheMiddleOfAMappedStepLeavesTheOldStore() async throws {
        let model = try RecipeVersions.model(breaking: true)
        let folder = try TemporaryDirectory()
        let (_, postgreSQL) = try await Self.stores(
            model, version: "v4", rows: RecipeVersions.rows(for: "v4"), in: folder)
        let v4 = model.versions[3].model
        let before = try await Self.contents(of: try PostgreSQLStore(url: postgreSQL, model: v4, readOnly: true))
        let metadata = try PostgreSQLStore.metadata(at: postgreSQL)
        var options = MigrationOptions(batchSize: 1)
        options.policies.register(FailsOnSecondRecipe(), named: "MinutesAsText")
        let mapping = try StepMapping(jsonData: Data(Self.customStep.utf8))
        await #expect(throws: MigrationError.self) {
            try await PostgreSQLMigrator().migrateStore(
                at: postgreSQL, model: model, mappings: [mapping], options: options)
        }
        #expect(try PostgreSQLStore.metadata(at: postgreSQL) == metadata)
        #expect(try await Self.contents(of: try PostgreSQLStore(url: postgreSQL, model: v4, readOnly: true)) == before)
        // No scratch schema is left, and the store still migrates.
        options.policies.register(MinutesAsText(), named: "MinutesAsText")
        let report = try await PostgreSQLMigrator().migrateStore(
            at: postgreSQL, model: model, mappings: [mapping], options: options)
        #expect(report.cleanedUpFiles.isEmpty && report.plan.steps.count == 1)
        try PostgreSQLStore.destroy(at: postgreSQL)
    }

    @Test func aFailureInTheMiddleOfAnInPlaceTransactionLeavesTheOldStore() async throws {
        // v2 adds a column and makes the names unique: the duplicates, counted before the unique
        // index is created, after the table was altered, refuse the step and the whole
        // transaction rolls back.
        let model = try VersionedModel("Items") {
            ModelVersion("v1") { Entity("Item") { Attribute("name", .string) } }
            ModelVersion("v2") {
                Entity("Item") {
                    Attribute("name", .string)
                    Attribute("count", .integer32).default(.integer(7))
                    Unique("name")
                }
            }
        }
        let rows = ["a", "b", "a"].enumerated().map { index, name in
            StoreRow(
                reference: RowReference(entityName: "Item", primaryKey: Int64(index + 1)), version: 1,
                attributes: ["name": .string(name)])
        }
        let url = try PostgreSQLTestServer.freshStoreURL(prefix: "inplace_fail")
        let v1 = model.versions[0].model
        _ = try await PostgreSQLStore(url: url, model: v1).save(StoreChangeSet(inserted: rows))
        let before = try await Self.contents(of: try PostgreSQLStore(url: url, model: v1, readOnly: true))
        let metadata = try PostgreSQLStore.metadata(at: url)
        let error = await #expect(throws: MigrationError.self) {
            try await PostgreSQLMigrator().migrateStore(at: url, model: model)
        }
        #expect(error?.code == .constraintViolated && error?.propertyName == "name")
        #expect(try PostgreSQLStore.metadata(at: url) == metadata)
        #expect(try await Self.contents(of: try PostgreSQLStore(url: url, model: v1, readOnly: true)) == before)
        // Without the duplicate, the same migration succeeds in place with the default filled.
        _ = try await PostgreSQLStore(url: url, model: v1).save(
            StoreChangeSet(deleted: [RowReference(entityName: "Item", primaryKey: 3): 1]))
        let report = try await PostgreSQLMigrator().migrateStore(at: url, model: model)
        #expect(report.inPlaceSteps == [0])
        let items = try await PostgreSQLStore(url: url, model: model.versions[1].model).fetch(
            StoreFetchRequest(entityName: "Item"))
        #expect(items.map { $0.attributes["count"] } == [.integer(7), .integer(7)])
        try PostgreSQLStore.destroy(at: url)
    }

    /// A store whose `Z_PRIMARYKEY` numbers no longer match its rows' `Z_ENT` in a shared table
    /// (Item has a subentity): refused untouched by both strategies, as on SQLite (a rebuild used
    /// to copy none of its rows).
    @Test(arguments: [MigrationStrategy.automatic, .rebuild])
    func aStoreWithRowsNoEntityOwnsIsRefusedUntouchedAsOnSQLite(strategy: MigrationStrategy) async throws {
        let model = try VersionedModel("Items") {
            ModelVersion("v1") {
                Entity("Item") { Attribute("name", .string) }
                Entity("Special", parent: "Item") { Attribute("extra", .string) }
            }
            ModelVersion("v2") {
                Entity("Item") {
                    Attribute("name", .string)
                    Attribute("count", .integer32).default(.integer(7))
                }
                Entity("Special", parent: "Item") { Attribute("extra", .string) }
            }
        }
        let rows = ["a", "b", "c"].enumerated().map { index, name in
            StoreRow(
                reference: RowReference(entityName: "Item", primaryKey: Int64(index + 1)), version: 1,
                attributes: ["name": .string(name)])
        }
        let url = try PostgreSQLTestServer.freshStoreURL(prefix: "stray_rows")
        _ = try await PostgreSQLStore(url: url, model: model.versions[0].model).save(StoreChangeSet(inserted: rows))
        try TernPostgreSQL.Connection(try PostgreSQLLocation(url)).execute(
            #"UPDATE "Z_PRIMARYKEY" SET "Z_ENT" = "Z_ENT" + 10"#)
        let metadata = try PostgreSQLStore.metadata(at: url)
        let error = await #expect(throws: MigrationError.self) {
            try await PostgreSQLMigrator().migrateStore(
                at: url, model: model, options: MigrationOptions(strategy: strategy))
        }
        #expect(error?.code == .storeFailure)
        #expect(
            error?.message.hasPrefix("3 row(s) of ZITEM have an entity number (Z_ENT)") == true,
            "\(String(describing: error))")
        #expect(try PostgreSQLStore.metadata(at: url) == metadata)
        let connection = try TernPostgreSQL.Connection(try PostgreSQLLocation(url))
        #expect(try connection.fetchValue(#"SELECT COUNT(*) FROM "ZITEM" WHERE "Z_ENT" = 1"#)?.int64 == 3)
        try PostgreSQLStore.destroy(at: url)
    }

    /// A row of a table that is one entity's alone, with another entity's `Z_ENT`, is that
    /// entity's object as Core Data reads it: rebuilt, or migrated in place, it survives as the
    /// entity's. A rebuild, or a step in place that updates the table's rows by entity number
    /// (v3: `name` becomes required with a default), first gives it the entity's number; a step
    /// that touches no row (v2: a column added with a constant default, kept in the catalog)
    /// leaves it as it is, as on SQLite.
    @Test(arguments: [
        (MigrationStrategy.automatic, "v2"), (.rebuild, "v2"), (.automatic, "v3"), (.rebuild, "v3"),
    ])
    func aRowOfAnUnsharedTableWithAnotherEntitysNumberIsCarried(strategy: MigrationStrategy, target: String)
        async throws
    {
        let model = try VersionedModel("Items") {
            ModelVersion("v1") {
                Entity("Cook") { Attribute("name", .string) }
                Entity("Item") { Attribute("name", .string) }
            }
            ModelVersion("v2") {
                Entity("Cook") { Attribute("name", .string) }
                Entity("Item") {
                    Attribute("name", .string)
                    Attribute("count", .integer32).default(.integer(7))
                }
            }
            ModelVersion("v3") {
                Entity("Cook") { Attribute("name", .string) }
                Entity("Item") {
                    Attribute("name", .string).required().default(.string("unnamed"))
                    Attribute("count", .integer32).default(.integer(7))
                }
            }
        }
        let rows = ["a", "b", "c"].enumerated().map { index, name in
            StoreRow(
                reference: RowReference(entityName: "Item", primaryKey: Int64(index + 1)), version: 1,
                attributes: ["name": .string(name)])
        }
        let url = try PostgreSQLTestServer.freshStoreURL(prefix: "mislabelled")
        _ = try await PostgreSQLStore(url: url, model: model.versions[0].model).save(StoreChangeSet(inserted: rows))
        try TernPostgreSQL.Connection(try PostgreSQLLocation(url)).execute(
            #"UPDATE "ZITEM" SET "Z_ENT" = 1 WHERE "Z_PK" = 2"#)
        let report = try await PostgreSQLMigrator().migrateStore(
            at: url, model: model, to: target, options: MigrationOptions(strategy: strategy))
        #expect(report.inPlaceSteps.isEmpty == (strategy == .rebuild))
        let store = try PostgreSQLStore(url: url, model: try #require(model.version(named: target)?.model))
        let items = try await store.fetch(StoreFetchRequest(entityName: "Item"))
        #expect(items.map(\.reference.primaryKey) == [1, 2, 3])
        #expect(items.map { $0.attributes["name"] } == [.string("a"), .string("b"), .string("c")])
        #expect(items.map { $0.attributes["count"] } == [.integer(7), .integer(7), .integer(7)])
        #expect(try await store.count(StoreFetchRequest(entityName: "Item")) == 3)
        #expect(try await store.count(StoreFetchRequest(entityName: "Cook")) == 0)
        let connection = try TernPostgreSQL.Connection(try PostgreSQLLocation(url))
        let relabelled = strategy == .rebuild || target == "v3"
        #expect(
            try connection.fetchValue(#"SELECT COUNT(*) FROM "ZITEM" WHERE "Z_ENT" = 2"#)?.int64 == (relabelled ? 3 : 2)
        )
        try PostgreSQLStore.destroy(at: url)
    }

    @Test func aSecondMigratorWaitsForTheLockThenFailsNamingTheHolder() async throws {
        let model = try RecipeVersions.model()
        let url = try PostgreSQLTestServer.freshStoreURL(prefix: "locked")
        _ = try await PostgreSQLStore(url: url, model: model.versions[0].model).save(
            StoreChangeSet(inserted: RecipeVersions.rows(for: "v1")))
        var options = MigrationOptions()
        options.lockTimeout = .milliseconds(300)
        let events = EventLog()
        do {
            let holder = try await PostgreSQLMigrationSession(location: try PostgreSQLLocation(url), timeout: .zero) {
                _ in
            }
            do {
                try await PostgreSQLMigrator().migrateStore(at: url, model: model, options: options) {
                    events.append($0)
                }
                Issue.record("the migration ran while another process held the lock")
            } catch let error as TernError {
                #expect(error.code == .storeBusy)
                #expect(error.message.contains("Another process is migrating the store"))
                #expect(error.message.contains("tern migrate (pid \(getpid())"))
            }
            withExtendedLifetime(holder) {}
        }
        #expect(events.waited)
        #expect(try model.versions[0].model.isCompatible(with: PostgreSQLStore.metadata(at: url)))
        // Once the holder is gone, the migration runs.
        let report = try await PostgreSQLMigrator().migrateStore(at: url, model: model, options: options)
        #expect(report.plan.steps.count == 1 && report.inPlaceSteps == [0])
        try PostgreSQLStore.destroy(at: url)
    }
}

/// The events of a migration, gathered from any thread.
final class EventLog: Sendable {
    let events = Mutex<[MigrationEvent]>([])

    func append(_ event: MigrationEvent) { events.withLock { $0.append(event) } }

    /// The indexes of the steps that started.
    var startedSteps: [Int] {
        events.withLock { $0.compactMap { if case .stepStarted(let index, _, _, _) = $0 { index } else { nil } } }
    }

    /// The indexes of the steps that finished.
    var finishedSteps: [Int] {
        events.withLock { $0.compactMap { if case .stepFinished(let index) = $0 { index } else { nil } } }
    }

    /// Whether the migration waited for the lock.
    var waited: Bool {
        events.withLock { $0.contains { if case .waitingForMigrationLock = $0 { true } else { false } } }
    }
}

/// The in-place changes added for issue #6 (dropped columns, ordered many-to-many, new derived
/// counts, required values checked first) give on PostgreSQL what they give on SQLite.
@Suite(.enabled(if: PostgreSQLTestServer.isAvailable, PostgreSQLTestServer.skipComment))
struct PostgreSQLInPlaceChangeTests {
    static func ref(_ entity: String, _ keys: [Int]) -> [RowReference] {
        keys.map { RowReference(entityName: entity, primaryKey: Int64($0)) }
    }

    static func row(
        _ entity: String, _ key: Int, _ attributes: [String: AttributeValue], toOne: [String: RowReference] = [:],
        toMany: [String: [RowReference]] = [:]
    ) -> StoreRow {
        StoreRow(
            reference: RowReference(entityName: entity, primaryKey: Int64(key)), attributes: attributes, toOne: toOne,
            toMany: toMany)
    }

    static func songs() throws -> VersionedModel {
        try VersionedModel("Songs") {
            ModelVersion("v1") {
                Entity("Book") {
                    Attribute("title", .string)
                    Attribute("isbn", .string).indexed()
                    Relationship("pages", to: "Page", inverse: "book").toMany()
                }
                Entity("Page") {
                    Attribute("number", .integer32)
                    Relationship("book", to: "Book", inverse: "pages")
                }
                Entity("Playlist") { Relationship("songs", to: "Song", inverse: "playlists").toMany() }
                Entity("Song") {
                    Attribute("title", .string)
                    Relationship("playlists", to: "Playlist", inverse: "songs").toMany()
                }
            }
            ModelVersion("v2") {
                Entity("Book") {
                    Attribute("title", .string)
                    Attribute("pageCount", .integer64).derived(from: "pages.@count")
                    Attribute("edition", .integer16).default(.integer(1))
                    Relationship("pages", to: "Page", inverse: "book").toMany()
                }
                Entity("Page") {
                    Attribute("number", .integer32)
                    Relationship("book", to: "Book", inverse: "pages")
                }
                Entity("Playlist") { Relationship("songs", to: "Song", inverse: "playlists").toMany(ordered: true) }
                Entity("Song") {
                    Attribute("title", .string)
                    Relationship("playlists", to: "Playlist", inverse: "songs").toMany()
                }
            }
        }
    }

    static let rows = [
        row("Book", 1, ["title": .string("A"), "isbn": .string("1")], toMany: ["pages": ref("Page", [1, 2])]),
        row("Book", 2, ["title": .string("B")]),
        row("Page", 1, ["number": .integer(1)], toOne: ["book": ref("Book", [1])[0]]),
        row("Page", 2, ["number": .integer(2)], toOne: ["book": ref("Book", [1])[0]]),
        row("Playlist", 1, [:], toMany: ["songs": ref("Song", [2, 1])]),
        row("Song", 1, ["title": .string("one")], toMany: ["playlists": ref("Playlist", [1])]),
        row("Song", 2, ["title": .string("two")], toMany: ["playlists": ref("Playlist", [1])]),
    ]

    @Test func droppedColumnsOrderedManyToManyAndDerivedCountsInPlaceAsOnSQLite() async throws {
        let model = try Self.songs()
        let folder = try TemporaryDirectory()
        let (sqlite, postgreSQL) = try await PostgreSQLMigrationTests.stores(
            model, version: "v1", rows: Self.rows, in: folder)
        let options = MigrationOptions(strategy: .inPlace)
        try await StoreMigrator().migrateStore(at: .file(sqlite), model: model, options: options)
        let report = try await PostgreSQLMigrator().migrateStore(at: postgreSQL, model: model, options: options)
        #expect(report.inPlaceSteps == [0])
        let v2 = try #require(model.version(named: "v2")).model
        try await PostgreSQLMigrationTests.expectSameContents(sqlite: sqlite, postgreSQL: postgreSQL, model: v2)
        let store = try PostgreSQLStore(url: postgreSQL, model: v2, readOnly: true)
        let books = try await store.fetch(StoreFetchRequest(entityName: "Book")).sorted { $0.reference < $1.reference }
        #expect(books.map { $0.attributes["pageCount"] } == [.integer(2), .integer(0)])
        #expect(books.map { $0.attributes["edition"] } == [.integer(1), .integer(1)])
        let playlists = try await store.fetch(StoreFetchRequest(entityName: "Playlist"))
        #expect(playlists.first?.toMany["songs"]?.map(\.primaryKey) == [1, 2])
        try PostgreSQLStore.destroy(at: postgreSQL)
    }

    /// The page counts of both stores' books, which must be equal; returned in key order.
    static func pageCounts(sqlite: URL, postgreSQL: String, model: ManagedObjectModel) async throws -> [AttributeValue?]
    {
        let request = StoreFetchRequest(entityName: "Book")
        let fromSQLite = try await SQLiteStore(at: sqlite, model: model, configuration: .readOnly).fetch(request)
        let fromPostgreSQL = try await PostgreSQLStore(url: postgreSQL, model: model, readOnly: true).fetch(request)
        let counts = fromPostgreSQL.sorted { $0.reference < $1.reference }.map { $0.attributes["pageCount"] }
        #expect(counts == fromSQLite.sorted { $0.reference < $1.reference }.map { $0.attributes["pageCount"] })
        return counts
    }

    /// Derived counts are kept by the store as pages are added, moved and deleted, after an
    /// in-place migration and after one built beside, as on SQLite (whose triggers keep them).
    @Test(arguments: [MigrationStrategy.inPlace, .rebuild])
    func derivedCountsStayCurrentAfterAMigrationAsOnSQLite(strategy: MigrationStrategy) async throws {
        let model = try Self.songs()
        let folder = try TemporaryDirectory()
        let (sqlite, postgreSQL) = try await PostgreSQLMigrationTests.stores(
            model, version: "v1", rows: Self.rows, in: folder)
        let options = MigrationOptions(strategy: strategy)
        try await StoreMigrator().migrateStore(at: .file(sqlite), model: model, options: options)
        _ = try await PostgreSQLMigrator().migrateStore(at: postgreSQL, model: model, options: options)
        let v2 = try #require(model.version(named: "v2")).model
        #expect(
            try await Self.pageCounts(sqlite: sqlite, postgreSQL: postgreSQL, model: v2) == [.integer(2), .integer(0)])
        let book = { (key: Int) in RowReference(entityName: "Book", primaryKey: Int64(key)) }
        // Many new pages (COPY on PostgreSQL), a page moved to the other book, one deleted, and a
        // book saved with a stale count: every count is the number of pages.
        var added = (3..<(3 + PostgreSQLStore.copyThreshold)).map {
            Self.row("Page", $0, ["number": .integer(Int64($0))], toOne: ["book": book(2)])
        }
        added.append(Self.row("Page", 200, ["number": .integer(200)], toOne: ["book": book(1)]))
        let stores: [any PersistentStore] = [
            try SQLiteStore(at: sqlite, model: v2), try PostgreSQLStore(url: postgreSQL, model: v2),
        ]
        for store in stores {
            _ = try await store.save(StoreChangeSet(inserted: added))
            var moved = try #require(try await store.rows(for: [RowReference(entityName: "Page", primaryKey: 2)]).first)
            moved.toOne["book"] = book(2)
            _ = try await store.save(StoreChangeSet(updated: [moved]))
            let doomed = try #require(
                try await store.rows(for: [RowReference(entityName: "Page", primaryKey: 1)]).first)
            _ = try await store.save(StoreChangeSet(deleted: [doomed.reference: doomed.version]))
            var stale = try #require(try await store.rows(for: [book(1)]).first)
            stale.attributes["pageCount"] = .integer(99)
            stale.attributes["title"] = .string("A2")
            _ = try await store.save(StoreChangeSet(updated: [stale]))
        }
        let pages = Int64(PostgreSQLStore.copyThreshold)
        let counts = try await Self.pageCounts(sqlite: sqlite, postgreSQL: postgreSQL, model: v2)
        #expect(counts == [.integer(1), .integer(pages + 1)], "\(counts)")
        try PostgreSQLStore.destroy(at: postgreSQL)
    }

    @Test(arguments: [MigrationStrategy.inPlace, .rebuild])
    func aNewUniquenessConstraintWithDuplicatesIsRefusedAsOnSQLite(strategy: MigrationStrategy) async throws {
        let model = try VersionedModel("Items") {
            ModelVersion("v1") {
                Entity("Item") {
                    Attribute("name", .string)
                    Attribute("size", .integer32)
                }
            }
            ModelVersion("v2") {
                Entity("Item") {
                    Attribute("name", .string)
                    Attribute("size", .integer32)
                    Unique("name", "size")
                }
            }
        }
        // (a, 1) three times and (b, 2) twice clash; (a, 2) does not, nor rows without a name.
        let values: [(String?, Int64)] = [
            ("a", 1), ("a", 1), ("b", 2), ("a", 1), ("b", 2), ("a", 2), (nil, 1), (nil, 1),
        ]
        let rows = values.enumerated().map { index, value in
            Self.row(
                "Item", index + 1,
                ["size": .integer(value.1)].merging(value.0.map { ["name": .string($0)] } ?? [:]) { $1 })
        }
        let folder = try TemporaryDirectory()
        let (sqlite, postgreSQL) = try await PostgreSQLMigrationTests.stores(
            model, version: "v1", rows: rows, in: folder)
        let options = MigrationOptions(strategy: strategy)
        let onSQLite = await #expect(throws: MigrationError.self) {
            try await StoreMigrator().migrateStore(at: .file(sqlite), model: model, options: options)
        }
        let before = try PostgreSQLStore.metadata(at: postgreSQL)
        let v1 = try #require(model.version(named: "v1")).model
        let contents = try await PostgreSQLMigrationTests.contents(
            of: try PostgreSQLStore(url: postgreSQL, model: v1, readOnly: true))
        let onPostgreSQL = await #expect(throws: MigrationError.self) {
            try await PostgreSQLMigrator().migrateStore(at: postgreSQL, model: model, options: options)
        }
        #expect(onPostgreSQL?.code == .constraintViolated && onPostgreSQL?.entityName == "Item")
        #expect(onPostgreSQL?.message.contains("(name, size) in v2, but 5 objects share 2 value(s)") == true)
        #expect(onPostgreSQL?.message == onSQLite?.message)
        #expect(try PostgreSQLStore.metadata(at: postgreSQL) == before)
        #expect(
            try await PostgreSQLMigrationTests.contents(
                of: try PostgreSQLStore(url: postgreSQL, model: v1, readOnly: true)) == contents)
        // Without the duplicates the step runs, and the constraint holds afterwards.
        let duplicates = [2, 4, 5].map { RowReference(entityName: "Item", primaryKey: Int64($0)) }
        _ = try await PostgreSQLStore(url: postgreSQL, model: v1).save(
            StoreChangeSet(deleted: Dictionary(uniqueKeysWithValues: duplicates.map { ($0, Int64(1)) })))
        _ = try await PostgreSQLMigrator().migrateStore(at: postgreSQL, model: model, options: options)
        let v2 = try #require(model.version(named: "v2")).model
        let store = try PostgreSQLStore(url: postgreSQL, model: v2)
        let clash = Self.row("Item", 100, ["name": .string("a"), "size": .integer(1)])
        let conflict = await #expect(throws: TernError.self) {
            _ = try await store.save(StoreChangeSet(inserted: [clash]))
        }
        #expect(conflict?.code == .constraintConflict)
        try PostgreSQLStore.destroy(at: postgreSQL)
    }

    @Test(arguments: [MigrationStrategy.inPlace, .rebuild])
    func anAttributeThatBecomesRequiredWithEmptyValuesIsRefusedBeforeWriting(strategy: MigrationStrategy) async throws {
        let model = try VersionedModel("Items") {
            ModelVersion("v1") { Entity("Item") { Attribute("label", .string) } }
            ModelVersion("v2") { Entity("Item") { Attribute("label", .string).required() } }
        }
        let folder = try TemporaryDirectory()
        let rows = [Self.row("Item", 1, ["label": .string("a")]), Self.row("Item", 2, [:]), Self.row("Item", 3, [:])]
        let (_, postgreSQL) = try await PostgreSQLMigrationTests.stores(model, version: "v1", rows: rows, in: folder)
        let before = try PostgreSQLStore.metadata(at: postgreSQL)
        let error = await #expect(throws: MigrationError.self) {
            try await PostgreSQLMigrator().migrateStore(
                at: postgreSQL, model: model, options: MigrationOptions(strategy: strategy))
        }
        #expect(error?.code == .constraintViolated && error?.entityName == "Item" && error?.propertyName == "label")
        #expect(error?.message.contains("2 Item object(s) have no value") == true)
        #expect(try PostgreSQLStore.metadata(at: postgreSQL).versionHashes == before.versionHashes)
        try PostgreSQLStore.destroy(at: postgreSQL)
    }
}
