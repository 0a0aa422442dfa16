import Foundation
import TernCore
import TernSQLite
import TernStores
import TernTestSupport
import Testing

@Suite struct StoreFilesTests {
    /// A file name whose extension names another type, so detection must read the contents.
    static func misleadingName(for kind: StoreKind) -> String {
        switch kind {
        case .sqlite: "store.xml"
        case .binary: "store.sqlite"
        default: "store.bin"
        }
    }

    @Test(arguments: fileKinds)
    func typeComesFromTheContentsNotTheExtension(kind: StoreKind) async throws {
        let folder = try TemporaryDirectory()
        let name = Self.misleadingName(for: kind)
        _ = try await filledStore(kind, in: folder, name: name)
        #expect(try StoreFiles.kind(ofStoreAt: folder.path(name)) == kind)
        let reopened = try StoreFiles.open(at: folder.path(name), model: ConformanceModel.model, isReadOnly: true)
        #expect(reopened.kind == kind)
    }

    @Test func unknownAndMissingFilesAreRefused() throws {
        let folder = try TemporaryDirectory()
        try Data("just some text".utf8).write(to: folder.path("notes.sqlite"))
        #expect(throws: TernError.self) { try StoreFiles.kind(ofStoreAt: folder.path("notes.sqlite")) }
        #expect(throws: TernError.self) { try StoreFiles.metadata(at: folder.path("missing")) }
    }

    @Test(arguments: fileKinds)
    func metadataIsReadAndWrittenWithoutTouchingRows(kind: StoreKind) async throws {
        let folder = try TemporaryDirectory()
        let url = folder.path(Self.misleadingName(for: kind))
        let uuid: String
        do {
            let store = try await filledStore(kind, in: folder, name: url.lastPathComponent)
            uuid = store.identifier
        }
        var metadata = try StoreFiles.metadata(at: url)
        #expect(metadata.uuid == uuid)
        #expect(metadata.storeType == kind.rawValue)
        #expect(metadata.versionHashes == ConformanceModel.model.entityVersionHashes)
        metadata.applicationKeys["seed"] = .string("v2")
        try StoreFiles.setMetadata(metadata, at: url)
        #expect(try StoreFiles.metadata(at: url).applicationKeys["seed"] == .string("v2"))
        let reopened = try StoreFiles.open(at: url, model: ConformanceModel.model, isReadOnly: true)
        #expect(try await contents(of: reopened) == expectedContents())
        #expect(try await reopened.metadata().applicationKeys["seed"] == .string("v2"))
    }

    @Test(arguments: fileKinds)
    func readOnlyStoresRefuseSavesAndNeverWriteTheirFile(kind: StoreKind) async throws {
        let folder = try TemporaryDirectory()
        let url = folder.path("store")
        do { _ = try await filledStore(kind, in: folder) }
        let before = try snapshot(of: folder.url)
        do {
            let store = try StoreFiles.open(at: url, model: ConformanceModel.model, isReadOnly: true)
            #expect(store.isReadOnly)
            let row = StoreRow(
                reference: RowReference(entityName: "Pet", primaryKey: 500), attributes: ["name": .string("x")])
            let error = await #expect(throws: (any Error).self) {
                try await store.save(StoreChangeSet(inserted: [row]))
            }
            #expect(String(describing: error).contains("read-only"))
            await #expect(throws: (any Error).self) {
                try await store.setMetadata(StoreMetadata(storeType: kind.rawValue, uuid: "x"))
            }
            #expect(try await contents(of: store) == expectedContents())
        }
        #expect(try snapshot(of: folder.url) == before)
    }

    @Test func readOnlyInMemoryStoresRefuseSaves() async throws {
        let store = InMemoryStore(model: ConformanceModel.model, isReadOnly: true)
        let row = StoreRow(
            reference: RowReference(entityName: "Pet", primaryKey: 1), attributes: ["name": .string("x")])
        let error = await #expect(throws: TernError.self) { try await store.save(StoreChangeSet(inserted: [row])) }
        #expect(error?.code == .unwritableStore)
        #expect(try await store.count(StoreFetchRequest(entityName: "Pet")) == 0)
    }

    @Test(arguments: fileKinds)
    func destroyRemovesTheStoreItsJournalsAndSupportFolderOnly(kind: StoreKind) async throws {
        let folder = try TemporaryDirectory()
        let url = folder.path("store.db")
        let coordinator = PersistentStoreCoordinator(model: ConformanceModel.model)
        try await coordinator.addStore(try await filledStore(kind, in: folder, name: "store.db"))
        let manager = FileManager.default
        for companion in ["store.db-wal", "store.db-shm", "store.db-journal"]
        where !manager.fileExists(atPath: folder.path(companion).path) {
            try Data([1]).write(to: folder.path(companion))
        }
        try manager.createDirectory(at: folder.path(".store_SUPPORT/_EXTERNAL_DATA"), withIntermediateDirectories: true)
        try Data([2]).write(to: folder.path(".store_SUPPORT/_EXTERNAL_DATA/A"))
        let neighbours = ["store.db.bak", "store.db-walnut", "other.db", "other.db-wal", "store", "store.sqlite"]
        for name in neighbours { try Data([3]).write(to: folder.path(name)) }
        try manager.createDirectory(at: folder.path(".other_SUPPORT"), withIntermediateDirectories: true)

        try coordinator.destroyStore(at: url)
        #expect(coordinator.stores.isEmpty)
        #expect(try listing(folder.url) == (neighbours + [".other_SUPPORT"]).sorted())
    }

    /// Every file under a folder with its bytes and modification date.
    func snapshot(of folder: URL) throws -> [String: String] {
        var result: [String: String] = [:]
        let manager = FileManager.default
        for name in try listing(folder) {
            let url = folder.appendingPathComponent(name)
            let attributes = try manager.attributesOfItem(atPath: url.path)
            let date = (attributes[.modificationDate] as? Date)?.timeIntervalSince1970 ?? 0
            let bytes = (try? Data(contentsOf: url))?.base64EncodedString() ?? "folder"
            result[name] = "\(date) \(bytes)"
        }
        return result
    }
}
