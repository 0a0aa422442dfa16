import CSQLite
import Foundation
import TernStores
import TernTool

/// `convert-binary` (SQLite → binary store → SQLite with `tern convert`'s code path) and
/// `replace-wal` (`StoreFiles.replace`, Core Data's `replacePersistentStore`, on a store in
/// write-ahead-log mode). The baselines: rows written to and read back from a file of their own
/// format into a new database with the same schema; SQLite's backup API in one step.
struct StoreCopyScenario: ScenarioImplementation {
    /// `convertBinary` or `replaceWAL`.
    let scenario: Scenario

    /// The intermediate file of a conversion.
    private func binary(_ input: ScenarioInput) -> URL { input.folder.appendingPathComponent("Events.ternbin") }

    /// The store a side produces: the conversion's last store or the replaced store.
    private func result(_ input: ScenarioInput) -> URL {
        input.folder.appendingPathComponent(scenario == .convertBinary ? "Back.sqlite" : "Replaced.sqlite")
    }

    func runTern(_ input: ScenarioInput) async throws -> Timing {
        var watch = Stopwatch()
        if scenario == .convertBinary {
            let steps = [
                ["convert", input.store.path, binary(input).path, "--type", "binary"],
                ["convert", binary(input).path, result(input).path, "--type", "sqlite"],
            ]
            watch.start()
            for arguments in steps {
                let status = await Tern.run(arguments, environment: ToolEnvironment(output: StandardErrorSink()))
                guard status == 0 else {
                    throw BenchFailure("`tern \(arguments.joined(separator: " "))` exited with \(status)")
                }
            }
            watch.stop()
        } else {
            watch.start()
            try StoreFiles.replace(at: result(input), withStoreAt: input.store)
            watch.stop()
        }
        return watch.timing(checksum: 0)
    }

    func runBaseline(_ input: ScenarioInput) async throws -> Timing {
        var watch = Stopwatch()
        watch.start()
        if scenario == .convertBinary {
            try writeBinary(from: input.store, to: binary(input))
            try readBinary(binary(input), schemaFrom: input.store, into: result(input))
        } else {
            let source = try RawDatabase(path: input.store.path)
            let destination = try RawDatabase.openStore(result(input))
            guard let backup = sqlite3_backup_init(destination.connection, "main", source.connection, "main") else {
                throw BenchFailure("sqlite3_backup_init failed")
            }
            let code = sqlite3_backup_step(backup, -1)
            sqlite3_backup_finish(backup)
            guard code == SQLITE_DONE else { throw BenchFailure("sqlite3_backup_step returned \(code)") }
        }
        watch.stop()
        return watch.timing(checksum: 0)
    }

    func checksum(_ input: ScenarioInput) throws -> Int64? {
        try BaselineSide.checksumOfRows(at: result(input))
    }

    // MARK: - The baseline's conversion

    /// Every row as fixed-size fields and a length-prefixed name, through a buffered file, then `fsync`.
    private func writeBinary(from store: URL, to url: URL) throws {
        let database = try RawDatabase(path: store.path)
        let select = try database.prepare(
            "SELECT Z_PK, ZID, ZAMOUNT, ZTIMESTAMP, ZFLAG, ZNAME FROM ZEVENT ORDER BY Z_PK")
        guard let file = fopen(url.path, "w") else { throw BenchFailure("cannot write \(url.path)") }
        defer { fclose(file) }
        while try select.step() {
            var fixed = (select.int64(0), select.int64(1), select.int64(2), select.double(3), select.int64(4))
            _ = withUnsafeBytes(of: &fixed) { fwrite($0.baseAddress, 1, 40, file) }
            select.withText(5) { text in
                var count = UInt32(text.count)
                _ = withUnsafeBytes(of: &count) { fwrite($0.baseAddress, 1, 4, file) }
                _ = fwrite(text.baseAddress, 1, text.count, file)
            }
        }
        fflush(file)
        fsync(fileno(file))
    }

    /// A new database with the source's schema and bookkeeping rows, then the rows read back
    /// from the file, in one transaction.
    private func readBinary(_ url: URL, schemaFrom store: URL, into destination: URL) throws {
        let database = try RawDatabase.openStore(destination)
        try database.execute("ATTACH DATABASE '\(store.path.replacingOccurrences(of: "'", with: "''"))' AS source")
        try database.execute("BEGIN IMMEDIATE")
        var schema: [String] = []
        let select = try database.prepare(
            """
            SELECT sql FROM source.sqlite_master WHERE sql IS NOT NULL AND name NOT LIKE 'sqlite_%' \
            ORDER BY type = 'table' DESC
            """)
        while try select.step() { schema.append(select.string(0)) }
        for statement in schema { try database.execute(statement) }
        for table in ["Z_PRIMARYKEY", "Z_METADATA", "Z_MODELCACHE"] {
            try database.execute("INSERT INTO main.\(table) SELECT * FROM source.\(table)")
        }
        let insert = try database.prepare(
            """
            INSERT INTO main.ZEVENT (Z_PK, Z_ENT, Z_OPT, ZID, ZAMOUNT, ZTIMESTAMP, ZFLAG, ZNAME) VALUES (?, 1, 1, ?, ?, ?, ?, ?)
            """)
        guard let file = fopen(url.path, "r") else { throw BenchFailure("cannot read \(url.path)") }
        defer { fclose(file) }
        var fixed: (Int64, Int64, Int64, Double, Int64) = (0, 0, 0, 0, 0)
        var count: UInt32 = 0
        var name = [UInt8](repeating: 0, count: 256)
        while withUnsafeMutableBytes(of: &fixed, { fread($0.baseAddress, 1, 40, file) }) == 40 {
            guard withUnsafeMutableBytes(of: &count, { fread($0.baseAddress, 1, 4, file) }) == 4, count <= 256,
                name.withUnsafeMutableBytes({ fread($0.baseAddress, 1, Int(count), file) }) == Int(count)
            else { throw BenchFailure("\(url.path) is truncated") }
            insert.bind(fixed.0, at: 1)
            insert.bind(fixed.1, at: 2)
            insert.bind(fixed.2, at: 3)
            insert.bind(fixed.3, at: 4)
            insert.bind(fixed.4, at: 5)
            name.withUnsafeBufferPointer { insert.bind(text: UnsafeBufferPointer(rebasing: $0[0..<Int(count)]), at: 6) }
            _ = try insert.step()
            insert.reset()
        }
        try database.execute("COMMIT")
        try database.execute("DETACH DATABASE source")
    }
}
