import Foundation
import TernCore
import TernPostgreSQL
import TernTestSupport
import Testing

/// Keyset pages on the server: sorts on every type PostgreSQL orders as Swift does, with nils,
/// through to-one key paths, with offsets and limits, give the rows in the order an in-memory
/// store gives them, page after page.
@Suite(.enabled(if: PostgreSQLTestServer.isAvailable, PostgreSQLTestServer.skipComment))
struct PostgreSQLPagingTests {
    /// A PostgreSQL store and an in-memory store holding the same rows, under the same keys.
    static func stores() async throws -> (PostgreSQLStore, InMemoryStore) {
        let postgreSQL = try PostgreSQLStore(
            url: try PostgreSQLTestServer.freshStoreURL(), model: ConformanceModel.model)
        let memory = InMemoryStore(model: ConformanceModel.model)
        var random = SplitMix64(state: 11)
        var rows: [StoreRow] = []
        let people = try await postgreSQL.newPrimaryKeys(forEntity: "Person", count: 12)
        for (index, key) in people.enumerated() {
            var person = StoreRow(reference: RowReference(entityName: "Person", primaryKey: key))
            person.attributes["name"] = .string("P\(index)")
            if index % 4 != 0 { person.attributes["age"] = .integer(Int64(index % 5) * 10) }
            rows.append(person)
        }
        let samples = try await postgreSQL.newPrimaryKeys(forEntity: "Sample", count: 40)
        for key in samples {
            var sample = StoreRow(reference: RowReference(entityName: "Sample", primaryKey: key))
            let pick = Int(random.next() % 6)
            if pick != 0 { sample.attributes["double"] = .double(Double(pick) * 0.5 - 1) }
            if pick != 1 {
                sample.attributes["date"] = .date(Date(timeIntervalSinceReferenceDate: Double(pick % 3) * 86_400))
            }
            if pick != 2 { sample.attributes["boolean"] = .bool(pick % 2 == 0) }
            if pick != 3 { sample.attributes["binary"] = .data(Data([UInt8(pick % 4), 0xFF])) }
            if pick != 4 {
                sample.attributes["uuid"] = .uuid(UUID(uuidString: "00000000-0000-0000-0000-00000000000\(pick % 3)")!)
            }
            if pick != 5 { sample.attributes["uri"] = .uri(URL(string: "https://example.com/\(pick % 4)")!) }
            sample.attributes["integer64"] = .integer(Int64(pick % 2) - 1)
            rows.append(sample)
        }
        let pets = try await postgreSQL.newPrimaryKeys(forEntity: "Pet", count: 30)
        for (index, key) in pets.enumerated() {
            var pet = StoreRow(reference: RowReference(entityName: "Pet", primaryKey: key))
            pet.attributes["name"] = .string("Pet \(index)")
            if index % 5 != 0 {
                pet.toOne["owner"] = RowReference(entityName: "Person", primaryKey: people[index % people.count])
            }
            rows.append(pet)
        }
        let changes = StoreChangeSet(inserted: rows)
        _ = try await postgreSQL.save(changes)
        _ = try await memory.save(changes)
        return (postgreSQL, memory)
    }

    @Test func pagesFollowTheOrderOfEverySortableType() async throws {
        let (store, memory) = try await Self.stores()
        let sorts: [[FetchSort]] = [
            [], [FetchSort(key: "double")], [FetchSort(key: "double", ascending: false)],
            [FetchSort(key: "date", ascending: false), FetchSort(key: "double")],
            [FetchSort(key: "boolean"), FetchSort(key: "uuid", ascending: false)],
            [FetchSort(key: "binary", ascending: false), FetchSort(key: "uri")],
            [FetchSort(key: "integer64"), FetchSort(key: "uri", ascending: false), FetchSort(key: "date")],
        ]
        var requests = sorts.map { StoreFetchRequest(entityName: "Sample", predicate: nil, sortDescriptors: $0) }
        var filtered = StoreFetchRequest(
            entityName: "Sample", predicate: try FetchPredicate("double >= 0 OR date == nil"),
            sortDescriptors: [FetchSort(key: "date"), FetchSort(key: "boolean", ascending: false)])
        filtered.offset = 2
        filtered.limit = 9
        requests.append(filtered)
        requests.append(
            StoreFetchRequest(
                entityName: "Pet", predicate: nil,
                sortDescriptors: [FetchSort(key: "owner.age", ascending: false), FetchSort(key: "owner.age")]))
        requests.append(
            StoreFetchRequest(entityName: "Pet", predicate: nil, sortDescriptors: [FetchSort(key: "owner.age")]))
        for request in requests {
            let expected = try await memory.fetch(request).map(\.reference)
            #expect(try await store.fetch(request).map(\.reference) == expected, "\(request.sortDescriptors)")
            for size in [1, 3, 7, 100] {
                let pages = try await Self.pages(of: request, in: store, size: size)
                #expect(
                    pages.flatMap { $0 } == expected, "\(request.entityName) \(request.sortDescriptors) size \(size)")
            }
        }
    }

    /// Every page of a request, read until the store says no row follows.
    static func pages(of request: StoreFetchRequest, in store: PostgreSQLStore, size: Int) async throws
        -> [[RowReference]]
    {
        var pages: [[RowReference]] = []
        var position: StoreFetchPosition?
        repeat {
            let page = try await store.fetchPage(request, after: position, size: size)
            #expect(page.rows.count <= size)
            if !page.rows.isEmpty { pages.append(page.rows.map(\.reference)) }
            position = page.next
        } while position != nil && pages.count <= 1000
        return pages
    }

    @Test func pagePositionsCarryTheLastRowsSortValues() async throws {
        let (store, _) = try await Self.stores()
        let request = StoreFetchRequest(
            entityName: "Pet", predicate: nil, sortDescriptors: [FetchSort(key: "owner.age", ascending: false)])
        let page = try await store.fetchPage(request, after: nil, size: 4)
        let next = try #require(page.next)
        #expect(next.reference == page.rows.last?.reference)
        #expect(next.delivered == 4)
        // Person 9 (age 40) owns pets 9 and 21, person 3 (age 30) pets 3 and 27.
        #expect(next.sortValues == [.integer(30)])
    }

    @Test func fetchValuesReadOnlyTheChosenAttributes() async throws {
        let (store, memory) = try await Self.stores()
        var request = StoreFetchRequest(
            entityName: "Sample", predicate: try FetchPredicate("boolean == YES"),
            sortDescriptors: [FetchSort(key: "double")])
        request.propertiesToFetch = ["double", "uri"]
        let values = try await store.fetchValues(request)
        #expect(!values.isEmpty)
        #expect(values == (try await memory.fetchValues(request)))
        #expect(values.allSatisfy { Set($0.keys).isSubset(of: ["double", "uri"]) })
    }
}
