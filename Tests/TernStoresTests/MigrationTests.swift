import Foundation
import TernCore
import TernSQLite
import TernStores
import TernTestSupport
import Testing

@Suite struct MigrationTests {
    static let pairs: [(StoreKind, StoreKind)] = {
        let all = fileKinds + [.inMemory]
        return all.flatMap { source in all.map { (source, $0) } }
    }()

    @Test(arguments: pairs)
    func migrationKeepsRowsKeysRelationshipsAndMetadata(source: StoreKind, destination: StoreKind) async throws {
        let folder = try TemporaryDirectory()
        let store = try await filledStore(source, in: folder)
        var metadata = try await store.metadata()
        metadata.applicationKeys["seeded"] = .bool(true)
        try await store.setMetadata(metadata)
        let coordinator = PersistentStoreCoordinator(model: ConformanceModel.model)
        try await coordinator.addStore(store)

        let url: URL? = destination == .inMemory ? nil : folder.path("moved/new-store")
        if let url {
            try FileManager.default.createDirectory(
                at: url.deletingLastPathComponent(), withIntermediateDirectories: true)
        }
        let migrated = try await coordinator.copyStore(store, to: url, kind: destination, batchSize: 2)

        #expect(coordinator.stores.count == 1)
        #expect(coordinator.stores.first === migrated)
        #expect(migrated.kind == destination)
        #expect(try await contents(of: migrated) == expectedContents())
        let newMetadata = try await migrated.metadata()
        #expect(newMetadata.uuid == metadata.uuid)
        #expect(migrated.identifier == metadata.uuid)
        #expect(newMetadata.storeType == destination.rawValue)
        #expect(newMetadata.applicationKeys["seeded"] == .bool(true))
        #expect(newMetadata.versionHashes == metadata.versionHashes)
        if let url { #expect(try StoreFiles.kind(ofStoreAt: url) == destination) }
        // The old store is untouched, and new keys never collide with copied ones.
        #expect(try await contents(of: store) == expectedContents())
        let keys = try await migrated.newPrimaryKeys(forEntity: "Pet", count: 1)
        #expect(keys[0] > 12)
    }

    @Test(arguments: fileKinds)
    func migrationRefusesAnExistingFileAndLeavesItAlone(kind: StoreKind) async throws {
        let folder = try TemporaryDirectory()
        let store = try await filledStore(.sqlite, in: folder)
        let coordinator = PersistentStoreCoordinator(model: ConformanceModel.model)
        try await coordinator.addStore(store)
        let occupied = folder.path("occupied")
        try Data("keep me".utf8).write(to: occupied)
        await #expect(throws: TernError.self) {
            try await coordinator.copyStore(store, to: occupied, kind: kind)
        }
        #expect(try Data(contentsOf: occupied) == Data("keep me".utf8))
        #expect(coordinator.stores.first === store)
    }

    @Test func sqliteToSQLiteReadsAndWritesInBatches() async throws {
        // Many rows with a small batch: every batch is one transaction, the rows all arrive.
        let folder = try TemporaryDirectory()
        let source = try SQLiteStore(at: folder.path("big.sqlite"), model: ConformanceModel.model)
        let count = 1_000
        var rows: [StoreRow] = []
        for key in 1...Int64(count) {
            rows.append(
                StoreRow(
                    reference: RowReference(entityName: "Pet", primaryKey: key),
                    attributes: ["name": .string("p\(key)")]))
        }
        try await source.save(StoreChangeSet(inserted: rows))
        let coordinator = PersistentStoreCoordinator(model: ConformanceModel.model)
        try await coordinator.addStore(source)
        let migrated = try await coordinator.copyStore(
            source, to: folder.path("copy.sqlite"), kind: .sqlite, batchSize: 64)
        #expect(try await migrated.count(StoreFetchRequest(entityName: "Pet")) == count)
        let last = try await migrated.rows(for: [RowReference(entityName: "Pet", primaryKey: Int64(count))])
        #expect(last.first?.attributes["name"] == .string("p\(count)"))
    }

    @Test func migrationOfAStoreNotAddedIsRefused() async throws {
        let coordinator = PersistentStoreCoordinator(model: ConformanceModel.model)
        let store = InMemoryStore(model: ConformanceModel.model)
        await #expect(throws: TernError.self) {
            try await coordinator.copyStore(store, to: nil, kind: .inMemory)
        }
    }
}
