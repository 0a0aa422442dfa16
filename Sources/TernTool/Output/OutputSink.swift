public import Foundation
import Synchronization

/// One of the two text streams a command writes to.
public enum OutputChannel: Sendable, Hashable {
    /// Results: what scripts read.
    case standardOutput
    /// Errors, notes and progress: what people read.
    case standardError
}

/// Where `tern` writes its text: the process's stdout and stderr, or a buffer in tests.
///
/// ```swift
/// let captured = CapturedOutput()
/// let status = await Tern.run(["model", path, "--json"], environment: ToolEnvironment(output: captured))
/// captured.standardOutput   // the JSON document
/// ```
public protocol OutputSink: Sendable {
    /// Writes bytes to a channel.
    ///
    /// - Parameters:
    ///   - data: The bytes, UTF-8 text.
    ///   - channel: Where they go.
    func write(_ data: Data, to channel: OutputChannel)

    /// Whether a channel is an interactive terminal (progress bars are drawn only there).
    func isTerminal(_ channel: OutputChannel) -> Bool
}

extension OutputSink {
    /// Writes text to a channel as UTF-8.
    func write(_ text: String, to channel: OutputChannel) {
        write(Data(text.utf8), to: channel)
    }
}

/// The process's own stdout and stderr.
public struct StandardOutputSink: OutputSink {
    /// Creates the sink.
    public init() {}

    /// Writes bytes to the process's stdout or stderr.
    public func write(_ data: Data, to channel: OutputChannel) {
        switch channel {
        case .standardOutput: FileHandle.standardOutput.write(data)
        case .standardError: FileHandle.standardError.write(data)
        }
    }

    /// Whether the process's stdout or stderr is a terminal.
    public func isTerminal(_ channel: OutputChannel) -> Bool {
        isatty(channel == .standardOutput ? 1 : 2) == 1
    }
}

/// A sink that keeps everything written, for running commands in-process in tests.
///
/// ```swift
/// let captured = CapturedOutput(terminal: true)
/// _ = await Tern.run(["--version"], environment: ToolEnvironment(output: captured))
/// captured.standardOutput   // "tern 0.1.0\n"
/// ```
public final class CapturedOutput: OutputSink {
    private let buffers = Mutex<(output: Data, error: Data)>((Data(), Data()))
    private let terminal: Bool

    /// Creates an empty capture.
    ///
    /// - Parameter terminal: Whether the captured channels claim to be terminals.
    public init(terminal: Bool = false) {
        self.terminal = terminal
    }

    /// Everything written to stdout, as text.
    public var standardOutput: String {
        buffers.withLock { String(decoding: $0.output, as: UTF8.self) }
    }

    /// Everything written to stderr, as text.
    public var standardError: String {
        buffers.withLock { String(decoding: $0.error, as: UTF8.self) }
    }

    /// Appends bytes to the channel's buffer.
    public func write(_ data: Data, to channel: OutputChannel) {
        buffers.withLock { buffers in
            switch channel {
            case .standardOutput: buffers.output.append(data)
            case .standardError: buffers.error.append(data)
            }
        }
    }

    /// Whether the capture claims to be a terminal.
    public func isTerminal(_ channel: OutputChannel) -> Bool { terminal }
}
