import Foundation
import TernCore
import TernRelational
import TernSQLite
import TernTestSupport
import Testing

@testable import TernTool

/// `tern export` and `tern verify` on a store where a row of a table that is one entity's alone
/// (a root without subentities) has another entity's `Z_ENT`: Core Data reads it as the
/// entity's object, and so do the commands.
@Suite struct UnsharedTableCommandTests {
    /// A store of cooks and dishes (four) whose dish 2 has Cook's entity number.
    static func store(in tmp: TemporaryDirectory) async throws -> URL {
        let model = try ManagedObjectModel {
            Entity("Cook") { Attribute("name", .string) }
            Entity("Dish") { Attribute("title", .string) }
        }
        let url = tmp.path("Kitchen.sqlite")
        do {
            let store = try SQLiteStore(at: url, model: model)
            let keys = try await store.newPrimaryKeys(forEntity: "Dish", count: 4)
            _ = try await store.save(
                StoreChangeSet(
                    inserted: keys.map {
                        StoreRow(
                            reference: RowReference(entityName: "Dish", primaryKey: $0),
                            attributes: ["title": .string("d\($0)")])
                    }))
        }
        let connection = try Connection(path: url.path, configuration: SQLiteConfiguration())
        try connection.execute("UPDATE ZDISH SET Z_ENT = 1 WHERE Z_PK = 2")
        return url
    }

    @Test func exportListsTheRowUnderItsTablesEntity() async throws {
        let tmp = try TemporaryDirectory()
        let url = try await Self.store(in: tmp)
        let result = await ToolRunner.run(["export", url.path])
        #expect(result.status == 0, "\(result.standardError)")
        let document = try #require(
            try JSONSerialization.jsonObject(with: Data(result.standardOutput.utf8)) as? [String: [[String: Any]]])
        #expect((document["Dish"] ?? []).compactMap { $0["_id"] as? String } == (1...4).map { "Dish/p\($0)" })
        #expect((document["Dish"] ?? []).compactMap { $0["title"] as? String } == (1...4).map { "d\($0)" })
        #expect(document["Cook"]?.isEmpty ?? true)
    }

    @Test func verifyWarnsAndExitsZero() async throws {
        let tmp = try TemporaryDirectory()
        let url = try await Self.store(in: tmp)
        let result = await ToolRunner.run(["verify", url.path])
        #expect(result.status == 0, "\(result.standardError)")
        #expect(result.standardOutput == "ok: 4 objects checked, no problems\n")
        #expect(result.errorLines.count == 1)
        #expect(
            result.errorLines.first?.hasPrefix("warning: Dish/p2 (entityNumberMismatch): row 2 of ZDISH has Z_ENT 1")
                == true)
        let json = await ToolRunner.run(["verify", url.path, "--json"])
        #expect(json.status == 0, "\(json.standardError)")
        let document = try #require(
            try JSONSerialization.jsonObject(with: Data(json.standardOutput.utf8)) as? [String: Any])
        #expect(document["ok"] as? Bool == true)
        #expect((document["problems"] as? [Any])?.isEmpty == true)
        let warnings = try #require(document["warnings"] as? [[String: Any]])
        #expect(warnings.map { $0["kind"] as? String } == ["entityNumberMismatch"])
        #expect(warnings.first?["entity"] as? String == "Dish")
        #expect(warnings.first?["primaryKey"] as? Int == 2)
    }
}
