import TernRelational

/// Numbers read from the bytes of PostgreSQL's text results, without making a `String` first.
///
/// Integers are parsed digit by digit. Reals take the exact fast path when there are at most
/// 15 significant digits (below 2⁵³) and the power of ten is at most 22 (the value is then one correctly rounded
/// multiplication or division of two exact doubles); any other text (more digits, `NaN`,
/// `Infinity`) goes through the standard library's parser, which is correctly rounded too.
///
/// ```swift
/// let text = Array("-42".utf8)
/// text.withUnsafeBytes { NumberText.int64($0) }   // -42
/// ```
enum NumberText {
    /// The exact powers of ten of a double.
    private static let powersOfTen: [Double] = (0...22).map { exponent in
        var value = 1.0
        for _ in 0..<exponent { value *= 10 }
        return value
    }

    /// The integer an integer column's text holds, or nil when it is not one.
    ///
    /// - Complexity: O(*n*) in the number of bytes.
    static func int64(_ bytes: UnsafeRawBufferPointer) -> Int64? {
        guard let first = bytes.first else { return nil }
        let negative = first == UInt8(ascii: "-")
        var index = negative || first == UInt8(ascii: "+") ? 1 : 0
        guard index < bytes.count else { return nil }
        // Accumulated as a negative number, so that Int64.min fits.
        var value: Int64 = 0
        while index < bytes.count {
            let digit = bytes[index] &- UInt8(ascii: "0")
            guard digit < 10 else { return nil }
            let (scaled, overflow) = value.multipliedReportingOverflow(by: 10)
            let (next, underflow) = scaled.subtractingReportingOverflow(Int64(digit))
            guard !overflow, !underflow else { return nil }
            value = next
            index += 1
        }
        if negative { return value }
        return value == .min ? nil : -value
    }

    /// The double a real column's text holds, or nil when it is not a number.
    ///
    /// - Complexity: O(*n*) in the number of bytes.
    static func double(_ bytes: UnsafeRawBufferPointer) -> Double? {
        fastDouble(bytes) ?? Double(String(decoding: bytes, as: UTF8.self))
    }

    // MARK: - Non public

    /// The fast path: `[-]digits[.digits][e[+-]digits]` with at most 15 significant digits and a power
    /// of ten within ±22; nil for anything else.
    private static func fastDouble(_ bytes: UnsafeRawBufferPointer) -> Double? {
        var index = 0
        let count = bytes.count
        let negative = count > 0 && bytes[0] == UInt8(ascii: "-")
        if negative { index = 1 }
        var mantissa: UInt64 = 0
        var exponent = 0
        var digits = 0
        var sawDigit = false
        while index < count, case let digit = bytes[index] &- UInt8(ascii: "0"), digit < 10 {
            if mantissa != 0 || digit != 0 {
                digits += 1
                guard digits <= 15 else { return nil }
            }
            mantissa = mantissa * 10 + UInt64(digit)
            sawDigit = true
            index += 1
        }
        if index < count, bytes[index] == UInt8(ascii: ".") {
            index += 1
            while index < count, case let digit = bytes[index] &- UInt8(ascii: "0"), digit < 10 {
                if mantissa != 0 || digit != 0 {
                    digits += 1
                    guard digits <= 15 else { return nil }
                }
                mantissa = mantissa * 10 + UInt64(digit)
                exponent -= 1
                sawDigit = true
                index += 1
            }
        }
        guard sawDigit else { return nil }
        if index < count, bytes[index] == UInt8(ascii: "e") || bytes[index] == UInt8(ascii: "E") {
            index += 1
            var sign = 1
            if index < count, bytes[index] == UInt8(ascii: "-") || bytes[index] == UInt8(ascii: "+") {
                sign = bytes[index] == UInt8(ascii: "-") ? -1 : 1
                index += 1
            }
            var written = 0
            var sawExponentDigit = false
            while index < count, case let digit = bytes[index] &- UInt8(ascii: "0"), digit < 10, written < 1000 {
                written = written * 10 + Int(digit)
                sawExponentDigit = true
                index += 1
            }
            guard sawExponentDigit else { return nil }
            exponent += sign * written
        }
        guard index == count, abs(exponent) <= 22 else { return nil }
        let value = exponent < 0 ? Double(mantissa) / powersOfTen[-exponent] : Double(mantissa) * powersOfTen[exponent]
        return negative ? -value : value
    }
}
