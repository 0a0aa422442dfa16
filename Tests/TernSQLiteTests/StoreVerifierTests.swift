import Foundation
import TernCore
import TernRelational
import TernTestSupport
import Testing

@testable import TernSQLite

@Suite struct StoreVerifierTests {
    /// Authors with a unique name, an external portrait, at least one book, a one-to-one profile and tags.
    static func libraryModel() throws -> ManagedObjectModel {
        try ManagedObjectModel {
            Entity("Author") {
                Attribute("name", .string).required()
                Attribute("portrait", .binary).externalStorage()
                Relationship("books", to: "Book", inverse: "author").toMany().count(1...).required()
                Relationship("profile", to: "Profile", inverse: "author")
                Relationship("tags", to: "Tag", inverse: "authors").toMany()
                Unique("name")
            }
            Entity("Book") {
                Attribute("title", .string)
                Relationship("author", to: "Author", inverse: "books").required()
            }
            Entity("Novel", parent: "Book") {
                Attribute("pages", .integer32)
            }
            Entity("Profile") {
                Relationship("author", to: "Author", inverse: "profile")
            }
            Entity("Tag") {
                Attribute("label", .string)
                Relationship("authors", to: "Author", inverse: "tags").toMany()
            }
        }
    }

    /// A clean library store: Ann (p1) with her profile, a book, a novel and a tag; Bob (p2) with a book.
    struct Library {
        let folder: TemporaryDirectory
        let url: URL
        let schema: StoreSchema

        init() throws {
            folder = try TemporaryDirectory()
            url = folder.path("Library.sqlite")
            let store = try SQLiteStore(at: url, model: try StoreVerifierTests.libraryModel())
            schema = store.schema
            let tags = try #require(schema.entity(named: "Author").toMany(named: "tags"))
            guard case .joinTable(let join, let authorColumn, let tagColumn, _) = tags.storage else {
                throw TernError(.schemaMismatch, "tags is not stored in a join table")
            }
            let book = try schema.entity(named: "Book")
            let novel = try schema.entity(named: "Novel")
            try execute(
                """
                INSERT INTO ZAUTHOR (Z_PK, Z_ENT, Z_OPT, ZNAME, ZPROFILE) VALUES (1, \(try number("Author")), 1, 'Ann', 1);
                INSERT INTO ZAUTHOR (Z_PK, Z_ENT, Z_OPT, ZNAME) VALUES (2, \(try number("Author")), 1, 'Bob');
                INSERT INTO ZPROFILE (Z_PK, Z_ENT, Z_OPT, ZAUTHOR) VALUES (1, \(try number("Profile")), 1, 1);
                INSERT INTO ZBOOK (Z_PK, Z_ENT, Z_OPT, ZTITLE, ZAUTHOR) VALUES (1, \(book.number), 1, 'Poems', 1);
                INSERT INTO ZBOOK (Z_PK, Z_ENT, Z_OPT, ZTITLE, ZAUTHOR, ZPAGES) VALUES (2, \(novel.number), 1, 'Saga', 1, 900);
                INSERT INTO ZBOOK (Z_PK, Z_ENT, Z_OPT, ZTITLE, ZAUTHOR) VALUES (3, \(book.number), 1, 'Notes', 2);
                INSERT INTO ZTAG (Z_PK, Z_ENT, Z_OPT, ZLABEL) VALUES (1, \(try number("Tag")), 1, 'poetry');
                INSERT INTO "\(join)" ("\(authorColumn)", "\(tagColumn)") VALUES (1, 1);
                UPDATE Z_PRIMARYKEY SET Z_MAX = 2 WHERE Z_NAME = 'Author';
                UPDATE Z_PRIMARYKEY SET Z_MAX = 3 WHERE Z_NAME = 'Book';
                UPDATE Z_PRIMARYKEY SET Z_MAX = 1 WHERE Z_NAME IN ('Profile', 'Tag');
                """)
        }

        func number(_ entity: String) throws -> Int { try schema.entity(named: entity).number }

        /// Runs SQL statements on the store file, as damage from outside would.
        func execute(_ statements: String) throws {
            let connection = try Connection(path: url.path, configuration: SQLiteConfiguration())
            for statement in statements.split(separator: ";").map({ $0.trimmingCharacters(in: .whitespacesAndNewlines) }
            )
            where !statement.isEmpty {
                try connection.executeOnce(SQL(unsafeSQL: statement))
            }
        }

        func verify() async throws -> StoreVerificationReport {
            try await StoreVerifier.verify(storeAt: url)
        }
    }

    // MARK: - Clean stores

    @Test(arguments: Fixtures.stores.map(\.path))
    func everyFixtureStoreVerifiesClean(path: String) async throws {
        let folder = try TemporaryDirectory()
        let url = try folder.copy(Fixtures.url(path))
        for suffix in ["-wal", "-shm"] where FileManager.default.fileExists(atPath: Fixtures.url(path).path + suffix) {
            _ = try folder.copy(URL(fileURLWithPath: Fixtures.url(path).path + suffix))
        }
        let report = try await StoreVerifier.verify(storeAt: url)
        #expect(report.problems == [])
        #expect(report.isClean && !report.isTruncated)
        let raw = try Connection(path: url.path, configuration: .readOnly)
        let store = try SQLiteStore(at: url, configuration: .readOnly)
        var count = 0
        for table in store.schema.tables.keys {
            count += Int(try raw.fetchValue("SELECT COUNT(*) FROM \(SQL.identifier(table))")?.int64 ?? 0)
        }
        #expect(report.objectCount == count)
    }

    @Test func aCleanLibraryVerifiesCleanAndCountsItsObjects() async throws {
        let library = try Library()
        let progress = Progress(totalUnitCount: 0)
        let report = try await StoreVerifier.verify(storeAt: library.url, progress: progress)
        #expect(report.problems == [])
        #expect(report.objectCount == 7)
        #expect(progress.totalUnitCount > 0 && progress.completedUnitCount == progress.totalUnitCount)
    }

    // MARK: - Planted problems

    @Test func aLaggingPrimaryKeyCounterIsReported() async throws {
        let library = try Library()
        try library.execute("UPDATE Z_PRIMARYKEY SET Z_MAX = 1 WHERE Z_NAME = 'Book'")
        let problems = try await library.verify().problems
        #expect(problems.map(\.kind) == [.primaryKeyCounter])
        #expect(problems.first?.entityName == "Book" && problems.first?.primaryKey == 3)
    }

    @Test(arguments: [
        // A subentity that claims to be a root, and a root that claims a parent (itself).
        ("UPDATE Z_PRIMARYKEY SET Z_SUPER = 0 WHERE Z_NAME = 'Novel'", "Novel", "superentity Book"),
        ("UPDATE Z_PRIMARYKEY SET Z_SUPER = Z_ENT WHERE Z_NAME = 'Author'", "Author", "0: it is a root entity"),
    ])
    func aSuperentityNumberTheModelDoesNotHaveIsReported(update: String, entity: String, expected: String) async throws
    {
        let library = try Library()
        try library.execute(update)
        let problems = try await library.verify().problems
        #expect(problems.map(\.kind) == [.entityHierarchy])
        #expect(problems.first?.entityName == entity)
        #expect(problems.first?.message.contains(expected) == true, "\(problems)")
    }

    @Test func anUnknownEntityNumberIsReported() async throws {
        let library = try Library()
        try library.execute("UPDATE ZBOOK SET Z_ENT = 77 WHERE Z_PK = 3")
        let problems = try await library.verify().problems
        let problem = try #require(problems.first { $0.kind == .unknownEntity })
        #expect(problem.entityName == "Book" && problem.primaryKey == 3)
    }

    @Test func aDanglingToOneIsReportedWithItsObject() async throws {
        let library = try Library()
        try library.execute("UPDATE ZBOOK SET ZAUTHOR = 99 WHERE Z_PK = 2")
        let problems = try await library.verify().problems
        let dangling = problems.filter { $0.kind == .danglingReference }
        #expect(dangling.count == 1)
        #expect(dangling.first?.location == "Novel/p2.author")
        #expect(dangling.first?.message.contains("Author/p99") == true)
    }

    @Test func anOrphanJoinRowIsReported() async throws {
        let library = try Library()
        let tags = try #require(library.schema.entity(named: "Author").toMany(named: "tags"))
        guard case .joinTable(let join, let authorColumn, let tagColumn, _) = tags.storage else {
            Issue.record("tags is not a join table")
            return
        }
        try library.execute("INSERT INTO \"\(join)\" (\"\(authorColumn)\", \"\(tagColumn)\") VALUES (2, 42)")
        let problems = try await library.verify().problems
        #expect(problems.count == 1)
        #expect(problems.first?.kind == .danglingReference)
        #expect(problems.first?.entityName == "Tag" && problems.first?.primaryKey == 42)
        #expect(problems.first?.message.contains(join) == true)
    }

    @Test func aOneToOneWhoseSidesDisagreeIsReported() async throws {
        let library = try Library()
        try library.execute("UPDATE ZPROFILE SET ZAUTHOR = 2 WHERE Z_PK = 1")
        let problems = try await library.verify().problems.filter { $0.kind == .inverseMismatch }
        #expect(Set(problems.map(\.location)) == ["Author/p1.profile", "Profile/p1.author"])
    }

    @Test func aMissingRequiredValueIsReported() async throws {
        let library = try Library()
        try library.execute("UPDATE ZAUTHOR SET ZNAME = NULL WHERE Z_PK = 2")
        let problems = try await library.verify().problems
        #expect(problems.map(\.kind) == [.missingValue])
        #expect(problems.first?.location == "Author/p2.name")
    }

    @Test func aToManyBelowItsMinimumIsReported() async throws {
        let library = try Library()
        try library.execute("DELETE FROM ZBOOK WHERE Z_PK = 3")
        let problems = try await library.verify().problems
        #expect(problems.map(\.kind) == [.countOutOfRange])
        #expect(problems.first?.location == "Author/p2.books")
    }

    @Test func aDuplicateUniqueKeyIsReported() async throws {
        let library = try Library()
        // Tern enforces the constraint with a unique index: drop it, as an older writer might not have it.
        let index = try #require(library.schema.tables["ZAUTHOR"]?.indexes.first { $0.isUnique })
        try library.execute("DROP INDEX \"\(index.name)\"; UPDATE ZAUTHOR SET ZNAME = 'Ann' WHERE Z_PK = 2")
        let problems = try await library.verify().problems
        #expect(problems.map(\.kind) == [.uniquenessViolation])
        #expect(problems.first?.entityName == "Author" && problems.first?.primaryKey == 2)
        #expect(problems.first?.message.contains("p1") == true)
    }

    @Test func aMissingExternalDataFileIsReported() async throws {
        let library = try Library()
        let name = UUID().uuidString
        let reference = "02" + Data(name.utf8).map { String(format: "%02X", $0) }.joined() + "00"
        try library.execute("UPDATE ZAUTHOR SET ZPORTRAIT = x'\(reference)' WHERE Z_PK = 1")
        let problems = try await library.verify().problems
        #expect(problems.map(\.kind) == [.missingExternalData])
        #expect(problems.first?.location == "Author/p1.portrait")
        #expect(problems.first?.message.contains(name) == true)
        let folder = library.folder.path(".Library_SUPPORT/_EXTERNAL_DATA")
        try FileManager.default.createDirectory(at: folder, withIntermediateDirectories: true)
        try Data([1, 2, 3]).write(to: folder.appendingPathComponent(name))
        #expect(try await library.verify().isClean)
    }

    @Test func aCorruptPageFailsTheIntegrityCheck() async throws {
        let folder = try TemporaryDirectory()
        let url = try folder.copy(Fixtures.url(Fixtures.stores[0].path))
        let handle = try FileHandle(forUpdating: url)
        let size = try handle.seekToEnd()
        #expect(size > 16384)
        try handle.seek(toOffset: 8192)
        try handle.write(contentsOf: Data(repeating: 0x55, count: 8192))
        try handle.close()
        let report = try await StoreVerifier.verify(storeAt: url)
        #expect(!report.isClean)
        #expect(report.problems.allSatisfy { $0.kind == .integrity })
    }

    @Test func theLimitTruncatesTheReport() async throws {
        let library = try Library()
        try library.execute("UPDATE ZBOOK SET ZAUTHOR = 99")
        let report = try await StoreVerifier.verify(storeAt: library.url, problemLimit: 2)
        #expect(report.problems.count == 2)
        #expect(report.isTruncated)
    }

    @Test func aFileThatIsNotAStoreThrows() async throws {
        let folder = try TemporaryDirectory()
        let url = folder.path("notes.sqlite")
        try Data("just some text, long enough to not be a database header".utf8).write(to: url)
        await #expect(throws: SQLiteError.self) { try await StoreVerifier.verify(storeAt: url) }
    }
}
