import Foundation
import TernBinaryStore
import TernCore
import TernTestSupport
import TernXMLStore
import Testing

#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

/// A process saving a store over and over is killed at random moments; the file must always
/// hold one complete version, old or new.
@Suite struct CrashTests {
    /// `tern-crash-helper`, built beside the test binary.
    static func helper() throws -> URL {
        let candidates = [
            URL(fileURLWithPath: CommandLine.arguments[0]).deletingLastPathComponent(),
            Bundle.main.bundleURL, Bundle.main.bundleURL.deletingLastPathComponent(),
        ]
        let found = candidates.map { $0.appendingPathComponent("tern-crash-helper") }
            .first { FileManager.default.isExecutableFile(atPath: $0.path) }
        return try #require(found, "tern-crash-helper is not next to the test binary; build the package first")
    }

    /// Runs the helper and waits until it has opened the store; it saves `saves` times (0: until killed).
    ///
    /// Its output goes to a file in `output`, not to a pipe, and it is waited for with
    /// `waitpid` (``ChildProcess``): a child killed the instant it started never hangs the test.
    static func start(_ format: AtomicFormat, _ url: URL, saves: Int, output: TemporaryDirectory) throws -> ChildProcess
    {
        let process = try ChildProcess(
            try helper(), [format == .xml ? "xml" : "binary", url.path, String(saves)],
            standardOutput: output.path("helper-\(UUID().uuidString).out").path)
        _ = try process.firstLine(timeout: ChildProcess.defaultTimeout)
        return process
    }

    /// The crash helper's model (`AtomicSaves`).
    static let counterModel = ManagedObjectModel(entities: [
        EntityDescription(
            name: "Counter",
            attributes: [
                AttributeDescription(name: "generation", type: .integer64),
                AttributeDescription(name: "payload", type: .string),
            ])
    ])

    /// The generation of every row in the file: one value in a complete version.
    static func generations(_ format: AtomicFormat, _ url: URL) throws -> (Set<Int64>, Int) {
        let contents = try format.decode(Data(contentsOf: url), url.path, counterModel)
        var generations: Set<Int64> = []
        for row in contents.rows {
            guard case .integer(let generation)? = row.attributes["generation"] else { continue }
            generations.insert(generation)
            let payload = row.attributes["payload"]
            #expect(payload == (generation == 0 ? nil : .string(String(repeating: "g\(generation) ", count: 100))))
        }
        return (generations, contents.rows.count)
    }

    @Test(arguments: AtomicFormat.all)
    func aKilledSaveLeavesTheOldOrTheNewStore(format: AtomicFormat) async throws {
        let tmp = try TemporaryDirectory()
        let url = tmp.path("store.\(format.fileExtension)")
        let outputs = try TemporaryDirectory()
        let first = try Self.start(format, url, saves: 1, output: outputs)
        first.waitUntilExit()
        #expect(first.terminationStatus == 0)
        var last: Int64 = 0
        var generator = SplitMix64(state: 2026)
        var interrupted = 0
        for iteration in 0..<100 {
            let process = try Self.start(format, url, saves: 0, output: outputs)
            usleep(UInt32(generator.next() % 40_000))
            kill(process.processIdentifier, SIGKILL)
            process.waitUntilExit()
            #expect(
                process.terminationReason == .uncaughtSignal, "iteration \(iteration): the helper stopped by itself")

            let (generations, count) = try Self.generations(format, url)
            #expect(generations.count == 1 && count == 200, "iteration \(iteration): a half-written store")
            let generation = generations.first ?? -1
            #expect(generation >= last, "iteration \(iteration): the store went back to an older version")
            last = generation
            // Opening cleans up the temporary file a kill may have left.
            if try fileNames(in: tmp.url).count > 1 { interrupted += 1 }
            _ = try format.open(url, Self.counterModel, false)
            #expect(try fileNames(in: tmp.url) == ["store.\(format.fileExtension)"])
        }
        print("\(format): \(last) saves completed in 100 runs, \(interrupted) killed while writing")
        let final = try Self.start(format, url, saves: 1, output: outputs)
        final.waitUntilExit()
        #expect(final.terminationStatus == 0)
        #expect(try Self.generations(format, url).0 == [last + 1])
    }
}

extension AtomicFormat: Equatable {
    static func == (lhs: Self, rhs: Self) -> Bool { lhs.name == rhs.name }
}
