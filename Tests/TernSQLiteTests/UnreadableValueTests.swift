import Foundation
import TernCore
import TernTestSupport
import Testing

@testable import TernSQLite

/// Values a read cannot give (a column the attribute's type cannot read, a missing external data
/// file): a failure by default, nil and a log entry with ``SQLiteConfiguration/UnreadableValues/readAsNil``,
/// and a problem of `tern verify` either way.
@Suite struct UnreadableValueTests {
    /// The verifier's library store, with text in Novel p2's Integer 32 `pages` and Author p1's
    /// portrait in an external data file that does not exist.
    static func damagedLibrary() throws -> (library: StoreVerifierTests.Library, fileName: String) {
        let library = try StoreVerifierTests.Library()
        let name = UUID().uuidString
        let reference = "02" + Data(name.utf8).map { String(format: "%02X", $0) }.joined() + "00"
        try library.execute(
            """
            UPDATE ZAUTHOR SET ZPORTRAIT = x'\(reference)' WHERE Z_PK = 1;
            UPDATE ZBOOK SET ZPAGES = 'many' WHERE Z_PK = 2
            """)
        return (library, name)
    }

    static func readingAsNil() -> SQLiteConfiguration {
        var configuration = SQLiteConfiguration.readOnly
        configuration.unreadableValues = .readAsNil
        return configuration
    }

    @Test func byDefaultAReadFailsAtAnUnreadableValue() async throws {
        let (library, _) = try Self.damagedLibrary()
        #expect(SQLiteConfiguration().unreadableValues == .fail)
        let store = try SQLiteStore(at: library.url, configuration: .readOnly)
        let novel = await #expect(throws: TernError.self) {
            try await store.rows(for: [RowReference(entityName: "Novel", primaryKey: 2)])
        }
        #expect(novel?.code == .invalidValue)
        #expect(
            novel?.message.hasPrefix("Row 2 of Novel holds a value its Integer 32 attribute pages cannot read") == true)
        let author = await #expect(throws: TernError.self) {
            try await store.rows(for: [RowReference(entityName: "Author", primaryKey: 1)])
        }
        #expect(author?.code == .invalidExternalData)
        #expect(
            author?.message.hasPrefix("The portrait of row 1 of Author cannot be read: the external data file") == true)
        #expect(store.unreadableValueLog.isEmpty)
    }

    @Test func readingAsNilGivesEveryOtherValueAndLogsTheUnreadableOnes() async throws {
        let (library, name) = try Self.damagedLibrary()
        let store = try SQLiteStore(at: library.url, configuration: Self.readingAsNil())
        let novel = try #require(try await store.rows(for: [RowReference(entityName: "Novel", primaryKey: 2)]).first)
        #expect(novel.attributes["pages"] == nil)
        #expect(novel.attributes["title"] == .string("Saga"))
        let authors = try await store.rows(of: "Author", limit: 10)
        #expect(authors.map(\.reference.primaryKey) == [1, 2])
        #expect(authors[0].attributes["portrait"] == nil && authors[0].attributes["name"] == .string("Ann"))

        let log = store.unreadableValueLog
        #expect(log.count == 2)
        #expect(log.first.map(\.location) == ["Novel/p2.pages", "Author/p1.portrait"])
        #expect(log.first.map(\.kind) == [.invalidValue, .missingExternalData])
        #expect(log.first[0].path == nil)
        let path = try #require(log.first[1].path)
        #expect(path.hasSuffix(".Library_SUPPORT/_EXTERNAL_DATA/\(name)"))

        // Reads that do not wait for the actor log too; the same value read again counts again.
        _ = try store.rowsSynchronously(for: [RowReference(entityName: "Novel", primaryKey: 2)])
        #expect(store.unreadableValueLog.count == 3)
        #expect(store.unreadableValueLog.first.count == 3)
    }

    @Test func theLogKeepsACountAndTheFirstFew() {
        var log = UnreadableValueLog()
        for key in 1...(UnreadableValueLog.keptCount * 3) {
            log.add(UnreadableValue(.invalidValue, entityName: "Book", primaryKey: Int64(key), propertyName: "pages"))
        }
        #expect(log.count == UnreadableValueLog.keptCount * 3)
        #expect(log.first.map(\.primaryKey) == (1...UnreadableValueLog.keptCount).map { Int64($0) })
    }

    @Test func verifyListsBothWithTheirPlace() async throws {
        let (library, name) = try Self.damagedLibrary()
        let problems = try await library.verify().problems
        #expect(Set(problems.map(\.kind)) == [.unreadableValue, .missingExternalData])
        let unreadable = try #require(problems.first { $0.kind == .unreadableValue })
        #expect(unreadable.location == "Novel/p2.pages")
        #expect(unreadable.message.contains("Integer 32"))
        let missing = try #require(problems.first { $0.kind == .missingExternalData })
        #expect(missing.location == "Author/p1.portrait" && missing.message.contains(name))
        try library.execute("UPDATE ZBOOK SET ZPAGES = 900 WHERE Z_PK = 2")
        #expect(try await library.verify().problems.map(\.kind) == [.missingExternalData])
    }
}
