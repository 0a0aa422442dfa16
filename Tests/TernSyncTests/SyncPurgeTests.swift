import Foundation
import TernCore
import TernPostgreSQL
import TernSQLite
import TernSync
import TernTestSupport
import Testing

/// Purging history and tombstones on devices and on the server, against a real PostgreSQL server.
@Suite(.enabled(if: PostgreSQLTestServer.isAvailable, PostgreSQLTestServer.skipComment))
struct SyncPurgeTests {
    @Test func aDeviceBehindThePurgeIsToldToResyncAndResyncs() async throws {
        let directory = try TemporaryDirectory()
        let server = try PostgreSQLTestServer.freshStoreURL(prefix: "sync")
        let a = try await SyncTestDevice("a", in: directory, server: server, seeded: true)
        let b = try await SyncTestDevice("b", in: directory, server: server, seeded: false)
        let c = try await SyncTestDevice("c", in: directory, server: server, seeded: false)
        try await converge([a, b, c])
        // C deletes a recipe; A and C see it; B stays behind.
        try await c.edit { context in
            context.delete(try await SyncTestDevice.recipe("lemon-tart", in: context))
        }
        _ = try await c.engine.sync()
        _ = try await a.engine.sync()
        let lowest = try await a.engine.server.lowestPulledSequence()
        let pulledText = try #require(try await a.store.syncState(forKey: "pulled"))
        let latest = try #require(SyncPullCursor(pulledText)).sequence
        #expect(lowest < latest)  // B has not pulled the delete
        // Purging only what every device pulled leaves nobody behind…
        _ = try await a.engine.server.purge(through: lowest)
        // …purging further forgets the delete's tombstones and puts B behind.
        let purged = try await a.engine.server.purge(through: latest)
        #expect(purged.transactions > 0)
        #expect(purged.objects > 0)
        #expect(try await a.engine.server.purgedSequence() == latest)
        // B edits offline meanwhile; its sync pushes, then refuses to pull with a clear answer.
        try await b.edit { context in
            try await SyncTestDevice.recipe("tomato-soup", in: context)[attribute: "servings"] = .integer(11)
        }
        let error = await #expect(throws: SyncError.self) { try await b.engine.sync() }
        #expect(error?.code == .resyncNeeded)
        #expect(error?.message.contains("resync") == true)
        #expect(try await b.store.count(
            StoreFetchRequest(entityName: "Recipe", predicate: try FetchPredicate("uid == 'lemon-tart'"))) == 1)
        // Resync: the whole state again; the tart goes, B's offline edit stays.
        _ = try await b.engine.resync()
        try await converge([a, b, c])
        #expect(try await b.store.count(
            StoreFetchRequest(entityName: "Recipe", predicate: try FetchPredicate("uid == 'lemon-tart'"))) == 0)
        #expect(try await a.recipeValues("tomato-soup")["servings"] == .integer(11))
        // A re-sent old push after the purge changes nothing.
        let deviceText = try #require(try await c.store.syncState(forKey: "device"))
        let device = try #require(UUID(uuidString: deviceText))
        let resent = try await a.engine.server.push([
            SyncPushTransaction(
                device: device, localNumber: 1, author: nil, modelDigest: a.store.model.versionHashesDigest, changes: [])
        ])
        #expect(resent.transactions == 0)
    }

    @Test func aDevicePurgesPushedHistoryAndDeletedIdentities() async throws {
        let directory = try TemporaryDirectory()
        let server = try PostgreSQLTestServer.freshStoreURL(prefix: "sync")
        let a = try await SyncTestDevice("a", in: directory, server: server, seeded: true)
        let b = try await SyncTestDevice("b", in: directory, server: server, seeded: false)
        try await converge([a, b])
        try await a.edit { context in
            context.delete(try await SyncTestDevice.recipe("lemon-tart", in: context))
        }
        try await a.edit { context in
            try await SyncTestDevice.recipe("tomato-soup", in: context)[attribute: "servings"] = .integer(13)
        }
        // Not pushed yet: the history stays and so do the deleted identities.
        let before = try await a.store.fetchHistory(HistoryFetchRequest()).count
        let early = try await a.engine.purgeHistory()
        #expect(early.identities == 0)
        #expect(try await a.store.fetchHistory(HistoryFetchRequest()).count == before - early.transactions)
        #expect(try await a.store.fetchHistory(HistoryFetchRequest()).count >= 2)
        _ = try await a.engine.sync()
        let purged = try await a.engine.purgeHistory()
        #expect(purged.transactions >= 2)
        #expect(purged.identities > 0)
        // Sync goes on as before.
        try await a.edit { context in
            try await SyncTestDevice.recipe("tomato-soup", in: context)[attribute: "title"] = .string("After the purge")
        }
        try await converge([a, b])
        #expect(try await b.recipeValues("tomato-soup")["title"] == .string("After the purge"))
        #expect(try await b.recipeValues("tomato-soup")["servings"] == .integer(13))
    }
}
