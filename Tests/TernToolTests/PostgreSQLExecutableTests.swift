import Foundation
import TernCore
import TernPostgreSQL
import TernSQLite
import TernSync
import TernTestSupport
import Testing

@testable import TernTool

/// `postgres://` stores and `tern sync` through the built binary, on the throwaway PostgreSQL
/// cluster (or `TERN_PG_URL`).
@Suite(.enabled(if: PostgreSQLTestServer.isAvailable, PostgreSQLTestServer.skipComment))
struct PostgreSQLExecutableTests {
    /// A `postgres://` URL with a new schema.
    static func freshURL(_ prefix: String) throws -> String {
        let server = try PostgreSQLTestServer.connectionString()
        return try #require(
            PostgreSQLConvertTests.url(server, schema: "\(prefix)_\(UUID().uuidString.prefix(8).lowercased())"))
    }

    /// Runs SQL in a URL's schema with psql, to damage a store on purpose.
    static func psql(_ url: String, _ sql: String) throws {
        let server = try PostgreSQLTestServer.connectionString()
        let schema = try #require(url.split(separator: "schema=").last.map(String.init))
        let psql = ["/usr/bin/psql", "/usr/lib/postgresql/15/bin/psql"].first {
            FileManager.default.isExecutableFile(atPath: $0)
        }
        let result = try ToolRunner.runProgram(
            try #require(psql, "psql is not installed"),
            ["-X", "-q", "-v", "ON_ERROR_STOP=1", server, "-c", "SET search_path TO \(schema); \(sql)"])
        #expect(result.status == 0, "\(result.standardError)")
    }

    @Test func storeCommandsTakeAPostgresURL() throws {
        let tmp = try TemporaryDirectory()
        let url = try Self.freshURL("cli")
        try Binary.succeed(["create", url, "--model", Binary.chefsBook, "--type", "postgres"])
        let imported = try Binary.document(
            try Binary.succeed(["import", url, "--model", Binary.chefsBook, Binary.starter, "--json"]))
        #expect((imported["entities"] as? [String: [String: Int]])?["Recipe"]?["inserted"] == 8)
        let again = try Binary.succeed(["import", url, "--model", Binary.chefsBook, Binary.starter]).standardOutput
        #expect(again.contains("  Recipe: 0 inserted, 8 updated\n"))
        // The same records in a SQLite store export the same JSON.
        let sqlite = try Binary.chefsBookStore(in: tmp)
        try Binary.succeed(["import", sqlite, "--model", Binary.chefsBook, Binary.starter])
        // Keys are assigned anew by each import, so the exports are compared with keys set aside.
        let expected = try Binary.canonical(try Binary.succeed(["export", sqlite]).standardOutput)
        let before = try Binary.succeed(["export", url]).standardOutput
        #expect(try Binary.canonical(before) == expected)
        let info = try Binary.document(try Binary.succeed(["info", url, "--model", Binary.chefsBook, "--json"]))
        #expect(info["type"] as? String == "postgres" && info["needsMigration"] as? Bool == false)
        #expect((info["counts"] as? [String: Int])?["Recipe"] == 8)
        // A bad row changes nothing on PostgreSQL either.
        let bad = tmp.path("bad.csv")
        try "uid,title,servings\nCB-0001,Soup,4\nZZ-9,Salad,many\n".write(to: bad, atomically: true, encoding: .utf8)
        let failed = try Binary.fail(
            ["import", url, "--model", Binary.chefsBook, bad.path, "--entity", "Recipe"], status: 1)
        #expect(failed.errorLines.first?.contains(":3:3:") == true)
        #expect(try Binary.succeed(["export", url]).standardOutput == before)

        // verify: every check that applies, and a note on what does not.
        let verified = try Binary.succeed(["verify", url], allowingStandardError: true)
        #expect(
            verified.standardOutput.hasPrefix("ok: ")
                && verified.standardOutput.hasSuffix(" objects checked, no problems\n"))
        #expect(
            verified.errorLines == [
                "note: not checked, as they do not apply to a postgres store: integrity, missingExternalData"
            ])
        let clean = try Binary.document(try Binary.succeed(["verify", url, "--json", "--quiet"]))
        #expect(clean["skipped"] as? [String] == ["integrity", "missingExternalData"] && clean["ok"] as? Bool == true)
        // Planted damage: a lagging key counter and an ingredient whose recipe does not exist.
        try Self.psql(url, #"UPDATE "Z_PRIMARYKEY" SET "Z_MAX" = 1 WHERE "Z_NAME" = 'Recipe'"#)
        try Self.psql(url, #"UPDATE "ZINGREDIENT" SET "ZRECIPE" = 999 WHERE "Z_PK" = 1"#)
        let damaged = try ToolRunner.runExecutable(["verify", url, "--json", "--quiet"])
        #expect(damaged.status == 1)
        let report = try Binary.document(damaged)
        let kinds = Set((report["problems"] as? [[String: Any]] ?? []).compactMap { $0["kind"] as? String })
        #expect(kinds == ["primaryKeyCounter", "danglingReference"], "\(damaged.standardOutput)")
        let listed = try Binary.fail(["verify", url, "--quiet"], status: 1)
        #expect(listed.errorLines.first == "error: the store has 2 problems")
        #expect(listed.errorLines.contains { $0.hasPrefix("  Recipe/p") && $0.contains("(primaryKeyCounter)") })
        #expect(
            listed.errorLines.contains {
                $0
                    == "  Ingredient/p1.recipe (danglingReference): Ingredient.recipe points to Recipe/p999, which does not exist"
            })

        let history = try Binary.fail(["history", url], status: 1)
        #expect(
            history.errorLines.first?.hasPrefix("error: PostgreSQL stores do not record persistent history") == true)
        let sync = try Binary.fail(["sync", url, "--server", url], status: 1)
        #expect(sync.errorLines.first?.contains("only SQLite stores sync") == true)
        let unreachable = try Binary.fail(["info", "postgres://tern@127.0.0.1:1/nothing"], status: 1)
        #expect(
            unreachable.errorLines.first?.contains(
                "cannot connect to PostgreSQL at postgres://tern@127.0.0.1:1/nothing") == true)
    }

    @Test func syncTwoDevicesThroughTheBinary() throws {
        let tmp = try TemporaryDirectory()
        let server = try Self.freshURL("sync")
        let phone = try Binary.chefsBookStore(in: tmp, named: "Phone.sqlite")
        let tablet = try Binary.chefsBookStore(in: tmp, named: "Tablet.sqlite")
        // Both devices seed the same starter data, then each saves something of its own.
        for device in [phone, tablet] {
            try Binary.succeed(["import", device, "--model", Binary.chefsBook, Binary.starter])
        }
        let phoneRecipe = tmp.path("phone.tsv")
        try "uid\ttitle\tservings\nPH-1\tPhone Pie\t3\n".write(to: phoneRecipe, atomically: true, encoding: .utf8)
        try Binary.succeed(["import", phone, "--model", Binary.chefsBook, phoneRecipe.path, "--entity", "Recipe"])
        let tabletRecipe = tmp.path("tablet.csv")
        try "uid,title,servings\nTB-1,Tablet Tart,6\n".write(to: tabletRecipe, atomically: true, encoding: .utf8)
        try Binary.succeed(["import", tablet, "--model", Binary.chefsBook, tabletRecipe.path, "--entity", "Recipe"])

        let firstPhone = try Binary.succeed(["sync", phone, "--server", server]).standardOutput
        #expect(firstPhone.hasPrefix("pushed "), "\(firstPhone)")
        let tabletSync = try Binary.document(try Binary.succeed(["sync", tablet, "--server", server, "--json"]))
        let pushed = try #require(tabletSync["pushed"] as? [String: Int])
        let pulled = try #require(tabletSync["pulled"] as? [String: Int])
        #expect(Set(pushed.keys) == ["transactions", "changes", "merged"])
        #expect(Set(pulled.keys) == ["objects", "inserted", "updated", "deleted", "merged"])
        #expect(pulled["inserted"] ?? 0 >= 1, "the phone's recipe reaches the tablet: \(pulled)")
        // A later edit on the tablet reaches the phone: the last write in server order wins.
        let tabletEdit = tmp.path("edit.csv")
        try "uid,servings\nCB-0001,9\n".write(to: tabletEdit, atomically: true, encoding: .utf8)
        try Binary.succeed([
            "import", tablet, "--model", Binary.chefsBook, tabletEdit.path, "--entity", "Recipe", "--unique-by", "uid",
        ])
        try Binary.succeed(["sync", tablet, "--server", server])
        try Binary.succeed(["sync", phone, "--server", server, "--model", Binary.chefsBook])
        let settled = try Binary.document(try Binary.succeed(["sync", tablet, "--server", server, "--json"]))
        #expect(
            (settled["pulled"] as? [String: Int])?["objects"] == 0
                && (settled["pushed"] as? [String: Int])?["changes"] == 0)

        // Both devices hold the same objects: the same export once keys are set aside.
        let phoneData = try Binary.canonical(try Binary.succeed(["export", phone]).standardOutput)
        let tabletData = try Binary.canonical(try Binary.succeed(["export", tablet]).standardOutput)
        #expect(phoneData == tabletData)
        #expect(phoneData["Recipe"]?.count == 10, "8 starter recipes, seeded twice, plus one of each device's")
        #expect(phoneData["Recipe"]?.contains { $0.contains(#""servings":9"#) && $0.contains("Tomato Soup") } == true)
    }

    @Test func syncInPagesAndResyncAfterTheServerPurged() async throws {
        let tmp = try TemporaryDirectory()
        let server = try Self.freshURL("resync")
        let phone = try Binary.chefsBookStore(in: tmp, named: "Phone.sqlite")
        let tablet = try Binary.chefsBookStore(in: tmp, named: "Tablet.sqlite")
        try Binary.succeed(["import", phone, "--model", Binary.chefsBook, Binary.starter])
        // Pages of 2 and 3 objects: the recipes and their ingredients travel in many round trips
        // and arrive whole.
        try Binary.succeed(["sync", phone, "--server", server, "--page-size", "2"])
        let first = try Binary.document(
            try Binary.succeed(["sync", tablet, "--server", server, "--page-size=3", "--json"]))
        #expect((first["pulled"] as? [String: Int])?["inserted"] ?? 0 > 8, "\(first)")
        let seeded = try Binary.canonical(try Binary.succeed(["export", phone]).standardOutput)
        let pulledSeed = try Binary.canonical(try Binary.succeed(["export", tablet]).standardOutput)
        #expect(seeded["Recipe"]?.count == 8 && pulledSeed["Recipe"]?.count == 8)
        #expect(Self.difference(pulledSeed, seeded).isEmpty, "\(Self.difference(pulledSeed, seeded))")

        // The phone deletes one recipe and edits another; then the server purges everything the
        // phone pulled, the delete's tombstone included, and leaves the tablet behind.
        try await Self.deleteRecipe("CB-0002", in: phone)
        let edit = tmp.path("edit.csv")
        try "uid,servings\nCB-0001,9\n".write(to: edit, atomically: true, encoding: .utf8)
        try Binary.succeed([
            "import", phone, "--model", Binary.chefsBook, edit.path, "--entity", "Recipe", "--unique-by", "uid",
        ])
        try Binary.succeed(["sync", phone, "--server", server])
        let pulled = try await Self.syncStore(phone).syncState(forKey: "pulled")
        let sequence = try #require(pulled.flatMap(SyncPullCursor.init)).sequence
        let purged = try await SyncServer(location: server).purge(through: sequence)
        #expect(purged.transactions > 0)

        // A plain sync refuses to pull and says to run --resync; --json prints nothing either.
        let refused =
            "error: the server purged changes this device has not pulled; run the same command with "
            + "--resync to pull the whole state again (tern sync STORE --server URI --resync)"
        let behind = try Binary.fail(["sync", tablet, "--server", server], status: 1)
        #expect(behind.errorLines == [refused, "local changes were pushed; nothing was pulled"])
        let behindJSON = try Binary.fail(["sync", tablet, "--server", server, "--json"], status: 1)
        #expect(behindJSON.errorLines.first == refused)
        #expect(try Binary.canonical(try Binary.succeed(["export", tablet]).standardOutput) == pulledSeed)

        // --resync pulls the whole state, in pages of 2 (the later ones below the purge point),
        // and deletes what the server no longer has.
        let resynced = try Binary.document(
            try Binary.succeed(["sync", tablet, "--server", server, "--resync", "--page-size", "2", "--json"]))
        #expect((resynced["pulled"] as? [String: Int])?["deleted"] ?? 0 >= 1, "\(resynced)")
        let phoneData = try Binary.canonical(try Binary.succeed(["export", phone]).standardOutput)
        let tabletData = try Binary.canonical(try Binary.succeed(["export", tablet]).standardOutput)
        #expect(Self.difference(tabletData, phoneData).isEmpty, "\(Self.difference(tabletData, phoneData))")
        #expect(phoneData["Recipe"]?.count == 7)
        #expect(phoneData["Recipe"]?.contains { $0.contains(#""servings":9"#) && $0.contains("Tomato Soup") } == true)
        #expect(phoneData["Recipe"]?.contains { $0.contains("Pancakes") } == false)
        // Once resynced, plain syncs work again, though nothing was pushed after the purge.
        let settled = try Binary.document(
            try Binary.succeed(["sync", tablet, "--server", server, "--page-size", "2", "--json"]))
        #expect((settled["pulled"] as? [String: Int])?["objects"] == 0)

        // A page size must be a whole number of at least 1: a usage error otherwise.
        for bad in ["0", "-3", "many"] {
            let usage = try Binary.fail(["sync", tablet, "--server", server, "--page-size=\(bad)"], status: 2)
            #expect(usage.errorLines.first == "error: --page-size takes a whole number of at least 1, not '\(bad)'")
        }
    }

    /// The records two canonical exports do not share, for failure messages.
    static func difference(_ one: [String: [String]], _ other: [String: [String]]) -> [String: [String]] {
        var result: [String: [String]] = [:]
        for entity in Set(one.keys).union(other.keys) {
            let left = Set(one[entity] ?? [])
            let right = Set(other[entity] ?? [])
            let different = left.symmetricDifference(right).sorted()
            if !different.isEmpty { result[entity] = different.map { (left.contains($0) ? "- " : "+ ") + $0 } }
        }
        return result
    }

    /// A device store opened as sync opens it: history and global identifiers on.
    static func syncStore(_ path: String) throws -> SQLiteStore {
        var configuration = SQLiteConfiguration()
        configuration.recordsHistory = true
        configuration.tracksGlobalIdentifiers = true
        return try SQLiteStore(at: URL(fileURLWithPath: path), configuration: configuration)
    }

    /// Deletes a recipe as an app would (its delete rules apply), recorded in the history sync pushes.
    static func deleteRecipe(_ uid: String, in path: String) async throws {
        let store = try syncStore(path)
        let coordinator = PersistentStoreCoordinator(model: store.model)
        try await coordinator.addStore(store)
        try await ObjectContext(coordinator: coordinator).perform { context in
            let request = FetchRequest(
                entityName: "Recipe", predicate: try FetchPredicate("uid == %@", arguments: [.value(.string(uid))]))
            context.delete(try #require(try await context.fetch(request).first))
            try await context.save()
        }
    }

    @Test func syncFailuresLeaveTheStoreAsItWas() throws {
        let tmp = try TemporaryDirectory()
        let store = try Binary.chefsBookStore(in: tmp)
        try Binary.succeed(["import", store, "--model", Binary.chefsBook, Binary.starter])
        let before = try Data(contentsOf: URL(fileURLWithPath: store))
        let unreachable = try Binary.fail(
            ["sync", store, "--server", "postgres://tern@127.0.0.1:1/kitchen"], status: 1)
        #expect(
            unreachable.errorLines.first?.hasPrefix(
                "error: cannot reach the sync server at postgres://tern@127.0.0.1:1/kitchen: cannot connect to PostgreSQL at "
            ) == true,
            "\(unreachable.standardError)")
        #expect(unreachable.errorLines.last == "nothing was synced; the store is unchanged")
        let badURL = try Binary.fail(["sync", store, "--server", "postgres://[oops"], status: 1)
        #expect(badURL.errorLines.first?.hasPrefix("error: cannot reach the sync server at the --server URI: ") == true)
        #expect(try Data(contentsOf: URL(fileURLWithPath: store)) == before)
        let noServer = try Binary.fail(["sync", store], status: 2)
        #expect(noServer.errorLines.first == "error: missing --server URI; give the PostgreSQL sync server")
        let missing = try Binary.fail(
            ["sync", tmp.path("none.sqlite").path, "--server", "postgres://tern@127.0.0.1:1/k"], status: 1)
        #expect(missing.errorLines == ["error: no store exists at \(tmp.path("none.sqlite").path); check the path"])
    }
}
