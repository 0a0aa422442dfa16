import Foundation
import TernCore
import TernRelational
import TernTestSupport
import Testing

@testable import TernSQLite

@Suite struct SQLiteStoreWritingTests {
    static func libraryModel(playlist: String = "Playlist", name: String = "name") -> ManagedObjectModel {
        var cover = AttributeDescription(name: "cover", type: .binary)
        cover.allowsExternalBinaryDataStorage = true
        let attributes = [
            AttributeDescription(name: name, type: .string), AttributeDescription(name: "created", type: .date),
            AttributeDescription(name: "id", type: .uuid), AttributeDescription(name: "rating", type: .double),
            AttributeDescription(name: "price", type: .decimal), AttributeDescription(name: "plays", type: .integer64),
            AttributeDescription(name: "isPublic", type: .boolean), AttributeDescription(name: "link", type: .uri),
            cover,
            AttributeDescription(name: "scratch", type: .string, isTransient: true),
        ]
        return ManagedObjectModel(entities: [
            EntityDescription(
                name: playlist, attributes: attributes,
                relationships: [
                    RelationshipDescription(
                        name: "songs", destination: "Song", inverse: "playlist", toMany: true, ordered: true)
                ]),
            EntityDescription(
                name: "Song", attributes: [AttributeDescription(name: "title", type: .string)],
                relationships: [
                    RelationshipDescription(name: "playlist", destination: playlist, inverse: "songs"),
                    RelationshipDescription(
                        name: "tags", destination: "Tag", inverse: "songs", toMany: true, ordered: true),
                ]),
            EntityDescription(
                name: "Single", parent: "Song", attributes: [AttributeDescription(name: "chart", type: .integer16)]),
            EntityDescription(
                name: "Tag", attributes: [AttributeDescription(name: "label", type: .string)],
                relationships: [
                    RelationshipDescription(name: "songs", destination: "Song", inverse: "tags", toMany: true)
                ]),
        ])
    }

    static func playlistValues(name: String = "name", text: String = "Road trip") -> [String: AttributeValue] {
        [
            name: .string(text), "created": .date(Date(timeIntervalSinceReferenceDate: 737057647.288)),
            "id": .uuid(UUID()), "rating": .double(4.25), "price": .decimal(Decimal(string: "10.11") ?? 0),
            "plays": .integer(-42), "isPublic": .bool(true),
            "link": .uri(URL(string: "https://example.com/a?b=c") ?? URL(fileURLWithPath: "/")),
            "cover": .data(Data([1, 2, 3])),
        ]
    }

    /// Inserts a playlist with three songs (one a Single) and two tags; returns the rows written.
    @discardableResult
    func fill(_ store: SQLiteStore, playlist: String = "Playlist", values: [String: AttributeValue]) async throws
        -> [StoreRow]
    {
        let listKey = try await store.newPrimaryKeys(forEntity: playlist, count: 1)[0]
        let songKeys = try await store.newPrimaryKeys(forEntity: "Song", count: 3)
        let tagKeys = try await store.newPrimaryKeys(forEntity: "Tag", count: 2)
        let list = RowReference(entityName: playlist, primaryKey: listKey)
        let songs = songKeys.map { RowReference(entityName: $0 == songKeys[0] ? "Single" : "Song", primaryKey: $0) }
        let tags = tagKeys.map { RowReference(entityName: "Tag", primaryKey: $0) }
        var rows = [
            StoreRow(
                reference: list, version: 1, attributes: values, toMany: ["songs": [songs[2], songs[0], songs[1]]])
        ]
        for (index, song) in songs.enumerated() {
            var attributes: [String: AttributeValue] = ["title": .string("Song \(index)")]
            if song.entityName == "Single" { attributes["chart"] = .integer(3) }
            rows.append(
                StoreRow(
                    reference: song, version: 1, attributes: attributes, toOne: ["playlist": list],
                    toMany: ["tags": index == 0 ? [tags[1], tags[0]] : [tags[0]]]))
        }
        rows.append(
            StoreRow(reference: tags[0], version: 1, attributes: ["label": .string("t0")], toMany: ["songs": songs]))
        rows.append(
            StoreRow(
                reference: tags[1], version: 1, attributes: ["label": .string("t1")], toMany: ["songs": [songs[0]]]))
        let result = try await store.save(StoreChangeSet(inserted: rows))
        #expect(result.newVersions.count == rows.count && result.newVersions.values.allSatisfy { $0 == 1 })
        return rows
    }

    func integrityCheck(_ url: URL) throws -> [DatabaseValue] {
        try Connection(path: url.path, configuration: .readOnly).fetchAll("PRAGMA integrity_check").compactMap(\.first)
    }

    @Test func aCreatedStoreReadsBackWhatWasWritten() async throws {
        let folder = try TemporaryDirectory()
        let url = folder.path("Library.sqlite")
        let model = Self.libraryModel()
        let store = try SQLiteStore(at: url, model: model)
        let values = Self.playlistValues()
        let saved = try await fill(store, values: values)
        let playlist = try #require(try await store.rows(for: [saved[0].reference]).first)
        #expect(playlist == saved[0])
        let songs = saved[1...3].map(\.reference)
        #expect(try await store.rows(for: saved.map(\.reference)) == saved)
        let single = try #require(try await store.row(of: "Song", primaryKey: songs[0].primaryKey))
        #expect(single.reference.entityName == "Single")
        #expect(single.attributes == ["title": .string("Song 0"), "chart": .integer(3)])
        #expect(single.toOne["playlist"] == playlist.reference)
        let tags = saved[4...5].map(\.reference)
        #expect(single.toMany["tags"] == [tags[1], tags[0]])
        let tag = try #require(try await store.row(of: "Tag", primaryKey: tags[0].primaryKey))
        #expect(tag.toMany["songs"] == songs.sorted { $0.primaryKey < $1.primaryKey })
        #expect(try integrityCheck(url) == [.text("ok")])
        #expect(try await store.count(of: "Song") == 2)
        #expect(try await store.count(of: "Single") == 1)

        // Another connection, and the same store opened through the model cache-free path with the model, agree.
        let reopened = try SQLiteStore(at: url, model: model, configuration: .readOnly)
        #expect(try await reopened.rows(for: [playlist.reference]) == [playlist])
        #expect(await reopened.metadata().versionHashes == model.entityVersionHashes)
        let cached = try SQLiteStore(at: url, configuration: .readOnly)
        #expect(try await cached.rows(for: saved.map(\.reference)) == saved)
        let raw = try Connection(path: url.path, configuration: .readOnly)
        #expect(try raw.fetchValue("SELECT typeof(ZCREATED) FROM ZPLAYLIST") == .text("real"))
        #expect(try raw.fetchValue("SELECT length(ZID) FROM ZPLAYLIST") == .integer(16))
        #expect(try raw.fetchValue("SELECT ZISPUBLIC FROM ZPLAYLIST") == .integer(1))
        #expect(try raw.fetchValue("SELECT ZLINK FROM ZPLAYLIST") == .text("https://example.com/a?b=c"))
        #expect(try raw.fetchValue("SELECT ZPRICE FROM ZPLAYLIST") == .real(10.11))
        let order = try raw.fetchAll("SELECT Z_PK FROM ZSONG ORDER BY Z_FOK_PLAYLIST").compactMap { $0.first?.int64 }
        #expect(order == [songs[2], songs[0], songs[1]].map(\.primaryKey))
    }

    @Test func optimisticLockingDetectsConflicts() async throws {
        let folder = try TemporaryDirectory()
        let store = try SQLiteStore(at: folder.path("Lock.sqlite"), model: Self.libraryModel())
        let saved = try await fill(store, values: ["name": .string("v1")])
        var first = saved[0]
        first.attributes["name"] = .string("v2")
        let updated = try await store.save(StoreChangeSet(updated: [first]))
        #expect(updated.newVersions[first.reference] == 2)
        var stale = first
        stale.attributes["name"] = .string("lost")
        let conflict = await #expect(throws: TernError.self) {
            try await store.save(StoreChangeSet(updated: [stale, saved[4]]))
        }
        #expect(conflict?.code == .mergeConflict)
        #expect(conflict?.failures.compactMap(\.objectID?.primaryKey) == [first.reference.primaryKey])
        #expect(!(conflict?.description.contains("lost") ?? true))
        let staleDelete = await #expect(throws: TernError.self) {
            try await store.save(StoreChangeSet(deleted: [first.reference: 1]))
        }
        #expect(staleDelete?.code == .mergeConflict)
        let current = try #require(try await store.rows(for: [first.reference]).first)
        #expect(current.attributes["name"] == .string("v2"))
        #expect(current.version == 2)
        // The failed saves wrote nothing: the tag kept its version.
        #expect(try await store.rows(for: [saved[4].reference]).first?.version == 1)

        // Deleting a song removes its join-table rows.
        let song = saved[1]
        try await store.save(StoreChangeSet(deleted: [song.reference: 1]))
        #expect(try await store.rows(for: [song.reference]).isEmpty)
        let tag = try #require(try await store.rows(for: [saved[4].reference]).first)
        #expect(tag.toMany["songs"]?.contains(song.reference) == false)
        let gone = await #expect(throws: TernError.self) { try await store.save(StoreChangeSet(updated: [song])) }
        #expect(gone?.code == .mergeConflict)
    }

    @Test func uniqueIndexesBecomeConstraintConflicts() async throws {
        let folder = try TemporaryDirectory()
        var model = Self.libraryModel()
        model.entities[model.entities.firstIndex { $0.name == "Tag" } ?? 0].uniquenessConstraints = [["label"]]
        let store = try SQLiteStore(at: folder.path("Unique.sqlite"), model: model)
        let keys = try await store.newPrimaryKeys(forEntity: "Tag", count: 2)
        let rows = keys.map {
            StoreRow(reference: RowReference(entityName: "Tag", primaryKey: $0), attributes: ["label": .string("same")])
        }
        let error = await #expect(throws: TernError.self) { try await store.save(StoreChangeSet(inserted: rows)) }
        #expect(error?.code == .constraintConflict)
        #expect(error?.failures.count == 1)
        #expect(try await store.count(StoreFetchRequest(entityName: "Tag")) == 0)
    }

    @Test func primaryKeysFromTwoConnectionsAreDisjoint() async throws {
        let folder = try TemporaryDirectory()
        let url = folder.path("Keys.sqlite")
        let first = try SQLiteStore(at: url, model: Self.libraryModel())
        let second = try SQLiteStore(at: url, model: Self.libraryModel())
        async let a = Self.allocate(first, rounds: 40)
        async let b = Self.allocate(second, rounds: 40)
        let keys = try await a + b
        #expect(keys.count == 80 * 3)
        #expect(Set(keys).count == keys.count)
        let raw = try Connection(path: url.path, configuration: .readOnly)
        let songNumber = try first.schema.entity(named: "Song").number
        #expect(try raw.fetchValue("SELECT Z_MAX FROM Z_PRIMARYKEY WHERE Z_ENT = \(songNumber)") == .integer(240))
    }

    static func allocate(_ store: SQLiteStore, rounds: Int) async throws -> [Int64] {
        var keys: [Int64] = []
        for index in 0..<rounds {
            // Singles share the Song hierarchy's key space.
            keys += try await store.newPrimaryKeys(forEntity: index.isMultiple(of: 2) ? "Song" : "Single", count: 3)
        }
        return keys
    }

    @Test func hostileNamesAndValuesRoundTrip() async throws {
        let folder = try TemporaryDirectory()
        let url = folder.path("Hostile.sqlite")
        let entity = "List\"'; DROP TABLE ZSONG; --"
        let attribute = "na'me\"🦅"
        let model = Self.libraryModel(playlist: entity, name: attribute)
        let store = try SQLiteStore(at: url, model: model)
        for text in ["it's", "\"quoted\"", "'; DROP TABLE x; --", "nul\u{0}inside", "🦅 émoji"] {
            let values = Self.playlistValues(name: attribute, text: text)
            let saved = try await fill(store, playlist: entity, values: values)
            #expect(try await store.rows(for: saved.map(\.reference)) == saved)
        }
        #expect(try await store.count(of: entity) == 5)
        #expect(try await store.count(of: "Song") == 10)
        #expect(try integrityCheck(url) == [.text("ok")])
        let metadata = try SQLiteStore.metadata(at: url)
        #expect(metadata.versionHashes[entity] != nil)
    }

    @Test func namesWithNulAreRefused() throws {
        let model = ManagedObjectModel(entities: [EntityDescription(name: "Bad\u{0}Name")])
        let folder = try TemporaryDirectory()
        let error = try #require(throws: TernError.self) {
            try SQLiteStore(at: folder.path("nul.sqlite"), model: model)
        }
        #expect(error.code == .schemaMismatch)
    }

    @Test func largeBinaryValuesGoToExternalFiles() async throws {
        let folder = try TemporaryDirectory()
        let url = folder.path("Media.sqlite")
        var configuration = SQLiteConfiguration()
        configuration.externalStorageThreshold = 64
        configuration.fullSync = true
        let store = try SQLiteStore(at: url, model: Self.libraryModel(), configuration: configuration)
        let small = Data(repeating: 7, count: 10)
        let large = Data((0..<5000).map { UInt8($0 % 251) })
        let keys = try await store.newPrimaryKeys(forEntity: "Playlist", count: 2)
        let smallRow = StoreRow(
            reference: RowReference(entityName: "Playlist", primaryKey: keys[0]), version: 1,
            attributes: ["cover": .data(small)])
        let largeRow = StoreRow(
            reference: RowReference(entityName: "Playlist", primaryKey: keys[1]), version: 1,
            attributes: ["cover": .data(large)])
        try await store.save(StoreChangeSet(inserted: [smallRow, largeRow]))
        #expect(try await store.rows(for: [smallRow.reference, largeRow.reference]) == [smallRow, largeRow])
        let raw = try Connection(path: url.path, configuration: SQLiteConfiguration())
        let inline = try #require(
            try raw.fetchValue("SELECT ZCOVER FROM ZPLAYLIST WHERE Z_PK = \(smallRow.reference.primaryKey)")?.data)
        #expect(inline == Data([1]) + small)
        let reference = try #require(
            try raw.fetchValue("SELECT ZCOVER FROM ZPLAYLIST WHERE Z_PK = \(largeRow.reference.primaryKey)")?.data)
        #expect(reference.first == 2 && reference.last == 0 && reference.count == 38)
        let name = String(decoding: reference.dropFirst().dropLast(), as: UTF8.self)
        let file = folder.url.appendingPathComponent(".Media_SUPPORT/_EXTERNAL_DATA/\(name)")
        #expect(try Data(contentsOf: file) == large)

        // A reference that tries to leave the folder is refused.
        let hostile = Data([2]) + Data("../../../../etc/passwd".utf8) + Data([0])
        try raw.execute("UPDATE ZPLAYLIST SET ZCOVER = \(hostile) WHERE Z_PK = \(largeRow.reference.primaryKey)")
        let error = await #expect(throws: TernError.self) {
            try await store.rows(for: [largeRow.reference])
        }
        #expect(error?.code == .invalidExternalData)
    }

    @Test func externalFilesFollowUpdatesDeletesAndFailedSaves() async throws {
        let folder = try TemporaryDirectory()
        var configuration = SQLiteConfiguration()
        configuration.externalStorageThreshold = 16
        let store = try SQLiteStore(
            at: folder.path("Files.sqlite"), model: Self.libraryModel(), configuration: configuration)
        let files = folder.url.appendingPathComponent(".Files_SUPPORT/_EXTERNAL_DATA")
        func names() -> Set<String> { Set((try? FileManager.default.contentsOfDirectory(atPath: files.path)) ?? []) }
        let key = try await store.newPrimaryKeys(forEntity: "Playlist", count: 1)[0]
        var row = StoreRow(
            reference: RowReference(entityName: "Playlist", primaryKey: key), version: 1,
            attributes: ["cover": .data(Data(repeating: 1, count: 100))])
        try await store.save(StoreChangeSet(inserted: [row]))
        let first = names()
        #expect(first.count == 1)
        row.attributes["cover"] = .data(Data(repeating: 2, count: 100))
        try await store.save(StoreChangeSet(updated: [row]))
        row.version = 2
        let second = names()
        #expect(second.count == 1 && second != first)
        var stale = row
        stale.version = 1
        stale.attributes["cover"] = .data(Data(repeating: 3, count: 100))
        await #expect(throws: TernError.self) { try await store.save(StoreChangeSet(updated: [stale])) }
        #expect(names() == second)
        #expect(try await store.rows(for: [row.reference]) == [row])
        try await store.save(StoreChangeSet(deleted: [row.reference: 2]))
        #expect(names().isEmpty)
    }

    @Test func dataOnlyInTheWriteAheadLogIsVisible() async throws {
        let folder = try TemporaryDirectory()
        let url = folder.path("Wal.sqlite")
        let writer = try SQLiteStore(at: url, model: Self.libraryModel())
        let saved = try await fill(writer, values: ["name": .string("in the log")])
        #expect(FileManager.default.fileExists(atPath: url.path + "-wal"))
        let copy = try TemporaryDirectory()
        for suffix in ["", "-wal", "-shm"] {
            try FileManager.default.copyItem(atPath: url.path + suffix, toPath: copy.path("Wal.sqlite").path + suffix)
        }
        let reader = try SQLiteStore(at: copy.path("Wal.sqlite"), model: Self.libraryModel(), configuration: .readOnly)
        #expect(try await reader.rows(for: saved.map(\.reference)) == saved)
        let live = try SQLiteStore(at: url, model: Self.libraryModel(), configuration: .readOnly)
        #expect(try await live.count(StoreFetchRequest(entityName: "Playlist")) == 1)
        _ = writer
    }
}
