import Foundation
import TernPostgreSQL
import TernRelational
import TernSQLite
import TernTestSupport
import Testing

/// `tern plan` and `tern migrate` on PostgreSQL stores: the Core Data fixture stores migrate as
/// they do on SQLite (same `tern export`), into and out of PostgreSQL with `--destination`, and
/// two `tern` processes migrating one store at once migrate it once.
@Suite(.enabled(if: PostgreSQLTestServer.isAvailable, PostgreSQLTestServer.skipComment))
struct PostgreSQLMigrateCommandTests {
    static let order = "SampleModel,SampleModel2,SampleModel3"
    static let migration = ["--model", Fixtures.sampleModel.path, "--order", order, "--to", "SampleModel3"]

    /// Runs the tool in-process and expects success.
    func tern(_ arguments: [String]) async -> String {
        let result = await ToolRunner.run(arguments)
        #expect(result.status == 0, "tern \(arguments.joined(separator: " ")): \(result.standardError)")
        return result.standardOutput
    }

    /// A new PostgreSQL store URL holding a copy of a fixture store, and the fixture's copy as a file.
    func postgreSQLCopy(of fixture: String, in folder: TemporaryDirectory) async throws -> (url: String, file: URL) {
        let file = try folder.copy(Fixtures.url("CoreDataPlus/SampleModel/Fixtures/" + fixture), as: "original.sqlite")
        let server = try PostgreSQLTestServer.connectionString()
        let url = try #require(
            PostgreSQLConvertTests.url(server, schema: "pgmigrate_\(UUID().uuidString.prefix(8).lowercased())"))
        _ = await tern(["convert", file.path, url, "--type", "postgres"])
        return (url, file)
    }

    @Test(arguments: [("SampleModel_V1.sqlite", "SampleModel"), ("SampleModel_V2.sqlite", "SampleModel2")])
    func aFixtureStoreMigratesOnPostgreSQLAsOnSQLite(fixture: String, version: String) async throws {
        let folder = try TemporaryDirectory()
        let (url, file) = try await postgreSQLCopy(of: fixture, in: folder)
        let plan = await tern(["plan", url, "--json"] + Self.migration)
        let document = try #require(try JSONSerialization.jsonObject(with: Data(plan.utf8)) as? [String: Any])
        #expect(document["source"] as? String == version && document["destination"] as? String == "SampleModel3")
        let display = try PostgreSQLLocation(url).description
        let output = await tern(["migrate", url] + Self.migration)
        #expect(output.hasPrefix("migrated \(display) from \(version) to SampleModel3 in 1 step(s)"))
        _ = await tern(["migrate", file.path] + Self.migration)
        let expected = await tern(["export", file.path])
        #expect(await tern(["export", url]) == expected)
        #expect(expected.contains("LuxuryCar"))
        #expect(await tern(["migrate", url] + Self.migration) == "\(display) is already at version SampleModel3\n")
        try PostgreSQLStore.destroy(at: url)
    }

    @Test func migratesIntoAndOutOfPostgreSQLWithADestinationLeavingTheSource() async throws {
        let folder = try TemporaryDirectory()
        let (url, file) = try await postgreSQLCopy(of: "SampleModel_V1.sqlite", in: folder)
        let before = try Data(contentsOf: file)
        let server = try PostgreSQLTestServer.connectionString()
        let into = try #require(
            PostgreSQLConvertTests.url(server, schema: "pgmigrate_into_\(UUID().uuidString.prefix(8).lowercased())"))
        _ = await tern(["migrate", file.path, "--destination", into, "--type", "postgres"] + Self.migration)
        #expect(try Data(contentsOf: file) == before)
        let outOf = folder.path("out.sqlite").path
        _ = await tern(["migrate", url, "--destination", outOf] + Self.migration)
        #expect(
            try MigrationJournal(metadata: PostgreSQLStore.metadata(at: url)).entries.isEmpty,
            "the source is not migrated")
        let reference = folder.path("reference.sqlite").path
        _ = await tern(["migrate", file.path, "--destination", reference] + Self.migration)
        let expected = await tern(["export", reference])
        #expect(await tern(["export", into]) == expected)
        #expect(await tern(["export", outOf]) == expected)
        let untyped = await ToolRunner.run(
            ["migrate", file.path, "--destination", outOf + ".2", "--type", "postgres"] + Self.migration)
        #expect(
            untyped.status == 1
                && untyped.errorLines.first == "error: a PostgreSQL destination is a postgres:// URL, not \(outOf).2")
        for store in [url, into] { try PostgreSQLStore.destroy(at: store) }
    }

    @Test func aMigrationBuiltBesideNeedsNoLocalFile() async throws {
        let folder = try TemporaryDirectory()
        let (url, file) = try await postgreSQLCopy(of: "SampleModel_V1.sqlite", in: folder)
        // A temporary folder that cannot be made, even by root: its parent is a file.
        let blocker = folder.path("not-a-folder")
        try Data("x".utf8).write(to: blocker)
        let result = try ToolRunner.runExecutable(
            ["migrate", url, "--strategy", "rebuild"] + Self.migration, variables: ["TMPDIR": blocker.path + "/tmp"])
        #expect(result.status == 0, "\(result.standardError)")
        _ = await tern(["migrate", file.path] + Self.migration)
        let expected = await tern(["export", file.path])
        #expect(await tern(["export", url]) == expected)
        #expect(expected.contains("LuxuryCar"))
        try PostgreSQLStore.destroy(at: url)
    }

    @Test func twoProcessesMigratingOneStoreMigrateItOnce() async throws {
        let folder = try TemporaryDirectory()
        let (url, _) = try await postgreSQLCopy(of: "SampleModel_V1.sqlite", in: folder)
        let executable = try #require(ToolRunner.executable, "the tern binary is built next to the tests")
        let processes = try (0..<2).map { index in
            let output = folder.path("out-\(index)")
            let child = try ChildProcess(
                executable, ["migrate", url] + Self.migration, standardOutput: output.path,
                standardError: output.path + ".err")
            return (child, output)
        }
        var outputs: [String] = []
        for (child, output) in processes {
            try child.waitUntilExit(timeout: ChildProcess.defaultTimeout)
            #expect(child.terminationStatus == 0)
            let text = try Data(contentsOf: output) + Data(contentsOf: URL(fileURLWithPath: output.path + ".err"))
            outputs.append(String(decoding: text, as: UTF8.self))
        }
        let display = try PostgreSQLLocation(url).description
        #expect(
            outputs.filter { $0.contains("migrated \(display) from SampleModel to SampleModel3") }.count == 1,
            "\(outputs)")
        #expect(outputs.filter { $0.contains("is already at version SampleModel3") }.count == 1, "\(outputs)")
        let journal = MigrationJournal(metadata: try PostgreSQLStore.metadata(at: url))
        #expect(journal.entries.map { "\($0.from)→\($0.to)" } == ["SampleModel→SampleModel3"])
        try PostgreSQLStore.destroy(at: url)
    }

    @Test func aMigrationGivesUpAfterTheLockTimeoutNamingTheHolder() async throws {
        let folder = try TemporaryDirectory()
        let (url, _) = try await postgreSQLCopy(of: "SampleModel_V1.sqlite", in: folder)
        let holder = try await PostgreSQLMigrationSession(location: try PostgreSQLLocation(url), timeout: .zero) { _ in
        }
        let result = await ToolRunner.run(["migrate", url, "--lock-timeout", "0.2"] + Self.migration)
        withExtendedLifetime(holder) {}
        #expect(result.status == 1 && result.standardOutput.isEmpty)
        #expect(
            result.errorLines.contains {
                $0.hasPrefix("waiting: another process is migrating the store (held by tern migrate (pid")
            })
        let error = try #require(result.errorLines.last)
        #expect(error.hasPrefix("error: the migration failed: another process is migrating the store at "))
        #expect(error.contains("held by tern migrate (pid \(getpid()) on "))
        let bad = await ToolRunner.run(["migrate", url, "--lock-timeout", "soon"] + Self.migration)
        #expect(bad.status == 2)
        try PostgreSQLStore.destroy(at: url)
    }

    @Test func aKilledMigrationLeavesTheOldStoreOrTheNewOneAndTheNextRunFinishes() async throws {
        let folder = try TemporaryDirectory()
        let executable = try #require(ToolRunner.executable, "the tern binary is built next to the tests")
        let fixture = try folder.copy(
            Fixtures.url("CoreDataPlus/SampleModel/Fixtures/SampleModel_V1.sqlite"), as: "fixture.sqlite")
        let reference = folder.path("reference.sqlite").path
        _ = await tern(["migrate", fixture.path, "--destination", reference] + Self.migration)
        let expected = await tern(["export", reference])
        for (strategy, delay) in [("rebuild", 0.4), ("rebuild", 1.0), ("automatic", 0.4)] {
            let (url, _) = try await postgreSQLCopy(of: "SampleModel_V1.sqlite", in: try TemporaryDirectory())
            let original = await tern(["export", url])
            let child = try ChildProcess(
                executable, ["migrate", url, "--strategy", strategy, "--quiet"] + Self.migration)
            try await Task.sleep(for: .milliseconds(Int(delay * 1000)))
            kill(child.processIdentifier, SIGKILL)
            try child.waitUntilExit(timeout: ChildProcess.defaultTimeout)
            let afterKill = await tern(["export", url])
            #expect(afterKill == original || afterKill == expected, "\(strategy) killed after \(delay) s")
            // The server rolled back the killed session and dropped its lock; the next run
            // removes what it left and finishes.
            _ = await tern(["migrate", url, "--strategy", strategy] + Self.migration)
            #expect(await tern(["export", url]) == expected, "\(strategy) killed after \(delay) s, run again")
            try PostgreSQLStore.destroy(at: url)
        }
    }
}
