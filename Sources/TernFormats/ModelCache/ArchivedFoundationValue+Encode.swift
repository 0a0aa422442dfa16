import Foundation
import TernCore

extension ArchivedFoundationValue {
    /// Archives an attribute value the way `encodeObject:forKey:` archives the matching
    /// Foundation object: numbers, Booleans, strings and data as plain values in `$objects`;
    /// `NSDate`, `NSUUID`, `NSURL` and `NSDecimalNumber` as objects. Either way the field holds a UID.
    ///
    /// - Returns: The value to store in a field; `$null` for nil.
    static func archive(_ value: AttributeValue?, in writer: inout KeyedArchiveWriter) -> BinaryPropertyList.Value {
        switch value {
        case .none: return KeyedArchiveWriter.null
        case .integer(let number): return writer.value(.integer(number))
        case .double(let number): return writer.value(.real(number))
        case .bool(let flag): return writer.value(.bool(flag))
        case .string(let text): return writer.string(text)
        case .data(let bytes): return writer.value(.data(bytes))
        case .date(let date):
            return writer.object(
                ["NSDate", "NSObject"], fields: ["NS.time": .real(date.timeIntervalSinceReferenceDate)])
        case .uuid(let uuid):
            let bytes = withUnsafeBytes(of: uuid.uuid) { Data($0) }
            return writer.object(["NSUUID", "NSObject"], fields: ["NS.uuidbytes": .data(bytes)])
        case .uri(let url):
            return writer.object(
                ["NSURL", "NSObject"],
                fields: ["NS.base": KeyedArchiveWriter.null, "NS.relative": writer.string(url.absoluteString)])
        case .decimal(let number):
            return decimal(number, in: &writer)
        }
    }

    // MARK: - Non public

    /// An `NSDecimalNumber`: the significand as little-endian bytes (`NS.mantissa`), the
    /// exponent, the sign and the number of 16-bit words used.
    private static func decimal(_ number: Decimal, in writer: inout KeyedArchiveWriter) -> BinaryPropertyList.Value {
        var digits = "\(number.significand.magnitude)".compactMap(\.wholeNumberValue)
        var bytes = [UInt8]()
        // Repeated division by 256 of the decimal digit string gives the bytes, low first.
        while digits.contains(where: { $0 != 0 }), bytes.count < 16 {
            var remainder = 0
            var quotient = [Int]()
            for digit in digits {
                let current = remainder * 10 + digit
                quotient.append(current / 256)
                remainder = current % 256
            }
            bytes.append(UInt8(remainder))
            digits = Array(quotient.drop { $0 == 0 })
        }
        let mantissa = bytes + [UInt8](repeating: 0, count: 16 - bytes.count)
        return writer.object(
            ["NSDecimalNumber", "NSNumber", "NSValue", "NSObject"],
            fields: [
                "NS.mantissa": .data(Data(mantissa)), "NS.mantissa.bo": .integer(1),
                "NS.exponent": .integer(Int64(number.exponent)), "NS.length": .integer(Int64((bytes.count + 1) / 2)),
                "NS.negative": .bool(number.sign == .minus && !number.isZero), "NS.compact": .bool(true),
            ])
    }
}
