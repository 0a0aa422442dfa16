import Foundation
import TernCore
import TernFormats
import TernRelational
import TernTestSupport
import Testing

@testable import TernSQLite

/// A store of the real-world corpus, copied with its `-wal`/`-shm` into a temporary folder.
struct CorpusStore: Sendable, CustomStringConvertible {
    var item: RealWorldCorpus.Item
    var description: String { item.description }

    /// Every store of the corpus.
    static var all: [CorpusStore] {
        ((try? RealWorldCorpus.items(of: .store)) ?? []).map { CorpusStore(item: $0) }
    }

    /// The model that wrote the store: its model cache, else the version of its model item that
    /// the manifest names or whose hashes its metadata records; nil when the store has no cache
    /// and its model cannot be read (an Xcode 3 model, or one the model reader refuses).
    func model(using connection: Connection) throws -> ManagedObjectModel? {
        if let cached = try? connection.readModelCache() { return cached }
        guard let modelURL = item.modelURL, let versioned = try? XcodeModel.readVersionedModel(at: modelURL) else {
            return nil
        }
        // Only where the corpus says which version wrote the store: a store whose writer is not
        // known (apptentive's deliberately corrupt one) says nothing about Core Data's names.
        guard let name = item.version else { return nil }
        return try #require(versioned.version(named: name), "\(item): no version \(name)").model
    }

    /// The store's model, read from a copy.
    func model() throws -> ManagedObjectModel? {
        let folder = try TemporaryDirectory()
        return try model(using: Connection(path: copy(into: folder).path, configuration: .readOnly))
    }

    /// The store copied into a folder, with its side files.
    func copy(into folder: TemporaryDirectory) throws -> URL {
        let copy = try folder.copy(item.url)
        for suffix in ["-wal", "-shm"] {
            let sidecar = URL(fileURLWithPath: item.url.path + suffix)
            if FileManager.default.fileExists(atPath: sidecar.path) { try folder.copy(sidecar) }
        }
        return copy
    }
}

/// The tables and columns of a store file, as `sqlite_master` lists them, without the tables that
/// are not the model's (metadata, model cache, persistent history).
struct StoreTableNames: Equatable, CustomStringConvertible {
    static let fixed: Set<String> = [
        "Z_PRIMARYKEY", "Z_METADATA", "Z_MODELCACHE", "ACHANGE", "ATRANSACTION", "ATRANSACTIONSTRING",
    ]
    var tables: [String: [String]] = [:]

    init(_ tables: [String: [String]]) { self.tables = tables }

    init(_ connection: Connection) throws {
        let names = try connection.fetchAll(
            "SELECT name FROM sqlite_master WHERE type = 'table' AND name NOT LIKE 'sqlite_%'"
        )
        .compactMap { $0.first?.string }.filter { !Self.fixed.contains($0) }
        for name in names {
            tables[name] = try connection.fetchAll("SELECT name FROM pragma_table_info(\(name))").compactMap {
                $0.first?.string
            }
        }
    }

    /// The tables a schema creates.
    init(_ schema: StoreSchema) {
        for table in schema.tables.values {
            tables[table.name] = ["Z_PK", "Z_ENT", "Z_OPT"] + table.columns.map(\.name)
        }
        for join in schema.joinTables.values { tables[join.name] = join.columns + join.orderColumns }
    }

    var description: String {
        tables.keys.sorted().map { "\($0) (\(tables[$0]?.joined(separator: ", ") ?? ""))" }.joined(separator: "\n")
    }
}

@Suite struct RealWorldStoreNamingTests {
    /// The layout Tern gives a new store of a corpus store's own model (its model cache) has the
    /// very tables and columns, in order, that Core Data gave the store.
    @Test(arguments: CorpusStore.all)
    func newStoresGetCoreDatasNames(_ store: CorpusStore) throws {
        let folder = try TemporaryDirectory()
        let url = try store.copy(into: folder)
        let connection = try Connection(path: url.path, configuration: .readOnly)
        guard let model = try store.model(using: connection) else { return }
        var numbers: [String: StoreSchema.EntityNumber] = [:]
        try connection.forEachRow("SELECT Z_ENT, Z_NAME, Z_SUPER FROM Z_PRIMARYKEY") { row in
            numbers[row[1].string ?? ""] = StoreSchema.EntityNumber(
                number: Int(row[0].int64 ?? 0), superNumber: Int(row[2].int64 ?? 0))
        }
        numbers = numbers.filter { model.entity(named: $0.key) != nil }
        var actual = try StoreTableNames(connection)
        var created = StoreTableNames(try StoreSchema(model: model, numbers: numbers))
        // Core Data before framework 400 (Mac OS X 10.6, iPhone OS 3) ordered a table's columns
        // otherwise; Tern writes today's order, so for those stores only the names are compared.
        if let framework = try connection.readMetadata().frameworkVersion, framework < 400 {
            actual.tables = actual.tables.mapValues { $0.sorted() }
            created.tables = created.tables.mapValues { $0.sorted() }
        }
        #expect(created == actual, "created:\n\(created)\nCore Data's:\n\(actual)")
    }

    /// Nearly every store of the corpus has a model to compare with (its cache or a readable model).
    @Test func mostCorpusStoresAreCompared() throws {
        let compared = try CorpusStore.all.filter { try $0.model() != nil }
        #expect(CorpusStore.all.count >= 50)
        #expect(compared.count >= 38, "\(compared.count) of \(CorpusStore.all.count) stores compared")
    }
}
