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
        #expect(
            try await b.store.count(
                StoreFetchRequest(entityName: "Recipe", predicate: try FetchPredicate("uid == 'lemon-tart'"))) == 1)
        // Resync: the whole state again; the tart goes, B's offline edit stays.
        _ = try await b.engine.resync()
        try await converge([a, b, c])
        #expect(
            try await b.store.count(
                StoreFetchRequest(entityName: "Recipe", predicate: try FetchPredicate("uid == 'lemon-tart'"))) == 0)
        #expect(try await a.recipeValues("tomato-soup")["servings"] == .integer(11))
        // A re-sent old push after the purge changes nothing.
        let deviceText = try #require(try await c.store.syncState(forKey: "device"))
        let device = try #require(UUID(uuidString: deviceText))
        let resent = try await a.engine.server.push([
            SyncPushTransaction(
                device: device, localNumber: 1, author: nil, modelDigest: a.store.model.versionHashesDigest, changes: []
            )
        ])
        #expect(resent.transactions == 0)
    }

    @Test func aResyncInSeveralPagesAfterThePurgeLeavesTheDeviceCurrent() async throws {
        let directory = try TemporaryDirectory()
        let server = try PostgreSQLTestServer.freshStoreURL(prefix: "sync")
        let a = try await SyncTestDevice("a", in: directory, server: server, seeded: true, pageSize: 3)
        let b = try await SyncTestDevice("b", in: directory, server: server, seeded: false, pageSize: 3)
        try await converge([a, b])
        // A adds recipes and deletes one; B stays behind; the server purges everything, so the
        // last transactions (A's edits) leave the log.
        try await a.addRecipes(5, prefix: "purged")
        try await a.edit { context in
            context.delete(try await SyncTestDevice.recipe("lemon-tart", in: context))
        }
        _ = try await a.engine.sync()
        let latestText = try #require(try await a.store.syncState(forKey: "pulled"))
        let latest = try #require(SyncPullCursor(latestText)).sequence
        _ = try await a.engine.server.purge(through: latest)
        #expect(try await a.engine.server.purgedSequence() == latest)
        let error = await #expect(throws: SyncError.self) { try await b.engine.sync() }
        #expect(error?.code == .resyncNeeded)
        // The resync reads the whole state in pages of 3, the later ones below the purge point…
        let resynced = try await b.engine.resync()
        #expect(resynced.pulledObjects > 3)
        #expect(resynced.deleted >= 1)
        // …and leaves B at the purge point at least: its next syncs are ordinary ones.
        let pulledText = try #require(try await b.store.syncState(forKey: "pulled"))
        let pulled = try #require(SyncPullCursor(pulledText))
        #expect(pulled.sequence >= latest)
        _ = try await b.engine.sync()
        _ = try await b.engine.sync()
        try await b.edit { context in
            try await SyncTestDevice.recipe("purged-2", in: context)[attribute: "title"] = .string("After the resync")
        }
        try await converge([a, b])
        #expect(try await a.recipeValues("purged-2")["title"] == .string("After the resync"))
        #expect(try await b.count("Recipe") == a.count("Recipe"))
    }

    @Test func aNewDevicesFirstPullAfterThePurgeTakesSeveralPages() async throws {
        let directory = try TemporaryDirectory()
        let server = try PostgreSQLTestServer.freshStoreURL(prefix: "sync")
        let a = try await SyncTestDevice("a", in: directory, server: server, seeded: true, pageSize: 3)
        _ = try await a.engine.sync()
        try await a.addRecipes(4, prefix: "early")
        try await a.edit { context in
            context.delete(try await SyncTestDevice.recipe("lemon-tart", in: context))
        }
        _ = try await a.engine.sync()
        let purged = try await a.engine.server.purge(through: try await a.engine.server.lowestPulledSequence())
        #expect(purged.transactions > 0)
        let horizon = try await a.engine.server.purgedSequence()
        // Paging a read of the whole state: each page's cursor keeps the start (0) and sits below
        // the purge point, and the server goes on.
        let first = try await a.engine.server.pull(after: SyncPullCursor(sequence: 0), limit: 3)
        #expect(!first.isComplete && !first.needsResync)
        #expect(first.cursor.sequence < horizon && first.cursor.start == 0)
        #expect(SyncPullCursor(first.cursor.description) == first.cursor)
        let second = try await a.engine.server.pull(after: first.cursor, limit: 3)
        #expect(!second.needsResync && second.objects.count == 3)
        // A device that started after the purge point with a paged cursor still must resync.
        let behind = SyncPullCursor(sequence: first.cursor.sequence, object: first.cursor.object, start: 1)
        #expect(horizon > 1)
        #expect(try await a.engine.server.pull(after: behind, limit: 3).needsResync)
        // A new device's first pull, then ordinary syncs.
        let c = try await SyncTestDevice("c", in: directory, server: server, seeded: false, pageSize: 3)
        let pulled = try await c.engine.sync()
        #expect(pulled.pulledObjects == (try await a.count("Recipe") + a.count("Ingredient") + a.count("Step")))
        try await c.addRecipes(1, prefix: "late")
        try await converge([a, c])
        #expect(try await c.count("Recipe") == a.count("Recipe"))
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
