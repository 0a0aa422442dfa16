import Foundation

/// What a running command uses to talk to the user: a buffer for results, stderr for notes,
/// progress bars, and the environment.
///
/// Results are kept until the command succeeds and only then written to stdout, so nothing
/// reaches stdout after a failure.
///
/// ```swift
/// func run(in context: CommandContext) throws {
///     context.print("3 versions")
///     context.note("reading the model cache")     // stderr, now; not with --quiet
/// }
/// ```
final class CommandContext {
    /// What the run sees of the world.
    let environment: ToolEnvironment
    /// Whether `--quiet` was given: no notes, no progress.
    let isQuiet: Bool
    /// Whether `--progress` was given: progress always shows.
    let forcesProgress: Bool
    /// Results written so far, held back until the command succeeds.
    private(set) var pendingOutput = Data()
    /// A file whose bytes follow ``pendingOutput`` on stdout, for results too large to hold.
    private(set) var pendingOutputFile: URL?
    /// Whether ``pendingOutputFile`` is removed once copied.
    private var removesPendingOutputFile = false

    /// Creates a context.
    ///
    /// - Parameters:
    ///   - environment: What the run sees of the world.
    ///   - quiet: Whether `--quiet` was given.
    ///   - progress: Whether `--progress` was given.
    init(environment: ToolEnvironment, quiet: Bool = false, progress: Bool = false) {
        self.environment = environment
        self.isQuiet = quiet
        self.forcesProgress = progress
    }

    // MARK: - Writing results

    /// Adds text to the results, by default as a line.
    ///
    /// - Parameters:
    ///   - text: The text.
    ///   - terminator: What follows it; a newline unless given.
    func print(_ text: String = "", terminator: String = "\n") {
        pendingOutput.append(contentsOf: Array((text + terminator).utf8))
    }

    /// Adds one JSON document, keys sorted, to the results.
    func printJSON(_ document: JSONValue) {
        print(document.encoded())
    }

    /// Makes a file's contents the rest of the results, copied to stdout when the command succeeds.
    ///
    /// - Parameters:
    ///   - url: A file the command wrote; it is streamed, not loaded whole.
    ///   - removingAfterwards: Whether to remove the file once copied (or once the command failed).
    func printContents(of url: URL, removingAfterwards: Bool = false) {
        pendingOutputFile = url
        removesPendingOutputFile = removingAfterwards
    }

    // MARK: - Talking to the user

    /// Writes a note to stderr at once, unless `--quiet` was given.
    func note(_ line: String) {
        guard !isQuiet else { return }
        environment.output.write(line + "\n", to: .standardError)
    }

    /// Writes a `warning:` line to stderr at once, even with `--quiet`: warnings are about the
    /// command's input, which the user should know.
    func warn(_ line: String) {
        environment.output.write("warning: " + line + "\n", to: .standardError)
    }

    /// A progress bar for some work, shown on stderr according to the terminal, `--progress` and `--quiet`.
    ///
    /// - Parameters:
    ///   - title: What the work is (`exporting`).
    ///   - progress: The progress the work reports to.
    ///   - showsCounts: Whether to draw counts and rate; false when the units only scale a fraction.
    /// - Returns: A started bar; call ``ProgressBar/finish()`` when the work ends.
    func progressBar(_ title: String, for progress: Progress, showsCounts: Bool = true) -> ProgressBar {
        let display = ProgressBar.Display(
            isTerminal: environment.output.isTerminal(.standardError), forced: forcesProgress,
            quiet: isQuiet)
        let bar = ProgressBar(
            title: title, progress: progress, display: display, output: environment.output,
            color: environment.allowsColor(on: .standardError),
            width: Int(environment.variables["COLUMNS"] ?? "") ?? 80, showsCounts: showsCounts)
        bar.start()
        return bar
    }

    // MARK: - Non public

    /// Removes a result file handed over with ``printContents(of:removingAfterwards:)``.
    deinit {
        if removesPendingOutputFile, let pendingOutputFile {
            try? FileManager.default.removeItem(at: pendingOutputFile)
        }
    }

    /// Writes the held-back results to stdout.
    ///
    /// - Throws: ``CommandFailure`` when the result file cannot be read.
    func flush() throws(CommandFailure) {
        environment.output.write(pendingOutput, to: .standardOutput)
        pendingOutput = Data()
        guard let file = pendingOutputFile else { return }
        defer {
            if removesPendingOutputFile { try? FileManager.default.removeItem(at: file) }
            pendingOutputFile = nil
        }
        do {
            let handle = try FileHandle(forReadingFrom: file)
            defer { try? handle.close() }
            while let chunk = try handle.read(upToCount: 1 << 20), !chunk.isEmpty {
                environment.output.write(chunk, to: .standardOutput)
            }
        } catch {
            throw CommandFailure("cannot read the results back from \(file.path): \(error.localizedDescription)")
        }
    }
}
