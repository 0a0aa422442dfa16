import Foundation
import TernCore
import TernRelational
import TernSQLite
import TernTestSupport
import Testing

@testable import TernTool

/// `tern export` and `tern verify` on a store some of whose values cannot be read: external data
/// files missing (a store copied without its `_SUPPORT` folder) and a column its type cannot read.
@Suite struct ExportUnreadableValueTests {
    /// A store of three photos, each image in an external data file, and its files' folder.
    static func photoStore(in folder: TemporaryDirectory) async throws -> (url: URL, files: URL) {
        let model = try ManagedObjectModel {
            Entity("Photo") {
                Attribute("title", .string)
                Attribute("image", .binary).externalStorage()
                Attribute("taken", .date)
            }
        }
        let url = folder.path("Photos.sqlite")
        var configuration = SQLiteConfiguration()
        configuration.externalStorageThreshold = 16
        let store = try SQLiteStore(at: url, model: model, configuration: configuration)
        let keys = try await store.newPrimaryKeys(forEntity: "Photo", count: 3)
        let rows = keys.enumerated().map { index, key in
            StoreRow(
                reference: RowReference(entityName: "Photo", primaryKey: key), version: 1,
                attributes: [
                    "title": .string("photo \(index + 1)"),
                    "image": .data(Data(repeating: UInt8(index + 1), count: 64)),
                    "taken": .date(Date(timeIntervalSinceReferenceDate: Double(index) * 86400)),
                ])
        }
        try await store.save(StoreChangeSet(inserted: rows))
        let files = folder.path(".Photos_SUPPORT/_EXTERNAL_DATA")
        #expect(try FileManager.default.contentsOfDirectory(atPath: files.path).count == 3)
        return (url, files)
    }

    /// The external data file of a photo.
    static func file(ofPhoto key: Int, in url: URL, files: URL) throws -> URL {
        let connection = try Connection(path: url.path, configuration: .readOnly)
        let bytes = try #require(try connection.fetchValue("SELECT ZIMAGE FROM ZPHOTO WHERE Z_PK = \(key)")?.data)
        return files.appendingPathComponent(String(decoding: bytes.dropFirst().prefix { $0 != 0 }, as: UTF8.self))
    }

    static func photos(in output: String) throws -> [[String: Any]] {
        let object = try JSONSerialization.jsonObject(with: Data(output.utf8)) as? [String: [[String: Any]]]
        return try #require(object?["Photo"])
    }

    @Test func aStoreWithoutItsSupportFolderExportsEverythingElseWithAWarning() async throws {
        let folder = try TemporaryDirectory()
        let (url, files) = try await Self.photoStore(in: folder)
        let first = try Self.file(ofPhoto: 1, in: url, files: files)
        try FileManager.default.removeItem(at: folder.path(".Photos_SUPPORT"))
        let result = await ToolRunner.run(["export", url.path])
        #expect(result.status == 0, "\(result.standardError)")
        let photos = try Self.photos(in: result.standardOutput)
        #expect(photos.compactMap { $0["title"] as? String } == ["photo 1", "photo 2", "photo 3"])
        #expect(photos.allSatisfy { $0["image"] is NSNull })
        #expect(photos.allSatisfy { $0["taken"] is String })
        #expect(
            result.errorLines == [
                "warning: 3 values could not be read and were exported as null; the first is Photo/p1.image: its external "
                    + "data file \(first.path) is missing or unreadable. Copy the store with its _SUPPORT folder to export "
                    + "them; tern verify lists them all"
            ])
    }

    @Test func oneMissingFileLeavesTheOthersExported() async throws {
        let folder = try TemporaryDirectory()
        let (url, files) = try await Self.photoStore(in: folder)
        let second = try Self.file(ofPhoto: 2, in: url, files: files)
        try FileManager.default.removeItem(at: second)
        let output = folder.path("photos.json")
        let result = await ToolRunner.run(["export", url.path, "-o", output.path])
        #expect(result.status == 0, "\(result.standardError)")
        let photos = try Self.photos(in: String(decoding: try Data(contentsOf: output), as: UTF8.self))
        #expect(photos.map { $0["image"] is NSNull } == [false, true, false])
        #expect(photos.first?["image"] as? String == Data(repeating: 1, count: 64).base64EncodedString())
        #expect(result.errorLines.count == 2)
        #expect(result.errorLines.first == "exported 3 objects to \(output.path)")
        let warning = try #require(result.errorLines.last)
        #expect(
            warning.hasPrefix(
                "warning: 1 value could not be read and was exported as null; the first is Photo/p2.image: "))
        #expect(warning.contains(second.path))
    }

    @Test func strictFailsAndWritesNothing() async throws {
        let folder = try TemporaryDirectory()
        let (url, files) = try await Self.photoStore(in: folder)
        let missing = try Self.file(ofPhoto: 3, in: url, files: files)
        try FileManager.default.removeItem(at: missing)
        let stdout = await ToolRunner.run(["export", url.path, "--strict"])
        RealWorldStoreCommandTests.expectClearFailure(stdout, "export --strict")
        #expect(stdout.errorLines.count == 1)
        #expect(stdout.errorLines.first?.contains(missing.path) == true)
        #expect(
            stdout.errorLines.first?.contains("the image of row 3 of Photo cannot be read: the external data file")
                == true)
        #expect(
            stdout.errorLines.first?.hasSuffix(
                "export without --strict to write null for the values that cannot be read") == true)
        let output = folder.path("photos.json")
        let file = await ToolRunner.run(["export", url.path, "--strict", "-o", output.path])
        RealWorldStoreCommandTests.expectClearFailure(file, "export --strict -o")
        #expect(!FileManager.default.fileExists(atPath: output.path))
        #expect(
            try FileManager.default.contentsOfDirectory(atPath: folder.url.path).filter { $0.hasPrefix(".tern-export") }
                .isEmpty)
    }

    @Test func aValueItsTypeCannotReadIsNullWithAWarningNamingTheRow() async throws {
        let folder = try TemporaryDirectory()
        let (url, _) = try await Self.photoStore(in: folder)
        let connection = try Connection(path: url.path, configuration: SQLiteConfiguration())
        try connection.executeOnce("UPDATE ZPHOTO SET ZTAKEN = 'yesterday' WHERE Z_PK = 2")
        let result = await ToolRunner.run(["export", url.path, "--entity", "Photo", "--format", "tsv"])
        #expect(result.status == 0, "\(result.standardError)")
        let lines = result.standardOutput.split(separator: "\n", omittingEmptySubsequences: false).map {
            $0.split(separator: "\t", omittingEmptySubsequences: false)
        }
        let header = try #require(lines.first).map(String.init)
        let taken = try #require(header.firstIndex(of: "taken"))
        #expect(lines[1][taken] != "" && lines[2][taken] == "" && lines[3][taken] != "")
        #expect(
            result.errorLines == [
                "warning: 1 value could not be read and was exported as null; the first is Photo/p2.taken: its column holds "
                    + "a value the attribute's type cannot read. tern verify lists them all"
            ])
        let strict = await ToolRunner.run(["export", url.path, "--strict"])
        RealWorldStoreCommandTests.expectClearFailure(strict, "export --strict")
        #expect(
            strict.errorLines.first?.contains("row 2 of Photo holds a value its Date attribute taken cannot read")
                == true)
    }

    @Test func verifyListsBoth() async throws {
        let folder = try TemporaryDirectory()
        let (url, files) = try await Self.photoStore(in: folder)
        let missing = try Self.file(ofPhoto: 1, in: url, files: files)
        try FileManager.default.removeItem(at: missing)
        let connection = try Connection(path: url.path, configuration: SQLiteConfiguration())
        try connection.executeOnce("UPDATE ZPHOTO SET ZTAKEN = X'00' WHERE Z_PK = 3")
        let result = await ToolRunner.run(["verify", url.path])
        #expect(result.status == 1)
        #expect(result.errorLines.first == "error: the store has 2 problems")
        #expect(
            result.errorLines.contains {
                $0.hasPrefix("  Photo/p1.image (missingExternalData): ") && $0.contains(missing.lastPathComponent)
            })
        #expect(
            result.errorLines.contains { $0.hasPrefix("  Photo/p3.taken (unreadableValue): ") && $0.contains("Date") })
    }
}
