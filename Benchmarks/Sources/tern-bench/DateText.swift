import Foundation

/// Dates as text in UTC from seconds since 2001, written into a reused buffer with `gmtime_r`:
/// what hand-written C would do.
struct DateText {
    private var bytes = [UInt8](repeating: 0, count: 24)

    /// Calls `body` with `yyyy-MM-dd HH:mm:ss` (valid only during the call).
    mutating func format<Result>(_ seconds: Double, _ body: (UnsafeBufferPointer<UInt8>) throws -> Result) rethrows -> Result {
        fill(seconds)
        return try bytes.withUnsafeBufferPointer { try body(UnsafeBufferPointer(rebasing: $0[0..<19])) }
    }

    /// Calls `body` with ISO 8601 text with milliseconds, `yyyy-MM-ddTHH:mm:ss.SSSZ`.
    mutating func formatISO<Result>(_ seconds: Double, _ body: (UnsafeBufferPointer<UInt8>) throws -> Result) rethrows -> Result {
        fill(seconds)
        bytes[10] = 84
        put(Int32((seconds - seconds.rounded(.down)) * 1000), at: 20, digits: 3)
        (bytes[19], bytes[23]) = (46, 90)
        return try bytes.withUnsafeBufferPointer(body)
    }

    private mutating func fill(_ seconds: Double) {
        var time = time_t(Int64((seconds + 978_307_200).rounded(.down)))
        var parts = tm()
        gmtime_r(&time, &parts)
        put(parts.tm_year + 1900, at: 0, digits: 4)
        put(parts.tm_mon + 1, at: 5, digits: 2)
        put(parts.tm_mday, at: 8, digits: 2)
        put(parts.tm_hour, at: 11, digits: 2)
        put(parts.tm_min, at: 14, digits: 2)
        put(parts.tm_sec, at: 17, digits: 2)
        (bytes[4], bytes[7], bytes[10], bytes[13], bytes[16]) = (45, 45, 32, 58, 58)
    }

    private mutating func put(_ value: Int32, at index: Int, digits: Int) {
        var value = Int(value)
        for offset in stride(from: digits - 1, through: 0, by: -1) {
            bytes[index + offset] = UInt8(48 + value % 10)
            value /= 10
        }
    }
}
