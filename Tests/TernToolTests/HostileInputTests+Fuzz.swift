import Foundation
import TernCore
import TernFormats
import TernMigration
import TernTestSupport
import Testing

@testable import TernSQLite

/// The fuzz targets' inputs in `Tests/Fixtures/Hostile/<target>/`: hand-made hostile cases and
/// every crash the fuzzers found (`crash-…`), replayed through the same readers as the target
/// (see `Fuzz/<target>`). Each must give a clear error or a result, never a crash or a hang.
extension HostileInputTests {
    /// The bytes of a case of a fuzz target.
    static func fuzzCase(_ target: String, _ file: String) throws -> Data {
        try Data(contentsOf: root.appendingPathComponent("\(target)/\(file)"))
    }

    @Test(arguments: files("FuzzPredicate"))
    func predicateCase(_ file: String) throws {
        let text = String(decoding: try Self.fuzzCase("FuzzPredicate", file), as: UTF8.self)
        do {
            let predicate = try FetchPredicate(text, arguments: ["name", "name", "name", "name"])
            _ = try? FetchPredicate(predicate.description)
        } catch {
            Self.expectClear(error, file)
        }
    }

    @Test(arguments: files("FuzzModelXML"))
    func modelXMLCase(_ file: String) throws {
        do {
            let model = try XcodeModel.model(fromContents: Self.fuzzCase("FuzzModelXML", file), path: file)
            _ = model.entityVersionHashes
            _ = try XcodeModel.model(fromContents: Data(XcodeModel.contentsXML(for: model).utf8))
        } catch {
            Self.expectClear(error, file)
        }
    }

    @Test(arguments: files("FuzzModelCache"))
    func modelCacheCase(_ file: String) throws {
        let data = try Self.fuzzCase("FuzzModelCache", file)
        let payload = data.dropFirst()
        do {
            // As in the fuzz target: an even first byte means an uncompressed keyed archive.
            let model =
                try data.first.map { $0 % 2 == 0 } ?? true
                ? ModelCache.decodeArchive(Data(payload)) : ModelCache.decode(Data(payload), maxInflatedBytes: 4 << 20)
            _ = try ModelCache.encode(model)
        } catch {
            Self.expectClear(error, file)
        }
    }

    @Test(arguments: files("FuzzMetadata"))
    func metadataCase(_ file: String) throws {
        let data = try Self.fuzzCase("FuzzMetadata", file)
        do {
            guard case .dictionary(let dictionary)? = PropertyListValue(try BinaryPropertyList.decode(data)) else {
                return
            }
            _ = StoreMetadata(propertyList: dictionary, uuid: file)
        } catch {
            Self.expectClear(error, file)
        }
    }

    @Test(arguments: files("FuzzValueExpression"))
    func valueExpressionCase(_ file: String) throws {
        let text = String(decoding: try Self.fuzzCase("FuzzValueExpression", file), as: UTF8.self)
        do {
            let expression = try ValueExpression(text)
            #expect(try ValueExpression(expression.description) == expression, "\(file)")
        } catch {
            Self.expectClear(error, file)
        }
    }

    @Test(arguments: files("FuzzMappingFile"))
    func mappingFileCase(_ file: String) throws {
        #expect(throws: MigrationError.self, "\(file)") {
            try StepMapping(jsonData: Self.fuzzCase("FuzzMappingFile", file))
        }
    }

    @Test(arguments: files("FuzzDelimitedRecords"))
    func delimitedRecordsCase(_ file: String) throws {
        // As in the fuzz target: an even first byte means TSV, odd CSV; the rest is the file.
        let data = try Self.fuzzCase("FuzzDelimitedRecords", file)
        let folder = try TemporaryDirectory()
        let url = folder.path("records")
        try data.dropFirst().write(to: url)
        let bytes = try Data(contentsOf: url)
        do {
            let reader = try DelimitedRecordReader(contentsOf: url, dialect: (data.first ?? 0) % 2 == 0 ? .tsv : .csv)
            while try !reader.nextBatch(maxCount: 7).isEmpty {}
        } catch {
            Self.expectClear(error, file)
        }
        #expect(try Data(contentsOf: url) == bytes, "\(file): the reader changed the file")
    }

    @Test(arguments: files("FuzzJSONRecords"))
    func jsonRecordsCase(_ file: String) throws {
        let url = Self.root.appendingPathComponent("FuzzJSONRecords/\(file)")
        do {
            let reader = try JSONRecordReader(contentsOf: url)
            while !reader.nextBatch(maxCount: 7).isEmpty {}
        } catch {
            Self.expectClear(error, file)
        }
    }
}
