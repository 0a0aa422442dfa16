import Foundation
import TernSQLite

/// What a child process reports on its standard output, as one JSON line.
struct ChildReport: Codable {
    /// The measured time and checksum.
    var timing: Timing
    /// The child's peak resident memory (`VmHWM`), in KiB.
    var peakKiB: Int
}

/// One side of one scenario as measured in its own process.
struct SideResult: Codable {
    var seconds: Double
    var cpuSeconds: Double
    var peakMiB: Double
    var checksum: Int64
}

/// The figures of every side of one scenario at one size.
struct Sides {
    var tern: SideResult
    var baseline: SideResult
    /// The `sqlite3` shell's figures, where the scenario has a shell baseline.
    var shell: SideResult?
}

/// Runs scenarios, each side in a child process of its own so that peaks do not mix.
final class Runner {
    /// The folder of the run's stores, removed at the end.
    let folder: URL
    private let executable: String
    private var filled: [Int: URL] = [:]
    private let emptyStore: URL

    /// Makes a scratch folder and an empty store of the benchmark's model.
    init() throws {
        folder = FileManager.default.temporaryDirectory
            .appendingPathComponent("tern-bench-\(ProcessInfo.processInfo.processIdentifier)")
        try FileManager.default.createDirectory(at: folder, withIntermediateDirectories: true)
        executable =
            (try? FileManager.default.destinationOfSymbolicLink(atPath: "/proc/self/exe"))
            ?? CommandLine.arguments[0]
        emptyStore = folder.appendingPathComponent("empty.sqlite")
        // Tern creates the store, so both sides write into Core Data's layout.
        _ = try SQLiteStore(at: emptyStore, model: EventData.model())
        try RawDatabase(path: emptyStore.path).execute("PRAGMA wal_checkpoint(TRUNCATE)")
    }

    deinit {
        try? FileManager.default.removeItem(at: folder)
    }

    /// Measures every side of a scenario at a size: Tern, the C baseline, and the `sqlite3` shell
    /// where the scenario has a shell script and the shell is installed.
    func measure(_ scenario: Scenario, rows: Int) throws -> Sides {
        let tern = try measure(scenario, side: .tern, rows: rows)
        let baseline = try measure(scenario, side: .baseline, rows: rows)
        let shell =
            scenario.hasShellBaseline && SQLiteShell.program != nil
            ? try measure(scenario, side: .shell, rows: rows) : nil
        return Sides(tern: tern, baseline: baseline, shell: shell)
    }

    /// Measures one side of a scenario in a child process, on its own copy of its input.
    private func measure(_ scenario: Scenario, side: Side, rows: Int) throws -> SideResult {
        var arguments = ["--child", side.rawValue, "--scenario", scenario.rawValue, "--rows", String(rows)]
        if case .postgreSQL(let filled) = scenario.input {
            // Each side gets a fresh store in a schema of its own, dropped afterwards.
            let url = try PostgreSQLScenario.prepare(
                schema: "bench_\(scenario.rawValue.replacingOccurrences(of: "-", with: "_"))_\(side.rawValue)",
                rows: rows, filled: filled)
            defer { PostgreSQLScenario.remove(url) }
            let report = try runChild(arguments + ["--store", url])
            return SideResult(
                seconds: report.timing.seconds, cpuSeconds: report.timing.cpuSeconds,
                peakMiB: Double(report.peakKiB) / 1024,
                checksum: report.timing.checksum)
        }
        let store: URL
        // Each side of a writing scenario works in a folder of its own, removed afterwards.
        let scratch = folder.appendingPathComponent("\(scenario.rawValue)-\(side.rawValue)")
        switch scenario.input {
        case .filledStore:
            store = try filledStore(rows: rows)
        case .emptyStore, .filledCopy, .emptyStoreAndTSV, .postgreSQL:
            try? FileManager.default.removeItem(at: scratch)
            try FileManager.default.createDirectory(at: scratch, withIntermediateDirectories: true)
            store = scratch.appendingPathComponent("Events.sqlite")
            try copyStore(scenario.input == .filledCopy ? try filledStore(rows: rows) : emptyStore, to: store)
            if scenario.input == .emptyStoreAndTSV {
                arguments += ["--input", try recordFile(rows: rows).path]
            }
        }
        defer { if scenario.writes { try? FileManager.default.removeItem(at: scratch) } }
        // The copy (and, for the first side, the filled store) are still being written to disk:
        // at 10,000,000 rows that is over a gigabyte, which the side timed first would otherwise
        // share the disk with. Every side starts with nothing left to write.
        sync()
        let report = try runChild(arguments + ["--store", store.path])
        return SideResult(
            seconds: report.timing.seconds, cpuSeconds: report.timing.cpuSeconds,
            peakMiB: Double(report.peakKiB) / 1024,
            checksum: report.timing.checksum)
    }

    /// A store holding `rows` events, written once by the baseline and shared by read scenarios.
    private func filledStore(rows: Int) throws -> URL {
        if let url = filled[rows] { return url }
        let url = folder.appendingPathComponent("filled-\(rows).sqlite")
        try copyStore(emptyStore, to: url)
        try BaselineSide.fill(url, rows: rows)
        filled[rows] = url
        return url
    }

    /// A TSV file of `rows` events, written once per size.
    private func recordFile(rows: Int) throws -> URL {
        let url = folder.appendingPathComponent("events-\(rows).tsv")
        if !FileManager.default.fileExists(atPath: url.path) { try RecordScenario.writeTSV(rows: rows, to: url) }
        return url
    }

    private func copyStore(_ source: URL, to destination: URL) throws {
        removeStore(destination)
        try FileManager.default.copyItem(at: source, to: destination)
    }

    private func removeStore(_ url: URL) {
        for suffix in ["", "-wal", "-shm"] {
            try? FileManager.default.removeItem(atPath: url.path + suffix)
        }
    }

    private func runChild(_ arguments: [String]) throws -> ChildReport {
        let process = Process()
        process.executableURL = URL(fileURLWithPath: executable)
        process.arguments = arguments
        let output = Pipe()
        process.standardOutput = output
        try process.run()
        let data = output.fileHandleForReading.readDataToEndOfFile()
        process.waitUntilExit()
        guard process.terminationStatus == 0 else {
            throw BenchFailure("child `\(arguments.joined(separator: " "))` exited with \(process.terminationStatus)")
        }
        do {
            return try JSONDecoder().decode(ChildReport.self, from: data)
        } catch {
            throw BenchFailure("child `\(arguments.joined(separator: " "))` reported no figures: \(error)")
        }
    }

    // MARK: - In the child

    /// Runs one side of one scenario in this process and prints its report as JSON.
    static func runChild(_ scenario: Scenario, side: Side, input: ScenarioInput) async throws {
        let implementation = scenario.implementation
        var timing: Timing
        switch side {
        case .tern: timing = try await implementation.runTern(input)
        case .baseline: timing = try await implementation.runBaseline(input)
        case .shell: timing = try await implementation.runShell(input)
        }
        // The shell's work is done by its own process, whose peak is the one that counts.
        let peak = timing.childPeakKiB ?? peakResidentKiB()
        if let checksum = try implementation.checksum(input) { timing.checksum = checksum }
        let data = try JSONEncoder().encode(ChildReport(timing: timing, peakKiB: peak))
        FileHandle.standardOutput.write(data)
    }

    /// This process's peak resident set size (`VmHWM` of `/proc/self/status`), in KiB; 0 where
    /// the file does not exist.
    static func peakResidentKiB() -> Int {
        guard let status = try? String(contentsOfFile: "/proc/self/status", encoding: .utf8) else { return 0 }
        for line in status.split(separator: "\n") where line.hasPrefix("VmHWM:") {
            return Int(line.split(separator: " ").dropFirst().first ?? "") ?? 0
        }
        return 0
    }
}
