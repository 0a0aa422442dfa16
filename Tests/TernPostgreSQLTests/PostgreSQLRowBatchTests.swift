import Foundation
import TernCore
import TernPostgreSQL
import TernTestSupport
import Testing

/// Rows inserted as ``RowBatch``es (one `COPY` per batch, no dictionary per row) are the rows
/// the dictionary form inserts, and fail as it fails.
@Suite(.enabled(if: PostgreSQLTestServer.isAvailable, PostgreSQLTestServer.skipComment))
struct PostgreSQLRowBatchTests {
    static func model() throws -> ManagedObjectModel {
        try ManagedObjectModel {
            Entity("Event") {
                Attribute("id", .integer64)
                Attribute("name", .string)
                Attribute("when", .date)
                Attribute("flag", .boolean)
                Attribute("ratio", .double)
                Attribute("email", .string)
                Unique("email")
            }
        }
    }

    /// Two fresh stores: one fed batches, one fed the same rows as dictionaries.
    static func stores() throws -> (batches: PostgreSQLStore, dictionaries: PostgreSQLStore, urls: [String]) {
        let urls = try (0..<2).map { _ in try PostgreSQLTestServer.freshStoreURL(prefix: "batch") }
        let model = try model()
        return (try PostgreSQLStore(url: urls[0], model: model), try PostgreSQLStore(url: urls[1], model: model), urls)
    }

    /// Batches of `rows` in the given columns, `size` rows each.
    static func batches(_ rows: [[AttributeValue?]], columns: [String], size: Int) -> [RowBatch] {
        stride(from: 0, to: rows.count, by: size).map { start in
            var batch = RowBatch(columns: columns)
            for row in rows[start..<min(start + size, rows.count)] { batch.append(row: row) }
            return batch
        }
    }

    /// Inserts the batches through both forms: the keys and what each store holds, or the errors.
    static func insert(_ batches: [RowBatch]) async throws -> (
        keys: [[ClosedRange<Int64>]], rows: [[StoreRow]], errors: [TernError?]
    ) {
        let (batchStore, dictionaryStore, urls) = try stores()
        defer { for url in urls { try? PostgreSQLStore.destroy(at: url) } }
        var keys: [[ClosedRange<Int64>]] = []
        var errors: [TernError?] = []
        var rows: [[StoreRow]] = []
        for (index, store) in [batchStore, dictionaryStore].enumerated() {
            var pending = batches
            do {
                if index == 0 {
                    keys.append(
                        try await store.insertRows(entityName: "Event", author: nil, contextName: nil) {
                            pending.isEmpty ? nil : pending.removeFirst()
                        })
                } else {
                    keys.append(
                        try await store.insertRows(entityName: "Event", author: nil, contextName: nil) {
                            pending.isEmpty ? nil : pending.removeFirst().dictionaries
                        })
                }
                errors.append(nil)
            } catch let error as TernError {
                keys.append([])
                errors.append(error)
            }
            rows.append(
                try await store.fetch(StoreFetchRequest(entityName: "Event")).sorted { $0.reference < $1.reference })
        }
        return (keys, rows, errors)
    }

    @Test func batchesInsertWhatDictionariesInsert() async throws {
        var rows: [[AttributeValue?]] = []
        for index in 0..<500 {
            let name: AttributeValue? = index % 7 == 0 ? nil : .string("event\t\(index)\\\n")
            let when = AttributeValue.date(Date(timeIntervalSinceReferenceDate: Double(index) * 1234.567_891))
            let ratio: AttributeValue? = index % 5 == 0 ? nil : .double(Double(index) / 3)
            let email = AttributeValue.string("e\(index)@example.com")
            rows.append([.integer(Int64(index) - 250), name, when, .bool(index % 2 == 0), ratio, email])
        }
        let result = try await Self.insert(
            Self.batches(rows, columns: ["id", "name", "when", "flag", "ratio", "email"], size: 128))
        #expect(result.errors == [nil, nil])
        #expect(result.keys[0] == [1...500])
        #expect(result.keys[0] == result.keys[1])
        #expect(result.rows[0].count == 500)
        #expect(result.rows[0] == result.rows[1])
    }

    @Test func batchesFailAsDictionariesFailAndWriteNothing() async throws {
        let columns = ["id", "email"]
        let cases: [[RowBatch]] = [
            // A uniqueness constraint broken across two batches: the error names the row.
            Self.batches(
                (0..<200).map { [.integer(Int64($0)), .string($0 == 150 ? "e3" : "e\($0)")] }, columns: columns,
                size: 100),
            // A value of another type, and a column that names no attribute.
            Self.batches([[.integer(1), .integer(2)]], columns: columns, size: 1),
            // A value of another type in the middle of the second batch, whose COPY has sent a
            // chunk of rows by then (more than 64 KiB): the COPY is abandoned, and the first batch rolled back with it.
            Self.batches(
                (0..<5_000).map {
                    [
                        .integer(Int64($0)),
                        $0 == 4_500 ? .integer(2) : .string(String(repeating: "e", count: 40) + "\($0)"),
                    ]
                },
                columns: columns, size: 2_500),
            Self.batches([[.integer(1), .string("a")]], columns: ["id", "mail"], size: 1),
        ]
        for batches in cases {
            let result = try await Self.insert(batches)
            let error = try #require(result.errors[0])
            #expect(result.errors[1]?.code == error.code)
            #expect(result.errors[1]?.message == error.message)
            // The same object (`Entity/p<key>`), in stores of their own.
            let objects = { (error: TernError?) in
                error?.failures.map {
                    String(describing: $0.objectID).split(separator: "/").suffix(2).joined(separator: "/")
                }
            }
            #expect(objects(result.errors[1]) == objects(error))
            #expect(result.rows == [[], []])
        }
    }
}
