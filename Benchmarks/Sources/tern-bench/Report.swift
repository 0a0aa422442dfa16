import Foundation

/// The figures of one scenario at one size.
struct ScenarioResult: Codable {
    var scenario: String
    var rows: Int
    var tern: SideResult
    var baseline: SideResult
    /// Tern time ÷ baseline time (wall clock).
    var ratio: Double
    /// Tern CPU time ÷ baseline CPU time.
    var cpuRatio: Double
    /// Rows per second through Tern.
    var ternRowsPerSecond: Double
    /// The most ratio the issue allows, if any.
    var targetRatio: Double?
    /// Whether the ratio is within the target; nil without a target.
    var targetMet: Bool?

    init(_ scenario: Scenario, rows: Int, tern: SideResult, baseline: SideResult) {
        self.scenario = scenario.rawValue
        self.rows = rows
        self.tern = tern
        self.baseline = baseline
        ratio = tern.seconds / max(baseline.seconds, 1e-9)
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
    /// Growth of Tern's peak from the small to the large size.
    var ternGrowthMiB: Double
    /// Growth of the baseline's peak from the small to the large size.
    var baselineGrowthMiB: Double
    /// Whether the scenario streams, so that the growth target applies.
    var streams: Bool
    /// Whether the growth is within the issue's 16 MiB; nil for scenarios that do not stream.
    var targetMet: Bool?

    static let allowedGrowthMiB = 16.0

    init(scenario: Scenario, small: (Int, SideResult, SideResult), large: (Int, SideResult, SideResult)) {
        self.scenario = scenario.rawValue
        streams = scenario.streams
        (smallRows, ternSmallMiB, baselineSmallMiB) = (small.0, small.1.peakMiB, small.2.peakMiB)
        (largeRows, ternLargeMiB, baselineLargeMiB) = (large.0, large.1.peakMiB, large.2.peakMiB)
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
                    "scenario", "rows", "Tern s", "SQLite s", "Tern rows/s", "ratio", "CPU ratio",
                    "target", "Tern peak MiB", "SQLite peak MiB",
                ]))
            for result in results {
                let target =
                    result.targetRatio.map { "≤ \(Self.format($0)) \(result.targetMet == true ? "met" : "MISSED")" }
                    ?? "-"
                lines.append(
                    Self.row([
                        result.scenario, String(result.rows), Self.format(result.tern.seconds, 3),
                        Self.format(result.baseline.seconds, 3), String(Int(result.ternRowsPerSecond)),
                        Self.format(result.ratio), Self.format(result.cpuRatio), target,
                        Self.format(result.tern.peakMiB, 1),
                        Self.format(result.baseline.peakMiB, 1),
                    ]))
            }
        }
        if !memory.isEmpty {
            lines += [
                "",
                "peak memory in MiB at two sizes (target for streaming scenarios: growth ≤ \(Int(MemoryResult.allowedGrowthMiB)) MiB)",
            ]
            lines.append(
                Self.row([
                    "scenario", "small rows", "large rows", "Tern small", "Tern large", "growth",
                    "streams", "target", "SQLite small", "SQLite large",
                ]))
            for result in memory {
                lines.append(
                    Self.row([
                        result.scenario, String(result.smallRows), String(result.largeRows),
                        Self.format(result.ternSmallMiB, 1), Self.format(result.ternLargeMiB, 1),
                        Self.format(result.ternGrowthMiB, 1), result.streams ? "yes" : "no",
                        result.targetMet.map { $0 ? "met" : "MISSED" } ?? "-",
                        Self.format(result.baselineSmallMiB, 1), Self.format(result.baselineLargeMiB, 1),
                    ]))
            }
        }
        if !skipped.isEmpty { lines += [""] + skipped }
        if !notYetMeasured.isEmpty {
            lines += ["", "not yet measured:"]
            lines += notYetMeasured.map { "  \($0.scenario): \($0.reason)" }
        }
        return lines.joined(separator: "\n")
    }

    private static let widths = [24, 9, 9, 9, 12, 8, 10, 14, 14, 15]

    private static func row(_ cells: [String]) -> String {
        zip(cells, widths).map { cell, width in
            cell.count >= width ? cell + " " : cell + String(repeating: " ", count: width - cell.count)
        }.joined().trimmingCharacters(in: .whitespaces)
    }

    private static func format(_ value: Double, _ digits: Int = 2) -> String {
        String(format: "%.\(digits)f", value)
    }
}
