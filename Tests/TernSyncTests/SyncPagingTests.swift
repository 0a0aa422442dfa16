import ChefsBook
import Foundation
import TernCore
import TernPostgreSQL
import TernSQLite
import TernSync
import TernTestSupport
import Testing

/// Pulls applied in one local transaction, large local transactions pushed in parts, edits made
/// before a device's first sync, and pulls that skip a device's own pushes, against a real
/// PostgreSQL server. Every test ends with the devices exporting identical data.
@Suite(.enabled(if: PostgreSQLTestServer.isAvailable, PostgreSQLTestServer.skipComment))
struct SyncPagingTests {
    @Test func aPullIsInvisibleUntilItsLastPageAndResumesItsDownload() async throws {
        let directory = try TemporaryDirectory()
        let server = try PostgreSQLTestServer.freshStoreURL(prefix: "sync")
        let a = try await SyncTestDevice("a", in: directory, server: server, seeded: true, pageSize: 3)
        try await a.addRecipes(12, prefix: "paged")
        _ = try await a.engine.sync()
        let b = try await SyncTestDevice("b", in: directory, server: server, seeded: false, pageSize: 3)
        // A download killed after its first page: the page is kept aside, the data untouched.
        let first = try await b.engine.server.pull(after: SyncPullCursor(sequence: 0), limit: 3)
        #expect(!first.isComplete)
        try await b.store.stageSyncPage(try JSONEncoder().encode(first), cursor: first.cursor.description)
        #expect(try await b.count("Recipe") == 0)
        #expect(try await b.store.syncState(forKey: "pulled") == nil)
        // The next pull goes on from the staged page and applies everything at once.
        let pulled = try await b.engine.pull()
        let objects = try await a.count("Recipe") + a.count("Ingredient") + a.count("Step")
        #expect(pulled.pulledObjects == objects)
        #expect(try await b.store.stagedSyncCursor() == nil)
        #expect(try await b.store.syncStates(withPrefix: "pending/").isEmpty)
        // Every step's recipe arrived in the same transaction: none is left without one.
        let steps = try await b.store.fetch(StoreFetchRequest(entityName: "Step"))
        #expect(try await steps.count == a.count("Step") && steps.allSatisfy { $0.toOne["recipe"] != nil })
        try await converge([a, b])
    }

    @Test func aLargeLocalTransactionTravelsInPartsAndLandsWhole() async throws {
        let directory = try TemporaryDirectory()
        let server = try PostgreSQLTestServer.freshStoreURL(prefix: "sync")
        let a = try await SyncTestDevice("a", in: directory, server: server, seeded: true, pageSize: 4)
        let b = try await SyncTestDevice("b", in: directory, server: server, seeded: false, pageSize: 4)
        try await converge([a, b])
        try await a.addRecipes(10, prefix: "big")
        let transaction = try #require(try await a.store.fetchHistory(HistoryFetchRequest(after: nil)).last)
        #expect(transaction.changes.count == 30)
        // A push killed after its first part: the server keeps it aside, other devices see nothing.
        let header = SyncPushTransaction(
            device: UUID(uuidString: try #require(try await a.store.syncState(forKey: "device"))) ?? UUID(),
            localNumber: transaction.token.transactionNumber, author: transaction.author,
            modelDigest: a.store.model.versionHashesDigest, changes: [])
        let partial = try await a.engine.server.push(part: header, number: 0, isLast: false)
        #expect(partial.transactions == 0)
        _ = try await b.engine.pull()
        #expect(try await b.count("Recipe") == a.count("Recipe") - 10)
        // The whole push: 8 parts of at most 4 changes, recorded as one server transaction.
        let pushed = try await a.engine.push()
        #expect(pushed.pushedTransactions == 1 && pushed.pushedChanges == 30)
        let pulled = try await b.engine.pull()
        #expect(pulled.inserted == 30)
        try await converge([a, b])
        #expect(try await b.count("Step") == a.count("Step"))
    }

    @Test func anEditMadeBeforeTheFirstSyncIsALaterWrite() async throws {
        let directory = try TemporaryDirectory()
        let server = try PostgreSQLTestServer.freshStoreURL(prefix: "sync")
        let a = try await SyncTestDevice("a", in: directory, server: server, seeded: true)
        _ = try await a.engine.sync()
        // B seeds the same starter data and edits a recipe before it ever syncs, history off.
        let chefsBook = try ChefsBook.model()
        let url = directory.url.appendingPathComponent("b.sqlite")
        _ = try SQLiteStore(at: url, model: chefsBook.currentVersion.model)
        _ = try await ChefsBook.seedStarterRecipes(into: url, model: chefsBook)
        do {
            let plain = try SQLiteStore(at: url)
            let coordinator = PersistentStoreCoordinator(model: plain.model)
            try await coordinator.addStore(plain)
            try await ObjectContext(coordinator: coordinator).perform { context in
                try await SyncTestDevice.recipe("tomato-soup", in: context)[attribute: "servings"] = .integer(11)
                try await context.save()
            }
            #expect(!plain.recordsHistory)
        }
        let b = try SyncTestDevice(opening: url, server: server)
        let summary = try await b.engine.sync()
        #expect(summary.mergedOnServer > 0)
        // C seeds late and never edits: its starter values do not bring back the old servings.
        let c = try await SyncTestDevice("c", in: directory, server: server, seeded: true)
        try await converge([a, b, c])
        #expect(try await a.recipeValues("tomato-soup")["servings"] == .integer(11))
        #expect(try await c.count("Recipe") == a.count("Recipe"))
    }

    @Test func aDeviceDoesNotPullBackItsOwnPushes() async throws {
        let directory = try TemporaryDirectory()
        let server = try PostgreSQLTestServer.freshStoreURL(prefix: "sync")
        let a = try await SyncTestDevice("a", in: directory, server: server, seeded: true)
        let b = try await SyncTestDevice("b", in: directory, server: server, seeded: false)
        // A's first sync pushes its snapshot and pulls none of it back; B pulls it all.
        let first = try await a.engine.sync()
        #expect(first.pulledObjects == 0)
        #expect(try await b.engine.sync().pulledObjects > 0)
        try await converge([a, b])
        // A's own edit does not come back to A.
        try await a.edit { context in
            try await SyncTestDevice.recipe("tomato-soup", in: context)[attribute: "title"] = .string("A's soup")
        }
        #expect(try await a.engine.sync().pulledObjects == 0)
        // B edits the same recipe without having pulled A's edit: B gets the object back, with A's title.
        try await b.edit { context in
            try await SyncTestDevice.recipe("tomato-soup", in: context)[attribute: "servings"] = .integer(5)
        }
        let bSync = try await b.engine.sync()
        #expect(bSync.pulledObjects == 1)
        #expect(try await b.recipeValues("tomato-soup")["title"] == .string("A's soup"))
        #expect(try await a.engine.sync().pulledObjects == 1)
        try await converge([a, b])
        #expect(try await a.recipeValues("tomato-soup")["servings"] == .integer(5))
    }
}
