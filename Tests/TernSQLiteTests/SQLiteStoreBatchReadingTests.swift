import Foundation
import TernCore
import TernTestSupport
import Testing

@testable import TernSQLite

/// To-many relationships are read with one query per relationship per batch of rows: every row
/// must still get exactly its own destinations, in order, across batch boundaries.
@Suite struct SQLiteStoreBatchReadingTests {
    /// 3 playlists holding 1,200 songs (one in four a Single) in a scrambled order, each song
    /// tagged with some of 3 tags in its own order; song 7 has no playlist and no tag.
    func fill(_ store: SQLiteStore) async throws -> [StoreRow] {
        let songCount = 1_200
        let lists = try await store.newPrimaryKeys(forEntity: "Playlist", count: 3).map {
            RowReference(entityName: "Playlist", primaryKey: $0)
        }
        let tags = try await store.newPrimaryKeys(forEntity: "Tag", count: 3).map {
            RowReference(entityName: "Tag", primaryKey: $0)
        }
        let songs = try await store.newPrimaryKeys(forEntity: "Song", count: songCount).enumerated().map {
            RowReference(entityName: $0.offset % 4 == 0 ? "Single" : "Song", primaryKey: $0.element)
        }
        var random = SplitMix64(state: 9)
        var rows: [StoreRow] = []
        var members: [RowReference: [RowReference]] = [:]
        var tagged: [RowReference: [RowReference]] = [:]
        for (index, song) in songs.enumerated() {
            var row = StoreRow(reference: song, version: 1, attributes: ["title": .string("Song \(index)")])
            if song.entityName == "Single" { row.attributes["chart"] = .integer(Int64(index % 100)) }
            if index != 7 {
                let list = lists[Int(random.next() % 3)]
                row.toOne["playlist"] = list
                members[list, default: []].append(song)
                let songTags = tags.filter { _ in random.next() % 2 == 0 }
                let ordered = random.next() % 2 == 0 ? songTags : songTags.reversed()
                if !ordered.isEmpty { row.toMany["tags"] = ordered }
                for tag in ordered { tagged[tag, default: []].append(song) }
            }
            rows.append(row)
        }
        for (index, list) in lists.enumerated() {
            var order = members[list] ?? []
            for position in order.indices.reversed() {
                order.swapAt(position, Int(random.next() % UInt64(position + 1)))
            }
            members[list] = order
            rows.append(
                StoreRow(
                    reference: list, version: 1, attributes: ["name": .string("List \(index)")],
                    toMany: ["songs": order]))
        }
        for (index, tag) in tags.enumerated() {
            var row = StoreRow(reference: tag, version: 1, attributes: ["label": .string("t\(index)")])
            if let songs = tagged[tag] { row.toMany["songs"] = songs }
            rows.append(row)
        }
        _ = try await store.save(StoreChangeSet(inserted: rows))
        return rows
    }

    /// The destinations of each row's to-many relationships; unordered ones sorted.
    func relationships(of rows: [StoreRow], model: ManagedObjectModel) -> [RowReference: [String: [RowReference]]] {
        Dictionary(
            uniqueKeysWithValues: rows.map { row in
                let relationships = model.allRelationships(of: row.reference.entityName)
                let toMany = row.toMany.filter { !$0.value.isEmpty }.map { name, references in
                    (
                        name,
                        relationships.first { $0.name == name }?.isOrdered == true ? references : references.sorted()
                    )
                }
                return (row.reference, Dictionary(uniqueKeysWithValues: toMany))
            })
    }

    @Test func everyRowGetsItsOwnToManyDestinationsInOrderAcrossBatches() async throws {
        let folder = try TemporaryDirectory()
        let model = SQLiteStoreWritingTests.libraryModel()
        let store = try SQLiteStore(at: folder.path("Library.sqlite"), model: model)
        let saved = try await fill(store)
        let expected = relationships(of: saved, model: model)

        var fetched: [StoreRow] = []
        for entity in ["Playlist", "Song", "Tag"] {
            fetched += try await store.fetch(StoreFetchRequest(entityName: entity))
        }
        #expect(fetched.count == saved.count)
        #expect(relationships(of: fetched, model: model) == expected)
        #expect(
            Dictionary(uniqueKeysWithValues: fetched.map { ($0.reference, $0.toOne) })
                == Dictionary(uniqueKeysWithValues: saved.map { ($0.reference, $0.toOne) }))

        var paged: [StoreRow] = []
        var position: StoreFetchPosition?
        repeat {
            let page = try await store.fetchPage(StoreFetchRequest(entityName: "Song"), after: position, size: 700)
            paged += page.rows
            position = page.next
        } while position != nil
        #expect(paged.count == 1_200)
        #expect(relationships(of: paged, model: model) == expected.filter { paged.map(\.reference).contains($0.key) })

        let references = saved.map(\.reference).reversed().map { $0 }
        let byReference = try await store.rows(for: references)
        #expect(byReference.map(\.reference) == references)
        #expect(relationships(of: byReference, model: model) == expected)
        #expect(relationships(of: try store.rowsSynchronously(for: references), model: model) == expected)
    }

    @Test func packedRowsCarryTheModelsAttributeOrderWithTransientSlots() async throws {
        let folder = try TemporaryDirectory()
        let model = SQLiteStoreWritingTests.libraryModel()
        let store = try SQLiteStore(at: folder.path("Library.sqlite"), model: model)
        let saved = try await fill(store)
        let rows = try #require(try await store.fetchPacked(StoreFetchRequest(entityName: "Playlist")))
        let first = try #require(rows.first)
        #expect(first.attributes.keys.names == model.allAttributes(of: "Playlist").map(\.name))
        #expect(first.attributes["scratch"] == nil)
        #expect(Set(rows.map { StoreRow($0) }) == Set(try await store.fetch(StoreFetchRequest(entityName: "Playlist"))))
        #expect(rows.count == saved.filter { $0.reference.entityName == "Playlist" }.count)
    }
}
