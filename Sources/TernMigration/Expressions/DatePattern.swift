import Foundation
import TernCore

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
    private enum Part: Sendable, Hashable {
        case literal([UInt8])
        case year, month, day, hour, minute, second
    }

    private let parts: [Part]
    /// The length of the text in bytes.
    private let length: Int

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
            if !literal.isEmpty { parts.append(.literal(Array(literal.utf8))) }
            literal = ""
            parts.append(field)
        }
        if !literal.isEmpty { parts.append(.literal(Array(literal.utf8))) }
        self.parts = parts
        self.length = parts.reduce(0) { total, part in
            switch part {
            case .literal(let bytes): total + bytes.count
            case .year: total + 4
            default: total + 2
            }
        }
    }

    /// The format as SQLite's `strftime` writes it (`%Y`, `%m`, `%d`, `%H`, `%M`, `%S`, literal
    /// text with `%` doubled): the same text for the whole seconds of dates from 1583 to 9999.
    var strftimeFormat: String {
        parts.map { part in
            switch part {
            case .literal(let bytes): String(decoding: bytes, as: UTF8.self).replacingOccurrences(of: "%", with: "%%")
            case .year: "%Y"
            case .month: "%m"
            case .day: "%d"
            case .hour: "%H"
            case .minute: "%M"
            case .second: "%S"
            }
        }.joined()
    }

    /// Where the fields of a format with a year, a month and a day sit in its text: the 1-based
    /// positions, in Unicode scalars, that SQL's `substr` reads (#24). Nil when one of the three
    /// is missing (`DateFormatter` fills a missing one in its own way). A field written twice is
    /// read where it first appears; reading its text back checks that the others agree.
    var fieldPositions: BulkMapping.DateFields? {
        var positions: [Part: Int] = [:]
        var position = 1
        for part in parts {
            switch part {
            case .literal(let bytes):
                position += String(decoding: bytes, as: UTF8.self).unicodeScalars.count
                continue
            case .year:
                if positions[.year] == nil { positions[.year] = position }
                position += 4
            default:
                if positions[part] == nil { positions[part] = position }
                position += 2
            }
        }
        guard let year = positions[.year], let month = positions[.month], let day = positions[.day] else {
            return nil
        }
        return BulkMapping.DateFields(
            year: year, month: month, day: day, hour: positions[.hour], minute: positions[.minute],
            second: positions[.second])
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
        let (year, month, day) = CivilCalendar.date(daysSince1970: Int(days))
        guard (1583...9999).contains(year) else { return nil }
        let (hour, minute, second) = (inDay / 3600, inDay / 60 % 60, inDay % 60)
        return String(unsafeUninitializedCapacity: length) { buffer in
            var end = 0
            for part in parts {
                switch part {
                case .literal(let bytes):
                    for byte in bytes {
                        buffer[end] = byte
                        end += 1
                    }
                case .year: Self.put(year, digits: 4, into: buffer, at: &end)
                case .month: Self.put(month, digits: 2, into: buffer, at: &end)
                case .day: Self.put(day, digits: 2, into: buffer, at: &end)
                case .hour: Self.put(hour, digits: 2, into: buffer, at: &end)
                case .minute: Self.put(minute, digits: 2, into: buffer, at: &end)
                case .second: Self.put(second, digits: 2, into: buffer, at: &end)
                }
            }
            return end
        }
    }

    // MARK: - Non public

    /// Writes a non-negative number with leading zeros and moves `end` past it.
    private static func put(
        _ value: Int, digits: Int, into buffer: UnsafeMutableBufferPointer<UInt8>, at end: inout Int
    ) {
        var rest = value
        for index in stride(from: end + digits - 1, through: end, by: -1) {
            buffer[index] = UInt8(48 + rest % 10)
            rest /= 10
        }
        end += digits
    }
}
