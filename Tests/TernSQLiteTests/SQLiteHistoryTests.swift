import Foundation
import TernCore
import TernFormats
import TernRelational
import TernTestSupport
import Testing

@testable import TernSQLite

/// Persistent history on SQLite, in Core Data's own tables.
@Suite struct SQLiteHistoryTests {
    static var historyOn: SQLiteConfiguration {
        var configuration = SQLiteConfiguration()
        configuration.recordsHistory = true
        return configuration
    }

    @Test func recordsHistoryThroughTheAPI() async throws {
        let tmp = try TemporaryDirectory()
        try await HistoryConformance { model in
            try SQLiteStore(
                at: tmp.url.appendingPathComponent("\(UUID().uuidString).sqlite"), model: model,
                configuration: Self.historyOn)
        }.run()
    }

    @Test func tablesAreCoreDatas() async throws {
        let tmp = try TemporaryDirectory()
        let fixture = try tmp.copy(Fixtures.url("CoreDataPlus/SampleModel2/Fixtures/SampleModel2_V1.sqlite"))
        let url = tmp.url.appendingPathComponent("new.sqlite")
        // No attribute of this model is kept after deletion, so ACHANGE has no tombstone column.
        let model = try #require(try RecipeVersions.model().versions.first).model
        _ = try SQLiteStore(at: url, model: model, configuration: Self.historyOn)
        let query = """
            SELECT type, name, sql FROM sqlite_master WHERE tbl_name IN ('ACHANGE', 'ATRANSACTION', 'ATRANSACTIONSTRING') \
            ORDER BY name
            """
        let ours = try Self.rows(url, SQL(unsafeSQL: query))
        let coreData = try Self.rows(fixture, SQL(unsafeSQL: query))
        #expect(ours.count == 11)
        #expect(ours == coreData)
        let keys = try Self.rows(
            url, "SELECT Z_ENT, Z_NAME, Z_SUPER FROM Z_PRIMARYKEY WHERE Z_ENT > 16000 ORDER BY Z_ENT")
        #expect(
            keys == [
                [.integer(16001), .text("CHANGE"), .integer(0)], [.integer(16002), .text("TRANSACTION"), .integer(0)],
                [.integer(16003), .text("TRANSACTIONSTRING"), .integer(0)],
            ])
    }

    @Test func rowsFollowCoreDatasLayout() async throws {
        let tmp = try TemporaryDirectory()
        let url = tmp.url.appendingPathComponent("story.sqlite")
        let conformance = HistoryConformance { model in
            try SQLiteStore(at: url, model: model, configuration: Self.historyOn)
        }
        let store = try await conformance.factory(HistoryConformance.model)
        let tokens = try await conformance.writeStory(into: store)
        #expect(tokens.map(\.description) == (1...4).map { "\($0)@\(store.identifier)" })

        let transactions = try Self.rows(
            url, "SELECT Z_PK, Z_ENT, Z_OPT, ZAUTHORTS, ZCONTEXTNAMETS, ZAUTHOR FROM ATRANSACTION ORDER BY Z_PK")
        #expect(transactions.map { $0[0] } == (1...4).map { .integer(Int64($0)) })
        #expect(transactions.allSatisfy { $0[1] == .integer(16002) && $0[2] == .null && $0[5] == .null })
        let strings = try Self.rows(url, "SELECT Z_PK, Z_ENT, ZNAME FROM ATRANSACTIONSTRING")
        func string(_ key: DatabaseValue) -> String? { strings.first { $0[0] == key }?[2].string }
        #expect(transactions.map { string($0[3]) } == ["importer", "editor", "editor", "importer"])
        #expect(transactions.map { string($0[4]) } == ["import", nil, nil, "import"])
        #expect(strings.allSatisfy { $0[1] == .integer(16003) })

        // Dessert's properties by name: code, ingredients, minutes, sweetness, title, uid.
        let dessert = try #require(
            try Self.rows(url, "SELECT Z_ENT FROM Z_PRIMARYKEY WHERE Z_NAME = 'Dessert'").first?.first)
        let update = try Self.rows(
            url,
            """
            SELECT ZCHANGETYPE, ZCOLUMNS FROM ACHANGE WHERE ZTRANSACTIONID = 2
            """)
        #expect(update == [[.integer(1), .blob(Data([0b0010_1000]))]])
        let deletion = try Self.rows(
            url,
            """
            SELECT ZENTITY, ZCOLUMNS, ZTOMBSTONE0, ZTOMBSTONE1, typeof(ZTOMBSTONE2), length(ZTOMBSTONE2) FROM ACHANGE \
            WHERE ZTRANSACTIONID = 4 AND ZCHANGETYPE = 2
            """)
        #expect(deletion == [[dessert, .null, .text("T-1"), .real(0.5), .text("blob"), .integer(16)]])
        let counters = try Self.rows(
            url,
            """
            SELECT (SELECT Z_MAX FROM Z_PRIMARYKEY WHERE Z_ENT = 16001) = (SELECT COUNT(*) FROM ACHANGE), \
            (SELECT Z_MAX FROM Z_PRIMARYKEY WHERE Z_ENT = 16002), (SELECT COUNT(*) FROM ACHANGE WHERE Z_ENT = 16001)
            """)
        #expect(counters == [[.integer(1), .integer(4), .integer(8)]])

        // Read back from the file by a store opened without the option: the tables keep it on.
        let reopened = try SQLiteStore(at: url, model: HistoryConformance.model, configuration: .readOnly)
        #expect(reopened.recordsHistory)
        let history = try await reopened.fetchHistory(HistoryFetchRequest())
        #expect(history.map(\.token) == tokens)
        #expect(history[1].changes.first?.updatedProperties == ["title", "minutes"])
        #expect(history[3].changes.first { $0.changeType == .delete }?.tombstone["code"] == .string("T-1"))
        let report = try await StoreVerifier.verify(storeAt: url)
        #expect(report.problems.isEmpty)
    }

    @Test func coreDataHistoryReadsBack() async throws {
        let tmp = try TemporaryDirectory()
        let url = try tmp.copy(Fixtures.url("CoreDataPlus/SampleModel2/Fixtures/SampleModel2_V1.sqlite"))
        let store = try SQLiteStore(at: url)
        #expect(store.recordsHistory)
        let history = try await store.fetchHistory(HistoryFetchRequest())
        try #require(history.count == 1)
        let transaction = history[0]
        #expect(
            transaction.token
                == HistoryToken(storeIdentifier: "C9CB0B35-ED6A-4042-BE5C-1B911AC00B2A", transactionNumber: 1))
        #expect(transaction.timestamp.timeIntervalSinceReferenceDate == 737_057_647.288022)
        #expect(transaction.processName == "xctest")
        #expect(transaction.bundleIdentifier == "com.apple.dt.xctest.tool")
        #expect(transaction.author == nil && transaction.contextName == nil)
        #expect(transaction.changes.count == 5468)
        #expect(transaction.changes.allSatisfy { $0.changeType == .insert })
        let counts = Dictionary(grouping: transaction.changes, by: \.objectID.entityName).mapValues(\.count)
        #expect(counts == ["Book": 51, "GraphicNovel": 1, "Feedback": 444, "Page": 4970, "Author": 2])
        #expect(try await store.currentHistoryToken() == transaction.token)

        // Tern's next transaction follows Core Data's, in the same tables.
        let coordinator = PersistentStoreCoordinator(model: store.model)
        try await coordinator.addStore(store)
        let context = ObjectContext(coordinator: coordinator)
        try await context.perform { context in
            context.transactionAuthor = "tern"
            let request = FetchRequest(entityName: "Page", predicate: nil)
            let pages = try await context.fetch(request)
            context.delete(try #require(pages.first))
            try await context.save()
        }
        let next = try await store.fetchHistory(HistoryFetchRequest(after: transaction.token))
        #expect(next.map(\.token.description) == ["2@C9CB0B35-ED6A-4042-BE5C-1B911AC00B2A"])
        #expect(next.first?.author == "tern")
        #expect(next.first?.changes.contains { $0.changeType == .delete && $0.objectID.entityName == "Page" } == true)
    }

    @Test func openingAStoreWithCompleteHistoryTablesWritesNothing() async throws {
        let tmp = try TemporaryDirectory()
        let url = try tmp.copy(Fixtures.url("CoreDataPlus/SampleModel2/Fixtures/SampleModel2_V1.sqlite"))
        _ = try SQLiteStore(at: url)  // completes nothing: the fixture's tables are whole
        // Another connection holds the write lock: a store that wanted to write at open would time out.
        let writer = try Connection(path: url.path, configuration: SQLiteConfiguration())
        try writer.execute("BEGIN IMMEDIATE")
        var configuration = SQLiteConfiguration()
        configuration.busyTimeout = .milliseconds(50)
        let store = try SQLiteStore(at: url, configuration: configuration)
        #expect(store.recordsHistory)
        #expect(try await store.fetchHistory(HistoryFetchRequest()).count == 1)
        try writer.execute("ROLLBACK")
    }

    @Test func storeWithoutHistorySaysSo() async throws {
        let tmp = try TemporaryDirectory()
        let url = tmp.url.appendingPathComponent("plain.sqlite")
        let store = try SQLiteStore(at: url, model: HistoryConformance.model)
        #expect(!store.recordsHistory)
        do {
            _ = try await store.fetchHistory(HistoryFetchRequest())
            Issue.record("a store without history returned history")
        } catch let error as TernError {
            #expect(error.code == .historyUnavailable)
            #expect(error.path == url.path)
        }
        #expect(try Self.rows(url, "SELECT name FROM sqlite_master WHERE name = 'ATRANSACTION'").isEmpty)
    }

    @Test func failedSaveRecordsNothing() async throws {
        let tmp = try TemporaryDirectory()
        var model = HistoryConformance.model
        let recipe = try #require(model.entities.firstIndex { $0.name == "Recipe" })
        model.entities[recipe].uniquenessConstraints = [["code"]]
        let url = tmp.url.appendingPathComponent("unique.sqlite")
        let store = try SQLiteStore(at: url, model: model, configuration: Self.historyOn)
        let keys = try await store.newPrimaryKeys(forEntity: "Recipe", count: 2)
        let rows = keys.map {
            StoreRow(
                reference: RowReference(entityName: "Recipe", primaryKey: $0), attributes: ["code": .string("same")])
        }
        await #expect(throws: TernError.self) { try await store.save(StoreChangeSet(inserted: rows)) }
        #expect(try await store.currentHistoryToken() == nil)
        #expect(try Self.rows(url, "SELECT COUNT(*) FROM ACHANGE") == [[.integer(0)]])
    }

    @Test func migrationKeepsHistoryOnAndTokensOrdered() async throws {
        let tmp = try TemporaryDirectory()
        let url = tmp.url.appendingPathComponent("recipes.sqlite")
        let versions = try RecipeVersions.model()
        let v1 = try #require(versions.version(named: "v1")).model
        let v2 = try #require(versions.version(named: "v2")).model
        var before: HistoryToken?
        do {
            let store = try SQLiteStore(at: url, model: v1, configuration: Self.historyOn)
            for name in ["Soup", "Salad"] {
                let key = try await store.newPrimaryKeys(forEntity: "Recipe", count: 1)[0]
                let row = StoreRow(
                    reference: RowReference(entityName: "Recipe", primaryKey: key), attributes: ["name": .string(name)])
                _ = try await store.save(StoreChangeSet(inserted: [row], author: "seed"))
            }
            before = try await store.currentHistoryToken()
        }
        try await SQLiteStoreMigrator().migrateStore(at: url, model: versions, to: "v2")

        // The rebuilt store records history; the old transactions described the old layout and are gone.
        let store = try SQLiteStore(at: url, model: v2)
        #expect(store.recordsHistory)
        #expect(try await store.fetchHistory(HistoryFetchRequest()).isEmpty)
        let token = try #require(before)
        #expect(try await store.currentHistoryToken() == token)
        let key = try await store.newPrimaryKeys(forEntity: "Recipe", count: 1)[0]
        let row = StoreRow(
            reference: RowReference(entityName: "Recipe", primaryKey: key), attributes: ["title": .string("Stew")])
        _ = try await store.save(StoreChangeSet(inserted: [row], author: "after"))
        let after = try await store.fetchHistory(HistoryFetchRequest(after: token))
        #expect(after.map(\.author) == ["after"])
        #expect(after.map(\.token.description) == ["3@\(store.identifier)"])
    }

    // MARK: - Helpers

    /// Every row a query returns, read through a connection of its own.
    static func rows(_ url: URL, _ sql: SQL) throws -> [[DatabaseValue]] {
        try Connection(path: url.path, configuration: .readOnly).fetchAll(sql)
    }
}
