import Foundation
import TernTestSupport
import Testing

/// The corpus repositories' own Core Data migration tests, replayed through `tern migrate` as a
/// user would run it: each folder's `REPLAY.json` (see `Tests/Fixtures/RealWorld/README.md`)
/// names the store the app's test migrates, the version it migrates to (with the order and
/// mapping models it uses) and what the test expects afterwards, taken from the test or from
/// the counts and values `PROVENANCE.json` records. A copy of the store is migrated, then read
/// with `tern info` and `tern export`.
///
/// A replay known to fail today says why (`expectedFailure`): it still runs, a refusal must be
/// a clear one that leaves the store as it was, and once it passes the test fails until the
/// reason is removed from `REPLAY.json`.
@Suite struct RealWorldMigrationReplayTests {
    /// One replay with its folder.
    struct Case: Sendable, CustomStringConvertible {
        var manifest: RealWorldCorpus.Manifest
        var file: ReplayFile
        var replay: Replay

        var folder: URL { manifest.folder }
        var description: String { "\(folder.lastPathComponent): \(replay.name) (\(replay.store) → \(replay.to))" }

        /// The store item the replay migrates.
        var storeItem: RealWorldCorpus.Item? {
            manifest.items.first { $0.kind == .store && $0.path == replay.store }
        }

        /// The model the replay migrates with.
        var modelURL: URL? {
            replay.model.map { folder.appendingPathComponent($0) } ?? storeItem?.modelURL
        }

        /// `tern migrate` of the store at `url`.
        func migrateArguments(_ url: URL) -> [String] {
            var arguments = ["migrate", url.path, "--model", modelURL?.path ?? "", "--to", replay.to, "--quiet"]
            if let order = replay.order { arguments += ["--order", order.joined(separator: ",")] }
            for mapping in replay.mappings ?? [] {
                arguments += ["--mapping", folder.appendingPathComponent(mapping).path]
            }
            return arguments
        }
    }

    /// Every replay of every folder that has a `REPLAY.json`.
    static let cases: [Case] = ((try? RealWorldCorpus.manifests()) ?? []).flatMap { manifest -> [Case] in
        let url = manifest.folder.appendingPathComponent("REPLAY.json")
        guard let data = try? Data(contentsOf: url), let file = try? JSONDecoder().decode(ReplayFile.self, from: data)
        else {
            return []
        }
        return file.replays.map { Case(manifest: manifest, file: file, replay: $0) }
    }

    @Test(arguments: cases)
    func replay(_ replay: Case) async throws {
        let tmp = try TemporaryDirectory()
        let item = try #require(replay.storeItem, "\(replay): no store item \(replay.replay.store)")
        let url = try RealWorldStoreCommandTests.copy(.init(item: item), into: tmp)
        let before = try Self.contents(of: url)
        let migrated = await ToolRunner.run(replay.migrateArguments(url))
        if migrated.status != 0 {
            RealWorldStoreCommandTests.expectClearFailure(migrated, "\(replay) migrate")
            #expect(try Self.contents(of: url) == before, "\(replay): a failed migration changed the store")
        }
        let check = { () async throws in
            try #require(migrated.status == 0, "\(replay): \(migrated.standardError)")
            try await Self.expectations(of: replay, hold: url, before: before)
        }
        if let reason = replay.replay.expectedFailure {
            await withKnownIssue(Comment(rawValue: reason)) { try await check() }
        } else {
            try await check()
        }
    }

    @Test func everyReplayNamesItsStoreModelVersionsAndMappings() async throws {
        #expect(Self.cases.count >= 20)
        for replay in Self.cases {
            #expect(replay.storeItem != nil, "\(replay): no store item \(replay.replay.store) in PROVENANCE.json")
            let model = try #require(replay.modelURL, "\(replay): no model")
            let listed = await ToolRunner.run(["model", model.path, "--json"])
            let document = try JSONSerialization.jsonObject(with: Data(listed.standardOutput.utf8)) as? [String: Any]
            let versions = Set(((document?["versions"] as? [[String: Any]]) ?? []).compactMap { $0["name"] as? String })
            #expect(
                versions.contains(replay.replay.to),
                "\(replay): no version \(replay.replay.to) in \(model.lastPathComponent)")
            #expect(
                Set(replay.replay.order ?? []).isSubset(of: versions), "\(replay): --order names an unknown version")
            for mapping in replay.replay.mappings ?? [] {
                #expect(
                    replay.manifest.items.contains { $0.kind == .mappingModel && $0.path == mapping },
                    "\(replay): no mapping model item \(mapping)")
            }
            for name in replay.replay.expect ?? [] {
                #expect(replay.file.expectations?[name] != nil, "\(replay): no expectation \(name)")
            }
            #expect(replay.replay.expectedFailure?.isEmpty != true, "\(replay): an expected failure needs its reason")
        }
    }

    /// The bytes of the store file and its `-wal`: what a migration that does not run must leave
    /// as it was. The `-shm` is left out: it is SQLite's shared-memory index, which any
    /// connection to a store in WAL mode may rebuild (Core Data's and Tern's alike), and holds
    /// no data.
    static func contents(of url: URL) throws -> [Data] {
        try ["", "-wal"].compactMap { suffix in
            let file = URL(fileURLWithPath: url.path + suffix)
            return FileManager.default.fileExists(atPath: file.path) ? try Data(contentsOf: file) : nil
        }
    }

    // MARK: - Expectations

    /// Reads the migrated store and checks what the app's test expects of it.
    static func expectations(of replay: Case, hold url: URL, before: [Data]) async throws {
        let model = ["--model", replay.modelURL?.path ?? ""]
        if replay.replay.unchanged == true {
            #expect(try Self.contents(of: url) == before, "\(replay): the store was already at \(replay.replay.to)")
        }
        let info = await ToolRunner.run(["info", url.path, "--json"] + model)
        let document = try JSONSerialization.jsonObject(with: Data(info.standardOutput.utf8)) as? [String: Any]
        #expect(
            (document?["matchingVersions"] as? [String])?.contains(replay.replay.to) == true,
            "\(replay): the migrated store matches \(document?["matchingVersions"] ?? "nothing")")
        let exported = await ToolRunner.run(["export", url.path, "--strict", "--quiet"] + model)
        try #require(exported.status == 0, "\(replay): export: \(exported.standardError)")
        let export = try ReplayExport(Data(exported.standardOutput.utf8), parents: try await parents(in: replay))
        for expectation in replay.replay.expectations(in: replay.file) {
            check(expectation, in: export, replay)
        }
    }

    /// Each entity's parent in the version the replay migrates to.
    static func parents(in replay: Case) async throws -> [String: String] {
        let listed = await ToolRunner.run(["model", replay.modelURL?.path ?? "", "--json"])
        let document = try JSONSerialization.jsonObject(with: Data(listed.standardOutput.utf8)) as? [String: Any]
        let version = ((document?["versions"] as? [[String: Any]]) ?? []).first {
            $0["name"] as? String == replay.replay.to
        }
        let entities = try #require(
            version?["entities"] as? [String: [String: Any]], "\(replay): no version \(replay.replay.to)")
        return entities.reduce(into: [String: String]()) { parents, entity in
            parents[entity.key] = entity.value["parent"] as? String ?? ""
        }
    }

    /// Checks counts and objects, recording an issue for each one that does not hold.
    static func check(_ expectation: ReplayExpectation, in export: ReplayExport, _ replay: Case) {
        for (entity, expected) in (expectation.counts ?? [:]).sorted(by: { $0.key < $1.key }) {
            let exists = export.parents[entity] != nil
            let count = export.objects(of: entity).count
            switch expected {
            case .number(let number):
                #expect(
                    exists && Double(count) == number, "\(replay): \(count) \(entity) objects instead of \(Int(number))"
                )
            case .object(let rule) where rule["absent"] == .bool(true):
                #expect(!exists, "\(replay): version \(replay.replay.to) still has entity \(entity)")
            case .object(let rule):
                if case .number(let least)? = rule["atLeast"] {
                    #expect(
                        exists && Double(count) >= least,
                        "\(replay): \(count) \(entity) objects, expected at least \(Int(least))")
                } else {
                    Issue.record("\(replay): unknown count expectation \(expected) for \(entity)")
                }
            default:
                Issue.record("\(replay): unknown count expectation \(expected) for \(entity)")
            }
        }
        if let total = expectation.total {
            let count = export.records.values.reduce(0) { $0 + $1.count }
            #expect(count == total, "\(replay): \(count) objects in all instead of \(total)")
        }
        for object in expectation.objects ?? [] {
            let pool = export.objects(of: object.entity)
            let found = pool.filter { export.mismatches(of: object.where, in: $0).isEmpty }
            guard found.count == 1, let record = found.first else {
                Issue.record(
                    "\(replay): \(found.count) \(object.entity) objects with \(ReplayJSON.object(object.where)), expected 1"
                )
                continue
            }
            if let key = object.first {
                let sorted = pool.sorted { lhs, rhs in
                    key.descending == true
                        ? ReplayExport.precedes(rhs[key.by], lhs[key.by])
                        : ReplayExport.precedes(lhs[key.by], rhs[key.by])
                }
                #expect(
                    sorted.first?["_id"] == record["_id"],
                    "\(replay): \(record["_id"] ?? .null) is not the first \(object.entity) by \(key.by)")
            }
            let wrong = export.mismatches(of: object.values ?? [:], in: record)
            #expect(wrong.isEmpty, "\(replay): \(record["_id"] ?? .null): \(wrong.joined(separator: "; "))")
        }
    }
}
