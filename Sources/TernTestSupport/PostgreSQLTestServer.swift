import Foundation
public import Testing

/// The PostgreSQL server the tests of the PostgreSQL store use: `TERN_PG_URL` when it is set,
/// otherwise a throwaway cluster started once per test process.
///
/// The cluster is made with `initdb` in a new temporary folder (trust authentication, user
/// `tern`), and started with `pg_ctl` listening only on a Unix socket in that folder, on a
/// random port. When the tests run as root (as CI may), the server runs as the `postgres` user
/// through `runuser`, since PostgreSQL refuses to run as root. A watchdog stops the server and
/// removes the folder once the test process ends, however it ends.
///
/// Tests skip PostgreSQL only when `TERN_PG_URL` is unset *and* no `initdb` can be found, and a
/// warning says so loudly; with `TERN_PG_REQUIRED=1` (CI) they never skip.
///
/// ```swift
/// @Suite(.enabled(if: PostgreSQLTestServer.isAvailable, PostgreSQLTestServer.skipComment))
/// struct MyTests {
///     @Test func opens() throws {
///         let url = try PostgreSQLTestServer.freshStoreURL()   // a connection string with its own schema
///     }
/// }
/// ```
public enum PostgreSQLTestServer {
    /// Whether PostgreSQL tests can run: `TERN_PG_URL` is set or the server binaries are installed.
    ///
    /// When they cannot, a warning is printed on standard error the first time this is read.
    public static var isAvailable: Bool { availability }

    /// The comment shown for skipped PostgreSQL tests.
    public static let skipComment: Comment =
        "PostgreSQL tests SKIPPED: TERN_PG_URL is unset and initdb/pg_ctl are not installed (apt-get install postgresql)"

    /// The connection string of the server: `TERN_PG_URL`, or the throwaway cluster's, started
    /// on first use.
    ///
    /// - Throws: When the cluster cannot be started; the error says which command failed and
    ///   shows its output.
    public static func connectionString() throws -> String {
        try started.get()
    }

    /// A connection string to the server with a new, unique `schema`, so that each store of a
    /// test starts empty and tests can run in parallel.
    ///
    /// - Parameter prefix: The start of the schema's name.
    /// - Returns: The connection string with `schema=<prefix>_<random>`.
    /// - Throws: When the server cannot be started.
    public static func freshStoreURL(prefix: String = "t") throws -> String {
        let base = try connectionString()
        let schema = "\(prefix)_\(UUID().uuidString.replacingOccurrences(of: "-", with: "").lowercased().prefix(16))"
        return withSchema(base, schema)
    }

    /// A connection string with a `schema` parameter added.
    ///
    /// - Parameters:
    ///   - base: A URL or `key=value` connection string.
    ///   - schema: The schema name.
    /// - Returns: The string with the schema.
    public static func withSchema(_ base: String, _ schema: String) -> String {
        if base.hasPrefix("postgres://") || base.hasPrefix("postgresql://") {
            return base + (base.contains("?") ? "&" : "?") + "schema=" + schema
        }
        return base + " schema=" + schema
    }

    // MARK: - Non public

    /// Whether the tests can run, with the loud warning when they cannot.
    private static let availability: Bool = {
        let environment = ProcessInfo.processInfo.environment
        if environment["TERN_PG_URL"].map({ !$0.isEmpty }) == true { return true }
        // CI sets TERN_PG_REQUIRED=1: the tests then run, and fail, rather than skip.
        if environment["TERN_PG_REQUIRED"] == "1" { return true }
        if binary(named: "initdb") != nil, binary(named: "pg_ctl") != nil { return true }
        let warning = String(repeating: "!", count: 78)
        FileHandle.standardError.write(
            Data(
                """
                \(warning)
                WARNING: PostgreSQL tests are SKIPPED: TERN_PG_URL is unset and initdb/pg_ctl were not found.
                Install the server (apt-get install postgresql) or set TERN_PG_URL=postgres://user@host/db.
                \(warning)

                """.utf8))
        return false
    }()

    /// The server's connection string, or why it could not be started.
    private static let started: Result<String, ServerError> = {
        if let url = ProcessInfo.processInfo.environment["TERN_PG_URL"], !url.isEmpty { return .success(url) }
        do throws(ServerError) { return .success(try startCluster()) } catch { return .failure(error) }
    }()

    /// Why the throwaway cluster could not be started.
    struct ServerError: Error, CustomStringConvertible {
        var description: String
    }

    /// A PostgreSQL program: on the PATH, else in the newest `/usr/lib/postgresql/<version>/bin`.
    static func binary(named name: String) -> URL? {
        let manager = FileManager.default
        let path = ProcessInfo.processInfo.environment["PATH"] ?? "/usr/bin:/bin"
        for directory in path.split(separator: ":") {
            let candidate = URL(fileURLWithPath: String(directory)).appendingPathComponent(name)
            if manager.isExecutableFile(atPath: candidate.path) { return candidate }
        }
        let versions = (try? manager.contentsOfDirectory(atPath: "/usr/lib/postgresql")) ?? []
        for version in versions.sorted(by: { (Int($0) ?? 0) > (Int($1) ?? 0) }) {
            let candidate = URL(fileURLWithPath: "/usr/lib/postgresql/\(version)/bin/\(name)")
            if manager.isExecutableFile(atPath: candidate.path) { return candidate }
        }
        return nil
    }

    /// Makes and starts a cluster in a new temporary folder; returns its connection string.
    private static func startCluster() throws(ServerError) -> String {
        guard let initdb = binary(named: "initdb"), let pgCtl = binary(named: "pg_ctl") else {
            throw ServerError(description: "initdb and pg_ctl are not installed; apt-get install postgresql")
        }
        var template = Array("/tmp/tern-pg-XXXXXX".utf8CString)
        guard let made = mkdtemp(&template) else { throw ServerError(description: "cannot create a temporary folder") }
        let folder = String(cString: made)
        let data = folder + "/data"
        // Run as root (CI): PostgreSQL refuses root, so the server runs as `postgres`.
        var prefix: [String] = []
        if geteuid() == 0 {
            guard let account = getpwnam("postgres") else {
                throw ServerError(description: "tests run as root and there is no postgres user to run the server as")
            }
            chown(folder, account.pointee.pw_uid, account.pointee.pw_gid)
            prefix = ["/usr/sbin/runuser", "-u", "postgres", "--"]
            if !FileManager.default.isExecutableFile(atPath: prefix[0]) { prefix[0] = "/sbin/runuser" }
        }
        chmod(folder, 0o755)
        try run(
            prefix + [initdb.path, "-D", data, "-A", "trust", "-U", "tern", "-E", "UTF8", "--no-locale", "--no-sync"])
        let port = Int.random(in: 20_000..<60_000)
        let options =
            "-c listen_addresses= -k \(folder) -p \(port) -c fsync=off -c synchronous_commit=off "
            + "-c full_page_writes=off -c max_connections=300"
        try run(prefix + [pgCtl.path, "-D", data, "-l", folder + "/server.log", "-w", "-o", options, "start"])
        // Stops the server and removes the folder when this process ends, however it ends.
        let stop = (prefix + [pgCtl.path, "-D", data, "-m", "immediate", "stop"]).joined(separator: " ")
        let script =
            "while kill -0 \(getpid()) 2>/dev/null; do sleep 1; done; \(stop) >/dev/null 2>&1; rm -rf \(folder)"
        guard spawn(["/bin/sh", "-c", script], output: "/dev/null", wait: false) != nil else {
            throw ServerError(description: "cannot start the watchdog that stops the server")
        }
        return "host=\(folder) port=\(port) user=tern dbname=postgres"
    }

    /// Runs a command to its end; throws with its output when it fails.
    ///
    /// The output goes to a file, not a pipe: the server `pg_ctl` starts inherits it and would
    /// keep a pipe open forever. `posix_spawn` and `waitpid` are used directly, so that waiting
    /// needs no run loop (this runs inside a test's task).
    private static func run(_ arguments: [String]) throws(ServerError) {
        let logPath = FileManager.default.temporaryDirectory.appendingPathComponent("tern-pg-\(UUID().uuidString).log")
            .path
        defer { unlink(logPath) }
        guard let status = spawn(arguments, output: logPath, wait: true) else {
            throw ServerError(description: "cannot run \(arguments[0])")
        }
        guard status == 0 else {
            let text = (try? String(contentsOfFile: logPath, encoding: .utf8)) ?? ""
            throw ServerError(description: "\(arguments.joined(separator: " ")) failed:\n\(text)")
        }
    }

    /// Starts a program with its output in a file; returns its exit status when `wait` is true,
    /// 0 once started otherwise, nil when it cannot start.
    private static func spawn(_ arguments: [String], output: String, wait: Bool) -> Int32? {
        var actions = posix_spawn_file_actions_t()
        posix_spawn_file_actions_init(&actions)
        defer { posix_spawn_file_actions_destroy(&actions) }
        posix_spawn_file_actions_addopen(&actions, 0, "/dev/null", O_RDONLY, 0)
        posix_spawn_file_actions_addopen(&actions, 1, output, O_WRONLY | O_CREAT | O_TRUNC, 0o644)
        posix_spawn_file_actions_adddup2(&actions, 1, 2)
        // The server and the watchdog outlive this call: they must not hold another test's pipe.
        ChildProcess.closeInheritedDescriptors(&actions)
        var pid: pid_t = 0
        var cArguments = arguments.map { strdup($0) } + [nil]
        defer { for argument in cArguments { free(argument) } }
        let started = posix_spawn(&pid, arguments[0], &actions, nil, &cArguments, environ)
        guard started == 0 else { return nil }
        guard wait else { return 0 }
        var status: Int32 = 0
        while waitpid(pid, &status, 0) == -1 {
            guard errno == EINTR else { return nil }
        }
        // WIFEXITED / WEXITSTATUS.
        return (status & 0x7f) == 0 ? (status >> 8) & 0xff : 128 + (status & 0x7f)
    }
}
