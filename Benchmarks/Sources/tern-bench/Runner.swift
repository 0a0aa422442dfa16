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
        executable = (try? FileManager.default.destinationOfSymbolicLink(atPath: "/proc/self/exe"))
            ?? CommandLine.arguments[0]
        emptyStore = folder.appendingPathComponent("empty.sqlite")
        // Tern creates the store, so both sides write into Core Data's layout.
        _ = try SQLiteStore(at: emptyStore, model: EventData.model())
        try RawDatabase(path: emptyStore.path).execute("PRAGMA wal_checkpoint(TRUNCATE)")
    }

    deinit {
        try? FileManager.default.removeItem(at: folder)
    }

    /// Measures both sides of a scenario at a size.
    func measure(_ scenario: Scenario, rows: Int) throws -> (tern: SideResult, baseline: SideResult) {
        (try measure(scenario, side: .tern, rows: rows), try measure(scenario, side: .baseline, rows: rows))
    }

    /// Measures one side of a scenario in a child process.
    private func measure(_ scenario: Scenario, side: Side, rows: Int) throws -> SideResult {
        let store: URL
        if scenario.writes {
            store = folder.appendingPathComponent("\(scenario.rawValue)-\(side.rawValue).sqlite")
            try copyStore(emptyStore, to: store)
        } else {
            store = try filledStore(rows: rows)
        }
        defer { if scenario.writes { removeStore(store) } }
        let report = try runChild(["--child", side.rawValue, "--scenario", scenario.rawValue,
                                   "--rows", String(rows), "--store", store.path])
        return SideResult(seconds: report.timing.seconds, cpuSeconds: report.timing.cpuSeconds, peakMiB: Double(report.peakKiB) / 1024,
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
    static func runChild(_ scenario: Scenario, side: Side, rows: Int, store: String) async throws {
        let url = URL(fileURLWithPath: store)
        var timing: Timing
        switch side {
        case .tern: timing = try await TernSide(url: url, rows: rows).run(scenario)
        case .baseline: timing = try BaselineSide(url: url, rows: rows).run(scenario)
        }
        let peak = peakResidentKiB()
        if scenario.writes { timing.checksum = try BaselineSide.checksumOfRows(at: url) }
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
