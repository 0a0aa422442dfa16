import Foundation
import TernCore
import TernTestSupport
import Testing

@testable import TernSQLite

/// Stores keep their write-ahead log through migrations, metadata writes and replacement. Found
/// by the crash harness: a closed WAL store is opened immutable for reading, where SQLite reports
/// the journal mode "delete", so migrations wrote rollback-journal stores and a replaced store
/// was rewritten through a rollback journal, which a kill left hot (read-only tools then failed).
@Suite struct JournalModeTests {
    static func model() throws -> VersionedModel {
        try VersionedModel("Notes") {
            ModelVersion("v1") { Entity("Note") { Attribute("text", .string) } }
            ModelVersion("v2") {
                Entity("Note") {
                    Attribute("text", .string)
                    Attribute("pinned", .boolean)
                }
            }
        }
    }

    /// Whether the file's header says write-ahead log (bytes 18 and 19 are 2).
    static func isWAL(_ url: URL) throws -> Bool {
        let header = try Data(contentsOf: url).prefix(20)
        return header.count == 20 && header[18] == 2 && header[19] == 2
    }

    /// A closed v1 store in WAL mode with one note.
    static func makeStore(_ url: URL, text: String = "hello") async throws {
        let store = try SQLiteStore(at: url, model: try model().versions[0].model)
        let key = try await store.newPrimaryKeys(forEntity: "Note", count: 1)[0]
        _ = try await store.save(
            StoreChangeSet(inserted: [
                StoreRow(
                    reference: RowReference(entityName: "Note", primaryKey: key), attributes: ["text": .string(text)])
            ]))
    }

    @Test func aClosedWriteAheadLogStoreReportsItsMode() async throws {
        let folder = try TemporaryDirectory()
        let url = folder.path("Notes.sqlite")
        try await Self.makeStore(url)
        #expect(!FileManager.default.fileExists(atPath: url.path + "-wal"))
        #expect(try SQLiteStore.journalMode(ofStoreAt: url) == .wal)
        var metadata = try SQLiteStore.metadata(at: url)
        metadata.applicationKeys["touched"] = .bool(true)
        try SQLiteStore.setMetadata(metadata, at: url)
        #expect(try Self.isWAL(url))
    }

    @Test func aMigratedStoreKeepsItsWriteAheadLog() async throws {
        let folder = try TemporaryDirectory()
        let url = folder.path("Notes.sqlite")
        try await Self.makeStore(url)
        try await SQLiteStoreMigrator().migrateStore(at: url, model: try Self.model())
        #expect(try Self.isWAL(url))
        #expect(try Self.model().versions[1].model.isCompatible(with: SQLiteStore.metadata(at: url)))
    }

    @Test func aReplacedStoreKeepsItsWriteAheadLog() async throws {
        let folder = try TemporaryDirectory()
        let url = folder.path("Notes.sqlite")
        let source = folder.path("Source.sqlite")
        try await Self.makeStore(url)
        try await Self.makeStore(source, text: "replaced")
        try SQLiteStore.backupStore(at: source, to: url)
        #expect(try Self.isWAL(url))
        #expect(!FileManager.default.fileExists(atPath: url.path + "-journal"))
        let store = try SQLiteStore(at: url, configuration: .readOnly)
        let rows = try await store.fetch(StoreFetchRequest(entityName: "Note"))
        #expect(rows.map { $0.attributes["text"] } == [.string("replaced")])
    }
}
