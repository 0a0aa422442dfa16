import Foundation
import TernTestSupport
import Testing

#if canImport(Glibc)
import Glibc
#endif

/// The runner the end-to-end tests start `tern` with (``ToolRunner/runProgram``, ``ChildProcess``):
/// output, status, environment and folder reach the child, and a child that never ends is killed
/// and fails its test instead of hanging the run.
@Suite struct ToolRunnerTests {
    static let shell = "/bin/sh"

    @Test func outputStatusEnvironmentAndFolderReachTheChild() throws {
        let tmp = try TemporaryDirectory()
        let result = try ToolRunner.runProgram(
            Self.shell, ["-c", "echo \"out $TERN_RUNNER_PROBE\"; pwd; echo err >&2; read line; exit 3"],
            variables: ["TERN_RUNNER_PROBE": "probe"], currentDirectory: tmp.url)
        #expect(result.status == 3)
        let folder = tmp.url.resolvingSymlinksInPath().path
        #expect(result.standardOutput == "out probe\n\(folder)\n")
        #expect(result.standardError == "err\n", "stdin is empty, so read returns at once")
    }

    @Test func aChildThatOutlivesItsTimeoutIsKilledAndReported() throws {
        let error = #expect(throws: ChildProcess.Failure.self) {
            try ToolRunner.runProgram("/bin/sleep", ["60"], timeout: .milliseconds(300))
        }
        #expect(error?.description == "/bin/sleep 60 was still running after 0.3 seconds; it was killed")
    }

    @Test func aChildThatEndedBeforeTheWaitIsReapedAndASignalIsReported() throws {
        let done = try ChildProcess(URL(fileURLWithPath: "/bin/true"), [])
        // Let it end and become a zombie before anyone waits for it.
        let stat = "/proc/\(done.processIdentifier)/stat"
        var zombie = false
        for _ in 0..<10_000 where !zombie {
            zombie = (try? String(contentsOfFile: stat, encoding: .utf8))?.contains(") Z ") == true
            if !zombie { usleep(1_000) }
        }
        #expect(zombie, "/bin/true ended and waits to be reaped")
        try done.waitUntilExit(timeout: .seconds(60))
        #expect(done.terminationReason == .exit && done.terminationStatus == 0)
        #expect(kill(done.processIdentifier, 0) == -1, "the zombie was reaped")

        let killed = try ChildProcess(URL(fileURLWithPath: "/bin/sleep"), ["60"])
        #expect(killed.isRunning)
        kill(killed.processIdentifier, SIGKILL)
        try killed.waitUntilExit(timeout: .seconds(60))
        #expect(killed.terminationReason == .uncaughtSignal && killed.terminationStatus == SIGKILL)
        let shell = try ToolRunner.runProgram(Self.shell, ["-c", "kill -TERM $$"])
        #expect(shell.status == 128 + SIGTERM)
        #expect(throws: ChildProcess.Failure.self) { try ChildProcess(URL(fileURLWithPath: "/nonexistent/tern"), []) }
    }
}
