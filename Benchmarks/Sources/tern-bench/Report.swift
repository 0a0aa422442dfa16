import Foundation

/// The figures of one scenario at one size.
struct ScenarioResult: Codable {
    var scenario: String
    var rows: Int
    var tern: SideResult
    /// The baseline's figures: C for SQLite, `psql` for PostgreSQL.
    var baseline: SideResult
    /// What the baseline is: `C` or `psql`.
    var baselineName: String
    /// The `sqlite3` shell's figures, where the scenario has a shell baseline.
    var shell: SideResult?
    /// Tern time ÷ C baseline time (wall clock).
    var ratio: Double
    /// Tern time ÷ shell time (wall clock), where there is a shell baseline.
    var shellRatio: Double?
    /// Which baseline was faster: ``baselineName`` or `shell`.
    var fasterBaseline: String
    /// Tern CPU time ÷ baseline CPU time.
    var cpuRatio: Double
    /// Rows per second through Tern.
    var ternRowsPerSecond: Double
    /// The most ratio the issue allows, if any.
    var targetRatio: Double?
    /// Whether the ratio is within the target; nil without a target.
    var targetMet: Bool?
    /// The most ratio against the shell the issue allows (#24), if any.
    var shellTargetRatio: Double?
    /// Whether the shell ratio is within its target; nil without a target or a shell run.
    var shellTargetMet: Bool?

    init(_ scenario: Scenario, rows: Int, sides: Sides) {
        let (tern, baseline) = (sides.tern, sides.baseline)
        self.scenario = scenario.rawValue
        self.rows = rows
        self.tern = tern
        self.baseline = baseline
        baselineName = scenario.needsPostgreSQL ? "psql" : "C"
        shell = sides.shell
        ratio = tern.seconds / max(baseline.seconds, 1e-9)
        shellRatio = sides.shell.map { tern.seconds / max($0.seconds, 1e-9) }
        fasterBaseline = (sides.shell?.seconds ?? .infinity) < baseline.seconds ? "shell" : baselineName
        shellTargetRatio = scenario.shellTargetRatio
        if let target = scenario.shellTargetRatio, let shellRatio { shellTargetMet = shellRatio <= target }
        cpuRatio = tern.cpuSeconds / max(baseline.cpuSeconds, 1e-9)
        ternRowsPerSecond = Double(rows) / max(tern.seconds, 1e-9)
        targetRatio = scenario.targetRatio
        targetMet = scenario.targetRatio.map { ratio <= $0 }
    }
}

/// Peak memory of a streaming scenario at two sizes.
struct MemoryResult: Codable {
    var scenario: String
    var smallRows: Int
    var largeRows: Int
    var ternSmallMiB: Double
    var ternLargeMiB: Double
    var baselineSmallMiB: Double
    var baselineLargeMiB: Double
    /// The `sqlite3` shell's peaks, where the scenario has a shell baseline.
    var shellSmallMiB: Double?
    var shellLargeMiB: Double?
    /// Growth of Tern's peak from the small to the large size.
    var ternGrowthMiB: Double
    /// Growth of the baseline's peak from the small to the large size.
    var baselineGrowthMiB: Double
    /// Whether the scenario streams, so that the growth target applies.
    var streams: Bool
    /// Whether the growth is within the issue's 16 MiB; nil for scenarios that do not stream.
    var targetMet: Bool?

    static let allowedGrowthMiB = 16.0

    init(scenario: Scenario, small: (rows: Int, sides: Sides), large: (rows: Int, sides: Sides)) {
        self.scenario = scenario.rawValue
        streams = scenario.streams
        (smallRows, ternSmallMiB, baselineSmallMiB) = (
            small.rows, small.sides.tern.peakMiB, small.sides.baseline.peakMiB
        )
        (largeRows, ternLargeMiB, baselineLargeMiB) = (
            large.rows, large.sides.tern.peakMiB, large.sides.baseline.peakMiB
        )
        (shellSmallMiB, shellLargeMiB) = (small.sides.shell?.peakMiB, large.sides.shell?.peakMiB)
        ternGrowthMiB = ternLargeMiB - ternSmallMiB
        baselineGrowthMiB = baselineLargeMiB - baselineSmallMiB
        targetMet = streams ? ternGrowthMiB <= Self.allowedGrowthMiB : nil
    }
}

/// A scenario of the issue that the run could not measure.
struct Unmeasured: Codable {
    var scenario: String
    var reason: String
}

/// Everything one run measured: printed as a table or written as one JSON document.
struct BenchReport: Codable {
    var date: String
    var cores: Int
    var loadAverage: String
    var rows: Int
    var results: [ScenarioResult] = []
    var memory: [MemoryResult] = []
    var notYetMeasured: [Unmeasured]
    /// Scenarios left out of this run, with the reason (the PostgreSQL rows without a server).
    var skipped: [String] = []

    init(rows: Int) {
        self.rows = rows
        date = ISO8601DateFormatter().string(from: Date())
        cores = ProcessInfo.processInfo.activeProcessorCount
        loadAverage =
            (try? String(contentsOfFile: "/proc/loadavg", encoding: .utf8))
            .map { $0.split(separator: " ").prefix(3).joined(separator: " ") } ?? "unknown"
        notYetMeasured = Scenario.notYetMeasured.map { Unmeasured(scenario: $0.name, reason: $0.reason) }
    }

    /// The figures as one JSON document.
    func json() throws -> String {
        let encoder = JSONEncoder()
        encoder.outputFormatting = [.prettyPrinted, .sortedKeys]
        return String(decoding: try encoder.encode(self), as: UTF8.self)
    }

    /// The figures as text tables.
    func table() -> String {
        var lines = ["tern-bench: \(rows) rows, \(cores) cores, load average \(loadAverage), \(date)", ""]
        if !results.isEmpty {
            lines.append(
                Self.row([
                    "scenario", "rows", "Tern s", "C s", "shell s", "Tern rows/s", "ratio C", "ratio sh", "faster",
                    "CPU ratio", "target", "Tern MiB", "C MiB", "shell MiB",
                ]))
            for result in results {
                let targets = [
                    result.targetRatio.map {
                        "\(result.baselineName)≤\(Self.format($0)) \(result.targetMet == true ? "met" : "MISSED")"
                    },
                    result.shellTargetRatio.map {
                        "sh≤\(Self.format($0)) \(result.shellTargetMet.map { $0 ? "met" : "MISSED" } ?? "unmeasured")"
                    },
                ].compactMap { $0 }
                lines.append(
                    Self.row([
                        result.scenario, String(result.rows), Self.format(result.tern.seconds, 3),
                        Self.format(result.baseline.seconds, 3), result.shell.map { Self.format($0.seconds, 3) } ?? "-",
                        String(Int(result.ternRowsPerSecond)), Self.format(result.ratio),
                        result.shellRatio.map { Self.format($0) } ?? "-", result.fasterBaseline,
                        Self.format(result.cpuRatio), targets.isEmpty ? "-" : targets.joined(separator: ", "),
                        Self.format(result.tern.peakMiB, 1), Self.format(result.baseline.peakMiB, 1),
                        result.shell.map { Self.format($0.peakMiB, 1) } ?? "-",
                    ]))
            }
        }
        if !memory.isEmpty {
            lines += [
                "",
                "peak memory in MiB at two sizes (target for streaming scenarios: growth ≤ \(Int(MemoryResult.allowedGrowthMiB)) MiB)",
            ]
            lines.append(
                Self.row(
                    [
                        "scenario", "small rows", "large rows", "Tern small", "Tern large", "growth",
                        "streams", "target", "C small", "C large", "shell small", "shell large",
                    ], widths: Self.memoryWidths))
            for result in memory {
                lines.append(
                    Self.row(
                        [
                            result.scenario, String(result.smallRows), String(result.largeRows),
                            Self.format(result.ternSmallMiB, 1), Self.format(result.ternLargeMiB, 1),
                            Self.format(result.ternGrowthMiB, 1), result.streams ? "yes" : "no",
                            result.targetMet.map { $0 ? "met" : "MISSED" } ?? "-",
                            Self.format(result.baselineSmallMiB, 1), Self.format(result.baselineLargeMiB, 1),
                            result.shellSmallMiB.map { Self.format($0, 1) } ?? "-",
                            result.shellLargeMiB.map { Self.format($0, 1) } ?? "-",
                        ], widths: Self.memoryWidths))
            }
        }
        if !skipped.isEmpty { lines += [""] + skipped }
        if !notYetMeasured.isEmpty {
            lines += ["", "not yet measured:"]
            lines += notYetMeasured.map { "  \($0.scenario): \($0.reason)" }
        }
        return lines.joined(separator: "\n")
    }

    private static let widths = [24, 10, 9, 9, 9, 12, 9, 9, 7, 10, 28, 9, 9, 9]
    private static let memoryWidths = [24, 11, 11, 11, 11, 8, 8, 8, 9, 9, 12, 12]

    private static func row(_ cells: [String], widths: [Int] = widths) -> String {
        zip(cells, widths + Array(repeating: 10, count: max(0, cells.count - widths.count))).map { cell, width in
            cell.count >= width ? cell + " " : cell + String(repeating: " ", count: width - cell.count)
        }.joined().trimmingCharacters(in: .whitespaces)
    }

    private static func format(_ value: Double, _ digits: Int = 2) -> String {
        String(format: "%.\(digits)f", value)
    }
}
