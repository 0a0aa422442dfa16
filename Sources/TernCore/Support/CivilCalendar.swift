/// The proleptic Gregorian calendar as whole days counted from 1970-01-01, the arithmetic that
/// date texts are written and read with (Howard Hinnant's `civil_from_days` and
/// `days_from_civil`), for any year.
///
/// ```swift
/// CivilCalendar.date(daysSince1970: 0)                        // (1970, 1, 1)
/// CivilCalendar.daysSince1970(year: 2001, month: 1, day: 1)   // 11_323
/// ```
package enum CivilCalendar {
    /// The year, month and day of a day counted from 1970-01-01.
    ///
    /// - Parameter days: Days since 1970-01-01; negative before it.
    /// - Returns: The proleptic Gregorian date; year 0 is 1 BC.
    package static func date(daysSince1970 days: Int) -> (year: Int, month: Int, day: Int) {
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

    /// The day counted from 1970-01-01 of a date.
    ///
    /// - Parameters:
    ///   - year: The proleptic Gregorian year; 0 is 1 BC.
    ///   - month: 1 to 12.
    ///   - day: 1 to the month's length.
    /// - Returns: Days since 1970-01-01; negative before it.
    package static func daysSince1970(year: Int, month: Int, day: Int) -> Int {
        let shiftedYear = month <= 2 ? year - 1 : year
        let era = (shiftedYear >= 0 ? shiftedYear : shiftedYear - 399) / 400
        let yearOfEra = shiftedYear - era * 400
        let dayOfYear = (153 * (month > 2 ? month - 3 : month + 9) + 2) / 5 + day - 1
        let dayOfEra = yearOfEra * 365 + yearOfEra / 4 - yearOfEra / 100 + dayOfYear
        return era * 146_097 + dayOfEra - 719_468
    }

    /// The number of days in a month of a year.
    package static func daysIn(month: Int, year: Int) -> Int {
        switch month {
        case 2: (year % 4 == 0 && year % 100 != 0) || year % 400 == 0 ? 29 : 28
        case 4, 6, 9, 11: 30
        default: 31
        }
    }
}
