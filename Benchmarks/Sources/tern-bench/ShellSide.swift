import Foundation

/// The second baseline: the `sqlite3` shell run as a child process, as a user would script the
/// same work (`.import` and one `INSERT … SELECT`, `INSERT … SELECT strftime(…)`, `.mode json`,
/// `ALTER TABLE`), with Tern's connection settings (write-ahead logging, `synchronous = FULL`).
///
/// Its time is the child's wall-clock time from start to exit, starting the program included
/// (a few milliseconds); its CPU time and peak memory are the shell process's own
/// (`getrusage(RUSAGE_CHILDREN)`).
enum SQLiteShell {
    /// The `sqlite3` program on the `PATH`, if there is one.
    static let program: String? = {
        let folders = (ProcessInfo.processInfo.environment["PATH"] ?? "/usr/bin:/bin").split(separator: ":")
        return folders.map { $0 + "/sqlite3" }.first { FileManager.default.isExecutableFile(atPath: $0) }
    }()

    /// What the table says when the shell is missing.
    static let skipNotice =
        "sqlite3 shell baselines SKIPPED: sqlite3 is not on the PATH (apt-get install sqlite3; Scripts/bootstrap does)"

    /// The lines every script starts with: stop at the first error, Tern's settings, their output
    /// (`wal`) thrown away.
    private static let prologue = """
        .bail on
        .output /dev/null
        PRAGMA journal_mode = WAL;
        PRAGMA synchronous = FULL;
        .output stdout

        """

    /// Runs `sqlite3 STORE` with a script on its standard input and times it.
    ///
    /// The script's last line asks the shell's own process for its peak memory (`VmHWM` of
    /// `/proc/PID/status`, read by a `.system` command whose parent is the shell): a child's
    /// `ru_maxrss` would count the benchmark's memory too, which the spawned child shares until
    /// it runs `sqlite3`.
    ///
    /// - Parameters:
    ///   - store: The database file.
    ///   - script: Dot-commands and SQL, after the ``prologue``.
    /// - Returns: The child's wall time, its CPU time and (in ``Timing/childPeakKiB``) its peak memory.
    /// - Throws: ``BenchFailure`` if the shell is missing or exits with an error.
    static func run(store: URL, script: String) throws -> Timing {
        guard let program else { throw BenchFailure(skipNotice) }
        let folder = store.deletingLastPathComponent()
        let scriptFile = folder.appendingPathComponent("script-\(getpid()).sql")
        let outputFile = folder.appendingPathComponent("script-\(getpid()).out")
        let epilogue = ".output stdout\n.system grep VmHWM /proc/$PPID/status\n"
        try Data((prologue + script + epilogue).utf8).write(to: scriptFile)
        defer {
            try? FileManager.default.removeItem(at: scriptFile)
            try? FileManager.default.removeItem(at: outputFile)
        }
        let before = childrenUsage()
        var watch = Stopwatch()
        watch.start()
        let status = try ChildProcess.run(
            program, [store.path], standardInput: scriptFile.path, standardOutput: outputFile.path)
        watch.stop()
        let after = childrenUsage()
        let output = String(decoding: (try? Data(contentsOf: outputFile)) ?? Data(), as: UTF8.self)
        guard status == 0 else {
            throw BenchFailure("sqlite3 \(store.path) exited with \(status) on:\n\(script)\n\(output)")
        }
        var timing = watch.timing(checksum: 0)
        timing.cpuSeconds = seconds(of: after) - seconds(of: before)
        if let line = output.split(separator: "\n").first(where: { $0.hasPrefix("VmHWM:") }) {
            timing.childPeakKiB = Int(line.split(separator: " ").dropFirst().first ?? "")
        }
        return timing
    }

    /// The resources used by this process's children that have ended.
    private static func childrenUsage() -> rusage {
        var usage = rusage()
        getrusage(__rusage_who_t(RUSAGE_CHILDREN.rawValue), &usage)
        return usage
    }

    private static func seconds(of usage: rusage) -> Double {
        Double(usage.ru_utime.tv_sec + usage.ru_stime.tv_sec)
            + Double(usage.ru_utime.tv_usec + usage.ru_stime.tv_usec) / 1e6
    }

    /// The seconds between 1970 and 2001, which Core Data's dates count from.
    static let referenceOffset = "978307200"

    /// `import-tsv`: the file `.import`ed into a temporary table, then one `INSERT … SELECT`
    /// that converts the columns and gives the keys, and `Z_MAX` set, in one transaction.
    static func importScript(file: URL) -> String {
        """
        BEGIN IMMEDIATE;
        CREATE TEMP TABLE staged (id, name, timeStamp, amount, flag);
        .mode tabs
        .import --skip 1 '\(file.path)' staged
        INSERT INTO ZEVENT (Z_PK, Z_ENT, Z_OPT, ZID, ZNAME, ZTIMESTAMP, ZAMOUNT, ZFLAG)
            SELECT rowid, 1, 1, CAST(id AS INTEGER), name, CAST(timeStamp AS REAL), CAST(amount AS INTEGER),
                CAST(flag AS INTEGER) FROM temp.staged ORDER BY rowid;
        UPDATE Z_PRIMARYKEY SET Z_MAX = (SELECT MAX(Z_PK) FROM ZEVENT) WHERE Z_NAME = 'Event';
        DROP TABLE temp.staged;
        COMMIT;

        """
    }

    /// `export-json` (`.mode json`) or `export-tsv` (`.mode tabs` with a header row): the
    /// records in key order into the output file, the date in ISO 8601 with milliseconds and the
    /// flag as `true` or `false`, as `tern export` writes them.
    static func exportScript(output: URL, tabs: Bool = false) -> String {
        """
        \(tabs ? ".mode tabs\n.headers on" : ".mode json")
        .output '\(output.path)'
        SELECT 'Event/p' || Z_PK AS _id, ZAMOUNT AS amount, CASE WHEN ZFLAG THEN 'true' ELSE 'false' END AS flag,
            ZID AS id, ZNAME AS name,
            strftime('%Y-%m-%dT%H:%M:%fZ', ZTIMESTAMP + \(referenceOffset), 'unixepoch') AS timeStamp
            FROM ZEVENT ORDER BY Z_PK;

        """
    }

    /// The seeds' split: both tables created and filled by `INSERT … SELECT` (the date by
    /// `strftime`), `ZEVENT` dropped, the key table updated, in one transaction.
    static let splitScript = """
        BEGIN IMMEDIATE;
        CREATE TABLE ZPRINTEDEVENT ( Z_PK INTEGER PRIMARY KEY, Z_ENT INTEGER, Z_OPT INTEGER, ZID INTEGER,
            ZPRINTEDDATE VARCHAR );
        CREATE TABLE ZTIMESTAMPEVENT ( Z_PK INTEGER PRIMARY KEY, Z_ENT INTEGER, Z_OPT INTEGER, ZID INTEGER,
            ZTIMESTAMP FLOAT );
        INSERT INTO ZPRINTEDEVENT (Z_PK, Z_ENT, Z_OPT, ZID, ZPRINTEDDATE)
            SELECT Z_PK, 1, 1, ZID, strftime('%Y-%m-%d %H:%M:%S', ZTIMESTAMP + \(referenceOffset), 'unixepoch')
            FROM ZEVENT ORDER BY Z_PK;
        INSERT INTO ZTIMESTAMPEVENT (Z_PK, Z_ENT, Z_OPT, ZID, ZTIMESTAMP)
            SELECT Z_PK, 2, 1, ZID, ZTIMESTAMP FROM ZEVENT ORDER BY Z_PK;
        DROP TABLE ZEVENT;
        UPDATE Z_PRIMARYKEY SET Z_NAME = 'PrintedEvent' WHERE Z_NAME = 'Event';
        INSERT INTO Z_PRIMARYKEY (Z_ENT, Z_NAME, Z_SUPER, Z_MAX) SELECT 2, 'TimeStampEvent', 0, Z_MAX FROM Z_PRIMARYKEY;
        COMMIT;

        """

    /// Statements run one transaction per step, as a script.
    static func script(steps: [[String]]) -> String {
        steps.map { step in
            (["BEGIN IMMEDIATE;"] + step.map { $0 + ";" } + ["COMMIT;"]).joined(separator: "\n")
        }.joined(separator: "\n") + "\n"
    }
}
