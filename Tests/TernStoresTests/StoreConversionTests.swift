import Foundation
import TernCore
import TernSQLite
import TernStores
import TernTestSupport
import Testing

/// `StoreFiles.convert`, which `tern convert` runs: between SQLite and binary stores rows
/// stream from file to file; every pair of types must give what copying the opened store gives.
@Suite struct StoreConversionTests {
    @Test(arguments: fileKinds, fileKinds)
    func aConversionHoldsWhatACopyOfTheOpenedStoreHolds(from source: StoreKind, to destination: StoreKind)
        async throws
    {
        let folder = try TemporaryDirectory()
        let store = try await StoreCopyKeyCounterTests.storeWithDeletedObjects(source, in: folder)
        let count = try await StoreFiles.convert(
            storeAt: folder.path("source"), model: ConformanceModel.model, to: folder.path("converted"),
            kind: destination, batchSize: 3)
        let expected = try await contents(of: store)
        #expect(count == Int64(expected.count))
        let converted = try StoreFiles.open(
            at: folder.path("converted"), kind: destination,
            model: destination == .sqlite ? nil : ConformanceModel.model)
        #expect(try await contents(of: converted) == expected)
        #expect(try await converted.metadata().uuid == store.metadata().uuid)
        #expect(try StoreFiles.kind(ofStoreAt: folder.path("converted")) == destination)
        try await StoreCopyKeyCounterTests.expectNoKeyHandedOutAgain(
            by: converted, perHierarchy: StoreCopyKeyCounterTests.countsPerHierarchy(source, destination),
            "\(source) converted to \(destination)")
        // Only the two stores (and the open SQLite stores' journals) are left: no temporary file.
        let left = try FileManager.default.contentsOfDirectory(atPath: folder.url.path)
        #expect(
            left.filter { !$0.hasSuffix("-wal") && !$0.hasSuffix("-shm") }.sorted() == ["converted", "source"],
            "\(left)")
    }

    @Test func aDamagedBinaryStoreLeavesNothingWhereTheSQLiteStoreWouldGo() async throws {
        let folder = try TemporaryDirectory()
        _ = try await filledStore(.binary, in: folder, name: "source")
        var bytes = try Data(contentsOf: folder.path("source"))
        bytes[bytes.count - 3] ^= 0x40  // in the last row: found only by the checksum or the last value
        try bytes.write(to: folder.path("source"))
        await #expect(throws: TernError.self) {
            try await StoreFiles.convert(
                storeAt: folder.path("source"), model: ConformanceModel.model, to: folder.path("converted"),
                kind: .sqlite)
        }
        #expect(try FileManager.default.contentsOfDirectory(atPath: folder.url.path) == ["source"])
        #expect(try Data(contentsOf: folder.path("source")) == bytes)
    }

    @Test func aBinaryStoreWithAnAttributeTheModelLacksIsRefusedByName() async throws {
        let folder = try TemporaryDirectory()
        let store = try StoreFiles.open(at: folder.path("source"), kind: .binary, model: ConformanceModel.model)
        let person = StoreRow(
            reference: SampleRows.reference("Person", 1),
            attributes: ["name": .string("Ann"), "nickname": .string("Annie")])
        _ = try await store.save(StoreChangeSet(inserted: [person]))
        var entities = ConformanceModel.model.entities
        let index = try #require(entities.firstIndex { $0.name == "Person" })
        entities[index].attributes.removeAll { $0.name == "nickname" }
        let model = ManagedObjectModel(entities: entities)
        await #expect(
            performing: {
                try await StoreFiles.convert(
                    storeAt: folder.path("source"), model: model, to: folder.path("converted"), kind: .sqlite)
            },
            throws: { error in
                guard let error = error as? TernError else { return false }
                return error.code == .invalidValue && error.message.contains("'nickname'")
            })
        #expect(try FileManager.default.contentsOfDirectory(atPath: folder.url.path) == ["source"])
    }
}
