import Foundation
import TernCore
import TernMigration
import TernRelational
import TernTestSupport
import Testing

@testable import TernSQLite

/// Attributes that start or stop allowing external storage, migrated in place with SQL.
@Suite struct InPlaceExternalStorageTests {
    /// v1: `data` is kept in its column, `thumb` may go to files; v2 swaps them, and adds
    /// `extra`, an external-storage attribute with a default.
    static func photos() throws -> VersionedModel {
        try VersionedModel("Photos") {
            ModelVersion("v1") {
                Entity("Photo") {
                    Attribute("name", .string)
                    Attribute("data", .binary)
                    Attribute("thumb", .binary).externalStorage()
                }
            }
            ModelVersion("v2") {
                Entity("Photo") {
                    Attribute("name", .string)
                    Attribute("data", .binary).externalStorage()
                    Attribute("thumb", .binary)
                    Attribute("extra", .binary).externalStorage().default(.data(Data([0, 1, 2])))
                }
            }
        }
    }

    static let large = Data((0..<64).map { UInt8($0) })
    static let values: [(data: Data?, thumb: Data?)] = [
        (Data([0, 0, 1, 2, 0]), large),  // NUL bytes kept; the thumb in a file
        (Data("plain".utf8), Data([9])),  // both inline
        (nil, nil),
        (large, Data([1, 2, 3])),  // a thumb that starts with the inline marker's byte
    ]

    /// A v1 store whose thumbs from 16 bytes go to files; its URL.
    static func store(in directory: TemporaryDirectory) async throws -> URL {
        let url = directory.path("Photos.sqlite")
        var configuration = SQLiteConfiguration()
        configuration.externalStorageThreshold = 16
        let store = try SQLiteStore(at: url, model: try photos().versions[0].model, configuration: configuration)
        let rows = values.enumerated().map { index, value in
            var attributes: [String: AttributeValue] = ["name": .string("photo \(index + 1)")]
            if let data = value.data { attributes["data"] = .data(data) }
            if let thumb = value.thumb { attributes["thumb"] = .data(thumb) }
            return StoreRow(
                reference: RowReference(entityName: "Photo", primaryKey: Int64(index + 1)), attributes: attributes)
        }
        _ = try await store.save(StoreChangeSet(inserted: rows))
        return url
    }

    static func externalFiles(of url: URL) -> [String] {
        let folder = url.deletingLastPathComponent().appendingPathComponent(".Photos_SUPPORT/_EXTERNAL_DATA")
        return (try? FileManager.default.contentsOfDirectory(atPath: folder.path)) ?? []
    }

    @Test func storageChangesMigrateInPlaceAsARebuildDoes() async throws {
        let directory = try TemporaryDirectory()
        let url = try await Self.store(in: directory)
        try await InPlaceMigrationTests.compare(url, model: try Self.photos())
    }

    @Test func valuesMoveBetweenTheirFilesAndTheColumnWithoutLoss() async throws {
        let directory = try TemporaryDirectory()
        let url = try await Self.store(in: directory)
        #expect(Self.externalFiles(of: url).count == 1)
        let model = try Self.photos()
        let report = try await SQLiteStoreMigrator().migrateStore(
            at: url, model: model, options: MigrationOptions(strategy: .inPlace))
        #expect(report.inPlaceSteps == [0])
        // The thumb's file was read into its column, then removed once the migration committed.
        #expect(report.removedExternalFiles == 1)
        #expect(Self.externalFiles(of: url).isEmpty)

        let v2 = try #require(model.version(named: "v2")?.model)
        let photos = try await MigrationStores.rows(of: "Photo", at: url, model: v2)
        #expect(photos.map { $0.attributes["data"] } == Self.values.map { $0.data.map(AttributeValue.data) })
        #expect(photos.map { $0.attributes["thumb"] } == Self.values.map { $0.thumb.map(AttributeValue.data) })
        #expect(photos.allSatisfy { $0.attributes["extra"] == .data(Data([0, 1, 2])) })
        // Core Data's layout: `data` now carries the inline marker, `thumb` raw bytes.
        let connection = try Connection(path: url.path, configuration: .readOnly)
        let columns = try connection.fetchAll("SELECT ZDATA, ZTHUMB, ZEXTRA FROM ZPHOTO ORDER BY Z_PK")
        #expect(columns.map { $0[0].data } == Self.values.map { $0.data.map { Data([1]) + $0 } })
        #expect(columns.map { $0[1].data } == Self.values.map(\.thumb))
        #expect(columns.allSatisfy { $0[2].data == Data([1, 0, 1, 2]) })
        let verification = try await StoreVerifier.verify(storeAt: url, model: v2)
        #expect(verification.problems.isEmpty, "\(verification.problems)")
    }

    @Test func aMissingExternalFileStopsTheMigrationAndLeavesTheStore() async throws {
        let directory = try TemporaryDirectory()
        let url = try await Self.store(in: directory)
        let folder = url.deletingLastPathComponent().appendingPathComponent(".Photos_SUPPORT/_EXTERNAL_DATA")
        for name in Self.externalFiles(of: url) {
            try FileManager.default.removeItem(at: folder.appendingPathComponent(name))
        }
        let before = try StoreContents(of: url)
        let error = await #expect(throws: SQLiteError.self) {
            try await SQLiteStoreMigrator().migrateStore(
                at: url, model: try Self.photos(), options: MigrationOptions(strategy: .inPlace))
        }
        #expect(error?.message.contains("external data file is missing") == true, "\(String(describing: error))")
        #expect(try StoreContents(of: url).differences(from: before).isEmpty)
        #expect(try SQLiteStoreMigrator().plan(forStoreAt: url, model: try Self.photos()).source == "v1")
    }
}
