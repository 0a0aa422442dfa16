import ChefsBook
import Foundation
import TernContainer
import TernCore
import TernTestSupport
import Testing

/// A process loading the Chef's Book container (moving a version 1 store from Documents,
/// migrating it, removing the legacy copy) is killed with SIGKILL at random moments (see
/// `CrashHarness`: `TERN_CRASH_ITERATIONS`, `TERN_CRASH_LONG`, `TERN_CRASH_SEED`); the next load
/// must always end with one version 4 store holding every recipe, and no legacy store.
@Suite(.serialized) struct ContainerCrashTests {
    @Test func killedLoadsRecoverOnTheNextLoad() async throws {
        let helper = try #require(CrashHarness.builtExecutable(named: "tern-crash-helper"), "build the package first")
        let copies = CrashHarness.isLong ? 2_000 : 150
        let template = try ChefsBookHome()
        let legacy = template.root.appendingPathComponent("Template.sqlite")
        try await template.plantLegacyStore(at: legacy, version: 1, copies: copies)
        let expected = copies * ChefsBook.legacyRecipes.count
        let home = try ChefsBookHome()
        let places = home.locations
        let fileManager = FileManager.default

        let report = try await CrashHarness(name: "container move", iterations: CrashHarness.iterations(short: 5)).run(
            reset: {
                for folder in ["Documents", "Library", "Shared"] {
                    try? fileManager.removeItem(at: home.root.appendingPathComponent(folder))
                }
                try fileManager.createDirectory(
                    at: places.documents.deletingLastPathComponent(), withIntermediateDirectories: true)
                try fileManager.copyItem(at: legacy, to: places.documents)
            },
            launch: { try CrashHarness.launch(helper, ["container", home.root.path]) },
            check: { _ in
                // Never two live copies: when both exist, the move's journal says which one is live.
                let hasLegacy = fileManager.fileExists(atPath: places.documents.path)
                let hasCurrent = fileManager.fileExists(atPath: places.current.path)
                let hasJournal = fileManager.fileExists(atPath: home.moveJournal.path)
                guard hasLegacy || hasCurrent else { throw CrashHarness.Failure("no store is left") }
                guard !(hasLegacy && hasCurrent) || hasJournal else {
                    throw CrashHarness.Failure("both stores exist without a journal")
                }
                let state = !hasCurrent ? "not moved" : hasLegacy ? "moving" : hasJournal ? "cleaning" : "moved"

                let container = try home.container(seed: nil, queue: .private)
                try await home.load(container)
                guard try home.currentVersion() == "ChefsBook 4",
                    try await count("Recipe", in: container.mainContext) == expected,
                    !fileManager.fileExists(atPath: places.documents.path),
                    try home.leftovers(besides: places.documents).isEmpty,
                    try home.leftovers(besides: places.current).isEmpty
                else {
                    throw CrashHarness.Failure(
                        "after the \(state) state, the next load did not end with one complete store")
                }
                return state
            })
        #expect(report.finishedState == "moved")
    }

    @Test func aMoveInterruptedAfterTheCopyIsCompleteOnlyRemovesTheLegacyStore() async throws {
        let home = try ChefsBookHome()
        let places = home.locations
        // The state a crash between the move and the clean-up leaves: both stores and the journal.
        try await home.plantLegacyStore(at: places.library, version: 2)
        try await home.load(try home.container(seed: nil))
        try await home.plantLegacyStore(at: places.library, version: 2)
        try home.writeMoveJournal(from: places.library, phase: "cleaning")

        let container = try home.container(seed: nil)
        let events = try await home.load(container)
        #expect(events.contains(.recoveredInterruptedMove(from: places.library, to: places.current, completed: true)))
        #expect(!events.contains { if case .strayLegacyStore = $0 { true } else { false } })
        #expect(!FileManager.default.fileExists(atPath: places.library.path))
        #expect(!FileManager.default.fileExists(atPath: home.moveJournal.path))
        try await expectRecipes(in: container, titles: ChefsBook.legacyRecipes.map(\.name).sorted())
    }

    @Test func aMoveInterruptedDuringTheCopyStartsAgainFromTheLegacyStore() async throws {
        let home = try ChefsBookHome()
        let places = home.locations
        try await home.plantLegacyStore(at: places.documents, version: 1)
        try FileManager.default.createDirectory(
            at: places.current.deletingLastPathComponent(), withIntermediateDirectories: true)
        try Data("SQLite format 3\u{0}half a page".utf8).write(to: places.current)
        try home.writeMoveJournal(from: places.documents, phase: "copying")

        let container = try home.container(seed: nil)
        let events = try await home.load(container)
        #expect(
            events.contains(.recoveredInterruptedMove(from: places.documents, to: places.current, completed: false)))
        #expect(events.contains(.movedStore(from: places.documents, to: places.current)))
        #expect(try home.currentVersion() == "ChefsBook 4")
        #expect(!FileManager.default.fileExists(atPath: places.documents.path))
        try await expectRecipes(in: container, titles: ChefsBook.legacyRecipes.map(\.name).sorted())
    }
}
