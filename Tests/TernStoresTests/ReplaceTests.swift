import Foundation
import Synchronization
import TernCore
import TernSQLite
import TernStores
import TernTestSupport
import Testing

@Suite struct ReplaceTests {
    @Test(arguments: fileKinds)
    func replacingAnAddedStoreReopensItWithTheNewContents(kind: StoreKind) async throws {
        let folder = try TemporaryDirectory()
        let source = try await filledStore(kind, in: folder, name: "seed")
        try FileManager.default.createDirectory(
            at: folder.path(".seed_SUPPORT/_EXTERNAL_DATA"), withIntermediateDirectories: true)
        try Data("external".utf8).write(to: folder.path(".seed_SUPPORT/_EXTERNAL_DATA/B"))
        let destinationURL = folder.path("live")
        let coordinator = PersistentStoreCoordinator(model: ConformanceModel.model)
        let destination = try StoreFiles.open(at: destinationURL, kind: kind, model: ConformanceModel.model)
        try await coordinator.addStore(destination, configuration: nil)

        let reopened = try #require(
            try await coordinator.replaceStore(at: destinationURL, withStoreAt: source.location ?? folder.url))
        #expect(coordinator.stores.count == 1)
        #expect(coordinator.stores.first === reopened)
        #expect(try await contents(of: reopened) == expectedContents())
        #expect(reopened.identifier == source.identifier)
        #expect(try Data(contentsOf: folder.path(".live_SUPPORT/_EXTERNAL_DATA/B")) == Data("external".utf8))
        #expect(try await contents(of: source) == expectedContents())
    }

    @Test(arguments: fileKinds, fileKinds)
    func replacingAFileNotAddedCopiesAcrossTypes(source: StoreKind, destination: StoreKind) async throws {
        let folder = try TemporaryDirectory()
        let seed = try await filledStore(source, in: folder, name: "seed")
        let target = folder.path("target")
        _ = try StoreFiles.open(at: target, kind: destination, model: ConformanceModel.model)
        let coordinator = PersistentStoreCoordinator(model: ConformanceModel.model)
        #expect(try await coordinator.replaceStore(at: target, withStoreAt: folder.path("seed")) == nil)
        #expect(try StoreFiles.kind(ofStoreAt: target) == source)
        let copy = try StoreFiles.open(at: target, model: ConformanceModel.model, isReadOnly: true)
        #expect(copy.identifier == seed.identifier)
        #expect(try await contents(of: copy) == expectedContents())
        if source != .sqlite { #expect(!FileManager.default.fileExists(atPath: target.path + "-wal")) }
    }

    @Test func aPlainCopyOfAWALStoreLosesRowsThatTheBackupKeeps() async throws {
        let folder = try TemporaryDirectory()
        let store = try SQLiteStore(at: folder.path("wal.sqlite"), model: ConformanceModel.model)
        _ = try await store.save(StoreChangeSet(inserted: SampleRows.rows()))
        // The rows sit in the -wal file while the store stays open.
        #expect(FileManager.default.fileExists(atPath: folder.path("wal.sqlite-wal").path))
        try FileManager.default.copyItem(at: folder.path("wal.sqlite"), to: folder.path("plain.sqlite"))
        // Even the tables are still in the -wal file: the copy is not a store, or an empty one.
        let plainPeople: Int
        do {
            let plain = try SQLiteStore(
                at: folder.path("plain.sqlite"), model: ConformanceModel.model, configuration: .readOnly)
            plainPeople = try await plain.count(StoreFetchRequest(entityName: "Person"))
        } catch {
            plainPeople = 0
        }
        #expect(plainPeople == 0)

        try StoreFiles.replace(at: folder.path("backup.sqlite"), withStoreAt: folder.path("wal.sqlite"))
        let backup = try SQLiteStore(
            at: folder.path("backup.sqlite"), model: ConformanceModel.model, configuration: .readOnly)
        #expect(try await contents(of: backup) == expectedContents())
        _ = store
    }

    @Test func copiesWhileAnotherConnectionWritesNeverLoseACommittedRow() async throws {
        let folder = try TemporaryDirectory()
        let sourceURL = folder.path("busy.sqlite")
        let writer = try SQLiteStore(at: sourceURL, model: ConformanceModel.model)
        let committed = Atomic<Int>(0)
        let stop = Atomic<Bool>(false)
        let writing = Task {
            var key: Int64 = 0
            while !stop.load(ordering: .acquiring) {
                key += 1
                let row = StoreRow(
                    reference: RowReference(entityName: "Pet", primaryKey: key),
                    attributes: ["name": .string("pet \(key)")])
                try await writer.save(StoreChangeSet(inserted: [row]))
                committed.store(Int(key), ordering: .releasing)
                // A task that only hops to an actor and back can keep a thread of the
                // cooperative pool from the test's own task; a sleep hands it back.
                try await Task.sleep(for: .milliseconds(1))
            }
        }
        var checked: [(before: Int, copied: Int)] = []
        for round in 0..<12 {
            while committed.load(ordering: .acquiring) < (round + 1) * 5 { try await Task.sleep(for: .milliseconds(2)) }
            let before = committed.load(ordering: .acquiring)
            let copyURL = folder.path("copy.sqlite")
            if round % 2 == 0 {
                try StoreFiles.replace(at: copyURL, withStoreAt: sourceURL)
            } else {
                let coordinator = PersistentStoreCoordinator(model: ConformanceModel.model)
                try await coordinator.replaceStore(at: copyURL, withStoreAt: sourceURL)
            }
            let copy = try SQLiteStore(at: copyURL, model: ConformanceModel.model, configuration: .readOnly)
            let copied = try await copy.count(StoreFetchRequest(entityName: "Pet"))
            checked.append((before, copied))
        }
        stop.store(true, ordering: .releasing)
        try await writing.value
        for check in checked { #expect(check.copied >= check.before) }
        #expect(checked.count == 12)
    }
}
