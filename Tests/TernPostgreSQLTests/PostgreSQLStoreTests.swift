import Foundation
import TernCore
import TernPostgreSQL
import TernTestSupport
import Testing

@Suite(.enabled(if: PostgreSQLTestServer.isAvailable, PostgreSQLTestServer.skipComment))
struct PostgreSQLStoreTests {
    /// Strings that break naive SQL, COPY text or C strings.
    static let hostile = [
        "\\N", "\\", "\t", "\n", "\r\n", "a\tb\nc\\d", "'; DROP TABLE \"ZSAMPLE\"; --", "\"", "?", "$1", "\\x41", "é",
        "e\u{301}", "🦜", "\u{7F}\u{1B}", "", " ", "\\.", "end\\", String(repeating: "x", count: 10_000),
    ]

    static func sampleRow(_ key: Int64, _ text: String) -> StoreRow {
        var row = StoreRow(reference: RowReference(entityName: "Sample", primaryKey: key))
        row.attributes["string"] = .string(text)
        row.attributes["binary"] = .data(Data(text.utf8) + Data([0, 0x5C, 0x0A, 0x09, 0xFF]))
        row.attributes["uri"] = .uri(URL(string: "https://example.com/a?b=\(key)")!)
        row.attributes["decimal"] = .decimal(Decimal(string: "12345678901234567890.123456789")!)
        row.attributes["uuid"] = .uuid(UUID())
        row.attributes["date"] = .date(Date(timeIntervalSinceReferenceDate: 123.456_789_123))
        row.attributes["double"] = .double(.pi)
        row.attributes["boolean"] = .bool(true)
        return row
    }

    /// Hostile values round-trip through both write paths: INSERT (a few rows) and COPY (many).
    @Test(arguments: [3, PostgreSQLStore.copyThreshold * 2])
    func hostileValuesRoundTrip(copies: Int) async throws {
        let store = try PostgreSQLStore(url: try PostgreSQLTestServer.freshStoreURL(), model: ConformanceModel.model)
        var rows: [StoreRow] = []
        for copy in 0..<copies {
            for text in Self.hostile {
                let keys = try await store.newPrimaryKeys(forEntity: "Sample", count: 1)
                rows.append(Self.sampleRow(keys[0], text + String(repeating: " ", count: copy % 2)))
            }
        }
        _ = try await store.save(StoreChangeSet(inserted: rows))
        let read = try await store.rows(for: rows.map(\.reference))
        #expect(read.count == rows.count)
        for (written, found) in zip(rows, read) {
            #expect(found.attributes == written.attributes, "\(written.reference)")
            #expect(found.version == 1)
        }
        #expect(try await store.count(StoreFetchRequest(entityName: "Sample")) == rows.count)
    }

    @Test func textWithNULIsRefusedWithoutShowingIt() async throws {
        let store = try PostgreSQLStore(url: try PostgreSQLTestServer.freshStoreURL(), model: ConformanceModel.model)
        let key = try await store.newPrimaryKeys(forEntity: "Sample", count: 1)[0]
        let error = await #expect(throws: TernError.self) {
            _ = try await store.save(StoreChangeSet(inserted: [Self.sampleRow(key, "secret\u{0}value")]))
        }
        #expect(error?.code == .invalidValue)
        #expect(error.map { !"\($0)".contains("secret") } == true)
        #expect(try await store.count(StoreFetchRequest(entityName: "Sample")) == 0)
    }

    /// A unique violation names the row, on the row-by-row path and after COPY, and shows no value.
    @Test(arguments: [2, PostgreSQLStore.copyThreshold + 1])
    func uniqueViolationIsAConstraintConflict(rows count: Int) async throws {
        let store = try PostgreSQLStore(url: try PostgreSQLTestServer.freshStoreURL(), model: ConformanceModel.model)
        let keys = try await store.newPrimaryKeys(forEntity: "Account", count: count)
        let rows = keys.enumerated().map { index, key in
            var row = StoreRow(reference: RowReference(entityName: "Account", primaryKey: key))
            row.attributes["email"] = .string(index < 2 ? "hidden@example.com" : "other\(index)@example.com")
            return row
        }
        let error = await #expect(throws: TernError.self) { _ = try await store.save(StoreChangeSet(inserted: rows)) }
        #expect(error?.code == .constraintConflict)
        #expect(error?.failures.count == 1)
        #expect(error.map { !"\($0)".contains("hidden@") } == true)
        #expect(try await store.count(StoreFetchRequest(entityName: "Account")) == 0)
    }

    @Test func reopensWithItsModelCacheAndMetadata() async throws {
        let url = try PostgreSQLTestServer.freshStoreURL()
        let created = try PostgreSQLStore(url: url, model: ConformanceModel.model)
        let key = try await created.newPrimaryKeys(forEntity: "Sample", count: 1)[0]
        _ = try await created.save(StoreChangeSet(inserted: [Self.sampleRow(key, "kept")]))
        let reopened = try PostgreSQLStore(url: url)
        #expect(reopened.identifier == created.identifier)
        #expect(reopened.kind == .postgreSQL)
        #expect(reopened.model.entityVersionHashes == ConformanceModel.model.entityVersionHashes)
        let metadata = try PostgreSQLStore.metadata(at: url)
        #expect(metadata.uuid == created.identifier)
        #expect(metadata.versionHashes == ConformanceModel.model.entityVersionHashes)
        let rows = try await reopened.fetch(StoreFetchRequest(entityName: "Sample"))
        #expect(rows.map { $0.attributes["string"] } == [.string("kept")])
    }

    @Test func anEmptySchemaIsNotAStore() throws {
        let error = #expect(throws: TernError.self) {
            try PostgreSQLStore(url: try PostgreSQLTestServer.freshStoreURL())
        }
        #expect(error?.code == .notACoreDataStore)
    }

    @Test func readOnlyStoresRefuseWrites() async throws {
        let url = try PostgreSQLTestServer.freshStoreURL()
        _ = try PostgreSQLStore(url: url, model: ConformanceModel.model)
        let store = try PostgreSQLStore(url: url, model: ConformanceModel.model, readOnly: true)
        await #expect(throws: TernError.self) {
            _ = try await store.newPrimaryKeys(forEntity: "Sample", count: 1)
        }
        await #expect(throws: TernError.self) { _ = try await store.save(StoreChangeSet()) }
    }

    /// Connections allocating keys at once from the same root never receive the same key.
    @Test func primaryKeyBlocksAreDisjointAcrossConnections() async throws {
        let url = try PostgreSQLTestServer.freshStoreURL()
        _ = try PostgreSQLStore(url: url, model: ConformanceModel.model)
        let stores = try (0..<4).map { _ in try PostgreSQLStore(url: url, model: ConformanceModel.model) }
        let keys = try await withThrowingTaskGroup(of: [Int64].self) { group in
            for (index, store) in stores.enumerated() {
                group.addTask {
                    var keys: [Int64] = []
                    for round in 0..<25 {
                        // Car and Bike share Vehicle's key space.
                        keys += try await store.newPrimaryKeys(
                            forEntity: round % 2 == 0 ? "Car" : "Bike", count: index + 1)
                    }
                    return keys
                }
            }
            var all: [Int64] = []
            for try await keys in group { all += keys }
            return all
        }
        let expected = 25 * 10  // 25 rounds of 1, 2, 3 and 4 keys
        #expect(keys.count == expected)
        #expect(Set(keys).count == keys.count)
    }

    /// Two processes creating the same store at once create it once.
    @Test func concurrentCreationCreatesOnce() async throws {
        let url = try PostgreSQLTestServer.freshStoreURL()
        let identifiers = try await withThrowingTaskGroup(of: String.self) { group in
            for _ in 0..<4 { group.addTask { try PostgreSQLStore(url: url, model: ConformanceModel.model).identifier } }
            var all: [String] = []
            for try await identifier in group { all.append(identifier) }
            return all
        }
        #expect(Set(identifiers).count == 1)
    }
}
