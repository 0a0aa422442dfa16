import Foundation
import Testing

@testable import TernTool

@Suite struct ProgressBarTests {
    @Test func displayFollowsTerminalProgressAndQuiet() {
        #expect(ProgressBar.Display(isTerminal: true, forced: false, quiet: false) == .bar(delay: .seconds(1)))
        #expect(ProgressBar.Display(isTerminal: true, forced: true, quiet: false) == .bar(delay: .zero))
        #expect(ProgressBar.Display(isTerminal: false, forced: false, quiet: false) == .hidden)
        #expect(ProgressBar.Display(isTerminal: false, forced: true, quiet: false) == .lines)
        #expect(ProgressBar.Display(isTerminal: true, forced: true, quiet: true) == .hidden)
    }

    @Test func renderShowsBarCountsRateAndTimeLeft() {
        let text = ProgressBar.render(
            title: "exporting", completed: 1_300, total: 2_600, elapsed: .seconds(2), barWidth: 10)
        #expect(text == "exporting [====>     ] 50% 1,300/2,600 650/s ETA 0:02")
        let done = ProgressBar.render(
            title: "exporting", completed: 10, total: 10, elapsed: .seconds(1), barWidth: 4)
        #expect(done == "exporting [====] 100% 10/10 10/s")
        let unknown = ProgressBar.render(
            title: "reading", completed: 12_345, total: 0, elapsed: .zero, barWidth: nil)
        #expect(unknown == "reading 12,345")
    }

    @Test func aKnownFractionDrivesTheBarPercentageAndTimeLeft() {
        // A migration's steps advance by their children's objects: 1 of 4 steps done, but 50 %.
        let text = ProgressBar.render(
            title: "migrating", completed: 1, total: 4, elapsed: .seconds(4), barWidth: 10, fraction: 0.5)
        #expect(text == "migrating [====>     ] 50% 1/4 0/s ETA 0:04")
        let children = Progress(totalUnitCount: 2)
        let step = Progress(totalUnitCount: 100)
        children.addChild(step, withPendingUnitCount: 1)
        step.completedUnitCount = 50
        #expect(children.completedUnitCount == 0 && abs(children.fractionCompleted - 0.25) < 1e-9)
        // Work that reports only a fraction (the container's migration) shows no counts or rate.
        let fractionOnly = ProgressBar.render(
            title: "migrating", completed: 500, total: 1_000, elapsed: .seconds(3), barWidth: 10, counts: false)
        #expect(fractionOnly == "migrating [====>     ] 50% ETA 0:03")
    }

    @Test func numbersAndDurationsAreReadable() {
        #expect(ProgressBar.grouped(0) == "0")
        #expect(ProgressBar.grouped(999) == "999")
        #expect(ProgressBar.grouped(1_000) == "1,000")
        #expect(ProgressBar.grouped(-1_234_567) == "-1,234,567")
        #expect(ProgressBar.clock(0.2) == "0:01")
        #expect(ProgressBar.clock(75) == "1:15")
        #expect(ProgressBar.clock(3_725) == "1:02:05")
    }

    @Test func forcedProgressOffATerminalPrintsPlainLines() {
        let captured = CapturedOutput(terminal: false)
        let progress = Progress(totalUnitCount: 4)
        let bar = ProgressBar(
            title: "copying", progress: progress, display: .lines, output: captured, color: false, width: 80)
        bar.start()
        progress.completedUnitCount = 4
        bar.finish()
        let lines = captured.standardError.split(separator: "\n")
        #expect(lines.last?.hasPrefix("copying 100% 4/4") == true)
        #expect(!captured.standardError.contains("\u{1B}"))
        #expect(captured.standardOutput.isEmpty)
    }

    @Test func shortWorkOnATerminalDrawsNothingAndQuietNeverDraws() {
        for display in [ProgressBar.Display.bar(delay: .seconds(3600)), .hidden] {
            let captured = CapturedOutput(terminal: true)
            let progress = Progress(totalUnitCount: 2)
            let bar = ProgressBar(
                title: "x", progress: progress, display: display, output: captured, color: true, width: 80)
            bar.start()
            progress.completedUnitCount = 2
            bar.finish()
            #expect(captured.standardError.isEmpty)
        }
    }

    @Test(arguments: [true, false])
    func terminalBarRedrawsInPlaceAndColoursOnlyWhenAllowed(color: Bool) {
        let captured = CapturedOutput(terminal: true)
        let progress = Progress(totalUnitCount: 8)
        let bar = ProgressBar(
            title: "migrating", progress: progress, display: .bar(delay: .zero), output: captured, color: color,
            width: 80)
        bar.start()
        progress.completedUnitCount = 8
        bar.finish()
        let text = captured.standardError
        #expect(text.hasPrefix("\r"))
        #expect(text.hasSuffix("\u{1B}[K\n"))
        #expect(text.contains("100% 8/8"))
        #expect(text.contains("\u{1B}[32m[") == color)
        #expect(captured.standardOutput.isEmpty)
    }

    @Test func colourIsUsedOnlyOnATerminalWithoutNoColor() {
        let plain = ToolEnvironment(output: CapturedOutput(terminal: true), variables: ["NO_COLOR": "1"])
        let coloured = ToolEnvironment(output: CapturedOutput(terminal: true), variables: ["NO_COLOR": ""])
        let piped = ToolEnvironment(output: CapturedOutput(terminal: false))
        #expect(!plain.allowsColor(on: .standardError))
        #expect(coloured.allowsColor(on: .standardError))
        #expect(!piped.allowsColor(on: .standardError))
    }
}
