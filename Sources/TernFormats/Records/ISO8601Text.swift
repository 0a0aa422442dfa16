package import Foundation
import TernCore

/// Dates as ISO 8601 UTC text that reads back to the same date, bit for bit:
/// `2011-05-09T11:30:53.000Z`, `2011-05-09T11:30:53.001Z`, `2011-05-09T11:30:53.0012345Z`.
///
/// Core Data stores a date as a double of seconds since 2001-01-01 00:00:00 UTC. The text gives
/// the whole seconds as a calendar date and time, then as many fractional digits as that double
/// needs: at least three (milliseconds, the common form), more when three would not read back to
/// the same double. The digits are the shortest decimal that does (Swift's own `description` of
/// the double), so `326633490.001` is written `.001`, not truncated to `.000`.
///
/// Reading (``date(from:)``) turns the text back into the same decimal number of seconds and
/// rounds it once to the nearest double, which is the stored double again. Dates before 2001
/// work the same way: the calendar time is the whole second below the date and the fraction is
/// what lies above it.
///
/// ```swift
/// let date = Date(timeIntervalSinceReferenceDate: 326_633_490.001)
/// ISO8601Text.string(from: date)                                  // "2011-05-09T11:31:30.001Z"
/// ISO8601Text.date(from: "2011-05-09T11:31:30.001Z") == date      // true
/// ```
package enum ISO8601Text {
    // MARK: - Writing

    /// The text of a date, with as many fractional digits as reading it back exactly needs.
    ///
    /// - Parameter date: The date.
    /// - Returns: `YYYY-MM-DDTHH:MM:SS.fffZ` with three or more fractional digits. Years before 1
    ///   and after 9999 take ISO 8601's expanded form: a sign and as many digits as they need
    ///   (`-0002-04-12T…`, `+12000-01-01T…`); year 0 is 1 BC, as in the proleptic calendar.
    /// - Complexity: O(1); a date that needs more than three digits costs one conversion of the
    ///   double to its shortest text.
    package static func string(from date: Date) -> String {
        let interval = date.timeIntervalSinceReferenceDate
        // Beyond some 285 million years no whole second fits the arithmetic below.
        guard interval.magnitude < 9e15 else {
            return date.formatted(Date.ISO8601FormatStyle(includingFractionalSeconds: true))
        }
        let parts = Parts(interval)
        return String(unsafeUninitializedCapacity: parts.length) { parts.write(into: $0) }
    }

    /// Appends the UTF-8 text of ``string(from:)`` to a buffer, without making a string.
    ///
    /// - Parameters:
    ///   - date: The date.
    ///   - bytes: The buffer to extend.
    /// - Complexity: As ``string(from:)``.
    package static func append(_ date: Date, to bytes: inout [UInt8]) {
        let interval = date.timeIntervalSinceReferenceDate
        guard interval.magnitude < 9e15 else {
            bytes += string(from: date).utf8
            return
        }
        let parts = Parts(interval)
        let start = bytes.count
        bytes.append(contentsOf: repeatElement(0, count: parts.length))
        bytes.withUnsafeMutableBufferPointer { buffer in
            _ = parts.write(into: UnsafeMutableBufferPointer(rebasing: buffer[start...]))
        }
    }

    /// The pieces of a date's text: its whole seconds and the fraction above them.
    private struct Parts {
        /// Seconds since 1970-01-01 within the day.
        var secondOfDay: Int
        /// The calendar date.
        var year: Int, month: Int, day: Int
        /// The fraction's digits when they are not three milliseconds digits.
        var fraction: [UInt8]?
        /// The milliseconds, when `fraction` is nil.
        var milliseconds: Int
        /// Whether the year takes ISO 8601's expanded form.
        var isExpanded: Bool
        /// How many digits the year takes.
        var yearDigits: Int

        /// The parts of an interval since 2001 below 9 · 10¹⁵ seconds.
        init(_ interval: Double) {
            let whole = interval.rounded(.down)
            // Milliseconds, when they read back to the same double (the common case: no allocation).
            let milliseconds = ((interval - whole) * 1_000).rounded()
            if milliseconds < 1_000, (whole * 1_000 + milliseconds) / 1_000 == interval {
                (fraction, self.milliseconds) = (nil, Int(milliseconds))
            } else if let digits = ISO8601Text.fractionDigits(of: interval) {
                (fraction, self.milliseconds) = (digits, 0)
            } else {
                (fraction, self.milliseconds) = (nil, min(999, Int(milliseconds)))
            }
            var seconds = Int(whole) + 978_307_200
            let days = Int((Double(seconds) / 86_400).rounded(.down))
            seconds -= days * 86_400
            secondOfDay = seconds
            (year, month, day) = CivilCalendar.date(daysSince1970: days)
            isExpanded = !(0...9999).contains(year)
            yearDigits = isExpanded ? max(4, String(year.magnitude).count) : 4
        }

        /// The length of the text in bytes.
        var length: Int { 21 + (fraction?.count ?? 3) + yearDigits - 4 + (isExpanded ? 1 : 0) }

        /// Writes `YYYY-MM-DDTHH:MM:SS.` then the fraction (or three millisecond digits), then
        /// `Z`, into a buffer of at least ``length`` bytes.
        ///
        /// - Returns: The number of bytes written: ``length``.
        func write(into bytes: UnsafeMutableBufferPointer<UInt8>) -> Int {
            var position = 0
            func put(_ number: Int, digits: Int) {
                var rest = number
                for offset in stride(from: digits - 1, through: 0, by: -1) {
                    bytes[position + offset] = UInt8(48 + rest % 10)
                    rest /= 10
                }
                position += digits
            }
            func put(_ character: Unicode.Scalar) {
                bytes[position] = UInt8(ascii: character)
                position += 1
            }
            if isExpanded { put(year < 0 ? "-" : "+") }
            put(Int(year.magnitude), digits: yearDigits)
            put("-")
            put(month, digits: 2)
            put("-")
            put(day, digits: 2)
            put("T")
            put(secondOfDay / 3_600, digits: 2)
            put(":")
            put(secondOfDay / 60 % 60, digits: 2)
            put(":")
            put(secondOfDay % 60, digits: 2)
            put(".")
            if let fraction {
                for digit in fraction {
                    bytes[position] = digit
                    position += 1
                }
            } else {
                put(milliseconds, digits: 3)
            }
            put("Z")
            return position
        }
    }

    // MARK: - Reading

    /// The date of an ISO 8601 text: `YYYY-MM-DDTHH:MM:SS`, an optional fraction of any length,
    /// then `Z` or an offset `±HH:MM` (`±HHMM`, `±HH`).
    ///
    /// The decimal number of seconds the text stands for is rounded once to the nearest double,
    /// so text written by ``string(from:)`` reads back to exactly the date written.
    ///
    /// - Parameter text: The text.
    /// - Returns: The date, or nil when the text is not of that form or names no real time.
    /// - Complexity: O(*n*) in the length of the text.
    package static func date(from text: String) -> Date? {
        var scanner = Scanner(Array(text.utf8))
        let yearSign = scanner.sign()
        let yearDigits = scanner.digits()
        guard yearDigits.count == 4 || (yearSign != nil && yearDigits.count > 4 && yearDigits.count < 13) else {
            return nil
        }
        let year = yearDigits.reduce(0) { $0 * 10 + Int($1 - 48) } * (yearSign ?? 1)
        guard scanner.skip("-"),
            let month = scanner.number(digits: 2), scanner.skip("-"),
            let day = scanner.number(digits: 2), scanner.skip("T") || scanner.skip("t") || scanner.skip(" "),
            let hour = scanner.number(digits: 2), scanner.skip(":"),
            let minute = scanner.number(digits: 2), scanner.skip(":"),
            let second = scanner.number(digits: 2)
        else { return nil }
        var fraction: [UInt8] = []
        if scanner.skip(".") || scanner.skip(",") {
            fraction = scanner.digits()
            guard !fraction.isEmpty else { return nil }
        }
        var offset = 0
        if scanner.skip("Z") || scanner.skip("z") {
        } else if let sign = scanner.sign() {
            guard let hours = scanner.number(digits: 2) else { return nil }
            _ = scanner.skip(":")
            let minutes = scanner.atEnd ? 0 : scanner.number(digits: 2)
            guard let minutes, hours < 24, minutes < 60 else { return nil }
            offset = sign * (hours * 3_600 + minutes * 60)
        } else {
            return nil
        }
        guard scanner.atEnd, (1...12).contains(month), day >= 1, day <= CivilCalendar.daysIn(month: month, year: year),
            hour < 24, minute < 60, second < 61
        else { return nil }
        let days = CivilCalendar.daysSince1970(year: year, month: month, day: day)
        let wholeSeconds = days * 86_400 - 978_307_200 + hour * 3_600 + minute * 60 + second - offset
        return seconds(whole: wholeSeconds, fraction: fraction).map(Date.init(timeIntervalSinceReferenceDate:))
    }

    // MARK: - Non public

    /// Whole seconds since 2001 plus a decimal fraction (`fraction` digits after the point),
    /// rounded once to the nearest double.
    private static func seconds(whole: Int, fraction: [UInt8]) -> Double? {
        var digits = fraction[...]
        while digits.last == UInt8(ascii: "0") { digits.removeLast() }
        guard !digits.isEmpty else { return Double(whole) }
        // While whole · 10ⁿ + fraction · 10ⁿ stays below 2⁵³, it is an exact integer and 10ⁿ an
        // exact power: one division, which rounds once.
        if digits.count <= 15 {
            let power = exactPowerOfTen(digits.count)
            if Double(whole.magnitude + 1) * power < 9_007_199_254_740_992 {
                var scaled = 0
                for digit in digits { scaled = scaled * 10 + Int(digit - 48) }
                return (Double(whole) * power + Double(scaled)) / power
            }
        }
        // Otherwise the decimal text of the number, which `Double(_:)` rounds correctly. A whole
        // part below zero with a fraction above it is -((|whole| - 1) + (1 - fraction)).
        let text =
            whole >= 0
            ? String(whole) + "." + String(decoding: digits, as: UTF8.self)
            : "-" + String(-whole - 1) + "." + String(decoding: complement(Array(digits)), as: UTF8.self)
        return Double(text)
    }

    /// The fractional digits of an interval's shortest round-trip text, as they lie above the
    /// whole second below it; nil when the text has no plain form to take them from.
    private static func fractionDigits(of interval: Double) -> [UInt8]? {
        let text = Array(interval.magnitude.description.utf8)
        var integer: [UInt8]
        var fraction: [UInt8]
        var exponent = 0
        let mantissa: ArraySlice<UInt8>
        if let e = text.firstIndex(of: UInt8(ascii: "e")) {
            mantissa = text[..<e]
            guard let power = Int(String(decoding: text[(e + 1)...], as: UTF8.self)) else { return nil }
            exponent = power
        } else {
            mantissa = text[...]
        }
        if let point = mantissa.firstIndex(of: UInt8(ascii: ".")) {
            integer = Array(mantissa[..<point])
            fraction = Array(mantissa[(point + 1)...])
        } else {
            integer = Array(mantissa)
            fraction = []
        }
        // Shift the point by the exponent: digits move between the two parts.
        if exponent > 0 {
            let moved = min(exponent, fraction.count)
            integer += fraction.prefix(moved)
            fraction.removeFirst(moved)
        } else if exponent < 0 {
            let padding = [UInt8](repeating: UInt8(ascii: "0"), count: max(0, -exponent - integer.count))
            let all = padding + integer
            fraction = Array(all.suffix(-exponent)) + fraction
        }
        while fraction.last == UInt8(ascii: "0") { fraction.removeLast() }
        guard !fraction.isEmpty else { return [UInt8](repeating: UInt8(ascii: "0"), count: 3) }
        if interval < 0 { fraction = complement(fraction) }
        while fraction.count < 3 { fraction.append(UInt8(ascii: "0")) }
        return fraction
    }

    /// 1 - 0.d₁d₂…dₙ as n digits, for a fraction that is not zero: trailing zeros stay, the
    /// last other digit d becomes 10 - d, and every digit before it 9 - d.
    private static func complement(_ digits: [UInt8]) -> [UInt8] {
        var result = digits
        var index = digits.count - 1
        while index >= 0, digits[index] == UInt8(ascii: "0") { index -= 1 }
        guard index >= 0 else { return result }
        result[index] = UInt8(48 + 10 - Int(digits[index] - 48))
        for earlier in stride(from: index - 1, through: 0, by: -1) {
            result[earlier] = UInt8(48 + 9 - Int(digits[earlier] - 48))
        }
        return result
    }

    /// 10ⁿ as a double, exactly (n ≤ 22).
    private static func exactPowerOfTen(_ exponent: Int) -> Double {
        var power = 1.0
        for _ in 0..<exponent { power *= 10 }
        return power
    }

    /// Reads an ISO 8601 text byte by byte.
    private struct Scanner {
        var bytes: [UInt8]
        var position = 0

        init(_ bytes: [UInt8]) { self.bytes = bytes }

        var atEnd: Bool { position == bytes.count }

        mutating func skip(_ character: Unicode.Scalar) -> Bool {
            guard position < bytes.count, bytes[position] == UInt8(ascii: character) else { return false }
            position += 1
            return true
        }

        mutating func number(digits count: Int) -> Int? {
            guard position + count <= bytes.count else { return nil }
            var value = 0
            for byte in bytes[position..<position + count] {
                guard (48...57).contains(byte) else { return nil }
                value = value * 10 + Int(byte - 48)
            }
            position += count
            return value
        }

        mutating func digits() -> [UInt8] {
            let start = position
            while position < bytes.count, (48...57).contains(bytes[position]) { position += 1 }
            return Array(bytes[start..<position])
        }

        mutating func sign() -> Int? {
            if skip("+") { return 1 }
            if skip("-") { return -1 }
            return nil
        }
    }
}
