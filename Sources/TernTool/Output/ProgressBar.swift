import Foundation
import Synchronization

/// A progress display on stderr, driven by a Foundation `Progress` that the work updates.
///
/// The library layer reports through `Progress` (`totalUnitCount`, `completedUnitCount`), as Core
/// Data's migration manager does; the bar samples it at most four times a second and draws counts,
/// rate and time left. It shows on a terminal once the work has taken a second, at once with
/// `--progress` (as plain lines when stderr is not a terminal), and never with `--quiet`.
///
/// ```swift
/// let progress = Progress(totalUnitCount: Int64(rows))
/// let bar = context.progressBar("exporting", for: progress)
/// defer { bar.finish() }
/// for row in rows { …; progress.completedUnitCount += 1 }
/// ```
final class ProgressBar: Sendable {
    /// How progress is shown.
    enum Display: Sendable, Hashable {
        /// Not at all.
        case hidden
        /// A bar redrawn in place, after the work has lasted `delay`.
        case bar(delay: Duration)
        /// A plain line now and then, for logs.
        case lines

        /// The display the conventions call for.
        ///
        /// - Parameters:
        ///   - isTerminal: Whether stderr is a terminal.
        ///   - forced: Whether `--progress` was given.
        ///   - quiet: Whether `--quiet` was given.
        init(isTerminal: Bool, forced: Bool, quiet: Bool) {
            if quiet {
                self = .hidden
            } else if isTerminal {
                self = .bar(delay: forced ? .zero : .seconds(1))
            } else {
                self = forced ? .lines : .hidden
            }
        }
    }

    private struct State {
        var started: ContinuousClock.Instant
        var lastLine: ContinuousClock.Instant?
        var lastText = ""
        var hasDrawn = false
        var isFinished = false
    }

    private let title: String
    private let progress: Progress
    private let display: Display
    private let output: any OutputSink
    private let color: Bool
    private let width: Int
    /// Whether counts and rate are drawn: false for work that reports only a fraction.
    private let showsCounts: Bool
    private let state: Mutex<State>

    /// Creates a bar; nothing is drawn until ``start()``.
    ///
    /// - Parameters:
    ///   - title: What the work is.
    ///   - progress: What the work reports to.
    ///   - display: How to show it.
    ///   - output: Where stderr goes.
    ///   - color: Whether colour is allowed.
    ///   - width: The terminal's width in columns.
    ///   - showsCounts: Whether to draw the counts and the rate; false when the progress's units
    ///     are only a scale for a fraction (the bar, the percentage and the time left remain).
    init(
        title: String, progress: Progress, display: Display, output: any OutputSink, color: Bool,
        width: Int, showsCounts: Bool = true
    ) {
        self.title = title
        self.progress = progress
        self.display = display
        self.output = output
        self.color = color
        self.width = max(width, 40)
        self.showsCounts = showsCounts
        self.state = Mutex(State(started: .now))
    }

    // MARK: - Running

    /// Starts sampling the progress four times a second on a background thread.
    func start() {
        guard display != .hidden else { return }
        let thread = Thread { [self] in
            while !state.withLock({ $0.isFinished }) {
                Thread.sleep(forTimeInterval: 0.25)
                draw(final: false)
            }
        }
        thread.start()
    }

    /// Draws the final state, if anything was shown, and stops sampling.
    func finish() {
        draw(final: true)
    }

    // MARK: - Rendering

    /// One line of progress text, without colour or cursor control.
    ///
    /// - Parameters:
    ///   - title: What the work is.
    ///   - completed: Units done.
    ///   - total: Units in all; zero or less when unknown.
    ///   - elapsed: Time since the work began.
    ///   - barWidth: Columns for the bar, or nil for no bar.
    ///   - fraction: The fraction done, when the progress knows better than `completed / total`
    ///     (a migration's steps advance by their children's objects); it drives the bar, the
    ///     percentage and the time left.
    ///   - counts: Whether to show the counts and the rate.
    /// - Returns: For example `exporting [=====>    ] 52% 1,300/2,500 650/s ETA 0:02`.
    static func render(
        title: String, completed: Int64, total: Int64, elapsed: Duration, barWidth: Int?, fraction known: Double? = nil,
        counts: Bool = true
    ) -> String {
        let seconds = Double(elapsed.components.seconds) + Double(elapsed.components.attoseconds) / 1e18
        let rate = seconds > 0 ? Double(completed) / seconds : 0
        var parts = [title]
        var fraction = 0.0
        if total > 0 {
            fraction = min(max(known ?? Double(completed) / Double(total), 0), 1)
            if let barWidth {
                let filled = Int(fraction * Double(barWidth))
                let head = filled < barWidth ? ">" : ""
                parts.append(
                    "[" + String(repeating: "=", count: max(filled - head.count, 0)) + head
                        + String(repeating: " ", count: barWidth - max(filled, head.count)) + "]")
            }
            parts.append("\(Int(fraction * 100))%")
            if counts { parts.append("\(grouped(completed))/\(grouped(total))") }
        } else if counts {
            parts.append(grouped(completed))
        }
        if counts, seconds > 0 { parts.append("\(grouped(Int64(rate.rounded())))/s") }
        if total > 0, seconds > 0, fraction > 0, fraction < 1 {
            parts.append("ETA " + clock(seconds * (1 - fraction) / fraction))
        }
        return parts.joined(separator: " ")
    }

    /// An integer with thousands separators: `12,345`.
    static func grouped(_ value: Int64) -> String {
        let digits = String(value.magnitude)
        var result = ""
        for (offset, digit) in digits.enumerated() {
            if offset > 0, (digits.count - offset) % 3 == 0 { result.append(",") }
            result.append(digit)
        }
        return value < 0 ? "-" + result : result
    }

    /// A duration as `m:ss` or `h:mm:ss`.
    static func clock(_ seconds: Double) -> String {
        let total = Int(seconds.rounded(.up))
        let (hours, minutes, secs) = (total / 3600, total / 60 % 60, total % 60)
        let paddedSeconds = secs < 10 ? "0\(secs)" : "\(secs)"
        if hours > 0 { return "\(hours):\(minutes < 10 ? "0" : "")\(minutes):\(paddedSeconds)" }
        return "\(minutes):\(paddedSeconds)"
    }

    // MARK: - Non public

    /// Draws the current state if it is due.
    private func draw(final: Bool) {
        let completed = progress.completedUnitCount
        let total = progress.totalUnitCount
        let fraction = progress.fractionCompleted
        let now = ContinuousClock.now
        state.withLock { state in
            guard !state.isFinished else { return }
            if final { state.isFinished = true }
            let elapsed = now - state.started
            switch display {
            case .hidden:
                return
            case .bar(let delay):
                guard state.hasDrawn || elapsed >= delay else { return }
                let barWidth = max(width - title.count - 45, 10)
                var text = Self.render(
                    title: title, completed: completed, total: total, elapsed: elapsed, barWidth: barWidth,
                    fraction: fraction, counts: showsCounts)
                if color, let open = text.firstIndex(of: "["), let close = text.firstIndex(of: "]") {
                    text.replaceSubrange(
                        open...close, with: "\u{1B}[32m" + text[open...close] + "\u{1B}[0m")
                }
                state.hasDrawn = true
                output.write("\r" + text + "\u{1B}[K" + (final ? "\n" : ""), to: .standardError)
            case .lines:
                if !final, let last = state.lastLine, now - last < .seconds(1) { return }
                let text = Self.render(
                    title: title, completed: completed, total: total, elapsed: elapsed, barWidth: nil,
                    fraction: fraction, counts: showsCounts)
                guard final || text != state.lastText else { return }
                state.lastLine = now
                state.lastText = text
                output.write(text + "\n", to: .standardError)
            }
        }
    }
}
