import Foundation
import TernCore
import Testing

@testable import TernSQLite

@Suite struct BinaryPropertyListTests {
    static let sample: PropertyListValue = .dictionary([
        "string": .string("plain"),
        "unicode": .string("naïve 🦅 \u{0} end"),
        "integers": .array([.integer(0), .integer(255), .integer(256), .integer(70_000), .integer(1 << 40), .integer(-1)]),
        "real": .real(-2.5),
        "flags": .array([.bool(true), .bool(false)]),
        "date": .date(Date(timeIntervalSinceReferenceDate: 737057647.288)),
        "data": .data(Data((0..<40).map { UInt8($0) })),
        "nested": .dictionary(["deeper": .dictionary(["empty": .array([])])]),
        "long": .string(String(repeating: "x", count: 300)),
    ])

    @Test func roundTrips() throws {
        let bytes = BinaryPropertyList.encode(Self.sample)
        #expect(bytes.starts(with: Array("bplist00".utf8)))
        #expect(try BinaryPropertyList.decode(bytes) == Self.sample)
    }

    @Test func foundationReadsWhatItWrites() throws {
        let bytes = BinaryPropertyList.encode(Self.sample)
        let object = try PropertyListSerialization.propertyList(from: bytes, format: nil)
        let dictionary = try #require(object as? [String: Any])
        #expect(dictionary["string"] as? String == "plain")
        #expect(dictionary["unicode"] as? String == "naïve 🦅 \u{0} end")
        #expect((dictionary["integers"] as? [Any])?.count == 6)
        #expect(dictionary["data"] as? Data == Data((0..<40).map { UInt8($0) }))
        #expect((dictionary["date"] as? Date)?.timeIntervalSinceReferenceDate == 737057647.288)
    }

    @Test func readsWhatFoundationWrites() throws {
        let object: [String: Any] = ["a": "b", "n": 42, "list": ["x", "é"], "d": Data([1, 2, 3])]
        let bytes = try PropertyListSerialization.data(fromPropertyList: object, format: .binary, options: 0)
        let value = try BinaryPropertyList.decode(bytes)
        #expect(value == .dictionary([
            "a": .string("b"), "n": .integer(42), "list": .array([.string("x"), .string("é")]),
            "d": .data(Data([1, 2, 3])),
        ]))
    }

    @Test func refusesDamagedInput() {
        let bytes = BinaryPropertyList.encode(Self.sample)
        #expect(throws: BinaryPropertyList.FormatError.self) { try BinaryPropertyList.decode(Data("bplist00".utf8)) }
        #expect(throws: BinaryPropertyList.FormatError.self) { try BinaryPropertyList.decode(bytes.dropLast(3)) }
        var corrupt = [UInt8](bytes)
        // Point the top object past the object table.
        corrupt[corrupt.count - 9] = 0xFF
        #expect(throws: BinaryPropertyList.FormatError.self) { try BinaryPropertyList.decode(Data(corrupt)) }
    }

    @Test func refusesACycle() {
        // An array (object 0) whose only element is itself.
        var bytes: [UInt8] = Array("bplist00".utf8) + [0xA1, 0x00]
        let table = bytes.count
        bytes += [8]
        bytes += [0, 0, 0, 0, 0, 0, 1, 1] + [0, 0, 0, 0, 0, 0, 0, 1] + [0, 0, 0, 0, 0, 0, 0, 0]
        bytes += [0, 0, 0, 0, 0, 0, 0, UInt8(table)]
        #expect(throws: BinaryPropertyList.FormatError.self) { try BinaryPropertyList.decode(Data(bytes)) }
    }
}
