import ChefsBook
import Foundation
import TernContainer
import TernCore
import TernTestSupport
import Testing
#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

/// A process loading the Chef's Book container (moving a version 1 store from Documents,
/// migrating it, removing the legacy copy) is killed with SIGKILL at random moments; the next
/// load must always end with one version 4 store holding every recipe, and no legacy store.
/// `TERN_CRASH_ITERATIONS` sets the number of kills (6 by default).
@Suite(.serialized) struct ContainerCrashTests {
    /// Each legacy recipe this many times: enough for the move to take a while.
    static let copies = 150

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

    /// Starts the helper on an app home and waits until it says it is about to load.
    static func start(_ root: URL) throws -> Process {
        let process = Process()
        process.executableURL = try helper()
        process.arguments = ["container", root.path]
        let output = Pipe()
        process.standardOutput = output
        process.standardError = FileHandle.nullDevice
        try process.run()
        _ = output.fileHandleForReading.readData(ofLength: 6)
        return process
    }

    @Test func killedLoadsRecoverOnTheNextLoad() async throws {
        let iterations = Int(ProcessInfo.processInfo.environment["TERN_CRASH_ITERATIONS"] ?? "") ?? 6
        let template = try ChefsBookHome()
        let legacy = template.root.appendingPathComponent("Template.sqlite")
        try await template.plantLegacyStore(at: legacy, version: 1, copies: Self.copies)
        let expected = Self.copies * ChefsBook.legacyRecipes.count

        // One full run sets the window the kills fall in.
        let clock = ContinuousClock()
        let full = try ChefsBookHome()
        try FileManager.default.createDirectory(at: full.locations.documents.deletingLastPathComponent(), withIntermediateDirectories: true)
        try FileManager.default.copyItem(at: legacy, to: full.locations.documents)
        let started = clock.now
        let run = try Self.start(full.root)
        run.waitUntilExit()
        let window = clock.now - started
        #expect(run.terminationStatus == 0)
        #expect(try full.currentVersion() == "ChefsBook 4")

        var generator = SplitMix64(state: 7)
        var states: [String: Int] = [:]
        for _ in 0..<iterations {
            let home = try ChefsBookHome()
            let places = home.locations
            try FileManager.default.createDirectory(at: places.documents.deletingLastPathComponent(), withIntermediateDirectories: true)
            try FileManager.default.copyItem(at: legacy, to: places.documents)
            let process = try Self.start(home.root)
            let delay = Double.random(in: 0...1, using: &generator) * Double(window.components.seconds * 1_000
                + window.components.attoseconds / 1_000_000_000_000_000)
            try await Task.sleep(for: .milliseconds(Int(delay)))
            kill(process.processIdentifier, SIGKILL)
            process.waitUntilExit()

            // Never two live copies: when both exist, the move's journal says which one is live.
            let fileManager = FileManager.default
            let hasLegacy = fileManager.fileExists(atPath: places.documents.path)
            let hasCurrent = fileManager.fileExists(atPath: places.current.path)
            let journal = places.current.deletingLastPathComponent().appendingPathComponent(".Recipes.sqlite.tern-move")
            let hasJournal = fileManager.fileExists(atPath: journal.path)
            #expect(hasLegacy || hasCurrent, "one store always exists")
            if hasLegacy && hasCurrent { #expect(hasJournal, "both stores exist without a journal") }
            states["legacy \(hasLegacy), current \(hasCurrent), journal \(hasJournal)", default: 0] += 1

            let container = try home.container(seed: nil, queue: .private)
            try await home.load(container)
            #expect(try home.currentVersion() == "ChefsBook 4")
            #expect(try await count("Recipe", in: container.mainContext) == expected)
            #expect(!fileManager.fileExists(atPath: places.documents.path))
            #expect(try home.leftovers(besides: places.documents).isEmpty)
            #expect(try home.leftovers(besides: places.current).isEmpty)
        }
        #expect(states.values.reduce(0, +) == iterations)
    }

    @Test func aMoveInterruptedAfterTheCopyIsCompleteOnlyRemovesTheLegacyStore() async throws {
        let home = try ChefsBookHome()
        let places = home.locations
        // The state a crash between the move and the clean-up leaves: both stores and the journal.
        try await home.plantLegacyStore(at: places.library, version: 2)
        try await home.load(try home.container(seed: nil))
        try await home.plantLegacyStore(at: places.library, version: 2)
        let journal = places.current.deletingLastPathComponent().appendingPathComponent(".Recipes.sqlite.tern-move")
        let record = #"{"source":"\#(places.library.path)","destination":"\#(places.current.path)","phase":"cleaning","removesSource":true}"#
        try Data(record.utf8).write(to: journal)

        let container = try home.container(seed: nil)
        let events = try await home.load(container)
        #expect(events.contains(.recoveredInterruptedMove(from: places.library, to: places.current, completed: true)))
        #expect(!events.contains { if case .strayLegacyStore = $0 { true } else { false } })
        #expect(!FileManager.default.fileExists(atPath: places.library.path))
        #expect(!FileManager.default.fileExists(atPath: journal.path))
        try await expectRecipes(in: container, titles: ChefsBook.legacyRecipes.map(\.name).sorted())
    }

    @Test func aMoveInterruptedDuringTheCopyStartsAgainFromTheLegacyStore() async throws {
        let home = try ChefsBookHome()
        let places = home.locations
        try await home.plantLegacyStore(at: places.documents, version: 1)
        try FileManager.default.createDirectory(at: places.current.deletingLastPathComponent(), withIntermediateDirectories: true)
        try Data("SQLite format 3\u{0}half a page".utf8).write(to: places.current)
        let journal = places.current.deletingLastPathComponent().appendingPathComponent(".Recipes.sqlite.tern-move")
        let record = #"{"source":"\#(places.documents.path)","destination":"\#(places.current.path)","phase":"copying","removesSource":true}"#
        try Data(record.utf8).write(to: journal)

        let container = try home.container(seed: nil)
        let events = try await home.load(container)
        #expect(events.contains(.recoveredInterruptedMove(from: places.documents, to: places.current, completed: false)))
        #expect(events.contains(.movedStore(from: places.documents, to: places.current)))
        #expect(try home.currentVersion() == "ChefsBook 4")
        #expect(!FileManager.default.fileExists(atPath: places.documents.path))
        try await expectRecipes(in: container, titles: ChefsBook.legacyRecipes.map(\.name).sorted())
    }
}
