import Foundation
import TernCore
import TernTestSupport
import Testing

@testable import TernFormats

/// Hostile keyed archives: each must fail with a clear `corruptArchive` error, never crash or hang.
@Suite struct KeyedArchiveHostileTests {
    typealias Value = BinaryPropertyList.Value
    static let modelClasses = ["NSManagedObjectModel", "NSObject"]
    static let entityClasses = ["NSEntityDescription", "NSObject"]

    @Test func rejectsARootOutOfRange() {
        let top: Value = .dictionary([
            "$archiver": .string("NSKeyedArchiver"), "$top": .dictionary(["root": .uid(99)]),
            "$objects": .array([.string("$null")]),
        ])
        expectCorrupt(BinaryPropertyList.encode(top))
    }

    @Test func rejectsAPropertyListThatIsNotAnArchive() {
        expectCorrupt(BinaryPropertyList.encode(.dictionary(["$objects": .array([])])))
        expectCorrupt(BinaryPropertyList.encode(.array([.string("NSKeyedArchiver")])))
    }

    @Test func rejectsAFieldUIDOutOfRange() {
        var writer = KeyedArchiveWriter()
        let root = writer.object(Self.modelClasses, fields: ["NSEntities": .uid(4000)])
        expectCorrupt(writer.archive(root: root))
    }

    @Test func rejectsAWrongType() {
        var writer = KeyedArchiveWriter()
        let root = writer.object(Self.modelClasses, fields: ["NSEntities": writer.string("not a dictionary")])
        expectCorrupt(writer.archive(root: root))

        var wrongRoot = KeyedArchiveWriter()
        let entity = wrongRoot.object(Self.entityClasses, fields: ["NSEntityName": wrongRoot.string("A")])
        expectCorrupt(wrongRoot.archive(root: entity))
    }

    @Test func rejectsAnObjectWithoutAClass() {
        var writer = KeyedArchiveWriter()
        let bare = writer.value(.dictionary(["NSEntityName": .string("A")]))
        let entities = writer.dictionary([(key: "A", value: bare)])
        let root = writer.object(Self.modelClasses, fields: ["NSEntities": entities])
        expectCorrupt(writer.archive(root: root))
    }

    @Test func rejectsAnInheritanceCycle() {
        var writer = KeyedArchiveWriter()
        let first = writer.reserve()
        let second = writer.reserve()
        let root = writer.reserve()
        writer.fill(
            first, classes: Self.entityClasses, fields: ["NSEntityName": writer.string("A"), "NSSuperentity": second])
        writer.fill(
            second, classes: Self.entityClasses, fields: ["NSEntityName": writer.string("B"), "NSSuperentity": first])
        let entities = writer.dictionary([(key: "A", value: first), (key: "B", value: second)])
        writer.fill(root, classes: Self.modelClasses, fields: ["NSEntities": entities])
        expectCorrupt(writer.archive(root: root))
    }

    @Test func rejectsAnExpressionCycle() {
        var writer = KeyedArchiveWriter()
        let function = writer.reserve()
        let arguments = writer.array([function])
        writer.fill(
            function, classes: ["NSFunctionExpression", "NSExpression", "NSObject"],
            fields: [
                "NSSelectorName": writer.string("count:"), "NSArguments": arguments, "NSExpressionType": .integer(4),
            ])
        let attribute = writer.object(
            ["NSDerivedAttributeDescription", "NSAttributeDescription", "NSPropertyDescription", "NSObject"],
            fields: [
                "NSPropertyName": writer.string("total"), "NSAttributeType": .integer(300), "_P": .integer(247),
                "NSDerivationExpression": function,
            ])
        let properties = writer.dictionary([(key: "total", value: attribute)])
        let entity = writer.object(
            Self.entityClasses, fields: ["NSEntityName": writer.string("A"), "NSProperties": properties])
        let entities = writer.dictionary([(key: "A", value: entity)])
        let root = writer.object(Self.modelClasses, fields: ["NSEntities": entities])
        expectCorrupt(writer.archive(root: root))
    }

    @Test func rejectsMismatchedKeysAndValues() {
        var writer = KeyedArchiveWriter()
        let entities = writer.object(
            ["NSDictionary", "NSObject"], fields: ["NS.keys": .array([writer.string("A")]), "NS.objects": .array([])])
        let root = writer.object(Self.modelClasses, fields: ["NSEntities": entities])
        expectCorrupt(writer.archive(root: root))
    }

    @Test func rejectsAnUnknownAttributeType() {
        var writer = KeyedArchiveWriter()
        let attribute = writer.object(
            ["NSAttributeDescription", "NSPropertyDescription", "NSObject"],
            fields: ["NSPropertyName": writer.string("x"), "NSAttributeType": .integer(12345)])
        let properties = writer.dictionary([(key: "x", value: attribute)])
        let entity = writer.object(
            Self.entityClasses, fields: ["NSEntityName": writer.string("A"), "NSProperties": properties])
        let root = writer.object(
            Self.modelClasses, fields: ["NSEntities": writer.dictionary([(key: "A", value: entity)])])
        expectCorrupt(writer.archive(root: root))
    }

    @Test(arguments: Fixtures.stores.map(\.path))
    func survivesBitFlipsInARealCache(store: String) throws {
        let compressed = try FixtureStoreReader.blobs(ofFixture: store).modelCache
        let archive = try Deflate.inflateRaw(compressed)
        // Flips in the compressed stream and in the archive itself (every 97th bit, to keep it quick).
        for (bytes, isCompressed) in [(compressed, true), (archive, false)] {
            for position in stride(from: 0, to: bytes.count * 8, by: 97) {
                var flipped = bytes
                flipped[position / 8] ^= UInt8(1 << (position % 8))
                do {
                    _ = isCompressed ? try ModelCache.decode(flipped) : try ModelCache.decodeArchive(flipped)
                } catch {
                    #expect(error is TernError)
                }
            }
        }
    }

    @Test(arguments: Fixtures.stores.map(\.path))
    func rejectsATruncatedRealCache(store: String) throws {
        let compressed = try FixtureStoreReader.blobs(ofFixture: store).modelCache
        for length in [0, 10, compressed.count / 2, compressed.count - 1] {
            #expect(throws: TernError.self) { try ModelCache.decode(compressed.prefix(length)) }
        }
    }

    // MARK: - Helpers

    private func expectCorrupt(_ archive: Data, sourceLocation: SourceLocation = #_sourceLocation) {
        do {
            _ = try ModelCache.decodeArchive(archive)
            Issue.record("decoded a hostile archive", sourceLocation: sourceLocation)
        } catch let error as TernError {
            #expect(error.code == .corruptArchive, "\(error)", sourceLocation: sourceLocation)
        } catch {
            Issue.record("unexpected \(error)", sourceLocation: sourceLocation)
        }
    }
}
