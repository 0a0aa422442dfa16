import Foundation
import TernCore
import Testing

@testable import TernFormats

/// Fields converted straight from their bytes by a streamed import agree with the text path.
@Suite struct FieldBytesTests {
    static let texts = [
        "0", "7", "-7", "+7", "007", "-0", "+", "-", "12a", " 5", "5 ", "1.5", "1e3", "0x10", "true", "YES", "1", "0",
        "32767", "32768", "-32768", "-32769", "2147483647", "2147483648", "9223372036854775807", "9223372036854775808",
        "-9223372036854775808", "-9223372036854775809", "700000000", "999999999999999", "9999999999999999",
        "99999999999999999", "-999999999999999", "2011-05-09T11:30:53Z", "héllo", "plain text",
    ]

    static let types: [AttributeType] = [
        .integer16, .integer32, .integer64, .double, .float, .date, .boolean, .string, .uuid,
    ]

    @Test(arguments: types) func bytesGiveWhatTheTextGivesOrDeferToIt(type: AttributeType) {
        for text in Self.texts {
            let fast = Array(text.utf8).withUnsafeBufferPointer { FieldBytes.value($0, as: type) }
            guard let fast else { continue }
            let slow = RecordValue.text(text).attributeValue(for: type)
            #expect(slow == .some(.some(fast)), "\(text) as \(type)")
            if case .double(let number) = fast, case .double(let expected)?? = slow {
                #expect(number.sign == expected.sign, "\(text)")
            }
        }
    }

    @Test func commonFormsAreReadFromTheBytes() {
        func value(_ text: String, _ type: AttributeType) -> AttributeValue? {
            Array(text.utf8).withUnsafeBufferPointer { FieldBytes.value($0, as: type) }
        }
        #expect(value("-9223372036854775808", .integer64) == .integer(.min))
        #expect(value("9223372036854775808", .integer64) == nil)
        #expect(value("32768", .integer16) == nil)
        #expect(value("700000000", .date) == .date(Date(timeIntervalSinceReferenceDate: 700_000_000)))
        #expect(value("1", .boolean) == .bool(true))
        #expect(value("true", .boolean) == nil)
        #expect(value("1.5", .double) == nil)
        #expect(value("-0", .double) == nil)
        #expect(value("héllo", .string) == .string("héllo"))
    }
}
