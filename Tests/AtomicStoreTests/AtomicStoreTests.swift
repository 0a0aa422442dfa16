import Foundation
import TernCore
import TernTestSupport
import Testing

@Suite struct AtomicStoreTests {
    /// Rows with awkward values and every kind of relationship.
    static func rowsWithRelationships() -> [StoreRow] {
        func reference(_ entity: String, _ key: Int64) -> RowReference {
            RowReference(entityName: entity, primaryKey: key)
        }
        var rows = AwkwardRows.sampleRows()
        rows.append(
            StoreRow(
                reference: reference("Person", 100), attributes: ["name": .string("Ann")],
                toOne: ["car": reference("Car", 101), "team": reference("Team", 104)],
                toMany: ["pets": [reference("Pet", 102), reference("Pet", 103)]]))
        rows.append(
            StoreRow(
                reference: reference("Car", 101), attributes: ["model": .string("Zoe"), "wheels": .integer(4)],
                toOne: ["owner": reference("Person", 100)]))
        rows.append(StoreRow(reference: reference("Pet", 102), toOne: ["owner": reference("Person", 100)]))
        rows.append(StoreRow(reference: reference("Pet", 103), toOne: ["owner": reference("Person", 100)]))
        rows.append(StoreRow(reference: reference("Team", 104), toMany: ["members": [reference("Person", 100)]]))
        rows.append(
            StoreRow(
                reference: reference("Playlist", 105),
                toMany: ["songs": [reference("Song", 108), reference("Song", 106), reference("Song", 107)]]))
        for key: Int64 in 106...108 {
            rows.append(StoreRow(reference: reference("Song", key), toOne: ["playlist": reference("Playlist", 105)]))
        }
        rows.append(
            StoreRow(
                reference: reference("Author", 109),
                toMany: ["books": [reference("Book", 110), reference("Book", 111)]]))
        rows.append(
            StoreRow(
                reference: reference("Author", 112), toMany: ["books": [reference("Book", 110)]]))
        rows.append(
            StoreRow(
                reference: reference("Book", 110),
                toMany: ["authors": [reference("Author", 109), reference("Author", 112)]]))
        rows.append(StoreRow(reference: reference("Book", 111), toMany: ["authors": [reference("Author", 109)]]))
        rows.append(StoreRow(reference: reference("Publisher", 113), toMany: ["books": []]))
        return rows
    }

    @Test(arguments: AtomicFormat.all)
    func everyValueAndRelationshipSurvivesReopening(format: AtomicFormat) async throws {
        let tmp = try TemporaryDirectory()
        let url = tmp.path("store.\(format.fileExtension)")
        let rows = Self.rowsWithRelationships()
        let store = try format.open(url)
        let result = try await store.save(StoreChangeSet(inserted: rows))
        #expect(Set(result.newVersions.values) == [1])

        let reopened = try format.open(url)
        #expect(reopened.identifier == store.identifier)
        let read = try await reopened.allRows()
        let expected = rows.map { row in
            var saved = row
            saved.version = 1
            return saved
        }.sorted { $0.reference < $1.reference }
        #expect(read == expected)
        for (actual, wanted) in zip(read, expected) where actual != wanted {
            #expect(actual.attributes == wanted.attributes, "\(actual.reference)")
        }
        // Keys already used are never handed out again after reopening.
        let keys = try await reopened.newPrimaryKeys(forEntity: "Bike", count: 2)
        #expect(keys.allSatisfy { $0 > 101 })  // Car 101 shares the Vehicle root with Bike
    }

    @Test(arguments: AtomicFormat.all)
    func updatesAndDeletesSurviveReopening(format: AtomicFormat) async throws {
        let tmp = try TemporaryDirectory()
        let url = tmp.path("store.\(format.fileExtension)")
        let store = try format.open(url)
        let keys = try await store.newPrimaryKeys(forEntity: "Pet", count: 3)
        let pets = keys.map {
            StoreRow(
                reference: RowReference(entityName: "Pet", primaryKey: $0), attributes: ["name": .string("p\($0)")])
        }
        _ = try await store.save(StoreChangeSet(inserted: pets))
        var renamed = pets[0]
        renamed.version = 1
        renamed.attributes["name"] = .string("renamed")
        _ = try await store.save(StoreChangeSet(updated: [renamed], deleted: [pets[1].reference: 1]))

        let read = try await format.open(url).allRows()
        #expect(read.map(\.reference) == [pets[0].reference, pets[2].reference])
        #expect(read.first?.attributes["name"] == .string("renamed"))
        // Core Data's XML stores keep no optimistic-locking versions: reopened, every row is at 1.
        #expect(read.map(\.version) == (format == .xml ? [1, 1] : [2, 1]))
        let next = try await format.open(url).newPrimaryKeys(forEntity: "Pet", count: 1)
        #expect(next == [keys[2] + 1])
    }

    @Test(arguments: AtomicFormat.all)
    func aRefusedSaveLeavesTheFileAndStoreUntouched(format: AtomicFormat) async throws {
        let tmp = try TemporaryDirectory()
        let url = tmp.path("store.\(format.fileExtension)")
        let store = try format.open(url)
        let row = StoreRow(reference: RowReference(entityName: "Pet", primaryKey: 1))
        _ = try await store.save(StoreChangeSet(inserted: [row]))
        let before = try Data(contentsOf: url)
        var stale = row
        stale.attributes["name"] = .string("stale")
        await #expect(throws: TernError.self) { try await store.save(StoreChangeSet(updated: [stale])) }
        #expect(try Data(contentsOf: url) == before)
        #expect(try await store.allRows().first?.attributes["name"] == nil)
        #expect(try fileNames(in: tmp.url) == ["store.\(format.fileExtension)"])
    }

    @Test(arguments: AtomicFormat.all)
    func aFailedWriteKeepsTheStoreAsItWasAndLeavesNoTemporaryFile(format: AtomicFormat) async throws {
        let file = try await format.savedStore()
        let before = try await file.store.allRows()
        // Put a non-empty folder where the store file was: the rename over it must fail.
        try FileManager.default.removeItem(at: file.url)
        try FileManager.default.createDirectory(
            at: file.url.appendingPathComponent("blocker"), withIntermediateDirectories: true)
        let row = StoreRow(reference: RowReference(entityName: "Pet", primaryKey: 900))
        await #expect { try await file.store.save(StoreChangeSet(inserted: [row])) } throws: { error in
            (error as? TernError)?.code == .ioFailure && (error as? TernError)?.path == file.url.path
        }
        #expect(try await file.store.allRows() == before)
        #expect(try fileNames(in: file.folder.url) == ["store.\(format.fileExtension)"])
    }

    @Test(arguments: AtomicFormat.all)
    func aReadOnlyStoreRefusesToSaveAndNeverWrites(format: AtomicFormat) async throws {
        let file = try await format.savedStore()
        let (tmp, url) = (file.folder, file.url)
        let stray = tmp.path(".store.\(format.fileExtension).tern-tmp-left-over")
        try Data("x".utf8).write(to: stray)
        let before = try Data(contentsOf: url)
        let modified = try FileManager.default.attributesOfItem(atPath: url.path)[.modificationDate] as? Date

        let store = try format.open(url, ConformanceModel.model, true)
        #expect(store.isReadOnly)
        #expect(try await store.allRows().count == AwkwardRows.sampleRows().count)
        let row = StoreRow(reference: RowReference(entityName: "Pet", primaryKey: 500))
        await #expect { try await store.save(StoreChangeSet(inserted: [row])) } throws: { error in
            let error = try #require(error as? TernError)
            return error.code == .unwritableStore && error.message.contains("read-only") && error.path == url.path
        }
        await #expect(throws: TernError.self) { try await store.setMetadata(store.metadata()) }
        #expect(try Data(contentsOf: url) == before)
        #expect(try FileManager.default.attributesOfItem(atPath: url.path)[.modificationDate] as? Date == modified)
        // A read-only open leaves other files alone, even stray temporary files.
        #expect(FileManager.default.fileExists(atPath: stray.path))

        let missing = tmp.path("missing.\(format.fileExtension)")
        #expect(throws: TernError.self) { try format.open(missing, ConformanceModel.model, true) }
        #expect(!FileManager.default.fileExists(atPath: missing.path))
    }

    @Test(arguments: AtomicFormat.all)
    func openingRemovesTemporaryFilesLeftByACrash(format: AtomicFormat) async throws {
        let file = try await format.savedStore()
        let (tmp, url) = (file.folder, file.url)
        #expect(try fileNames(in: tmp.url) == ["store.\(format.fileExtension)"])
        let strays = [".store.\(format.fileExtension).tern-tmp-1", ".store.\(format.fileExtension).tern-tmp-ABC"]
        let others = [".other.\(format.fileExtension).tern-tmp-1", "store.\(format.fileExtension).tern-tmp-2"]
        for name in strays + others { try Data("half".utf8).write(to: tmp.path(name)) }

        _ = try format.open(url)
        #expect(try fileNames(in: tmp.url) == (others + ["store.\(format.fileExtension)"]).sorted())
    }

    @Test(arguments: AtomicFormat.all)
    func newStoresRecordTheModelInTheirMetadata(format: AtomicFormat) async throws {
        let tmp = try TemporaryDirectory()
        let url = tmp.path("store.\(format.fileExtension)")
        let model = ConformanceModel.model
        let store = try format.open(url, model: model)
        let metadata = try format.metadata(url)
        #expect(metadata == (try await store.metadata()))
        #expect(metadata.storeType == store.kind.rawValue)
        #expect(metadata.uuid == store.identifier)
        #expect(UUID(uuidString: metadata.uuid) != nil)
        #expect(metadata.versionHashes == model.entityVersionHashes)
        #expect(metadata.versionIdentifiers == model.versionIdentifiers)
        #expect(metadata.modelChecksum == model.versionChecksum)
        #expect(metadata.hashesDigest == model.versionHashesDigest)
        #expect(model.isCompatible(with: metadata))
    }

    @Test(arguments: AtomicFormat.all)
    func metadataRoundTripsWithApplicationKeys(format: AtomicFormat) async throws {
        let file = try await format.savedStore()
        let (url, store) = (file.url, file.store)
        var metadata = try await store.metadata()
        metadata.frameworkVersion = 1_400
        metadata.versionIdentifiers = ["v1", "<two & \"three\">"]
        metadata.applicationKeys = [
            "lastSync": .date(Date(timeIntervalSinceReferenceDate: 123_456.789_012)),
            "nested": .dictionary([
                "list": .array([.integer(.min), .real(0.1), .bool(true), .bool(false), .data(Data([0, 255]))]),
                "nul\u{0}key": .string("value \u{0}\u{1}\r\n<&>"),
            ]),
            "empty": .array([]),
        ]
        try await store.setMetadata(metadata)
        #expect(try format.metadata(url) == metadata)

        metadata.applicationKeys["changedOnDisk"] = .string("yes")
        try format.setMetadata(metadata, url)
        let reopened = try format.open(url)
        #expect(try await reopened.metadata() == metadata)
        #expect(try await reopened.allRows().count == AwkwardRows.sampleRows().count)
    }

    @Test(arguments: AtomicFormat.all)
    func metadataIsReadWithoutReadingTheRows(format: AtomicFormat) async throws {
        let file = try await format.savedStore()
        let (url, store) = (file.url, file.store)
        let metadata = try await store.metadata()
        // Grow the file to 8 GiB without using disk space (a sparse tail of zeros): reading the
        // rows would fail or take minutes; reading the metadata must not notice.
        let handle = try FileHandle(forWritingTo: url)
        try handle.truncate(atOffset: 8 << 30)
        try handle.close()
        #expect(try format.metadata(url) == metadata)
    }
}
