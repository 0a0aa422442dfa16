import Foundation
import TernCore
import Testing

@testable import TernFormats

@Suite struct BinaryPropertyListTests {
    typealias Value = BinaryPropertyList.Value

    static let sample: Value = .dictionary([
        "small": .integer(7), "byte": .integer(200), "short": .integer(40_000), "int": .integer(3_000_000_000),
        "negative": .integer(-5), "min": .integer(.min), "real": .real(2.5), "yes": .bool(true), "no": .bool(false),
        "date": .date(737_057_647.288), "data": .data(Data((0..<40).map(UInt8.init))),
        "ascii": .string("a string longer than fifteen characters"), "unicode": .string("Zoë 🐦 naïve"),
        "uid": .uid(300), "empty": .array([]),
        "nested": .array([.array([.string("x"), .integer(1)]), .dictionary(["k": .string("x")])]),
    ])

    @Test func roundTripsEveryKindOfValue() throws {
        let bytes = BinaryPropertyList.encode(Self.sample)
        #expect(try BinaryPropertyList.decode(bytes) == Self.sample)
    }

    @Test func foundationReadsWhatWeWrite() throws {
        let value: Value = .dictionary([
            "name": .string("Zoë"), "count": .integer(3), "list": .array([.bool(true), .real(1.5)]),
        ])
        let plist = try PropertyListSerialization.propertyList(
            from: BinaryPropertyList.encode(value), options: [], format: nil)
        let dictionary = try #require(plist as? [String: Any])
        #expect(dictionary["name"] as? String == "Zoë")
        #expect((dictionary["count"] as? NSNumber)?.intValue == 3)
        #expect((dictionary["list"] as? [Any])?.count == 2)
    }

    @Test func readsWhatFoundationWrites() throws {
        let source: [String: Any] = [
            "text": "héllo wörld, long enough", "number": 42, "list": [1, 2, 3], "blob": Data([1, 2]),
        ]
        let bytes = try PropertyListSerialization.data(fromPropertyList: source, format: .binary, options: 0)
        let value = try BinaryPropertyList.decode(bytes)
        guard case .dictionary(let dictionary) = value else {
            Issue.record("not a dictionary")
            return
        }
        #expect(dictionary["text"] == .string("héllo wörld, long enough"))
        #expect(dictionary["number"] == .integer(42))
        #expect(dictionary["list"] == .array([.integer(1), .integer(2), .integer(3)]))
        #expect(dictionary["blob"] == .data(Data([1, 2])))
    }

    @Test func rejectsDataThatIsNotABinaryPropertyList() {
        expectCorrupt(Data())
        expectCorrupt(Data("bplist00".utf8))
        expectCorrupt(Data("<?xml version=\"1.0\"?><plist></plist>".utf8) + Data(count: 40))
    }

    @Test func rejectsEveryTruncation() {
        let bytes = BinaryPropertyList.encode(Self.sample)
        for length in 0..<bytes.count {
            #expect(throws: TernError.self) { try BinaryPropertyList.decode(bytes.prefix(length)) }
        }
    }

    @Test func rejectsAReferenceCycle() {
        // One array (object 0) whose only element is itself.
        expectCorrupt(Self.handmade(objects: [[0xA1, 0x00]]))
    }

    @Test func rejectsAReferenceOutOfRange() {
        expectCorrupt(Self.handmade(objects: [[0xA1, 0x05]]))
    }

    @Test func rejectsAnAbsurdLength() {
        // A data object whose length is 2^40 bytes.
        expectCorrupt(Self.handmade(objects: [[0x4F, 0x13, 0, 0, 1, 0, 0, 0, 0, 0]]))
        // A UTF-16 string longer than the whole file.
        expectCorrupt(Self.handmade(objects: [[0x6F, 0x11, 0x7F, 0xFF, 0x00, 0x41]]))
    }

    @Test func rejectsOffsetsOutsideTheData() {
        var bytes = [UInt8](BinaryPropertyList.encode(.string("x")))
        bytes[bytes.count - 1] = 0xFF  // offset table offset
        expectCorrupt(Data(bytes))
        var count = [UInt8](BinaryPropertyList.encode(.string("x")))
        count[count.count - 25] = 0xFF  // object count
        expectCorrupt(Data(count))
    }

    @Test func rejectsDeepNesting() {
        var value: Value = .string("bottom")
        for _ in 0..<300 { value = .array([value]) }
        expectCorrupt(BinaryPropertyList.encode(value))
        var limits = BinaryPropertyList.Limits()
        limits.maxDepth = 400
        #expect((try? BinaryPropertyList.decode(BinaryPropertyList.encode(value), limits: limits)) == value)
    }

    @Test func rejectsNonStringKeys() {
        // A dictionary {1: 1}: object 0 the dictionary, object 1 the integer.
        expectCorrupt(Self.handmade(objects: [[0xD1, 0x01, 0x01], [0x10, 0x01]]))
    }

    @Test func survivesBitFlips() {
        let bytes = [UInt8](BinaryPropertyList.encode(Self.sample))
        for position in 0..<(bytes.count * 8) {
            var flipped = bytes
            flipped[position / 8] ^= UInt8(1 << (position % 8))
            do {
                _ = try BinaryPropertyList.decode(Data(flipped))
            } catch {
                #expect(error is TernError)
            }
        }
    }

    // MARK: - Helpers

    private func expectCorrupt(_ data: Data, sourceLocation: SourceLocation = #_sourceLocation) {
        do {
            _ = try BinaryPropertyList.decode(data)
            Issue.record("decoded hostile data", sourceLocation: sourceLocation)
        } catch let error as TernError {
            #expect(error.code == .corruptArchive, sourceLocation: sourceLocation)
        } catch {
            Issue.record("unexpected \(error)", sourceLocation: sourceLocation)
        }
    }

    /// A binary property list made of the given raw objects (object 0 on top), one-byte
    /// offsets and references.
    static func handmade(objects: [[UInt8]]) -> Data {
        var bytes = [UInt8]("bplist00".utf8)
        var offsets = [UInt8]()
        for object in objects {
            offsets.append(UInt8(bytes.count))
            bytes += object
        }
        let table = bytes.count
        bytes += offsets
        bytes += [0, 0, 0, 0, 0, 0, 1, 1]
        bytes += [0, 0, 0, 0, 0, 0, 0, UInt8(objects.count)]
        bytes += [0, 0, 0, 0, 0, 0, 0, 0]
        bytes += [0, 0, 0, 0, 0, 0, 0, UInt8(table)]
        return Data(bytes)
    }
}
