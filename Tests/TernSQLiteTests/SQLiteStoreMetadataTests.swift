import Foundation
import TernCore
import TernRelational
import TernTestSupport
import Testing

@testable import TernSQLite

@Suite struct SQLiteStoreMetadataTests {
    @Test(arguments: ExpectedStore.all)
    func readsTheFixturesMetadata(_ expected: ExpectedStore) throws {
        let folder = try TemporaryDirectory()
        let url = try folder.copyStore(expected)
        let metadata = try SQLiteStore.metadata(at: url)
        #expect(metadata.storeType == "SQLite")
        #expect(metadata.uuid == expected.uuid)
        #expect(metadata.frameworkVersion == expected.frameworkVersion)
        #expect(metadata.versionIdentifiers == expected.identifiers)
        #expect(metadata.hashesVersion == 3)
        #expect(metadata.modelChecksum == expected.checksum)
        #expect(metadata.hashesDigest == expected.digest)
        #expect(metadata.versionHashes.mapValues { $0.base64EncodedString() } == expected.hashes)
        #expect(metadata.applicationKeys["_NSAutoVacuumLevel"] == .string("2"))
        for key in ["NSStoreType", "NSStoreModelVersionHashes", "NSPersistenceFrameworkVersion"] {
            #expect(metadata.applicationKeys[key] == nil)
        }
    }

    @Test(arguments: ExpectedStore.all)
    func readingMetadataWritesNothingBesideTheStore(_ expected: ExpectedStore) throws {
        let folder = try TemporaryDirectory()
        let url = try folder.copyStore(expected)
        let before = folder.fileNames
        let bytes = try Data(contentsOf: url)
        _ = try SQLiteStore.metadata(at: url)
        #expect(folder.fileNames == before)
        #expect(try Data(contentsOf: url) == bytes)
    }

    @Test func rewritingMetadataKeepsUnknownKeys() throws {
        let folder = try TemporaryDirectory()
        let url = try folder.copyStore(ExpectedStore.all[0])
        var metadata = try SQLiteStore.metadata(at: url)
        metadata.applicationKeys["AppToken"] = .dictionary(["nested": .array([.integer(-5), .real(1.5), .bool(true)])])
        metadata.applicationKeys["Greeting"] = .string("héllo 🦅 '; DROP TABLE ZCAR; --")
        metadata.applicationKeys["When"] = .date(Date(timeIntervalSinceReferenceDate: 737057647.25))
        metadata.versionIdentifiers = ["7"]
        try SQLiteStore.setMetadata(metadata, at: url)
        let reread = try SQLiteStore.metadata(at: url)
        #expect(reread == metadata)
        #expect(reread.applicationKeys["_NSAutoVacuumLevel"] == .string("2"))
    }

    @Test func aFileThatIsNotSQLiteFailsWithItsPath() throws {
        let folder = try TemporaryDirectory()
        let url = folder.path("notes.sqlite")
        try Data(repeating: 0x41, count: 8192).write(to: url)
        let error = try #require(throws: SQLiteError.self) { try SQLiteStore.metadata(at: url) }
        #expect(error.code == .notADatabase)
        #expect(error.path == url.path)
    }

    @Test func aDatabaseWithoutMetadataIsNotACoreDataStore() throws {
        let folder = try TemporaryDirectory()
        let url = folder.path("plain.sqlite")
        do {
            let connection = try Connection(path: url.path, configuration: SQLiteConfiguration())
            try connection.execute("CREATE TABLE t (x)")
        }
        let error = try #require(throws: TernError.self) { try SQLiteStore.metadata(at: url) }
        #expect(error.code == .notACoreDataStore)
        #expect(error.path == url.path)
        #expect(error.message.contains("Z_METADATA"))
    }

    @Test func aMissingFileFailsWithItsPath() throws {
        let folder = try TemporaryDirectory()
        let url = folder.path("missing.sqlite")
        let error = try #require(throws: TernError.self) { try SQLiteStore.metadata(at: url) }
        #expect(error.path == url.path)
        #expect(!FileManager.default.fileExists(atPath: url.path))
    }
}
