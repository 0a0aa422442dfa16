import Foundation
import TernCore
import TernTestSupport
import TernXMLStore
import Testing

@testable import TernBinaryStore

@Suite struct DamagedStoreTests {
    /// A store file with rows, written by the format, and its bytes.
    static func savedStore(_ format: AtomicFormat, in tmp: TemporaryDirectory) async throws -> (URL, Data) {
        let url = tmp.path("store.\(format.fileExtension)")
        _ = try await format.open(url).save(StoreChangeSet(inserted: AtomicStoreTests.rowsWithRelationships()))
        return (url, try Data(contentsOf: url))
    }

    /// Opening `bytes` as a store fails with a clear error and leaves the file as it was.
    static func expectRefused(_ bytes: Data, _ format: AtomicFormat, at url: URL, _ comment: Comment) throws {
        try bytes.write(to: url)
        #expect(
            comment, performing: { try format.open(url) },
            throws: { error in
                guard let error = error as? TernError else { return false }
                return error.code == .unreadableStore && error.path == url.path && !error.message.isEmpty
            })
        #expect(try Data(contentsOf: url) == bytes, comment)
    }

    @Test(arguments: AtomicFormat.all)
    func truncatedFilesAreRefused(format: AtomicFormat) async throws {
        let tmp = try TemporaryDirectory()
        let (url, bytes) = try await Self.savedStore(format, in: tmp)
        let last = bytes.count - 1
        for length in [0, 1, 7, 8, 20, bytes.count / 3, bytes.count / 2, bytes.count - 20, last] {
            try Self.expectRefused(bytes.prefix(length), format, at: url, "truncated to \(length) bytes")
        }
    }

    @Test func everyDamagedByteOfABinaryStoreIsDetected() async throws {
        let tmp = try TemporaryDirectory()
        let (url, bytes) = try await Self.savedStore(.binary, in: tmp)
        var generator = SplitMix64(state: 7)
        let positions =
            (0..<120).map { _ in Int(generator.next() % UInt64(bytes.count)) } + [0, 8, 12, 16, bytes.count - 1]
        for position in positions {
            var damaged = bytes
            damaged[position] ^= UInt8(1 + generator.next() % 255)
            try Self.expectRefused(damaged, .binary, at: url, "byte \(position) changed")
        }
        var longer = bytes
        longer.append(0)
        try Self.expectRefused(longer, .binary, at: url, "a byte appended")
    }

    @Test func lyingLengthsInABinaryStoreAreRefusedWithoutHugeAllocations() throws {
        let tmp = try TemporaryDirectory()
        let url = tmp.path("store.ternbin")
        let valid = try BinaryStoreFormat.encode(
            AtomicStoreContents(metadata: StoreMetadata(storeType: "Binary", uuid: "U")))
        let bodyStart = valid.count - 12 - 4  // an empty body: three zero counts
        // Bodies that claim far more items or bytes than they hold, with correct checksums.
        let lies: [[UInt8]] = [
            [0xFF, 0xFF, 0xFF, 0xFF],  // 4 billion names
            [1, 0, 0, 0, 0xFF, 0xFF, 0xFF, 0x7F],  // a 2 GiB name
            [0, 0, 0, 0, 0, 0, 0, 0, 1, 0, 0, 0, 5, 0, 0, 0, 0xFF, 0xFF, 0xFF, 0xFF],  // entity name index 5 of 0
            [1, 0, 0, 0, 1, 0, 0, 0, 0x41, 0, 0, 0, 0, 1, 0, 0, 0, 0, 0, 0, 0xFF, 0xFF, 0xFF, 0x0F],  // 268M rows
            [1, 0, 0, 0, 2, 0, 0, 0, 0xC3, 0x28, 0, 0, 0, 0, 0, 0, 0, 0],  // a name that is not UTF-8
        ]
        for lie in lies {
            var file = Data(valid.prefix(bodyStart - 12))
            var prefix = ByteWriter()
            prefix.append(UInt64(lie.count))
            prefix.append(lie.withUnsafeBytes(crc32Checksum))
            file.append(contentsOf: prefix.bytes)
            file.append(contentsOf: lie)
            try Self.expectRefused(file, .binary, at: url, "body \(lie)")
        }
        // A header that claims more than the maximum.
        var header = valid
        header.replaceSubrange(12..<16, with: [0xFF, 0xFF, 0xFF, 0x7F])
        try Self.expectRefused(header, .binary, at: url, "a 2 GiB header")
        #expect(throws: TernError.self) { try BinaryStoreFormat.metadata(at: url) }
    }

    @Test func randomBytesNeverCrashTheBinaryReader() throws {
        var generator = SplitMix64(state: 42)
        let valid = try BinaryStoreFormat.encode(
            AtomicStoreContents(
                metadata: StoreMetadata(storeType: "Binary", uuid: "U"), rows: AwkwardRows.sampleRows()))
        for _ in 0..<300 {
            var bytes = Data(valid.prefix(Int(generator.next() % UInt64(valid.count))))
            for _ in 0..<Int(generator.next() % 8) where !bytes.isEmpty {
                bytes[Int(generator.next() % UInt64(bytes.count))] = UInt8(truncatingIfNeeded: generator.next())
            }
            #expect(throws: TernError.self) { try BinaryStoreFormat.decode(bytes, path: "fuzz") }
        }
    }

    @Test func otherFilesAreNotMistakenForStores() async throws {
        let tmp = try TemporaryDirectory()
        let binary = try await Self.savedStore(.binary, in: tmp)
        let xml = try await Self.savedStore(.xml, in: tmp)
        try Self.expectRefused(xml.1, .binary, at: binary.0, "an XML store opened as binary")
        try Self.expectRefused(binary.1, .xml, at: xml.0, "a binary store opened as XML")
        try Self.expectRefused(Data("<plist><dict/></plist>".utf8), .xml, at: xml.0, "a property list")
        var newer = binary.1
        newer[8] = 2
        try Self.expectRefused(newer, .binary, at: binary.0, "format version 2")
        #expect(
            performing: { try BinaryStoreFormat.metadata(at: binary.0) },
            throws: { error in
                (error as? TernError)?.message.contains("format version 2") == true
            })
    }

    @Test func xmlWithEntityDeclarationsIsRefused() async throws {
        let tmp = try TemporaryDirectory()
        let (url, bytes) = try await Self.savedStore(.xml, in: tmp)
        let text = String(decoding: bytes, as: UTF8.self)
        let declaration = "<!DOCTYPE database [<!ENTITY boom \"boom\"><!ENTITY ext SYSTEM \"file:///etc/passwd\">]>\n"
        let hostile = text.replacingOccurrences(
            of: "<!DOCTYPE database SYSTEM \"file:///System/Library/DTDs/CoreData.dtd\">\n\n", with: declaration
        )
        .replacingOccurrences(of: "<UUID>", with: "<UUID>&ext;&boom;")
        try Self.expectRefused(Data(hostile.utf8), .xml, at: url, "entity declarations")
        #expect(throws: TernError.self) { try XMLStoreFormat.metadata(at: url) }
        let broken = text.replacingOccurrences(of: "</object>", with: "</objekt>")
        try Self.expectRefused(Data(broken.utf8), .xml, at: url, "mismatched tags")
        let badValue = text.replacingOccurrences(of: "type=\"int16\">", with: "type=\"int16\">x")
        try Self.expectRefused(Data(badValue.utf8), .xml, at: url, "a non-integer integer")
        let dangling = text.replacingOccurrences(of: "idrefs=\"z102 z103\"", with: "idrefs=\"z102 z999\"")
        try Self.expectRefused(Data(dangling.utf8), .xml, at: url, "a reference to no object")
        let duplicate = text.replacingOccurrences(of: "id=\"z103\"", with: "id=\"z102\"")
        try Self.expectRefused(Data(duplicate.utf8), .xml, at: url, "an id used twice")
        let unknown = text.replacingOccurrences(of: "type=\"PET\"", with: "type=\"PETS\"")
        try Self.expectRefused(Data(unknown.utf8), .xml, at: url, "an entity the model lacks")
    }

    @Test func xmlStoresAreWrittenAsCoreDataWritesThem() async throws {
        let tmp = try TemporaryDirectory()
        let (_, bytes) = try await Self.savedStore(.xml, in: tmp)
        let text = String(decoding: bytes, as: UTF8.self)
        #expect(
            text.hasPrefix(
                """
                <?xml version="1.0" standalone="yes"?>
                <!DOCTYPE database SYSTEM "file:///System/Library/DTDs/CoreData.dtd">

                <database>
                    <databaseInfo>
                        <version>134481920</version>
                        <UUID>
                """))
        #expect(
            text.contains(
                "        <nextObjectID>113</nextObjectID>\n        <metadata>\n            <plist version=\"1.0\">\n"))
        #expect(!text.contains("<key>NSStoreType</key>") && !text.contains("<key>NSStoreUUID</key>"))
        #expect(text.contains("<key>NSStoreModelVersionHashes</key>"))
        #expect(
            text.contains(
                """
                    <object type="PERSON" id="z100">
                        <attribute name="name" type="string">Ann</attribute>
                        <relationship name="car" type="0/1" destination="CAR" idrefs="z101"></relationship>
                        <relationship name="pets" type="0/0" destination="PET" idrefs="z102 z103"></relationship>
                        <relationship name="team" type="0/1" destination="TEAM" idrefs="z104"></relationship>
                    </object>
                """))
        #expect(text.contains("<attribute name=\"integer16\" type=\"int16\">-32768</attribute>"))
        #expect(text.contains("<attribute name=\"boolean\" type=\"bool\">0</attribute>"))
        #expect(text.contains("<attribute name=\"date\" type=\"date\">-9999999999.87654304504394531250</attribute>"))
        #expect(text.contains("<attribute name=\"string\" type=\"string\">&lt;tag attr=\"x\"&gt;&amp;amp;"))
        #expect(
            text.contains("<attribute name=\"string\" type=\"string\">cr &#13; crlf &#13;\n lf \n tab \t</attribute>"))
        #expect(text.contains("<relationship name=\"books\" type=\"0/0\" destination=\"BOOK\"></relationship>"))
        #expect(text.hasSuffix("    </object>\n</database>"))
        #expect(!text.contains("\u{0}"))
    }
}
