// tern-bench: Tern against the SQLite C API, scenario by scenario, in one run.
// See Benchmarks/README.md.
import Foundation
import TernPostgreSQL

/// The whole run; returns the exit status.
func runBenchmark() async -> Int32 {
    let options: BenchOptions
    do {
        options = try BenchOptions(arguments: Array(CommandLine.arguments.dropFirst()))
    } catch let failure as BenchFailure {
        FileHandle.standardError.write(Data((failure.description + "\n").utf8))
        return failure.isHelp ? 0 : 2
    } catch {
        return 2
    }
    do {
        if let side = options.childSide {
            guard let store = options.store, let scenario = options.selectedScenarios.first,
                options.scenarios.count == 1
            else {
                throw BenchFailure("a child needs one --scenario and --store")
            }
            let input = ScenarioInput(
                store: URL(fileURLWithPath: PostgreSQLLocation.isURL(store) || store.contains("=") ? "." : store),
                location: store, rows: options.rows, file: options.input.map { URL(fileURLWithPath: $0) })
            try await Runner.runChild(scenario, side: side, input: input)
            return 0
        }
        let report = try measureAll(options)
        print(options.json ? try report.json() : report.table())
        let mismatches = report.results.filter {
            $0.tern.checksum != $0.baseline.checksum
                || ($0.shell.map { $0.checksum } ?? $0.tern.checksum) != $0.tern.checksum
        }
        for result in mismatches {
            FileHandle.standardError.write(
                Data(
                    """
                    \(result.scenario): Tern, the C baseline and the shell disagree (checksums \(result.tern.checksum), \
                    \(result.baseline.checksum) and \(result.shell.map { String($0.checksum) } ?? "-")): the sides did \
                    not do the same work.\n
                    """.utf8))
        }
        return mismatches.isEmpty ? 0 : 1
    } catch {
        FileHandle.standardError.write(Data("tern-bench: \(error)\n".utf8))
        return 1
    }
}

/// Measures the selected scenarios at the selected size, and memory at two sizes with `--memory`.
func measureAll(_ options: BenchOptions) throws -> BenchReport {
    let runner = try Runner()
    var report = BenchReport(rows: options.rows)
    func progress(_ text: String) {
        FileHandle.standardError.write(Data("… \(text)\n".utf8))
    }
    for scenario in options.selectedScenarios {
        if scenario.needsPostgreSQL, PostgreSQLScenario.server == nil {
            if !report.skipped.contains(PostgreSQLScenario.skipNotice) {
                report.skipped.append(PostgreSQLScenario.skipNotice)
                progress(PostgreSQLScenario.skipNotice)
            }
            continue
        }
        if scenario.hasShellBaseline, SQLiteShell.program == nil, !report.skipped.contains(SQLiteShell.skipNotice) {
            report.skipped.append(SQLiteShell.skipNotice)
            progress(SQLiteShell.skipNotice)
        }
        progress("\(scenario.rawValue) at \(options.rows) rows")
        let sides = try runner.measure(scenario, rows: options.rows)
        let result = ScenarioResult(scenario, rows: options.rows, sides: sides)
        report.results.append(result)
        let (tern, baseline) = (sides.tern, sides.baseline)
        progress(
            String(
                format: "%@: Tern %.3f s, C %.3f s, ratio %.2f, peaks %.1f / %.1f MiB", scenario.rawValue,
                tern.seconds, baseline.seconds, result.ratio, tern.peakMiB, baseline.peakMiB)
                + (sides.shell.map {
                    String(
                        format: "; shell %.3f s, ratio %.2f, peak %.1f MiB", $0.seconds, result.shellRatio ?? 0,
                        $0.peakMiB)
                } ?? ""))
    }
    if options.memory {
        let small = min(100_000, options.rows)
        for scenario in options.selectedScenarios where scenario.tracksMemory {
            guard let large = report.results.first(where: { $0.scenario == scenario.rawValue }) else { continue }
            var smaller = Sides(tern: large.tern, baseline: large.baseline, shell: large.shell)
            if small < options.rows {
                progress("\(scenario.rawValue) memory at \(small) rows")
                smaller = try runner.measure(scenario, rows: small)
            }
            report.memory.append(
                MemoryResult(
                    scenario: scenario, small: (small, smaller),
                    large: (options.rows, Sides(tern: large.tern, baseline: large.baseline, shell: large.shell))))
        }
    }
    return report
}

exit(await runBenchmark())
