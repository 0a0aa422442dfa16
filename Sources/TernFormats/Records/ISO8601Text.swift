import Foundation

/// Dates as ISO 8601 UTC text with milliseconds (`2011-05-09T11:30:53.000Z`), the text of
/// `Date.ISO8601FormatStyle(includingFractionalSeconds: true)` made without a format style:
/// exports write one per date value, and the style costs more than the rest of a record.
///
/// ```swift
/// ISO8601Text.string(from: Date(timeIntervalSinceReferenceDate: 0))   // "2001-01-01T00:00:00.000Z"
/// ```
enum ISO8601Text {
    /// The text of a date; milliseconds are truncated toward the past, as the format style does.
    ///
    /// - Parameter date: The date.
    /// - Returns: `YYYY-MM-DDTHH:MM:SS.mmmZ`; the format style's own text outside years 1 to 9999.
    static func string(from date: Date) -> String {
        let interval = date.timeIntervalSinceReferenceDate
        // From 0001-01-02 to 9999-12-31, in seconds from 2001: four-digit years, and a day to spare.
        guard interval > -63_113_817_600, interval < 252_423_907_200 else {
            return date.formatted(Date.ISO8601FormatStyle(includingFractionalSeconds: true))
        }
        let whole = interval.rounded(.down)
        let milliseconds = min(999, Int(((interval - whole) * 1_000).rounded(.down)))
        var seconds = Int(whole) + 978_307_200
        let days = Int((Double(seconds) / 86_400).rounded(.down))
        seconds -= days * 86_400
        let (year, month, day) = civil(daysSince1970: days)
        // The 24 bytes are written in place: one allocation, no appending scalar by scalar.
        return String(unsafeUninitializedCapacity: 24) { bytes in
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
            put(year, digits: 4)
            put("-")
            put(month, digits: 2)
            put("-")
            put(day, digits: 2)
            put("T")
            put(seconds / 3_600, digits: 2)
            put(":")
            put(seconds / 60 % 60, digits: 2)
            put(":")
            put(seconds % 60, digits: 2)
            put(".")
            put(milliseconds, digits: 3)
            put("Z")
            return position
        }
    }

    /// The proleptic Gregorian date of a day counted from 1970-01-01 (Howard Hinnant's
    /// `civil_from_days`).
    private static func civil(daysSince1970 days: Int) -> (year: Int, month: Int, day: Int) {
        let shifted = days + 719_468
        let era = (shifted >= 0 ? shifted : shifted - 146_096) / 146_097
        let dayOfEra = shifted - era * 146_097
        let yearOfEra = (dayOfEra - dayOfEra / 1_460 + dayOfEra / 36_524 - dayOfEra / 146_096) / 365
        let dayOfYear = dayOfEra - (365 * yearOfEra + yearOfEra / 4 - yearOfEra / 100)
        let shiftedMonth = (5 * dayOfYear + 2) / 153
        let day = dayOfYear - (153 * shiftedMonth + 2) / 5 + 1
        let month = shiftedMonth < 10 ? shiftedMonth + 3 : shiftedMonth - 9
        return (yearOfEra + era * 400 + (month <= 2 ? 1 : 0), month, day)
    }
}
