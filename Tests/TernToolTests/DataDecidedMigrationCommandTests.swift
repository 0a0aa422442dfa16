import Foundation
import TernCore
import TernFormats
import TernSQLite
import TernTestSupport
import Testing

/// `tern plan` and `tern migrate` on changes decided from the store's data: the plan lists what
/// is relaxed or dropped as `warning:` lines (and in `--json`), the migration prints them on stderr
/// and counts the dropped links; a new required property is refused only when there are objects.
/// The model is ``AlbumCovers``.
@Suite struct DataDecidedMigrationCommandTests {
    /// The bundle, and a v1 store whose album 1 shows an Artwork and album 2 an Image.
    func setUp(_ tmp: TemporaryDirectory, requiredName: Bool = false) async throws -> (bundle: String, store: String) {
        let model = try AlbumCovers.model(requiredName: requiredName)
        let bundle = tmp.path("Albums.xcdatamodeld")
        try XcodeModel.write(model, to: bundle)
        let url = tmp.path("Albums.sqlite")
        let store = try SQLiteStore(at: url, model: try #require(model.version(named: "v1")).model)
        func ref(_ entity: String, _ key: Int64) -> RowReference { RowReference(entityName: entity, primaryKey: key) }
        let rows = [
            StoreRow(reference: ref("Artwork", 1)), StoreRow(reference: ref("Image", 2)),
            StoreRow(reference: ref("Album", 1), toOne: ["cover": ref("Artwork", 1)]),
            StoreRow(reference: ref("Album", 2), toOne: ["cover": ref("Image", 2)]),
        ]
        _ = try await store.save(StoreChangeSet(inserted: rows))
        return (bundle.path, url.path)
    }

    static let dropped = "1 link(s) of Album.cover to objects that are not Image objects are dropped (the objects stay)"

    @Test func planListsTheDroppedLinksAsWarnings() async throws {
        let tmp = try TemporaryDirectory()
        let (bundle, store) = try await setUp(tmp)
        let plan = await ToolRunner.run(["plan", store, "--model", bundle])
        #expect(plan.status == 0, "\(plan.standardError)")
        #expect(plan.standardOutput.contains("     warning: \(Self.dropped)\n"), "\(plan.standardOutput)")
        let json = await ToolRunner.run(["plan", store, "--model", bundle, "--json"])
        let document = try #require(
            try JSONSerialization.jsonObject(with: Data(json.standardOutput.utf8)) as? [String: Any])
        let steps = try #require(document["steps"] as? [[String: Any]])
        #expect(steps.first?["warnings"] as? [String] == [Self.dropped])
    }

    @Test func migratePrintsTheWarningsAndCountsTheDroppedLinks() async throws {
        let tmp = try TemporaryDirectory()
        let (bundle, store) = try await setUp(tmp)
        let result = await ToolRunner.run(["migrate", store, "--model", bundle])
        #expect(result.status == 0, "\(result.standardError)")
        #expect(result.standardError.contains("warning: \(Self.dropped)\n"), "\(result.standardError)")
        #expect(
            result.standardOutput.hasSuffix("from v1 to v2 in 1 step(s), 4 object(s) read, 1 link(s) dropped\n"),
            "\(result.standardOutput)")
        let verify = await ToolRunner.run(["verify", store, "--model", bundle])
        #expect(verify.status == 0, "\(verify.standardOutput)\(verify.standardError)")
    }

    @Test func aNewRequiredAttributeIsRefusedWithTheCountOfObjects() async throws {
        let tmp = try TemporaryDirectory()
        let (bundle, store) = try await setUp(tmp, requiredName: true)
        let before = try Data(contentsOf: URL(fileURLWithPath: store))
        for command in ["plan", "migrate"] {
            let result = await ToolRunner.run([command, store, "--model", bundle])
            #expect(result.status == 1)
            let lines = result.standardError.split(separator: "\n").map(String.init)
            #expect(
                lines.first?.hasPrefix("error: The step v1 → v2 cannot run, nothing was written: ") == true, "\(lines)")
            #expect(
                lines.first?.contains("Album.name is required in v2, but 2 Album object(s) have no value for it")
                    == true)
        }
        #expect(try Data(contentsOf: URL(fileURLWithPath: store)) == before)
    }
}
