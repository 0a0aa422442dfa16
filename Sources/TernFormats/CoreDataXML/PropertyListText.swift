import Foundation
import TernCore

/// The text of scalar values in Apple's XML property lists, read and written as Core
/// Foundation does: integers in decimal, reals with 17 significant digits (`nan`,
/// `+infinity`, `-infinity`), dates in ISO 8601 UTC (`2001-01-01T00:00:00Z`).
enum PropertyListText {
    /// Seconds from 1970-01-01 to 2001-01-01, the reference date, in days.
    private static let referenceDay: Int64 = 11_323

    /// An integer: decimal digits with an optional sign.
    static func integer(_ text: String) -> Int64? {
        Int64(text.hasPrefix("+") ? String(text.dropFirst()) : text)
    }

    /// A real: decimal, `nan` or an infinity.
    static func real(_ text: String) -> Double? {
        Double(text)
    }

    /// A real as Core Foundation writes it: every double round-trips.
    static func text(ofReal value: Double) -> String {
        if value.isNaN { return "nan" }
        if value.isInfinite { return value < 0 ? "-infinity" : "+infinity" }
        if value == 0 { return value.sign == .minus ? "-0.0" : "0.0" }
        return String(format: "%.17g", value)
    }

    /// A date in ISO 8601 UTC, with an optional fraction of a second.
    static func date(_ text: String) -> Date? {
        let scalars = Array(text.utf8)
        var index = 0
        func number(_ digits: Int) -> Int64? {
            guard index + digits <= scalars.count else { return nil }
            var value: Int64 = 0
            for byte in scalars[index..<index + digits] {
                guard (UInt8(ascii: "0")...UInt8(ascii: "9")).contains(byte) else { return nil }
                value = value * 10 + Int64(byte - UInt8(ascii: "0"))
            }
            index += digits
            return value
        }
        func expect(_ character: Character) -> Bool {
            guard index < scalars.count, scalars[index] == character.asciiValue else { return false }
            index += 1
            return true
        }
        let negative = expect("-")
        guard let year = number(4), expect("-"), let month = number(2), expect("-"), let day = number(2),
            expect("T"), let hour = number(2), expect(":"), let minute = number(2), expect(":"),
            let second = number(2), (1...12).contains(month), (1...31).contains(day), hour < 24, minute < 60,
            second < 61
        else { return nil }
        var fraction = 0.0
        if expect(".") {
            let start = index
            while index < scalars.count, (UInt8(ascii: "0")...UInt8(ascii: "9")).contains(scalars[index]) { index += 1 }
            guard index > start, let value = Double("0." + String(decoding: scalars[start..<index], as: UTF8.self))
            else { return nil }
            fraction = value
        }
        guard expect("Z"), index == scalars.count else { return nil }
        let days =
            Int64(CivilCalendar.daysSince1970(year: Int(negative ? -year : year), month: Int(month), day: Int(day)))
            - referenceDay
        let whole = days * 86_400 + hour * 3_600 + minute * 60 + second
        return Date(timeIntervalSinceReferenceDate: Double(whole) + fraction)
    }

    /// A date as Core Foundation writes it (`yyyy-MM-ddTHH:mm:ssZ`); a date with a fraction of a
    /// second, which Core Foundation truncates, keeps it (`…:ss.789012Z`) so that it round-trips.
    /// Nil for dates too far from 2001 to have a calendar date.
    static func text(ofDate date: Date) -> String? {
        let interval = date.timeIntervalSinceReferenceDate
        guard interval.isFinite, abs(interval) < 1e17 else { return nil }
        let whole = interval.rounded(.down)
        let seconds = Int64(whole)
        var days = seconds / 86_400
        var rest = seconds % 86_400
        if rest < 0 {
            days -= 1
            rest += 86_400
        }
        let civil = CivilCalendar.date(daysSince1970: Int(days + referenceDay))
        let (year, month, day) = (Int64(civil.year), Int64(civil.month), Int64(civil.day))
        var text = year < 0 ? "-" : ""
        text += pad(abs(year), 4) + "-" + pad(month, 2) + "-" + pad(day, 2)
        text += "T" + pad(rest / 3_600, 2) + ":" + pad(rest / 60 % 60, 2) + ":" + pad(rest % 60, 2)
        let fraction = interval - whole
        if fraction > 0 { text += "." + fractionDigits(fraction) }
        return text + "Z"
    }

    // MARK: - Non public

    private static func pad(_ value: Int64, _ width: Int) -> String {
        let digits = String(value)
        return String(repeating: "0", count: max(0, width - digits.count)) + digits
    }

    /// The digits after the point of the shortest decimal that reads back as `fraction`
    /// (0 < fraction < 1), in fixed notation.
    private static func fractionDigits(_ fraction: Double) -> String {
        let shortest = "\(fraction)"  // "0.789012" or "1.5e-07"
        guard let exponentMark = shortest.firstIndex(of: "e") else {
            return String(shortest.drop { $0 != "." }.dropFirst())
        }
        let mantissa = shortest[..<exponentMark].filter { $0 != "." }
        let exponent = Int(shortest[shortest.index(after: exponentMark)...]) ?? 0
        return String(repeating: "0", count: max(0, -exponent - 1)) + mantissa
    }
}
