import Foundation
import TernCore
import TernFormats
import TernSQLite
import TernTestSupport
import Testing

@testable import TernTool

/// `tern create --history` and `tern history`: a store's transactions as text and JSON, after a
/// token, and clear failures for stores without history.
@Suite struct HistoryCommandTests {
    /// The `id` of the person, an attribute the model preserves after deletion.
    static let personID = UUID(uuidString: "0A0B0C0D-0000-4000-8000-000000000001") ?? UUID()

    /// A new store made with `tern create --history`, with three saves by author "tester":
    /// a person inserted, renamed, then deleted.
    static func storeWithHistory(in folder: TemporaryDirectory) async throws -> URL {
        let url = folder.path("People.sqlite")
        let created = await ToolRunner.run([
            "create", url.path, "--model", Fixtures.sampleModel.path, "--version", "SampleModel", "--history",
        ])
        #expect(created.status == 0, "\(created.standardError)")
        #expect(created.standardOutput.hasSuffix(", recording history\n"))
        let versions = try XcodeModel.readVersionedModel(
            at: Fixtures.sampleModel, order: ["SampleModel", "SampleModel2", "SampleModel3"])
        let model = try #require(versions.version(named: "SampleModel")).model
        let coordinator = PersistentStoreCoordinator(model: model)
        // Opened without the option: the tables the command created keep history on.
        try await coordinator.addStore(try SQLiteStore(at: url, model: model))
        let context = ObjectContext(coordinator: coordinator)
        try await context.perform { context in
            context.transactionAuthor = "tester"
            context.name = "cli"
            let person = context.insert("Person")
            person[attribute: "firstName"] = .string("Ada")
            person[attribute: "lastName"] = .string("Lovelace")
            person[attribute: "id"] = .uuid(Self.personID)
            person[attribute: "updatedAt"] = .date(Date(timeIntervalSinceReferenceDate: 0))
            try await context.save()
            person[attribute: "firstName"] = .string("Augusta")
            try await context.save()
            context.delete(person)
            try await context.save()
        }
        return url
    }

    @Test func listsTransactionsAsTextAndJSON() async throws {
        let folder = try TemporaryDirectory()
        let url = try await Self.storeWithHistory(in: folder)
        let uuid = try SQLiteStore.metadata(at: url).uuid

        let text = await ToolRunner.run(["history", url.path])
        #expect(text.status == 0, "\(text.standardError)")
        let lines = text.standardOutput.split(separator: "\n").map(String.init)
        #expect(lines.count == 7)
        #expect(lines[0].hasPrefix("transaction 1@\(uuid)  ") && lines[0].contains("  author tester  context cli"))
        #expect(lines[1] == "  inserted Person/p1")
        #expect(lines[3] == "  updated Person/p1 (firstName)")
        #expect(lines[5] == "  deleted Person/p1 (kept: id=0A0B0C0D-0000-4000-8000-000000000001)")
        #expect(lines[6] == "3 transactions; latest token: 3@\(uuid)")

        let json = await ToolRunner.run(["history", url.path, "--after", "1@\(uuid)", "--json"])
        #expect(json.status == 0)
        let document = try #require(
            try JSONSerialization.jsonObject(with: Data(json.standardOutput.utf8)) as? [String: Any])
        #expect(document["lastToken"] as? String == "3@\(uuid)")
        let transactions = try #require(document["transactions"] as? [[String: Any]])
        #expect(transactions.map { $0["token"] as? String } == ["2@\(uuid)", "3@\(uuid)"])
        #expect(
            transactions.allSatisfy { $0["author"] as? String == "tester" && $0["contextName"] as? String == "cli" })
        let update = try #require((transactions[0]["changes"] as? [[String: Any]])?.first)
        #expect(update["type"] as? String == "update")
        #expect(update["object"] as? String == "Person/p1")
        #expect(update["updatedProperties"] as? [String] == ["firstName"])

        let none = await ToolRunner.run(["history", url.path, "--after", "3@\(uuid)"])
        #expect(none.standardOutput == "0 transactions after 3@\(uuid); latest token: 3@\(uuid)\n")
    }

    @Test func readsCoreDataHistory() async throws {
        let folder = try TemporaryDirectory()
        let copy = try folder.copy(Fixtures.url("CoreDataPlus/SampleModel2/Fixtures/SampleModel2_V1.sqlite"))
        let result = await ToolRunner.run(["history", copy.path, "--json"])
        #expect(result.status == 0, "\(result.standardError)")
        let document = try #require(
            try JSONSerialization.jsonObject(with: Data(result.standardOutput.utf8)) as? [String: Any])
        let transactions = try #require(document["transactions"] as? [[String: Any]])
        #expect(transactions.count == 1)
        #expect(transactions.first?["processName"] as? String == "xctest")
        // Core Data stored the time with microseconds: written with the digits it needs to read back.
        #expect(transactions.first?["timestamp"] as? String == "2024-05-10T18:14:07.288022Z")
        #expect((transactions.first?["changes"] as? [Any])?.count == 5468)
    }

    @Test func storesWithoutHistoryAndBadTokensFail() async throws {
        let folder = try TemporaryDirectory()
        let plain = try folder.copy(Fixtures.url("CoreDataPlus/SampleModel/Fixtures/SampleModel_V1.sqlite"))
        let noHistory = await ToolRunner.run(["history", plain.path])
        #expect(noHistory.status == 1)
        #expect(noHistory.standardOutput.isEmpty)
        #expect(
            noHistory.errorLines.first?.hasPrefix(
                "error: cannot read the history of \(plain.path): the store does not record persistent history") == true
        )

        let binary = folder.path("Store.ternbin").path
        let created = await ToolRunner.run(["create", binary, "--model", Fixtures.sampleModel.path, "--type", "binary"])
        #expect(created.status == 0)
        let onBinary = await ToolRunner.run(["history", binary])
        #expect(onBinary.status == 1)
        #expect(onBinary.errorLines.first?.contains("binary stores do not record persistent history") == true)

        let refused = await ToolRunner.run([
            "create", folder.path("New.xml").path, "--model", Fixtures.sampleModel.path, "--type", "xml", "--history",
        ])
        #expect(
            refused.errorLines == [
                "error: xml stores do not record persistent history; use --type sqlite with --history"
            ])

        let badToken = await ToolRunner.run(["history", plain.path, "--after", "twelve"])
        #expect(badToken.status == 2)
        #expect(badToken.errorLines.first == "error: 'twelve' is not a history token; tokens look like 12@<store UUID>")
    }
}
