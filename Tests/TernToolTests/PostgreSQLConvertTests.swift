import Foundation
import TernTestSupport
import Testing

@testable import TernTool

/// `tern convert` between SQLite files and PostgreSQL stores, and `tern info`/`export` on a
/// `postgres://` store.
@Suite(.enabled(if: PostgreSQLTestServer.isAvailable, PostgreSQLTestServer.skipComment))
struct PostgreSQLConvertTests {
    /// Runs the tool and expects success.
    func tern(_ arguments: [String]) async -> String {
        let result = await ToolRunner.run(arguments)
        #expect(result.status == 0, "tern \(arguments.joined(separator: " ")): \(result.standardError)")
        return result.standardOutput
    }

    @Test(arguments: Fixtures.stores.map(\.path))
    func sqliteToPostgreSQLAndBackKeepsTheExport(store: String) async throws {
        let tmp = try TemporaryDirectory()
        let original = try tmp.copy(Fixtures.url(store), as: "original.sqlite")
        let expected = await tern(["export", original.path])
        let server = try PostgreSQLTestServer.connectionString()
        // The CLI takes postgres:// URLs; a key=value server string becomes one through its socket folder.
        let url = try #require(Self.url(server, schema: "convert_\(UUID().uuidString.prefix(8).lowercased())"))
        #expect(await tern(["convert", original.path, url, "--type", "postgres"]).contains("(postgres)"))
        #expect(await tern(["export", url]) == expected)
        let back = tmp.path("back.sqlite").path
        #expect(await tern(["convert", url, back, "--type", "sqlite"]).contains("(postgres) to"))
        #expect(await tern(["export", back]) == expected)
        let info = await tern(["info", url, "--json"])
        let document = try JSONSerialization.jsonObject(with: Data(info.utf8)) as? [String: Any]
        #expect(document?["type"] as? String == "postgres")
        let again = await ToolRunner.run(["convert", original.path, url, "--type", "postgres"])
        #expect(again.status != 0, "an existing PostgreSQL store is never overwritten")
    }

    @Test func createMakesAnEmptyPostgreSQLStoreOnce() async throws {
        let server = try PostgreSQLTestServer.connectionString()
        let url = try #require(Self.url(server, schema: "create_\(UUID().uuidString.prefix(8).lowercased())"))
        let model = Fixtures.sampleModel.path
        #expect(await tern(["create", url, "--model", model, "--type", "postgres"]).contains("postgres store"))
        let info = await tern(["info", url, "--model", model, "--json"])
        let document = try JSONSerialization.jsonObject(with: Data(info.utf8)) as? [String: Any]
        #expect(document?["type"] as? String == "postgres")
        let again = await ToolRunner.run(["create", url, "--model", model, "--type", "postgres"])
        #expect(again.status == 1)
        #expect(again.errorLines.first?.hasPrefix("error: a store already exists at ") == true)
        let untyped = await ToolRunner.run(["create", url, "--model", model])
        #expect(untyped.errorLines.first?.hasSuffix("is a PostgreSQL URL; use --type postgres") == true)
    }

    /// A `postgres://` URL for the test server: `TERN_PG_URL` as it is, or the throwaway
    /// cluster's socket folder, port, user and database.
    static func url(_ server: String, schema: String) -> String? {
        if server.hasPrefix("postgres") { return PostgreSQLTestServer.withSchema(server, schema) }
        var fields: [String: String] = [:]
        for pair in server.split(separator: " ") {
            let parts = pair.split(separator: "=", maxSplits: 1).map(String.init)
            if parts.count == 2 { fields[parts[0]] = parts[1] }
        }
        guard let host = fields["host"], let port = fields["port"], let user = fields["user"],
            let database = fields["dbname"]
        else { return nil }
        let encodedHost = host.addingPercentEncoding(withAllowedCharacters: .alphanumerics) ?? host
        return "postgres://\(user)@\(encodedHost):\(port)/\(database)?schema=\(schema)"
    }
}
