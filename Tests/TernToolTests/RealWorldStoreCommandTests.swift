import Foundation
import TernTestSupport
import Testing

/// Every store of the real-world corpus (`Tests/Fixtures/RealWorld`) through the commands a user
/// runs on it: `info`, `export` with its model and through its own model cache, `verify` and
/// `migrate` to its model's current version. Each command succeeds, or fails as the contract says
/// (status 1, one `error:` line first) and leaves the store as it was; what is expected to
/// succeed is named below, so that a regression shows.
@Suite struct RealWorldStoreCommandTests {
    /// A corpus store, by its folder and path.
    struct Store: Sendable, CustomStringConvertible {
        var item: RealWorldCorpus.Item
        var description: String { item.description }
    }

    static let stores: [Store] = ((try? RealWorldCorpus.items(of: .store)) ?? []).map(Store.init)

    /// Stores no version of their bundle wrote: a model merged from several bundles wrote
    /// duckduckgo/iOS's; apptentive's corrupt store matches none.
    static let writtenByAnotherModel: Set<String> = [
        "duckduckgo__iOS/AppRatingPrompt_v1/Database.sqlite",
        "apptentive__apptentive-ios/v2CorruptDatabase/ATDataModel.sqlite",
    ]

    /// Stores whose inferred migration to the current version is refused, each for a reason
    /// Core Data shares: a mapping model is needed (#22 runs Xcode's), or the current version is
    /// older than the store's.
    static let needsMoreThanInference: Set<String> = [
        "carekit-apple__CareKit/SampleStore2.0.sqlite",
        "richardpiazza__XCServerCoreData/XCServerCoreData_1.2.0.sqlite",
        "richardpiazza__XCServerCoreData/XCServerCoreData_1.2.0_empty.sqlite",
        "wibosco__CoreDataMigration-Example/CoreDataMigration_Example_1.sqlite",
        "wibosco__CoreDataMigration-Example/CoreDataMigration_Example_2.sqlite",
        // The mapping model beside the model maps the store's version to the current one, as the
        // app migrates it, and names the app's policy class, which tern cannot run.
        "LoopKit__LoopKit/Model.sqlite.v1.original",
        "objcio__core-data/Migrations/Moody 5.moody",
    ]

    /// The stores of ``needsMoreThanInference`` refused for the policy their mapping model names.
    static let needsAPolicy: Set<String> = [
        "LoopKit__LoopKit/Model.sqlite.v1.original", "objcio__core-data/Migrations/Moody 5.moody",
    ]

    /// A copy of the store with its side files, and a hash of every byte of them.
    static func copy(_ store: Store, into tmp: TemporaryDirectory) throws -> URL {
        let copy = try tmp.copy(store.item.url)
        for suffix in ["-wal", "-shm"] where FileManager.default.fileExists(atPath: store.item.url.path + suffix) {
            try tmp.copy(URL(fileURLWithPath: store.item.url.path + suffix))
        }
        let support = store.item.url.deletingLastPathComponent().appendingPathComponent(
            "." + store.item.url.deletingPathExtension().lastPathComponent + "_SUPPORT")
        if FileManager.default.fileExists(atPath: support.path) { try tmp.copy(support) }
        return copy
    }

    static func bytes(of url: URL) throws -> [Data] {
        try ["", "-wal", "-shm"].compactMap { suffix in
            let file = URL(fileURLWithPath: url.path + suffix)
            return FileManager.default.fileExists(atPath: file.path) ? try Data(contentsOf: file) : nil
        }
    }

    /// A failure as the contract has it: status 1, the first line `error: …`, nothing on stdout.
    static func expectClearFailure(
        _ result: ToolResult, _ what: String, sourceLocation: SourceLocation = #_sourceLocation
    ) {
        #expect(result.status == 1, "\(what): status \(result.status)", sourceLocation: sourceLocation)
        let lines = result.errorLines.filter { !$0.hasPrefix("warning: ") }
        #expect(
            lines.first?.hasPrefix("error: ") == true, "\(what): \(result.standardError)",
            sourceLocation: sourceLocation)
        #expect(result.standardOutput.isEmpty, "\(what)", sourceLocation: sourceLocation)
    }

    @Test(arguments: stores)
    func infoExportVerifyAndMigrate(_ store: Store) async throws {
        let tmp = try TemporaryDirectory()
        let url = try Self.copy(store, into: tmp)
        let model = store.item.modelURL.map { ["--model", $0.path] } ?? []
        let path = store.description

        let info = await ToolRunner.run(["info", url.path, "--json"] + model)
        #expect(info.status == 0, "\(path): \(info.standardError)")
        let document = try JSONSerialization.jsonObject(with: Data(info.standardOutput.utf8)) as? [String: Any]
        if !model.isEmpty, let version = store.item.version, !Self.writtenByAnotherModel.contains(path) {
            #expect((document?["matchingVersions"] as? [String])?.contains(version) == true, "\(path)")
        }

        // Through the store's own model cache, where it has one (Core Data 637 and later).
        let cached = await ToolRunner.run(["export", url.path, "-o", tmp.path("cache.json").path, "--quiet"])
        if cached.status != 0 {
            Self.expectClearFailure(cached, "\(path) export")
            #expect(cached.standardError.contains("no model cache (Z_MODELCACHE)"), "\(path): \(cached.standardError)")
        }
        let untouched = try Self.bytes(of: url)
        if !model.isEmpty {
            let exported = await ToolRunner.run(
                ["export", url.path, "-o", tmp.path("model.json").path, "--quiet"] + model)
            if Self.writtenByAnotherModel.contains(path) {
                Self.expectClearFailure(exported, "\(path) export --model")
            } else {
                #expect(exported.status == 0, "\(path): \(exported.standardError)")
            }
        }

        let verified = await ToolRunner.run(["verify", url.path, "--json"] + model)
        #expect(verified.status == 0 || verified.status == 1, "\(path): \(verified.standardError)")
        #expect(try Self.bytes(of: url) == untouched, "\(path): a read-only command wrote the store")

        guard !model.isEmpty, !Self.writtenByAnotherModel.contains(path) else { return }
        let migrated = await ToolRunner.run(["migrate", url.path, "--quiet"] + model)
        if Self.needsMoreThanInference.contains(path) {
            Self.expectClearFailure(migrated, "\(path) migrate")
            #expect(try Self.bytes(of: url) == untouched, "\(path): a refused migration changed the store")
            if Self.needsAPolicy.contains(path) {
                #expect(
                    migrated.standardError.contains("no migration policy is registered under the class name"), "\(path)"
                )
            }
        } else {
            #expect(migrated.status == 0, "\(path): \(migrated.standardError)")
            let after = await ToolRunner.run(["info", url.path, "--json"] + model)
            let afterDocument =
                try JSONSerialization.jsonObject(with: Data(after.standardOutput.utf8)) as? [String: Any]
            #expect(afterDocument?["needsMigration"] as? Bool == false, "\(path)")
        }
    }

    @Test func theCorpusHoldsEnoughStores() {
        #expect(Self.stores.count >= 30)
        #expect(Set(Self.stores.map { $0.item.folder.lastPathComponent }).count >= 6)
    }
}
