import Foundation
import Synchronization
import TernCore
import TernFormats
import TernMigration
import TernSQLite
import TernTestSupport
import Testing

/// Every forward Xcode mapping model of the corpus, run on a store of sample objects with its
/// mappings compiled to SQL (#24) and without: the same store, row for row. The real apps'
/// mappings (renames, copies, `$source` key paths, literals, Core Data's functions) reach the
/// SQL path, and where a value has no exact SQL form they go back to Swift.
@Suite struct XcodeMappingCorpusSQLTests {
    /// Every row of every entity of a store, in a form that compares: reference, attributes,
    /// to-one and sorted to-many relationships.
    static func contents(of url: URL, model: ManagedObjectModel) async throws -> [[String]] {
        let store = try SQLiteStore(at: url, model: model, configuration: .readOnly)
        var lines: [[String]] = []
        for entity in model.entities.map(\.name).sorted() where model.entity(named: entity)?.isAbstract == false {
            var request = StoreFetchRequest(entityName: entity)
            request.includesSubentities = false
            for row in try await store.fetch(request).filter({ $0.reference.entityName == entity })
                .sorted(by: { $0.reference < $1.reference })
            {
                let attributes = row.attributes.sorted { $0.key < $1.key }.map {
                    "\($0.key)=\(String(describing: $0.value))"
                }
                let toOne = row.toOne.sorted { $0.key < $1.key }.map { "\($0.key)->\($0.value)" }
                let toMany = row.toMany.sorted { $0.key < $1.key }.map {
                    "\($0.key)->\($0.value.sorted().map(String.init(describing:)))"
                }
                lines.append([row.reference.description] + attributes + toOne + toMany)
            }
        }
        return lines
    }

    /// Migrates a copy of `store` with the step's mappings compiled to SQL or not, with policies
    /// of its own (the corpus's test policies keep state); returns its contents and the entity
    /// mappings that ran as SQL.
    static func migrate(
        _ store: URL, in folder: TemporaryDirectory, model: VersionedModel, item: RealWorldCorpus.Item,
        compiled: Bool
    ) async throws -> (contents: [[String]], asSQL: [String]) {
        let (step, policies) = try XcodeMappingCorpusRunTests.step(item, model: model)
        let url = folder.path(UUID().uuidString + ".sqlite")
        // With its write-ahead log, if the sample store's connection has not checkpointed yet.
        for suffix in ["", "-wal"] where FileManager.default.fileExists(atPath: store.path + suffix) {
            try FileManager.default.copyItem(atPath: store.path + suffix, toPath: url.path + suffix)
        }
        // UUIDs from a counter, the same in both runs (uuid() then stays in Swift in both).
        let counter = Mutex<UInt8>(0)
        var options = MigrationOptions(
            environment: ExpressionEnvironment(now: Date(timeIntervalSinceReferenceDate: 812_345_678.5)) {
                counter.withLock { count in
                    count &+= 1
                    return UUID(uuid: (count, 0, 0, 0, 0, 0, 0x40, 0, 0x80, 0, 0, 0, 0, 0, 0, 0))
                }
            })
        options.policies = policies
        options.compilesMappingsToSQL = compiled
        let recorder = EventRecorder()
        try await SQLiteStoreMigrator().migrateStore(
            at: url, model: model, to: step.destinationVersion, mappings: [step], options: options,
            onEvent: { recorder.record($0) })
        let asSQL = recorder.events.compactMap { event -> String? in
            if case .entityMappingRanAsSQL(_, let name) = event { return name }
            return nil
        }
        let destination = try #require(step.destinationVersion.flatMap { model.version(named: $0) }).model
        return (try await contents(of: url, model: destination), asSQL)
    }

    /// The corpus's mapping models, one after the other: each migrates to the same store with
    /// and without SQL, and together they run many of their entity mappings as SQL (75 of 129
    /// on 5 December), so that the real apps' mappings reach the SQL path.
    @Test func everyMappingModelGivesTheSwiftPathsStore() async throws {
        var ranAsSQL = 0
        for item in XcodeMappingCorpusRunTests.items {
            ranAsSQL += try await Self.compare(item)
        }
        #expect(ranAsSQL >= 70, "\(ranAsSQL) entity mappings of the corpus ran as SQL")
    }

    /// Migrates a sample store of a mapping model's source version with and without SQL and
    /// compares the two; returns how many entity mappings ran as SQL.
    static func compare(_ item: RealWorldCorpus.Item) async throws -> Int {
        guard !XcodeMappingCorpusRunTests.untranslatable.contains(item.description),
            let model = try XcodeMappingCorpusRunTests.model(of: item)
        else { return 0 }
        let (step, _) = try XcodeMappingCorpusRunTests.step(item, model: model)
        guard let sourceName = step.sourceVersion, let destinationName = step.destinationVersion,
            let from = model.versions.firstIndex(where: { $0.name == sourceName }),
            let to = model.versions.firstIndex(where: { $0.name == destinationName }), from < to,
            model.versions[from].model.entityVersionHashes != model.versions[to].model.entityVersionHashes
        else { return 0 }  // Same entities, or a mapping back to an older version: nothing to migrate.
        let source = model.versions[from].model
        let folder = try TemporaryDirectory()
        let url = try await XcodeMappingCorpusRunTests.sampleStore(of: item, source: source, in: folder)
        let sql = try await Self.migrate(url, in: folder, model: model, item: item, compiled: true)
        let swift = try await Self.migrate(url, in: folder, model: model, item: item, compiled: false)
        #expect(swift.asSQL.isEmpty)
        // Values a policy makes anew each run (UUID()): those that differ between two Swift runs.
        let again = try await Self.migrate(url, in: folder, model: model, item: item, compiled: false)
        var random: Set<String> = []
        for (first, second) in zip(swift.contents, again.contents) {
            for (a, b) in zip(first, second) where a != b { random.insert(String(a.prefix { $0 != "=" })) }
        }
        func kept(_ contents: [[String]]) -> [String] {
            contents.map { $0.filter { !random.contains(String($0.prefix { $0 != "=" })) }.joined(separator: " ") }
        }
        let (compiled, expected) = (kept(sql.contents), kept(swift.contents))
        let differences = zip(compiled, expected).filter { $0.0 != $0.1 }.prefix(3)
        #expect(
            compiled == expected,
            "\(item): ran as SQL \(sql.asSQL); \(compiled.count) rows against \(expected.count); first differences: \(differences.map { "\n  SQL:   \($0.0)\n  Swift: \($0.1)" }.joined())"
        )
        return sql.asSQL.count
    }
}
