import Foundation
import TernCore
import TernFormats
import TernTool

/// `import-tsv`, `export-json` and `export-tsv`, through `tern import` and `tern export` run in-process
/// (`Tern.run`), so the CLI library's code paths are measured with the model read from a
/// `.xcdatamodeld` bundle. The baselines parse and write the same files by hand against the
/// SQLite C API.
struct RecordScenario: ScenarioImplementation {
    /// `importTSV`, `exportJSON` or `exportTSV`.
    let scenario: Scenario

    /// Writes the TSV file of `import-tsv`: a header row, then one line per event, the date as
    /// seconds since 2001 and the flag as 1 or 0.
    static func writeTSV(rows: Int, to url: URL) throws {
        guard let file = fopen(url.path, "w") else { throw BenchFailure("cannot write \(url.path)") }
        defer { fclose(file) }
        fputs("id\tname\ttimeStamp\tamount\tflag\n", file)
        for index in 0..<rows {
            let row = EventData.Row(index)
            fputs("\(row.id)\t\(row.name)\t\(Int64(row.timeStamp))\t\(row.amount)\t\(row.flag ? 1 : 0)\n", file)
        }
    }

    /// The exported file of a side.
    private func output(_ input: ScenarioInput) -> URL {
        input.folder.appendingPathComponent(scenario == .exportTSV ? "Events.tsv" : "Events.json")
    }

    func runTern(_ input: ScenarioInput) async throws -> Timing {
        // The model bundle is what a user passes to `--model`; writing it is not timed.
        let bundle = input.folder.appendingPathComponent("Events.xcdatamodeld")
        try XcodeModel.write(
            VersionedModel(name: "Events", versions: [ModelVersion(name: "Events", model: EventData.model())]),
            to: bundle)
        let arguments: [String]
        switch scenario {
        case .importTSV:
            guard let file = input.file else { throw BenchFailure("import-tsv needs --input") }
            arguments = ["import", input.store.path, file.path, "--model", bundle.path, "--entity", "Event", "--quiet"]
        default:
            arguments =
                [
                    "export", input.store.path, "--model", bundle.path, "--entity", "Event", "-o", output(input).path,
                    "--quiet",
                ] + (scenario == .exportTSV ? ["--format", "tsv"] : [])
        }
        var watch = Stopwatch()
        watch.start()
        let status = await Tern.run(arguments, environment: ToolEnvironment(output: StandardErrorSink()))
        watch.stop()
        guard status == 0 else {
            throw BenchFailure("`tern \(arguments.joined(separator: " "))` exited with \(status)")
        }
        return watch.timing(checksum: 0)
    }

    func runBaseline(_ input: ScenarioInput) async throws -> Timing {
        switch scenario {
        case .importTSV: try importTSV(input)
        case .exportTSV: try exportTSV(input)
        default: try exportJSON(input)
        }
    }

    func runShell(_ input: ScenarioInput) async throws -> Timing {
        if scenario == .importTSV {
            guard let file = input.file else { throw BenchFailure("import-tsv needs --input") }
            return try SQLiteShell.run(store: input.store, script: SQLiteShell.importScript(file: file))
        }
        return try SQLiteShell.run(
            store: input.store, script: SQLiteShell.exportScript(output: output(input), tabs: scenario == .exportTSV))
    }

    func checksum(_ input: ScenarioInput) throws -> Int64? {
        switch scenario {
        case .importTSV: try BaselineSide.checksumOfRows(at: input.store)
        case .exportTSV: try Self.checksumOfExport(at: output(input), record: "Event/p")
        default: try Self.checksumOfExport(at: output(input), record: "\"_id\"")
        }
    }

    // MARK: - Baselines

    /// Reads the file line by line (`getline`), parses the fields in place and inserts each row
    /// with one prepared statement, in one transaction (an import is all or nothing).
    private func importTSV(_ input: ScenarioInput) throws -> Timing {
        guard let path = input.file?.path else { throw BenchFailure("import-tsv needs --input") }
        var watch = Stopwatch()
        watch.start()
        let database = try RawDatabase.openStore(input.store)
        guard let file = fopen(path, "r") else { throw BenchFailure("cannot read \(path)") }
        defer { fclose(file) }
        var line: UnsafeMutablePointer<CChar>?
        var capacity = 0
        defer { free(line) }
        guard getline(&line, &capacity, file) > 0 else { throw BenchFailure("\(path) is empty") }
        try database.execute("BEGIN IMMEDIATE")
        let insert = try database.prepare(
            """
            INSERT INTO ZEVENT (Z_PK, Z_ENT, Z_OPT, ZID, ZNAME, ZTIMESTAMP, ZAMOUNT, ZFLAG) VALUES (?, 1, 1, ?, ?, ?, ?, ?)
            """)
        var key: Int64 = 0
        while case let length = getline(&line, &capacity, file), length > 0, let text = line {
            var fields: [UnsafeMutablePointer<CChar>] = []
            fields.reserveCapacity(5)
            var start = text
            for offset in 0..<length where text[offset] == 9 || text[offset] == 10 {
                text[offset] = 0
                fields.append(start)
                start = text + offset + 1
            }
            guard fields.count == 5 else { throw BenchFailure("line \(key + 2) of \(path) has \(fields.count) fields") }
            key += 1
            insert.bind(key, at: 1)
            insert.bind(strtoll(fields[0], nil, 10), at: 2)
            insert.bind(
                text: UnsafeBufferPointer(
                    start: UnsafeRawPointer(fields[1]).assumingMemoryBound(to: UInt8.self), count: strlen(fields[1])),
                at: 3)
            insert.bind(strtod(fields[2], nil), at: 4)
            insert.bind(strtoll(fields[3], nil, 10), at: 5)
            insert.bind(strtoll(fields[4], nil, 10), at: 6)
            _ = try insert.step()
            insert.reset()
        }
        try database.execute("UPDATE Z_PRIMARYKEY SET Z_MAX = \(key) WHERE Z_NAME = 'Event'")
        try database.execute("COMMIT")
        watch.stop()
        return watch.timing(checksum: 0)
    }

    /// One `SELECT` in key order, each row written as a JSON object into a buffered file, then
    /// `fsync`: the layout of `tern export` (`{"Event": [{"_id": "Event/p1", …}]}`, keys sorted,
    /// dates in ISO 8601 with milliseconds).
    private func exportJSON(_ input: ScenarioInput) throws -> Timing {
        var watch = Stopwatch()
        watch.start()
        let database = try RawDatabase(path: input.store.path)
        let select = try database.prepare(
            "SELECT Z_PK, ZAMOUNT, ZFLAG, ZID, ZNAME, ZTIMESTAMP FROM ZEVENT ORDER BY Z_PK")
        let url = output(input)
        guard let file = fopen(url.path, "w") else { throw BenchFailure("cannot write \(url.path)") }
        fputs("{\"Event\":[", file)
        var first = true
        var formatter = DateText()
        while try select.step() {
            fputs(first ? "\n" : ",\n", file)
            first = false
            fputs("{\"_id\":\"Event/p\(select.int64(0))\",\"amount\":\(select.int64(1)),", file)
            fputs(select.int64(2) != 0 ? "\"flag\":true," : "\"flag\":false,", file)
            fputs("\"id\":\(select.int64(3)),\"name\":\"", file)
            select.withText(4) { _ = fwrite($0.baseAddress, 1, $0.count, file) }
            fputs("\",\"timeStamp\":\"", file)
            formatter.formatISO(select.double(5)) { _ = fwrite($0.baseAddress, 1, $0.count, file) }
            fputs("\"}", file)
        }
        fputs("\n]}\n", file)
        fflush(file)
        fsync(fileno(file))
        fclose(file)
        watch.stop()
        return watch.timing(checksum: 0)
    }

    /// One `SELECT` in key order, each row written as a TSV line into a buffered file under the
    /// header, then `fsync`: the layout of `tern export --format tsv` (attributes sorted by name,
    /// dates in ISO 8601 with milliseconds, the flag as `true` or `false`).
    private func exportTSV(_ input: ScenarioInput) throws -> Timing {
        var watch = Stopwatch()
        watch.start()
        let database = try RawDatabase(path: input.store.path)
        let select = try database.prepare(
            "SELECT Z_PK, ZAMOUNT, ZFLAG, ZID, ZNAME, ZTIMESTAMP FROM ZEVENT ORDER BY Z_PK")
        let url = output(input)
        guard let file = fopen(url.path, "w") else { throw BenchFailure("cannot write \(url.path)") }
        fputs("_id\tamount\tflag\tid\tname\ttimeStamp\n", file)
        var formatter = DateText()
        while try select.step() {
            fputs("Event/p\(select.int64(0))\t\(select.int64(1))\t", file)
            fputs(select.int64(2) != 0 ? "true\t" : "false\t", file)
            fputs("\(select.int64(3))\t", file)
            select.withText(4) { _ = fwrite($0.baseAddress, 1, $0.count, file) }
            fputs("\t", file)
            formatter.formatISO(select.double(5)) { _ = fwrite($0.baseAddress, 1, $0.count, file) }
            fputs("\n", file)
        }
        fflush(file)
        fsync(fileno(file))
        fclose(file)
        watch.stop()
        return watch.timing(checksum: 0)
    }

    /// The number of records of an exported file (occurrences of `record`) and of their `true`
    /// flags, counted in its bytes.
    static func checksumOfExport(at url: URL, record: String) throws -> Int64 {
        let data = try Data(contentsOf: url, options: .alwaysMapped)
        var records: Int64 = 0
        var flags: Int64 = 0
        data.withUnsafeBytes { (bytes: UnsafeRawBufferPointer) in
            let id = Array(record.utf8)
            let yes = Array("true".utf8)
            var index = 0
            while index + id.count <= bytes.count {
                if bytes[index] == id[0], bytes[index..<(index + id.count)].elementsEqual(id) {
                    records += 1
                } else if bytes[index] == yes[0], bytes[index..<(index + 4)].elementsEqual(yes) {
                    flags += 1
                }
                index += 1
            }
        }
        return records * 1_000_000 &+ flags
    }
}

/// Sends everything `tern` prints to standard error: a child's standard output carries its report.
struct StandardErrorSink: OutputSink {
    func write(_ data: Data, to channel: OutputChannel) {
        FileHandle.standardError.write(data)
    }

    func isTerminal(_ channel: OutputChannel) -> Bool { false }
}
