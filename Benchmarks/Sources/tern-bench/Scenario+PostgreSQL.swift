import Foundation
import TernCore
import TernMigration
import TernPostgreSQL
import TernStores

/// The PostgreSQL scenarios: a batch insert and a fetch through an ``ObjectContext`` over a
/// ``PostgreSQLStore`` (the same code as `batch-insert` and `fetch`, see ``TernSide``), and an
/// inferred migration through `StoreMigrator`. The baselines go through `psql`: `\copy`
/// of the same rows from a text file, a plain `SELECT` of every column, and the migration's
/// DDL written by hand in one transaction (`ADD COLUMN … DEFAULT`, `RENAME COLUMN`, `DROP COLUMN`).
///
/// They need a server: `TERN_PG_URL` (a URL or `key=value` connection string; `Scripts/with-postgres`
/// starts a throwaway one). Without it they are skipped, and the run says so.
struct PostgreSQLScenario: ScenarioImplementation {
    /// One of the PostgreSQL scenarios.
    let scenario: Scenario

    /// The server's connection string, or nil when none is configured.
    static var server: String? {
        ProcessInfo.processInfo.environment["TERN_PG_URL"].flatMap { $0.isEmpty ? nil : $0 }
    }

    /// What the run prints when the PostgreSQL rows are skipped.
    static let skipNotice = """
        PostgreSQL rows SKIPPED: TERN_PG_URL is unset (set it, or run through Scripts/with-postgres, which \
        starts a throwaway server)
        """

    /// The `psql` program: on the PATH, else in the newest `/usr/lib/postgresql/<version>/bin`.
    static let psql: String? = {
        let path = ProcessInfo.processInfo.environment["PATH"] ?? ""
        let folders =
            path.split(separator: ":").map(String.init)
            + ((try? FileManager.default.contentsOfDirectory(atPath: "/usr/lib/postgresql")) ?? [])
            .sorted { $0.compare($1, options: .numeric) == .orderedDescending }.map { "/usr/lib/postgresql/\($0)/bin" }
        return folders.map { $0 + "/psql" }.first { FileManager.default.isExecutableFile(atPath: $0) }
    }()

    /// A connection string to the server with a schema of its own.
    static func url(schema: String) throws -> String {
        guard let server else { throw BenchFailure(skipNotice) }
        if PostgreSQLLocation.isURL(server) { return server + (server.contains("?") ? "&" : "?") + "schema=" + schema }
        return server + " schema=" + schema
    }

    /// A new store of the benchmark's model in its own schema (made by Tern, so that both sides
    /// use Core Data's layout), filled with N rows by the baseline's `\copy` when `filled`.
    static func prepare(schema: String, rows: Int, filled: Bool) throws -> String {
        let url = try url(schema: schema)
        try? PostgreSQLStore.destroy(at: url)
        _ = try PostgreSQLStore(url: url, model: EventData.model())
        if filled { _ = try copyRows(into: url, rows: rows) }
        return url
    }

    /// Removes a scenario's store and its schema.
    static func remove(_ url: String) {
        try? PostgreSQLStore.destroy(at: url)
    }

    func runTern(_ input: ScenarioInput) async throws -> Timing {
        switch scenario {
        case .postgreSQLBatchInsert:
            return try await TernSide(url: input.store, rows: input.rows, postgreSQL: input.location).run(.batchInsert)
        case .postgreSQLFetch:
            return try await TernSide(url: input.store, rows: input.rows, postgreSQL: input.location).run(.fetch)
        case .postgreSQLMappedMigration:
            let mapping = try StepMapping(jsonData: Data(MappedMigrationScenario.jsonMapping.utf8))
            var watch = Stopwatch()
            watch.start()
            try await StoreMigrator().migrateStore(
                at: .postgreSQL(input.location), model: MappedMigrationScenario.model(), mappings: [mapping])
            watch.stop()
            return watch.timing(checksum: 0)
        default:
            var watch = Stopwatch()
            watch.start()
            try await StoreMigrator().migrateStore(
                at: .postgreSQL(input.location), model: InferredMigrationScenario.inferredModel())
            watch.stop()
            return watch.timing(checksum: 0)
        }
    }

    func runBaseline(_ input: ScenarioInput) async throws -> Timing {
        switch scenario {
        case .postgreSQLBatchInsert:
            return try Self.copyRows(into: input.location, rows: input.rows)
        case .postgreSQLFetch:
            let output = input.folder.appendingPathComponent("select-\(getpid()).tsv")
            defer { try? FileManager.default.removeItem(at: output) }
            var watch = Stopwatch()
            watch.start()
            try Self.runPSQL(
                input.location,
                [
                    "-At", "-F", "\t", "-o", output.path, "-c",
                    #"SELECT "ZID", "ZNAME", "ZTIMESTAMP", "ZAMOUNT", "ZFLAG" FROM "ZEVENT""#,
                ])
            watch.stop()
            return watch.timing(checksum: try Self.checksum(ofSelection: output))
        case .postgreSQLMappedMigration:
            // The split by hand: both tables filled from the old one, which goes, in one transaction.
            let date =
                #"to_char(TIMESTAMP '2001-01-01 00:00:00' + "ZTIMESTAMP" * INTERVAL '1 second', 'YYYY-MM-DD HH24:MI:SS')"#
            var watch = Stopwatch()
            watch.start()
            try Self.runPSQL(
                input.location,
                [
                    "-1", "-c",
                    """
                    CREATE TABLE "ZPRINTEDEVENT" ("Z_PK" bigint PRIMARY KEY, "Z_ENT" bigint NOT NULL, "Z_OPT" bigint,                 "ZID" bigint, "ZPRINTEDDATE" text);                 CREATE TABLE "ZTIMESTAMPEVENT" ("Z_PK" bigint PRIMARY KEY, "Z_ENT" bigint NOT NULL, "Z_OPT" bigint,                 "ZID" bigint, "ZTIMESTAMP" double precision);                 INSERT INTO "ZPRINTEDEVENT" SELECT "Z_PK", 1, 1, "ZID", \(date) FROM "ZEVENT";                 INSERT INTO "ZTIMESTAMPEVENT" SELECT "Z_PK", 2, 1, "ZID", "ZTIMESTAMP" FROM "ZEVENT";                 DROP TABLE "ZEVENT";                 UPDATE "Z_PRIMARYKEY" SET "Z_NAME" = 'PrintedEvent' WHERE "Z_NAME" = 'Event';                 INSERT INTO "Z_PRIMARYKEY" SELECT 2, 'TimeStampEvent', 0, "Z_MAX" FROM "Z_PRIMARYKEY"
                    """,
                ])
            watch.stop()
            return watch.timing(checksum: 0)
        default:
            var watch = Stopwatch()
            watch.start()
            try Self.runPSQL(
                input.location,
                [
                    "-1", "-c",
                    """
                    ALTER TABLE "ZEVENT" ADD COLUMN "ZPRIORITY" bigint DEFAULT 3; \
                    ALTER TABLE "ZEVENT" RENAME COLUMN "ZNAME" TO "ZTITLE"; ALTER TABLE "ZEVENT" DROP COLUMN "ZFLAG"
                    """,
                ])
            watch.stop()
            return watch.timing(checksum: 0)
        }
    }

    func checksum(_ input: ScenarioInput) throws -> Int64? {
        switch scenario {
        case .postgreSQLBatchInsert:
            return try Self.sum(
                input.location,
                """
                SELECT COUNT(*), SUM("ZID"), SUM("ZAMOUNT"), SUM(length("ZNAME")), SUM(CAST(trunc("ZTIMESTAMP") AS bigint)), \
                SUM("ZFLAG"), MAX("Z_PK"), (SELECT "Z_MAX" FROM "Z_PRIMARYKEY" WHERE "Z_NAME" = 'Event') FROM "ZEVENT"
                """)
        case .postgreSQLFetch:
            return nil
        case .postgreSQLMappedMigration:
            // Year, month, day, hour, minute and second of the text, so that the format is compared too.
            let parts = [(1, 4), (6, 2), (9, 2), (12, 2), (15, 2), (18, 2)].map {
                "SUM(CAST(substr(\"ZPRINTEDDATE\", \($0.0), \($0.1)) AS bigint))"
            }
            return try Self.sum(
                input.location,
                """
                SELECT COUNT(*), SUM("ZID"), SUM(length("ZPRINTEDDATE")), \(parts.joined(separator: ", ")) FROM "ZPRINTEDEVENT"
                """)
                &+ Self.sum(
                    input.location,
                    """
                    SELECT COUNT(*), SUM("ZID"), SUM(CAST(trunc("ZTIMESTAMP") AS bigint)), \
                    (SELECT COUNT(*) * 1000000 FROM information_schema.tables WHERE table_schema = current_schema() \
                    AND table_name = 'ZEVENT') FROM "ZTIMESTAMPEVENT"
                    """)
        default:
            return try Self.sum(
                input.location,
                """
                SELECT COUNT(*), SUM("ZID"), SUM(length("ZTITLE")), SUM(CAST(trunc("ZTIMESTAMP") AS bigint)), SUM("ZAMOUNT"), \
                SUM("ZPRIORITY"), (SELECT COUNT(*) FROM information_schema.columns \
                WHERE table_schema = current_schema() AND table_name = 'ZEVENT') FROM "ZEVENT"
                """)
        }
    }

    // MARK: - psql

    /// Loads N rows with `\copy` from a text file written beforehand (the load alone is timed),
    /// and sets `Z_MAX` as a store's key counter must be.
    @discardableResult
    static func copyRows(into url: String, rows: Int) throws -> Timing {
        let file = FileManager.default.temporaryDirectory.appendingPathComponent("tern-bench-copy-\(getpid()).txt")
        defer { try? FileManager.default.removeItem(at: file) }
        var text = ""
        text.reserveCapacity(rows * 64)
        for (index, row) in EventData.rows(from: 0, count: rows).enumerated() {
            text += "\(index + 1)\t1\t1\t\(row.id)\t\(row.name)\t\(row.timeStamp)\t\(row.amount)\t\(row.flag ? 1 : 0)\n"
        }
        try Data(text.utf8).write(to: file)
        var watch = Stopwatch()
        watch.start()
        try runPSQL(
            url,
            [
                "-1", "-c",
                """
                \\copy "ZEVENT" ("Z_PK", "Z_ENT", "Z_OPT", "ZID", "ZNAME", "ZTIMESTAMP", "ZAMOUNT", "ZFLAG") FROM '\(file.path)'
                """, "-c", "UPDATE \"Z_PRIMARYKEY\" SET \"Z_MAX\" = \(rows) WHERE \"Z_NAME\" = 'Event'",
            ])
        watch.stop()
        return watch.timing(checksum: 0)
    }

    /// Runs `psql` on a store's schema, quietly, stopping at the first error.
    static func runPSQL(_ url: String, _ arguments: [String], output: URL? = nil) throws {
        guard let psql else { throw BenchFailure("psql is not installed (apt-get install postgresql-client)") }
        let location = try PostgreSQLLocation(url)
        let process = Process()
        process.executableURL = URL(fileURLWithPath: psql)
        process.arguments = ["-X", "-q", "-v", "ON_ERROR_STOP=1", "-d", location.connectionInfo] + arguments
        var environment = ProcessInfo.processInfo.environment
        if let schema = location.schema { environment["PGOPTIONS"] = "-c search_path=\(schema)" }
        process.environment = environment
        if let output { process.standardOutput = try FileHandle(forWritingTo: output) }
        try process.run()
        process.waitUntilExit()
        guard process.terminationStatus == 0 else {
            throw BenchFailure("psql \(arguments.joined(separator: " ")) exited with \(process.terminationStatus)")
        }
    }

    /// The sum of the columns of a one-row query, each rounded down, run through `psql`.
    private static func sum(_ url: String, _ query: String) throws -> Int64 {
        let output = FileManager.default.temporaryDirectory.appendingPathComponent("tern-bench-sum-\(getpid()).txt")
        defer { try? FileManager.default.removeItem(at: output) }
        try runPSQL(url, ["-At", "-F", "\t", "-o", output.path, "-c", query])
        let line = String(decoding: try Data(contentsOf: output), as: UTF8.self).trimmingCharacters(
            in: .whitespacesAndNewlines)
        return line.split(separator: "\t").reduce(0) { $0 &+ Int64(Double($1) ?? 0) }
    }

    /// The checksum ``TernSide``'s fetch computes, over `psql`'s unaligned output.
    private static func checksum(ofSelection file: URL) throws -> Int64 {
        var checksum: Int64 = 0
        for line in String(decoding: try Data(contentsOf: file), as: UTF8.self).split(separator: "\n") {
            let fields = line.split(separator: "\t", omittingEmptySubsequences: false)
            guard fields.count == 5 else { continue }
            checksum &+= (Int64(fields[0]) ?? 0) &+ (Int64(fields[3]) ?? 0) &+ Int64(fields[1].utf8.count)
            checksum &+= Int64(Double(fields[2]) ?? 0)
            if fields[4] == "1" { checksum &+= 1 }
        }
        return checksum
    }
}
