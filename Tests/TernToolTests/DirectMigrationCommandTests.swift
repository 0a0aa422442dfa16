import Foundation
import TernCore
import TernFormats
import TernTestSupport
import Testing

/// `tern plan` and `tern migrate` infer one step straight from the store's version to the
/// target, as Core Data does, on a bundle whose version names sort in the wrong order
/// (`ArtsyPartner 5` is the oldest, but sorts after `ArtsyFolio v2.7.0`); they walk the versions
/// step by step only in the order `--order` gives.
@Suite struct DirectMigrationCommandTests {
    /// The versions oldest first, as the app released them.
    static let order = ["ArtsyPartner 5", "ArtsyFolio v2.7.0", "ArtsyFolio v3.0"]

    /// Three versions of an artwork model: v2.7.0 adds `medium` and drops `minutes` (an integer),
    /// v3.0 adds `year` and brings `minutes` back as text, which cannot be inferred straight from
    /// the integer of `ArtsyPartner 5`.
    static func model() throws -> VersionedModel {
        try VersionedModel("Artsy", current: "ArtsyFolio v3.0") {
            ModelVersion("ArtsyPartner 5") {
                Entity("Artwork") {
                    Attribute("title", .string)
                    Attribute("minutes", .integer32)
                }
            }
            ModelVersion("ArtsyFolio v2.7.0") {
                Entity("Artwork") {
                    Attribute("title", .string)
                    Attribute("medium", .string)
                }
            }
            ModelVersion("ArtsyFolio v3.0") {
                Entity("Artwork") {
                    Attribute("title", .string)
                    Attribute("medium", .string)
                    Attribute("year", .integer32)
                    Attribute("minutes", .string)
                }
            }
        }
    }

    /// Writes the bundle, and a store of a version holding the records of a JSON document.
    func setUp(_ tmp: TemporaryDirectory, version: String, records: String) async throws -> (
        bundle: String, store: String
    ) {
        let bundle = tmp.path("Artsy.xcdatamodeld")
        try XcodeModel.write(try Self.model(), to: bundle)
        let store = tmp.path("Artsy.sqlite").path
        let created = await ToolRunner.run(["create", store, "--model", bundle.path, "--version", version])
        #expect(created.status == 0, "\(created.standardError)")
        let file = tmp.path("records.json")
        try Data(records.utf8).write(to: file)
        let imported = await ToolRunner.run(["import", store, "--model", bundle.path, "--version", version, file.path])
        #expect(imported.status == 0, "\(imported.standardError)")
        return (bundle.path, store)
    }

    /// The records `tern export` prints for an entity.
    func records(_ store: String, model: String, entity: String) async throws -> [[String: Any]] {
        let result = await ToolRunner.run(["export", store, "--model", model, "--entity", entity, "--format", "json"])
        #expect(result.status == 0, "\(result.standardError)")
        let document = try #require(
            try JSONSerialization.jsonObject(with: Data(result.standardOutput.utf8)) as? [String: Any])
        return try #require(document[entity] as? [[String: Any]])
    }

    @Test func readsTheBundleInAGuessedOrderThatIsNotTheApps() throws {
        let tmp = try TemporaryDirectory()
        let bundle = tmp.path("Artsy.xcdatamodeld")
        try XcodeModel.write(try Self.model(), to: bundle)
        let guessed = try XcodeModel.readVersionedModel(at: bundle)
        #expect(guessed.versions.map(\.name) == ["ArtsyFolio v2.7.0", "ArtsyPartner 5", "ArtsyFolio v3.0"])
        #expect(!guessed.hasExplicitOrder)
        let given = try XcodeModel.readVersionedModel(at: bundle, order: Self.order)
        #expect(given.versions.map(\.name) == Self.order && given.hasExplicitOrder)
    }

    @Test func migratesStraightToTheTargetWithoutPassingThroughAVersionGuessedToLieBetween() async throws {
        let tmp = try TemporaryDirectory()
        let (bundle, store) = try await setUp(
            tmp, version: "ArtsyFolio v2.7.0",
            records:
                #"{"Artwork": [{"title": "Water Lilies", "medium": "oil on canvas"}, {"title": "Untitled", "medium": "ink"}]}"#
        )
        let plan = await ToolRunner.run(["plan", store, "--model", bundle, "--json"])
        #expect(plan.status == 0, "\(plan.standardError)")
        let document = try #require(
            try JSONSerialization.jsonObject(with: Data(plan.standardOutput.utf8)) as? [String: Any])
        let steps = try #require(document["steps"] as? [[String: Any]])
        #expect(steps.map { "\($0["from"] ?? "")→\($0["to"] ?? "")" } == ["ArtsyFolio v2.7.0→ArtsyFolio v3.0"])

        let result = await ToolRunner.run(["migrate", store, "--model", bundle])
        #expect(result.status == 0, "\(result.standardError)")
        #expect(
            result.standardOutput.hasPrefix("migrated \(store) from ArtsyFolio v2.7.0 to ArtsyFolio v3.0 in 1 step(s)"))
        // ArtsyPartner 5, which sorts between them, has no medium: the values are kept all the same.
        let artworks = try await records(store, model: bundle, entity: "Artwork")
        let media = artworks.map { "\($0["title"] ?? "")=\($0["medium"] ?? "")" }.sorted()
        #expect(media == ["Untitled=ink", "Water Lilies=oil on canvas"])
    }

    @Test func refusesAnImpossibleDirectStepNamingTheChangeAndLeavesTheStoreAsItWas() async throws {
        let tmp = try TemporaryDirectory()
        let (bundle, store) = try await setUp(
            tmp, version: "ArtsyPartner 5", records: #"{"Artwork": [{"title": "Water Lilies", "minutes": 12}]}"#)
        let before = try Data(contentsOf: URL(fileURLWithPath: store))
        for command in ["plan", "migrate"] {
            let refused = await ToolRunner.run([command, store, "--model", bundle])
            #expect(refused.status == 1 && refused.standardOutput.isEmpty, "\(command): \(refused.standardError)")
            let lines = refused.errorLines
            #expect(
                lines.first?.hasPrefix("error: The store cannot migrate from ArtsyPartner 5 to ArtsyFolio v3.0") == true
            )
            #expect(
                lines.contains { $0.contains("ArtsyPartner 5 → ArtsyFolio v3.0") && $0.contains("Artwork.minutes") })
            #expect(!lines.contains { $0.contains("ArtsyFolio v2.7.0 →") || $0.contains("→ ArtsyFolio v2.7.0") })
            #expect(lines.last?.contains("--order") == true && lines.last?.contains("--mapping") == true)
            #expect(try Data(contentsOf: URL(fileURLWithPath: store)) == before)
        }
        let order = Self.order.joined(separator: ",")
        let plan = await ToolRunner.run(["plan", store, "--model", bundle, "--order", order, "--json"])
        #expect(plan.status == 0, "\(plan.standardError)")
        let document = try #require(
            try JSONSerialization.jsonObject(with: Data(plan.standardOutput.utf8)) as? [String: Any])
        #expect(document["executable"] as? Bool == true)
        // In the app's order, ArtsyFolio v2.7.0 dropped the integer and v3.0 added the text afresh.
        let steps = try #require(document["steps"] as? [[String: Any]])
        #expect(steps.allSatisfy { ($0["problems"] as? [Any])?.isEmpty == true })
        #expect(
            steps.first?["from"] as? String == "ArtsyPartner 5" && steps.last?["to"] as? String == "ArtsyFolio v3.0")

        let migrated = await ToolRunner.run(["migrate", store, "--model", bundle, "--order", order])
        #expect(migrated.status == 0, "\(migrated.standardError)")
        #expect(
            migrated.standardOutput.hasPrefix(
                "migrated \(store) from ArtsyPartner 5 to ArtsyFolio v3.0 in \(steps.count) step(s)"))
        let artworks = try await records(store, model: bundle, entity: "Artwork")
        #expect(artworks.map { "\($0["title"] ?? "")" } == ["Water Lilies"])
        #expect(artworks.allSatisfy { $0["minutes"] == nil || $0["minutes"] is NSNull })

        let again = await ToolRunner.run(["migrate", store, "--model", bundle])
        #expect(again.status == 0 && again.standardOutput == "\(store) is already at version ArtsyFolio v3.0\n")
    }
}
