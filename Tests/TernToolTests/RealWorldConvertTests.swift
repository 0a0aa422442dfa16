import Foundation
import TernRelational
import TernSQLite
import TernTestSupport
import Testing

/// Every store of the real-world corpus (`Tests/Fixtures/RealWorld`) through `tern convert` to
/// every other store type and back to SQLite, as a user would run it: nothing may be lost. The
/// export of the converted store and of the store converted back equals the original's, object
/// for object and value for value, relationships included (`convert` keeps primary keys, so the
/// `_id`s are the same); the store converted back has the original's UUID, metadata (but for
/// `NSStoreType`), row counts and primary-key counters (`Z_MAX`; through XML, whose one counter
/// serves every entity, none below the original's).
///
/// A store is read with its model when it has one that wrote it, otherwise through the model
/// cache it records; the copies are always read through the model they record.
@Suite struct RealWorldConvertTests {
    typealias Store = RealWorldStoreCommandTests.Store

    /// Stores no command can read, so none can convert, each with its reason.
    static let unconvertible: [String: String] = [
        "apptentive__apptentive-ios/v2CorruptDatabase/ATDataModel.sqlite":
            "no version of its bundle wrote it (its hashes match none) and it records no model cache (Z_MODELCACHE)"
    ]

    /// The file types a store converts to and back from.
    static let fileTypes = ["binary", "xml"]

    @Test(arguments: RealWorldStoreCommandTests.stores, fileTypes)
    func convertsToTheTypeAndBackLosingNothing(_ store: Store, type: String) async throws {
        let tmp = try TemporaryDirectory()
        try await Self.roundTrip(store, through: tmp.path("converted.\(type)").path, type: type, in: tmp)
    }

    @Test(
        .enabled(if: PostgreSQLTestServer.isAvailable, PostgreSQLTestServer.skipComment),
        arguments: RealWorldStoreCommandTests.stores)
    func convertsToPostgreSQLAndBackLosingNothing(_ store: Store) async throws {
        let tmp = try TemporaryDirectory()
        let schema = "corpus_\(UUID().uuidString.prefix(8).lowercased())"
        let url = try #require(PostgreSQLConvertTests.url(try PostgreSQLTestServer.connectionString(), schema: schema))
        try await Self.roundTrip(store, through: url, type: "postgres", in: tmp)
    }

    @Test func everyUnconvertibleStoreIsInTheCorpus() {
        let paths = Set(RealWorldStoreCommandTests.stores.map(\.description))
        #expect(Set(Self.unconvertible.keys).isSubset(of: paths))
    }

    // MARK: - Round trip

    /// Converts a copy of the store to `destination` (of `type`) and that back to SQLite, and
    /// compares each with the original.
    static func roundTrip(_ store: Store, through destination: String, type: String, in tmp: TemporaryDirectory)
        async throws
    {
        let path = store.description
        let url = try RealWorldStoreCommandTests.copy(store, into: tmp)
        let model = readingArguments(for: store)
        if let reason = unconvertible[path] {
            let refused = await ToolRunner.run(["convert", url.path, destination, "--type", type, "--quiet"] + model)
            RealWorldStoreCommandTests.expectClearFailure(refused, "\(path) convert (\(reason))")
            #expect(
                !FileManager.default.fileExists(atPath: destination), "\(path): a refused convert left \(destination)")
            return
        }
        let original = try await export(url.path, model, path)
        let converted = await ToolRunner.run(["convert", url.path, destination, "--type", type, "--quiet"] + model)
        try #require(converted.status == 0, "\(path) convert to \(type): \(converted.standardError)")
        expectSameExport(try await export(destination, [], path), original, "\(path) as \(type)")

        let back = tmp.path("back.sqlite").path
        let returned = await ToolRunner.run(["convert", destination, back, "--type", "sqlite", "--quiet"])
        try #require(returned.status == 0, "\(path) convert from \(type) back to sqlite: \(returned.standardError)")
        expectSameExport(try await export(back, [], path), original, "\(path) through \(type) and back")
        try await expectSameStore(back, as: url.path, model: model, path: "\(path) through \(type) and back")
        let counters = try primaryKeyCounters(of: url.path)
        let returnedCounters = try primaryKeyCounters(of: back)
        if type == "xml" {
            // Core Data's XML store counts keys for every entity at once (nextObjectID): each
            // hierarchy comes back at the largest counter, never below its own.
            #expect(Set(returnedCounters.keys) == Set(counters.keys), "\(path) through xml: Z_PRIMARYKEY")
            for (name, key) in counters.sorted(by: { $0.key < $1.key }) {
                #expect((returnedCounters[name] ?? 0) >= key, "\(path) through xml: Z_MAX of \(name) below \(key)")
            }
        } else {
            #expect(returnedCounters == counters, "\(path) through \(type): Z_MAX")
        }
    }

    /// `--model` and the store's model when a version of it wrote the store; nothing (the model
    /// cache) otherwise.
    static func readingArguments(for store: Store) -> [String] {
        guard let model = store.item.modelURL,
            !RealWorldStoreCommandTests.writtenByAnotherModel.contains(store.description)
        else { return [] }
        return ["--model", model.path]
    }

    /// The store's JSON export, one record a line; `--strict`, so that a value that cannot be
    /// read fails rather than compares as null.
    static func export(_ store: String, _ model: [String], _ path: String) async throws -> [String] {
        let result = await ToolRunner.run(["export", store, "--strict", "--quiet"] + model)
        try #require(result.status == 0, "\(path): export \(store): \(result.standardError)")
        return result.standardOutput.split(separator: "\n", omittingEmptySubsequences: false).map(String.init)
    }

    /// Expects two exports to be equal, naming the first record that differs.
    static func expectSameExport(
        _ actual: [String], _ expected: [String], _ what: String, sourceLocation: SourceLocation = #_sourceLocation
    ) {
        guard actual != expected else { return }
        let common = min(actual.count, expected.count)
        let index = (0..<common).first { actual[$0] != expected[$0] } ?? common
        let got = index < actual.count ? actual[index] : "(end)"
        let wanted = index < expected.count ? expected[index] : "(end)"
        Issue.record(
            "\(what): the export differs at line \(index + 1) of \(expected.count):\n  got      \(got)\n  expected \(wanted)",
            sourceLocation: sourceLocation)
    }

    /// Expects `tern info --json` of the copy to give the original's UUID, metadata (but for the
    /// store type) and counts.
    static func expectSameStore(_ copy: String, as original: String, model: [String], path: String) async throws {
        func info(_ store: String) async throws -> [String: Any] {
            let result = await ToolRunner.run(["info", store, "--json"] + model)
            try #require(result.status == 0, "\(path): info \(store): \(result.standardError)")
            return try #require(
                try JSONSerialization.jsonObject(with: Data(result.standardOutput.utf8)) as? [String: Any])
        }
        let before = try await info(original)
        let after = try await info(copy)
        #expect(after["type"] as? String == "sqlite", "\(path)")
        #expect(after["uuid"] as? String == before["uuid"] as? String, "\(path): UUID")
        #expect(after["counts"] as? [String: Int] == before["counts"] as? [String: Int], "\(path): counts")
        var metadata = try #require(before["metadata"] as? [String: Any])
        var copied = try #require(after["metadata"] as? [String: Any])
        metadata["NSStoreType"] = nil
        copied["NSStoreType"] = nil
        #expect(
            NSDictionary(dictionary: copied).isEqual(to: metadata), "\(path): metadata \(copied) instead of \(metadata)"
        )
    }

    /// Each inheritance root's `Z_MAX`, by `Z_NAME`.
    static func primaryKeyCounters(of store: String) throws -> [String: Int64] {
        let connection = try Connection(path: store, configuration: .readOnly)
        var counters: [String: Int64] = [:]
        for row in try connection.fetchAll("SELECT Z_NAME, Z_MAX FROM Z_PRIMARYKEY WHERE Z_SUPER = 0 AND Z_ENT < 16000")
        {
            if case .text(let name) = row[0] { counters[name] = row[1].int64 ?? 0 }
        }
        return counters
    }
}
