import ChefsBook
import Foundation
import TernContainer
import TernCore
import TernTestSupport
import Testing

/// Loading a container that migrates a store reads the store's type once and opens only the
/// connections the work needs (`StoreAccessLog`, counted per file).
@Suite(.serialized) struct StoreAccessTests {
    /// What loading a container did to each file, with the home folder's prefix dropped.
    static func accesses(loading home: ChefsBookHome) async throws -> [String: [StoreAccessLog.Event: Int]] {
        let container = try home.container(seed: nil)
        StoreAccessLog.start()
        let counted: [String: [StoreAccessLog.Event: Int]]
        do {
            _ = try await home.load(container)
            counted = StoreAccessLog.stop()
        } catch {
            _ = StoreAccessLog.stop()
            throw error
        }
        let root = home.root.standardizedFileURL.path
        return Dictionary(
            uniqueKeysWithValues: counted.compactMap { path, events in
                let path = URL(fileURLWithPath: path).standardizedFileURL.path
                return path.hasPrefix(root) ? (String(path.dropFirst(root.count)), events) : nil
            })
    }

    @Test func aStoreMigratedInPlaceIsDetectedOnce() async throws {
        let home = try ChefsBookHome()
        try await home.plantLegacyStore(at: home.locations.current, version: 1)
        let accesses = try await Self.accesses(loading: home)
        let current = String(
            home.locations.current.standardizedFileURL.path.dropFirst(home.root.standardizedFileURL.path.count))
        #expect(accesses[current]?[.typeDetected] == 1)
        // Recovery and metadata, the migration's reads and writes, and the open store.
        #expect((accesses[current]?[.connectionOpened] ?? 0) <= 5)
        #expect(try home.currentVersion() == "ChefsBook 4")
    }

    @Test func aMovedStoreIsDetectedOnceWhereItWasAndNotAgainWhereItGoes() async throws {
        let home = try ChefsBookHome()
        try await home.plantLegacyStore(at: home.locations.documents, version: 1)
        let accesses = try await Self.accesses(loading: home)
        let root = home.root.standardizedFileURL.path
        let legacy = String(home.locations.documents.standardizedFileURL.path.dropFirst(root.count))
        let current = String(home.locations.current.standardizedFileURL.path.dropFirst(root.count))
        #expect(accesses[legacy]?[.typeDetected] == 1)
        // The copy has the source's type: it is not detected again.
        #expect(accesses[current]?[.typeDetected] == nil)
        #expect((accesses[legacy]?[.connectionOpened] ?? 0) <= 3)
        #expect((accesses[current]?[.connectionOpened] ?? 0) <= 6)
        #expect(try home.currentVersion() == "ChefsBook 4")
    }
}
