import Foundation
import TernCore
import TernRelational
import TernTestSupport
import Testing

@testable import TernSQLite

@Suite struct SQLiteStoreFixtureRowTests {
    func open(_ index: Int, in folder: TemporaryDirectory) throws -> (SQLiteStore, Connection) {
        let url = try folder.copyStore(ExpectedStore.all[index])
        let store = try SQLiteStore(at: url, configuration: .readOnly)
        return (store, try Connection(path: url.path, configuration: .readOnly))
    }

    @Test func countsEachEntityWithoutItsSubentities() async throws {
        let folder = try TemporaryDirectory()
        let (store, raw) = try open(0, in: folder)
        var total = 0
        for (number, name) in [(1, "Car"), (2, "SportCar"), (3, "ExpensiveSportCar")] {
            let count = try await store.count(of: name)
            #expect(count == Int(try raw.fetchValue("SELECT COUNT(*) FROM ZCAR WHERE Z_ENT = \(number)")?.int64 ?? -1))
            #expect(count > 0)
            total += count
        }
        #expect(total == 125)
        #expect(try await store.count(of: "Person") == 20)
    }

    @Test func scansInBoundedBatchesInKeyOrder() async throws {
        let folder = try TemporaryDirectory()
        let (store, _) = try open(0, in: folder)
        var keys: [Int64] = []
        var batchCount = 0
        for try await batch in store.batches(of: "Car", size: 7) {
            #expect(batch.count <= 7)
            keys += batch.map(\.reference.primaryKey)
            batchCount += 1
        }
        #expect(keys.count == 125)
        #expect(keys == keys.sorted() && Set(keys).count == keys.count)
        #expect(batchCount == 18)
        var sportKeys: [Int64] = []
        for try await batch in store.batches(of: "SportCar", includingSubentities: false, size: 2) {
            #expect(batch.allSatisfy { $0.reference.entityName == "SportCar" })
            sportKeys += batch.map(\.reference.primaryKey)
        }
        #expect(sportKeys.count == (try await store.count(of: "SportCar")))
    }

    @Test func decodesValuesInheritanceAndBothSidesOfOneToMany() async throws {
        let folder = try TemporaryDirectory()
        let (store, raw) = try open(0, in: folder)
        let owner = try #require(try raw.fetchValue("SELECT ZOWNER FROM ZCAR WHERE ZOWNER IS NOT NULL LIMIT 1")?.int64)
        let person = try #require(try await store.row(of: "Person", primaryKey: owner))
        let stored = try #require(
            try raw.fetchOne("SELECT ZUPDATEDAT, ZID, ZFIRSTNAME FROM ZPERSON WHERE Z_PK = \(owner)"))
        #expect(person.reference.entityName == "Person")
        #expect(person.version >= 1)
        #expect(
            person.attributes["updatedAt"]
                == .date(Date(timeIntervalSinceReferenceDate: try #require(stored[0].double))))
        guard case .uuid(let id)? = person.attributes["id"] else {
            Issue.record("id is not a UUID")
            return
        }
        #expect(withUnsafeBytes(of: id.uuid) { Data($0) } == stored[1].data)
        #expect(person.attributes["firstName"] == .string(try #require(stored[2].string)))
        let cars = try #require(person.toMany["cars"])
        #expect(!cars.isEmpty)
        for reference in cars {
            let car = try #require(try await store.row(of: "Car", primaryKey: reference.primaryKey))
            #expect(car.reference == reference)
            #expect(car.toOne["owner"] == RowReference(entityName: "Person", primaryKey: owner))
        }
        var seenKinds: Set<String> = []
        for try await batch in store.batches(of: "Car", size: 50) {
            for car in batch {
                seenKinds.insert(car.reference.entityName)
                if car.reference.entityName == "ExpensiveSportCar" {
                    #expect(
                        car.attributes["isLimitedEdition"].map { if case .bool = $0 { true } else { false } } ?? true)
                }
                if let owner = car.toOne["owner"] {
                    let row = try #require(try await store.row(of: "Person", primaryKey: owner.primaryKey))
                    #expect(row.toMany["cars"]?.contains(car.reference) == true)
                }
            }
        }
        #expect(seenKinds == ["Car", "SportCar", "ExpensiveSportCar"])
        #expect(try await store.row(of: "Person", primaryKey: 9999) == nil)
        #expect(try await store.row(of: "ExpensiveSportCar", primaryKey: 1) == nil)
    }

    @Test func readsSampleModel2ThroughItsModelCacheAlone() async throws {
        let folder = try TemporaryDirectory()
        let (store, raw) = try open(2, in: folder)
        #expect(try await store.count(of: "Page") == 4970)
        var pageCount = 0
        var bookKinds: Set<String> = []
        for try await batch in store.batches(of: "Book", size: 10) {
            for book in batch {
                bookKinds.insert(book.reference.entityName)
                let pages = book.toMany["pages"] ?? []
                pageCount += pages.count
                if case .date? = book.attributes["publishedAt"] {} else { Issue.record("publishedAt is not a date") }
                if case .uuid? = book.attributes["uniqueID"] {} else { Issue.record("uniqueID is not a UUID") }
                if case .decimal? = book.attributes["price"] {} else { Issue.record("price is not a decimal") }
                if let first = pages.first {
                    let page = try #require(try await store.row(of: "Page", primaryKey: first.primaryKey))
                    #expect(page.toOne["book"] == book.reference)
                }
            }
        }
        let linkedPages = try raw.fetchValue("SELECT COUNT(*) FROM ZPAGE WHERE ZBOOK IS NOT NULL")?.int64
        #expect(Int64(pageCount) == linkedPages)
        #expect(bookKinds.contains("Book"))
        let graphic = try raw.fetchValue("SELECT COUNT(*) FROM ZBOOK WHERE Z_ENT = 2")?.int64 ?? 0
        #expect(bookKinds.contains("GraphicNovel") == (graphic > 0))
        let writers = try await store.rows(of: "Writer", limit: 10)
        #expect(writers.count == 2)
        for author in writers where author.reference.entityName == "Author" {
            for book in author.toMany["books"] ?? [] {
                #expect(
                    try await store.row(of: "Book", primaryKey: book.primaryKey)?.toOne["author"] == author.reference)
            }
        }
    }

    @Test func readOnlyStoresWriteNothingBesideThemselves() async throws {
        let folder = try TemporaryDirectory()
        let url = try folder.copyStore(ExpectedStore.all[0])
        let before = folder.fileNames
        let bytes = try Data(contentsOf: url)
        let store = try SQLiteStore(at: url, configuration: .readOnly)
        _ = try await store.rows(of: "Car", limit: 200)
        let error = await #expect(throws: TernError.self) {
            let row = StoreRow(
                reference: RowReference(entityName: "Person", primaryKey: 999), attributes: ["firstName": .string("x")])
            return try await store.save(StoreChangeSet(inserted: [row]))
        }
        #expect(error?.code == .unwritableStore)
        #expect(folder.fileNames == before)
        #expect(try Data(contentsOf: url) == bytes)
    }
}

@Suite struct SQLiteStoreFixtureWritingTests {
    @Test func derivedAttributeTriggersRunOnWrites() async throws {
        let folder = try TemporaryDirectory()
        let url = try folder.copyStore(ExpectedStore.all[2])
        let store = try SQLiteStore(at: url)
        let book = try #require(try await store.rows(of: "Book", limit: 1).first)
        let before = try #require(book.attributes["pagesCount"])
        let key = try await store.newPrimaryKeys(forEntity: "Page", count: 1)[0]
        let page = StoreRow(
            reference: RowReference(entityName: "Page", primaryKey: key), attributes: ["number": .integer(999)],
            toOne: ["book": book.reference])
        try await store.save(StoreChangeSet(inserted: [page]))
        let after = try #require(try await store.rows(for: [book.reference]).first)
        guard case .integer(let old) = before, case .integer(let new)? = after.attributes["pagesCount"] else {
            Issue.record("pagesCount is not an integer")
            return
        }
        #expect(new == old + 1)
        #expect(after.toMany["pages"]?.contains(page.reference) == true)
        #expect(try await store.count(StoreFetchRequest(entityName: "Page")) == 4971)
        let raw = try Connection(path: url.path, configuration: .readOnly)
        #expect(try raw.fetchAll("PRAGMA integrity_check").compactMap(\.first) == [.text("ok")])
        #expect(try raw.fetchValue("SELECT Z_MAX FROM Z_PRIMARYKEY WHERE Z_NAME = 'Page'") == .integer(4971))
    }
}
