import Foundation
import TernRelational
import TernSQLite
import TernTestSupport
import Testing

@testable import TernPostgreSQL

/// Numbers read from the bytes of text results agree with the standard library's parsers on
/// every form PostgreSQL prints, and reject what is not a number.
@Suite struct NumberTextTests {
    static func int64(_ text: String) -> Int64? { Array(text.utf8).withUnsafeBytes { NumberText.int64($0) } }
    static func double(_ text: String) -> Double? { Array(text.utf8).withUnsafeBytes { NumberText.double($0) } }

    @Test func integersAsTheStandardLibraryReadsThem() {
        var generator = SplitMix64(state: 11)
        var texts = [
            "0", "-0", "7", "-7", "+7", "9223372036854775807", "-9223372036854775808", "9223372036854775808",
            "-9223372036854775809", "", "-", "1.5", "12a", " 1", "00042",
        ]
        for _ in 0..<2_000 {
            let value = Int64(bitPattern: generator.next()) >> (generator.next() % 64)
            texts.append(String(value))
        }
        for text in texts { #expect(Self.int64(text) == Int64(text), "\(text)") }
    }

    @Test func realsAsTheStandardLibraryReadsThemBitForBit() {
        var generator = SplitMix64(state: 12)
        var texts = [
            "0", "-0", "1", "-1.5", "0.1", "123456.789", "1e+22", "1e22", "1e-22", "4.9e-324",
            "1.7976931348623157e+308",
            "NaN", "Infinity", "-Infinity", "123456789012345", "1234567890123456", "0.000001", "1e23", "2.5e-5",
            "", "-", "1.", ".5", "1e", "1e+", "abc", "1.2.3", "0.30000000000000004", "100000000000000000000",
        ]
        for _ in 0..<5_000 {
            let bits = generator.next()
            let value: Double =
                switch bits % 3 {
                case 0: Double(bitPattern: generator.next())
                case 1: Double(Int64(bitPattern: generator.next()) % 1_000_000_000) / 1_000
                default: Double(generator.next() % 800_000_000) + Double(generator.next() % 1_000_000) / 1_000_000
                }
            texts.append("\(value)")
            texts.append(String(format: "%.15g", value))
        }
        for text in texts {
            let expected = Double(text)
            let read = Self.double(text)
            #expect(
                read?.bitPattern == expected?.bitPattern || (read?.isNaN == true && expected?.isNaN == true), "\(text)")
        }
    }
}

/// COPY's text format written without a `String` per value gives what the escaping rules say.
@Suite struct CopyTextTests {
    static func copyText(_ value: DatabaseValue) -> String {
        var buffer: [UInt8] = []
        Connection.appendCopyText(value, to: &buffer)
        return String(decoding: buffer, as: UTF8.self)
    }

    @Test func integersRealsAndNullsAreWrittenAsTheirText() {
        var generator = SplitMix64(state: 13)
        for number in [0, -1, 1, .max, .min, 10_000_000_000_000_000]
            + (0..<1_000).map({ _ in Int64(bitPattern: generator.next()) >> (generator.next() % 64) })
        {
            #expect(Self.copyText(.integer(number)) == String(number))
        }
        for number in [0.1, -2.5, 1e300, -0.0, .nan, .infinity, -.infinity] {
            let expected =
                number.isNaN
                ? "NaN" : number == .infinity ? "Infinity" : number == -.infinity ? "-Infinity" : "\(number)"
            #expect(Self.copyText(.real(number)) == expected)
        }
        #expect(Self.copyText(.null) == "\\N")
        #expect(Self.copyText(.blob(Data([0, 0xAB, 0x5C]))) == "\\\\x00ab5c")
    }

    @Test func textEscapesBackslashesAndLineBreaksAndTabsOnly() {
        let special: [Character: String] = ["\\": "\\\\", "\n": "\\n", "\r": "\\r", "\t": "\\t"]
        var generator = SplitMix64(state: 14)
        let alphabet = Array("ab\\\n\r\t 'é🦆\"")
        for length in 0..<200 {
            let text = String((0..<length).map { _ in alphabet[Int(generator.next() % UInt64(alphabet.count))] })
            let expected = text.unicodeScalars.map { scalar in special[Character(scalar)] ?? String(scalar) }.joined()
            #expect(Self.copyText(.text(text)) == expected, "\(text.debugDescription)")
        }
    }
}
