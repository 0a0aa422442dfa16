import Foundation
import TernCore
import TernMigration
import TernRelational
import TernTestSupport
import Testing

@testable import TernSQLite

/// A row whose `Z_ENT` disagrees with the only entity of its table (a root without subentities)
/// is one of that entity's objects, as Core Data reads it: counted, fetched, verified (a warning)
/// and migrated as such. In a shared table (a root with subentities) `Z_ENT` still decides.
@Suite struct UnsharedTableEntityNumberTests {
    /// Kitchen v1: two unshared tables (Cook, Dish) and a shared one (Item with Special); v2 adds
    /// an optional attribute to Dish, an inferred step that can run in place without touching a
    /// row; v3 also makes Dish's title required with a default, which rewrites the rows that
    /// have none (an `UPDATE` by entity number). v4, reached from v1 alone, gives Dish a
    /// subentity: its table is shared from then on, and its `Z_ENT` decides.
    static func model() throws -> VersionedModel {
        try VersionedModel("Kitchen") {
            ModelVersion("v1") {
                Entity("Cook") { Attribute("name", .string) }
                Entity("Dish") { Attribute("title", .string) }
                Entity("Item") { Attribute("label", .string) }
                Entity("Special", parent: "Item") { Attribute("extra", .string) }
            }
            ModelVersion("v2") {
                Entity("Cook") { Attribute("name", .string) }
                Entity("Dish") {
                    Attribute("title", .string)
                    Attribute("rating", .integer64).optional()
                }
                Entity("Item") { Attribute("label", .string) }
                Entity("Special", parent: "Item") { Attribute("extra", .string) }
            }
            ModelVersion("v3") {
                Entity("Cook") { Attribute("name", .string) }
                Entity("Dish") {
                    Attribute("title", .string).required().default(.string("untitled"))
                    Attribute("rating", .integer64).optional()
                }
                Entity("Item") { Attribute("label", .string) }
                Entity("Special", parent: "Item") { Attribute("extra", .string) }
            }
            ModelVersion("v4") {
                Entity("Cook") { Attribute("name", .string) }
                Entity("Dish") { Attribute("title", .string) }
                Entity("Plate", parent: "Dish") { Attribute("size", .integer64).optional() }
                Entity("Item") { Attribute("label", .string) }
                Entity("Special", parent: "Item") { Attribute("extra", .string) }
            }
        }
    }

    static func reference(_ entity: String, _ key: Int64) -> RowReference {
        RowReference(entityName: entity, primaryKey: key)
    }

    /// A v1 store with one cook, dishes 1…4, item 1 and special 2; then dish 2's `Z_ENT` is set to
    /// Cook's number and special 2's to Item's.
    static func store(in directory: TemporaryDirectory) async throws -> URL {
        let url = directory.path("Kitchen.sqlite")
        let v1 = try #require(try model().version(named: "v1")?.model)
        do {
            let store = try SQLiteStore(at: url, model: v1)
            var rows = [StoreRow(reference: reference("Cook", 1), attributes: ["name": .string("Ada")])]
            for key in try await store.newPrimaryKeys(forEntity: "Dish", count: 4) {
                rows.append(StoreRow(reference: reference("Dish", key), attributes: ["title": .string("d\(key)")]))
            }
            rows.append(StoreRow(reference: reference("Item", 1), attributes: ["label": .string("plain")]))
            rows.append(
                StoreRow(
                    reference: reference("Special", 2), attributes: ["label": .string("fancy"), "extra": .string("x")]))
            _ = try await store.save(StoreChangeSet(inserted: rows))
        }
        let connection = try Connection(path: url.path, configuration: SQLiteConfiguration())
        try connection.execute("UPDATE ZDISH SET Z_ENT = \(try number(of: "Cook", in: connection)) WHERE Z_PK = 2")
        try connection.execute("UPDATE ZITEM SET Z_ENT = \(try number(of: "Item", in: connection)) WHERE Z_PK = 2")
        return url
    }

    static func number(of entity: String, in connection: Connection) throws -> Int64 {
        try #require(try connection.fetchValue("SELECT Z_ENT FROM Z_PRIMARYKEY WHERE Z_NAME = \(entity)")?.int64)
    }

    static func count(_ entity: String, subentities: Bool = true, in store: SQLiteStore) async throws -> Int {
        var request = StoreFetchRequest(entityName: entity)
        request.includesSubentities = subentities
        return try await store.count(request)
    }

    @Test func theRowIsCountedAsItsTablesEntity() async throws {
        let directory = try TemporaryDirectory()
        let store = try SQLiteStore(at: try await Self.store(in: directory))
        #expect(try await Self.count("Dish", in: store) == 4)
        #expect(try await Self.count("Dish", subentities: false, in: store) == 4)
        #expect(try await Self.count("Cook", in: store) == 1)
        #expect(try await store.count(of: "Dish") == 4)
        var filtered = StoreFetchRequest(entityName: "Dish", predicate: try FetchPredicate("title BEGINSWITH 'd'"))
        #expect(try await store.count(filtered) == 4)
        filtered.limit = 10
        #expect(try await store.count(filtered) == 4)
    }

    @Test func theRowIsFetchedAsItsTablesEntity() async throws {
        let directory = try TemporaryDirectory()
        let store = try SQLiteStore(at: try await Self.store(in: directory))
        let all = try await store.fetch(StoreFetchRequest(entityName: "Dish"))
        #expect(all.map(\.reference) == (1...4).map { Self.reference("Dish", $0) })
        #expect(all.first { $0.reference.primaryKey == 2 }?.attributes["title"] == .string("d2"))
        let sorted = try await store.fetch(
            StoreFetchRequest(entityName: "Dish", sortDescriptors: [FetchSort(key: "title", ascending: false)]))
        #expect(sorted.map(\.reference.primaryKey) == [4, 3, 2, 1])
        let matching = try await store.fetch(
            StoreFetchRequest(entityName: "Dish", predicate: try FetchPredicate("title == 'd2'")))
        #expect(matching.map(\.reference) == [Self.reference("Dish", 2)])
        let references = try await store.fetchReferences(
            StoreFetchRequest(entityName: "Dish", sortDescriptors: [FetchSort(key: "title")]))
        #expect(references == (1...4).map { Self.reference("Dish", $0) })
        let page = try await store.fetchPage(
            StoreFetchRequest(entityName: "Dish", sortDescriptors: [FetchSort(key: "title")]), after: nil, size: 3)
        #expect(page.rows.map(\.reference) == (1...3).map { Self.reference("Dish", $0) })
        #expect(try await store.rows(for: [Self.reference("Dish", 2)]).map(\.reference) == [Self.reference("Dish", 2)])
        #expect(try await store.row(of: "Dish", primaryKey: 2)?.reference == Self.reference("Dish", 2))
        #expect(try await store.rows(of: "Dish", limit: 10).count == 4)
        #expect(
            try await store.fetch(StoreFetchRequest(entityName: "Cook")).map(\.reference) == [Self.reference("Cook", 1)]
        )
        #expect(try await store.row(of: "Cook", primaryKey: 2) == nil)
    }

    @Test func inASharedTableTheEntityNumberStillDecides() async throws {
        let directory = try TemporaryDirectory()
        let store = try SQLiteStore(at: try await Self.store(in: directory))
        #expect(try await Self.count("Special", in: store) == 0)
        #expect(try await Self.count("Item", subentities: false, in: store) == 2)
        #expect(
            try await store.fetch(StoreFetchRequest(entityName: "Item")).map(\.reference) == [
                Self.reference("Item", 1), Self.reference("Item", 2),
            ])
        #expect(try await store.row(of: "Special", primaryKey: 2) == nil)
    }

    @Test func verificationWarnsWithoutAProblem() async throws {
        let directory = try TemporaryDirectory()
        let url = try await Self.store(in: directory)
        let report = try await StoreVerifier.verify(storeAt: url)
        #expect(report.isClean, "\(report.problems)")
        #expect(report.objectCount == 7)
        #expect(report.warnings.map(\.kind) == [.entityNumberMismatch])
        #expect(report.warnings.first?.entityName == "Dish")
        #expect(report.warnings.first?.primaryKey == 2)
        #expect(report.warnings.first?.message.contains("has Z_ENT 1, not 2") == true)
        // A row of no entity in a shared table is still a problem.
        let connection = try Connection(path: url.path, configuration: SQLiteConfiguration())
        try connection.execute("UPDATE ZITEM SET Z_ENT = 1 WHERE Z_PK = 1")
        let damaged = try await StoreVerifier.verify(storeAt: url)
        #expect(damaged.problems.map(\.kind) == [.unknownEntity])
        #expect(damaged.warnings.count == 1)
    }

    /// Migrated, the row is its table's entity's object. A rebuild, or a step that rewrites the
    /// table's rows by entity number (v3, progressively after v2 or directly), first gives it its
    /// entity's number, and the store verifies without a warning. A step in place whose
    /// statements touch no row of the table (v2: `ALTER TABLE … ADD COLUMN`) does not scan the
    /// table to relabel it, as Core Data's own in-place migration would not: the row keeps its
    /// number, is still read as the entity's, and the warning stays.
    @Test(arguments: [
        (MigrationStrategy.inPlace, "v2"), (.rebuild, "v2"), (.inPlace, "v3"), (.rebuild, "v3"),
    ])
    func migrationCarriesTheRow(strategy: MigrationStrategy, target: String) async throws {
        let directory = try TemporaryDirectory()
        let url = try await Self.store(in: directory)
        let report = try await SQLiteStoreMigrator().migrateStore(
            at: url, model: try Self.model(), to: target, options: MigrationOptions(strategy: strategy))
        #expect(report.inPlaceSteps.isEmpty == (strategy == .rebuild))
        let destination = try #require(try Self.model().version(named: target)?.model)
        do {
            let store = try SQLiteStore(at: url, model: destination)
            let dishes = try await store.fetch(StoreFetchRequest(entityName: "Dish"))
            #expect(dishes.map(\.reference) == (1...4).map { Self.reference("Dish", $0) })
            #expect(dishes.first { $0.reference.primaryKey == 2 }?.attributes["title"] == .string("d2"))
            #expect(try await Self.count("Dish", in: store) == 4)
            #expect(try await Self.count("Cook", in: store) == 1)
            #expect(try await Self.count("Item", subentities: false, in: store) == 2)
            #expect(try await Self.count("Special", in: store) == 0)
        }
        let connection = try Connection(path: url.path, configuration: .readOnly)
        let dish = try Self.number(of: "Dish", in: connection)
        let cook = try Self.number(of: "Cook", in: connection)
        let relabelled = strategy == .rebuild || target == "v3"
        #expect(
            try connection.fetchValue("SELECT Z_ENT FROM ZDISH WHERE Z_PK = 2")?.int64 == (relabelled ? dish : cook))
        let verification = try await StoreVerifier.verify(storeAt: url, model: destination)
        #expect(verification.isClean, "\(verification.problems)")
        #expect(verification.warnings.map(\.kind) == (relabelled ? [] : [.entityNumberMismatch]))
    }

    /// Two steps in place, the first touching no row of Dish's table and the second rewriting
    /// them (the planner infers v1 → v3 as one step, so the two are run as a progressive plan
    /// would run them): the relabelling, which runs before the first step, is chosen from every
    /// step's plan.
    @Test func progressiveStepsRelabelForALaterStep() async throws {
        let directory = try TemporaryDirectory()
        let url = try await Self.store(in: directory)
        let model = try Self.model()
        let planner = MigrationPlanner(model: model)
        let v2 = try #require(model.version(named: "v2")?.model)
        let first = try planner.plan(for: try SQLiteStore.metadata(at: url), to: "v2").steps
        let second = try planner.plan(storeHashes: v2.entityVersionHashes, to: "v3").steps
        #expect((first + second).map { "\($0.from)→\($0.to)" } == ["v1→v2", "v2→v3"])
        let outcomes = try SQLiteStoreMigrator.runInPlace(
            first + second, of: model, at: url, journal: MigrationJournal(metadata: try SQLiteStore.metadata(at: url)),
            progress: nil, emit: { _ in })
        #expect(outcomes.count == 2)
        let connection = try Connection(path: url.path, configuration: .readOnly)
        let dish = try Self.number(of: "Dish", in: connection)
        #expect(try connection.fetchValue("SELECT Z_ENT FROM ZDISH WHERE Z_PK = 2")?.int64 == dish)
        #expect(try connection.fetchValue("SELECT COUNT(*) FROM ZDISH WHERE ZTITLE IS NOT NULL")?.int64 == 4)
    }

    /// A step that gives the entity of an unshared table a subentity (Dish keeps its number, and
    /// no statement touches its rows): the row is relabelled first, since `Z_ENT` decides in a
    /// shared table, and stays Dish's object rather than no entity's.
    @Test func aTableThatBecomesSharedIsRelabelled() async throws {
        let directory = try TemporaryDirectory()
        let url = try await Self.store(in: directory)
        let before = try Self.number(of: "Dish", in: try Connection(path: url.path, configuration: .readOnly))
        let report = try await SQLiteStoreMigrator().migrateStore(
            at: url, model: try Self.model(), to: "v4", options: MigrationOptions(strategy: .inPlace))
        #expect(report.inPlaceSteps == [0])
        let v4 = try #require(try Self.model().version(named: "v4")?.model)
        let connection = try Connection(path: url.path, configuration: .readOnly)
        #expect(try Self.number(of: "Dish", in: connection) == before)
        #expect(try connection.fetchValue("SELECT Z_ENT FROM ZDISH WHERE Z_PK = 2")?.int64 == before)
        let store = try SQLiteStore(at: url, model: v4)
        #expect(try await Self.count("Dish", subentities: false, in: store) == 4)
        #expect(try await Self.count("Plate", in: store) == 0)
        let verification = try await StoreVerifier.verify(storeAt: url, model: v4)
        #expect(verification.isClean && verification.warnings.isEmpty, "\(verification.problems)")
    }
}
