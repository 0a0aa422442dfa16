import Foundation
import TernCore
import TernFormats
import TernRelational
import TernSQLite
import TernStores
import TernTestSupport
import Testing

/// The store the crash and fault-injection cases work on: `Item` rows whose values follow from their key, in three
/// model versions, so that a check can tell a complete old state from a complete new one.
///
/// - v1 `Item(name: String, value: Int32)`, row *k*: `name` "item *k*", `value` *k*;
/// - v2 renames `name` to `title`, widens `value` and adds `note` (an inferred step);
/// - v3 adds `label`, filled by the mapping file ``mappingJSON`` ("#*k*") which also upper-cases
///   the title (a mapped step).
struct CrashScenario {
    /// The folder of the case's files.
    let directory: TemporaryDirectory
    /// The number of rows.
    let rowCount: Int
    /// The versioned model.
    let model: VersionedModel
    /// The model bundle on disk, for `tern`.
    let modelURL: URL

    /// The versions' order, for `tern --order`.
    static let order = "v1,v2,v3"

    /// The v2 → v3 mapping file.
    static let mappingJSON = """
        {"source": "v2", "destination": "v3", "passes": [{"name": "Label", "entityMappings": [
          {"kind": "transform", "source": "Item", "destination": "Item", "attributes": {
            "title": "uppercase($source.title)", "value": "$source.value", "note": "$source.note",
            "label": "concat(\\"#\\", string($source.value))"}}]}]}
        """

    /// Makes the folder and writes the model.
    ///
    /// - Parameter rowCount: The number of rows of the stores it makes.
    init(rowCount: Int = CrashHarness.rowCount()) throws {
        directory = try TemporaryDirectory()
        self.rowCount = rowCount
        model = try VersionedModel("Items") {
            ModelVersion("v1") {
                Entity("Item") {
                    Attribute("name", .string)
                    Attribute("value", .integer32)
                }
            }
            ModelVersion("v2") {
                Entity("Item") {
                    Attribute("title", .string).renamed(from: "name")
                    Attribute("value", .integer64)
                    Attribute("note", .string)
                }
            }
            ModelVersion("v3") {
                Entity("Item") {
                    Attribute("title", .string)
                    Attribute("value", .integer64)
                    Attribute("note", .string)
                    Attribute("label", .string)
                }
            }
        }
        modelURL = directory.path("Items.xcdatamodeld")
        try XcodeModel.write(model, to: modelURL)
    }

    /// A path in the case's folder.
    func path(_ name: String) -> URL { directory.path(name) }

    /// Writes a store of `version` with rows `keys`, in batches; `suffix` is appended to names.
    @discardableResult
    func makeStore(
        _ name: String, version: String = "v1", keys: ClosedRange<Int>? = nil, suffix: String = ""
    ) async throws -> URL {
        let url = path(name)
        let nameKey = version == "v1" ? "name" : "title"
        let rows = (keys ?? 1...rowCount).map { key in
            StoreRow(
                reference: RowReference(entityName: "Item", primaryKey: Int64(key)), version: 1,
                attributes: [nameKey: .string("item \(key)\(suffix)"), "value": .integer(Int64(key))])
        }
        let store = try SQLiteStore(at: url, model: try #require(model.version(named: version)).model)
        // Keys come from the store's counter (Z_MAX), as an app's would.
        let issued = try await store.newPrimaryKeys(forEntity: "Item", count: rows.count)
        guard issued.first == 1 else { throw CrashHarness.Failure("the new store issued \(issued.first ?? 0) first") }
        for start in stride(from: 0, to: rows.count, by: 10_000) {
            _ = try await store.save(StoreChangeSet(inserted: Array(rows[start..<min(rows.count, start + 10_000)])))
        }
        return url
    }

    /// Puts a copy of `template` at `url`, with no journal beside it.
    func restore(_ template: URL, to url: URL) throws {
        for suffix in ["", "-wal", "-shm", "-journal"] {
            try? FileManager.default.removeItem(atPath: url.path + suffix)
        }
        try FileManager.default.copyItem(at: template, to: url)
    }

    /// The files of the folder whose names contain `text` (temporary files an operation left).
    func leftovers(containing text: String) throws -> [String] {
        try FileManager.default.contentsOfDirectory(atPath: directory.url.path).filter { $0.contains(text) }
    }

    // MARK: - Checking

    /// What a store holds after a kill: its version and its rows by value.
    struct Contents {
        /// The model version whose hashes the store carries.
        var version: String
        /// The name (v1) or title (v2, v3) of each row, by value.
        var names: [Int64: String]
        /// The label of each row (v3), by value.
        var labels: [Int64: String]
    }

    /// Opens a SQLite store as an app would (read-write, so that SQLite recovers a hot journal),
    /// verifies it with ``StoreVerifier``, and reads every row.
    ///
    /// - Throws: ``CrashHarness/Failure`` when it does not open, does not verify or repeats a value.
    func contents(of url: URL) async throws -> Contents {
        // Read-write first: SQLite rolls back a hot journal only then.
        _ = try SQLiteStore(at: url)
        let metadata = try SQLiteStore.metadata(at: url)
        guard let version = model.version(matching: metadata) else {
            throw CrashHarness.Failure("the store matches no version of the model")
        }
        let report = try await StoreVerifier.verify(storeAt: url, model: version.model)
        guard report.problems.isEmpty else {
            throw CrashHarness.Failure(
                "verification found \(report.problems.count) problems: \(report.problems.prefix(3))")
        }
        // The rows straight from the table: reading 50,000 rows as store rows in a debug build
        // would take most of each kill's time.
        let connection = try Connection(path: url.path, configuration: .readOnly)
        var contents = Contents(version: version.name, names: [:], labels: [:])
        let columns: SQL =
            version.name == "v1"
            ? "ZVALUE, ZNAME, NULL" : version.name == "v2" ? "ZVALUE, ZTITLE, NULL" : "ZVALUE, ZTITLE, ZLABEL"
        try connection.forEachRow("SELECT \(columns) FROM ZITEM") { row in
            guard let value = row[0].int64, let name = row[1].string else {
                contents.names[-1] = "a row without its values"
                return
            }
            if contents.names.updateValue(name, forKey: value) != nil { contents.names[-2] = "two rows with one value" }
            if let label = row[2].string { contents.labels[value] = label }
        }
        return contents
    }

    /// Checks a store `tern convert` made from a store of rows 1…n named "item k": SQLite stores
    /// row by row (after verifying), binary and XML stores by their count.
    func expectConverted(_ destination: URL, isSQLite: Bool) async throws {
        if isSQLite {
            try expect(try await contents(of: destination), keys: 1...rowCount) { "item \($0)" }
        } else {
            let store = try StoreFiles.open(at: destination, model: nil, isReadOnly: true)
            let count = try await store.count(StoreFetchRequest(entityName: "Item"))
            guard count == rowCount else { throw CrashHarness.Failure("\(count) rows were converted") }
        }
    }

    /// Renames every `Item` of a store (`name` + `suffix`) in one save of the store itself.
    func renameAll(in store: any PersistentStore, suffix: String) async throws {
        var rows = try await store.fetch(StoreFetchRequest(entityName: "Item"))
        for index in rows.indices {
            guard case .string(let name)? = rows[index].attributes["name"] else { continue }
            rows[index].attributes["name"] = .string(name + suffix)
        }
        _ = try await store.save(StoreChangeSet(updated: rows))
    }

    /// Checks that a store holds exactly the rows `keys`, each named by `name`.
    ///
    /// - Throws: ``CrashHarness/Failure`` naming the first row that differs.
    func expect(_ contents: Contents, keys: ClosedRange<Int>, name: (Int) -> String) throws {
        guard contents.names.count == keys.count else {
            throw CrashHarness.Failure("\(contents.names.count) rows instead of \(keys.count) in \(contents.version)")
        }
        for key in keys where contents.names[Int64(key)] != name(key) {
            throw CrashHarness.Failure(
                "row \(key) is \(contents.names[Int64(key)].map { "named \"\($0)\"" } ?? "missing"), not \"\(name(key))\""
            )
        }
    }
}
