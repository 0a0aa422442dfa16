import Foundation

/// A `formatDate` format made only of four-digit years, two-digit months, days, hours, minutes
/// and seconds and literal text, written without a `DateFormatter`: what a migration formats
/// once per object.
///
/// The text is the one `DateFormatter` gives in UTC with the POSIX locale and the Gregorian
/// calendar, for dates from 1583 to 9999 (before 1583 that calendar switches to Julian dates);
/// ``string(from:)`` gives nil outside that range, and for any other format the initializer
/// fails, so that callers fall back to `DateFormatter`.
///
/// ```swift
/// let pattern = DatePattern("yyyy-MM-dd'T'HH:mm:ss")
/// pattern?.string(from: Date(timeIntervalSinceReferenceDate: 0))   // "2001-01-01T00:00:00"
/// ```
struct DatePattern: Sendable {
    /// A part of the format.
    private enum Part: Sendable {
        case literal(String)
        case year, month, day, hour, minute, second
    }

    private let parts: [Part]

    /// Reads a format; nil when it has a field other than `yyyy`, `MM`, `dd`, `HH`, `mm`, `ss`.
    ///
    /// - Complexity: O(*n*) in the length of the format.
    init?(_ format: String) {
        var parts: [Part] = []
        var literal = ""
        var characters = Array(format)[...]
        while let character = characters.first {
            if character == "'" {
                characters.removeFirst()
                // '' is a quote; 'text' is literal text, '' inside it a quote.
                if characters.first == "'" {
                    literal.append("'")
                    characters.removeFirst()
                    continue
                }
                var closed = false
                while let next = characters.popFirst() {
                    if next == "'" {
                        if characters.first == "'" {
                            literal.append("'")
                            characters.removeFirst()
                            continue
                        }
                        closed = true
                        break
                    }
                    literal.append(next)
                }
                guard closed else { return nil }
                continue
            }
            guard character.isASCII, character.isLetter else {
                literal.append(character)
                characters.removeFirst()
                continue
            }
            let run = characters.prefix { $0 == character }.count
            characters.removeFirst(run)
            let field: Part
            switch (character, run) {
            case ("y", 4): field = .year
            case ("M", 2): field = .month
            case ("d", 2): field = .day
            case ("H", 2): field = .hour
            case ("m", 2): field = .minute
            case ("s", 2): field = .second
            default: return nil
            }
            if !literal.isEmpty { parts.append(.literal(literal)) }
            literal = ""
            parts.append(field)
        }
        if !literal.isEmpty { parts.append(.literal(literal)) }
        self.parts = parts
    }

    // MARK: - Formatting

    /// The date's text, or nil outside the years 1583 to 9999.
    ///
    /// - Complexity: O(*n*) in the length of the format.
    func string(from date: Date) -> String? {
        // As ICU computes fields: milliseconds since 1970, days by floor division.
        let milliseconds = date.timeIntervalSince1970 * 1000
        guard milliseconds.isFinite else { return nil }
        let days = (milliseconds / 86_400_000).rounded(.down)
        guard abs(days) < 4_000_000 else { return nil }
        let remainder = milliseconds - days * 86_400_000
        guard remainder >= 0, remainder < 86_400_000 else { return nil }
        let inDay = Int(remainder) / 1000
        let (year, month, day) = Self.civil(fromDays: Int(days))
        guard (1583...9999).contains(year) else { return nil }
        var text = ""
        text.reserveCapacity(24)
        for part in parts {
            switch part {
            case .literal(let literal): text += literal
            case .year: Self.append(year, digits: 4, to: &text)
            case .month: Self.append(month, digits: 2, to: &text)
            case .day: Self.append(day, digits: 2, to: &text)
            case .hour: Self.append(inDay / 3600, digits: 2, to: &text)
            case .minute: Self.append(inDay / 60 % 60, digits: 2, to: &text)
            case .second: Self.append(inDay % 60, digits: 2, to: &text)
            }
        }
        return text
    }

    // MARK: - Non public

    /// The Gregorian year, month and day of a number of days since 1970-01-01.
    private static func civil(fromDays days: Int) -> (year: Int, month: Int, day: Int) {
        let z = days + 719_468
        let era = (z >= 0 ? z : z - 146_096) / 146_097
        let dayOfEra = z - era * 146_097
        let yearOfEra = (dayOfEra - dayOfEra / 1460 + dayOfEra / 36_524 - dayOfEra / 146_096) / 365
        let dayOfYear = dayOfEra - (365 * yearOfEra + yearOfEra / 4 - yearOfEra / 100)
        let shiftedMonth = (5 * dayOfYear + 2) / 153
        let day = dayOfYear - (153 * shiftedMonth + 2) / 5 + 1
        let month = shiftedMonth < 10 ? shiftedMonth + 3 : shiftedMonth - 9
        return (yearOfEra + era * 400 + (month <= 2 ? 1 : 0), month, day)
    }

    /// Appends a non-negative number with leading zeros.
    private static func append(_ value: Int, digits: Int, to text: inout String) {
        var buffer: (UInt8, UInt8, UInt8, UInt8) = (48, 48, 48, 48)
        var rest = value
        withUnsafeMutableBytes(of: &buffer) { bytes in
            for index in stride(from: digits - 1, through: 0, by: -1) {
                bytes[index] = UInt8(48 + rest % 10)
                rest /= 10
            }
            text += String(decoding: UnsafeRawBufferPointer(rebasing: bytes[0..<digits]), as: UTF8.self)
        }
    }
}
