import ChefsBook
import Foundation
import TernContainer
import TernCore
import TernTestSupport
import Testing

/// A legacy store that cannot be removed (its folder is read-only) no longer makes every load
/// fail: the store is loaded from its new location, the legacy copy is kept and reported once
/// (`legacyStoreNotRemoved`), and later loads see it as a stray without moving it again (issue #7).
@Suite(.serialized, .enabled(if: ReadOnlyFolder.isSupported, "folders cannot be made read-only here"))
struct UndeletableLegacyStoreTests {
    @Test func aLegacyStoreInAReadOnlyFolderIsKeptAndReportedOnce() async throws {
        let home = try ChefsBookHome()
        let places = home.locations
        try await home.plantLegacyStore(at: places.documents, version: 1)
        let folder = places.documents.deletingLastPathComponent()
        let before = InterruptedWrite.files(of: places.documents)
        try #require(ReadOnlyFolder.lock(folder))
        defer { ReadOnlyFolder.unlock(folder) }

        let container = try home.container(seed: nil)
        let events = try await home.load(container)
        #expect(events.contains(.movedStore(from: places.documents, to: places.current)))
        let kept = events.filter {
            if case .legacyStoreNotRemoved(places.documents, places.current, _) = $0 { true } else { false }
        }
        #expect(kept.count == 1)
        #expect(
            !FileManager.default.fileExists(atPath: home.moveJournal.path), "the move is over: no journal to replay")
        #expect(try home.currentVersion() == "ChefsBook 4")
        try await expectRecipes(in: container, titles: ChefsBook.legacyRecipes.map(\.name).sorted())
        #expect(InterruptedWrite.files(of: places.documents) == before, "the legacy store is left as it was")

        // The next load uses the current store and reports the legacy copy as a stray, nothing more.
        let again = try await home.load(try home.container(seed: nil))
        #expect(again.contains(.strayLegacyStore(at: places.documents, current: places.current)))
        #expect(!again.contains { if case .legacyStoreNotRemoved = $0 { true } else { false } })
        #expect(!again.contains { if case .movedStore = $0 { true } else { false } })
    }

    @Test func anInterruptedCleanUpOfAnUndeletableLegacyStoreFinishes() async throws {
        let home = try ChefsBookHome()
        let places = home.locations
        try await home.plantLegacyStore(at: places.library, version: 2)
        try await home.load(try home.container(seed: nil))
        try await home.plantLegacyStore(at: places.library, version: 2)
        try home.writeMoveJournal(from: places.library, phase: "cleaning")
        let folder = places.library.deletingLastPathComponent()
        try #require(ReadOnlyFolder.lock(folder))
        defer { ReadOnlyFolder.unlock(folder) }

        let container = try home.container(seed: nil)
        let events = try await home.load(container)
        #expect(events.contains(.recoveredInterruptedMove(from: places.library, to: places.current, completed: true)))
        #expect(
            events.contains {
                if case .legacyStoreNotRemoved(places.library, places.current, _) = $0 { true } else { false }
            })
        #expect(FileManager.default.fileExists(atPath: places.library.path))
        #expect(!FileManager.default.fileExists(atPath: home.moveJournal.path))
        try await expectRecipes(in: container, titles: ChefsBook.legacyRecipes.map(\.name).sorted())
    }
}
