import Foundation

/// Dates as text in UTC from seconds since 2001, written with `gmtime_r` into a buffer on the
/// stack: what hand-written C would do. Making one costs nothing, so a policy may make one per
/// object as the baseline makes one per run.
struct DateText {
    /// The length of the ISO 8601 form, the longer one.
    private static let capacity = 24

    /// Calls `body` with `yyyy-MM-dd HH:mm:ss` (valid only during the call).
    mutating func format<Result>(_ seconds: Double, _ body: (UnsafeBufferPointer<UInt8>) throws -> Result) rethrows
        -> Result
    {
        try withUnsafeTemporaryAllocation(of: UInt8.self, capacity: Self.capacity) { bytes in
            Self.fill(seconds, into: bytes)
            return try body(UnsafeBufferPointer(rebasing: bytes[0..<19]))
        }
    }

    /// Calls `body` with ISO 8601 text with milliseconds, `yyyy-MM-ddTHH:mm:ss.SSSZ`.
    mutating func formatISO<Result>(_ seconds: Double, _ body: (UnsafeBufferPointer<UInt8>) throws -> Result) rethrows
        -> Result
    {
        try withUnsafeTemporaryAllocation(of: UInt8.self, capacity: Self.capacity) { bytes in
            Self.fill(seconds, into: bytes)
            bytes[10] = 84
            Self.put(Int32((seconds - seconds.rounded(.down)) * 1000), at: 20, digits: 3, into: bytes)
            (bytes[19], bytes[23]) = (46, 90)
            return try body(UnsafeBufferPointer(bytes))
        }
    }

    private static func fill(_ seconds: Double, into bytes: UnsafeMutableBufferPointer<UInt8>) {
        var time = time_t(Int64((seconds + 978_307_200).rounded(.down)))
        var parts = tm()
        gmtime_r(&time, &parts)
        put(parts.tm_year + 1900, at: 0, digits: 4, into: bytes)
        put(parts.tm_mon + 1, at: 5, digits: 2, into: bytes)
        put(parts.tm_mday, at: 8, digits: 2, into: bytes)
        put(parts.tm_hour, at: 11, digits: 2, into: bytes)
        put(parts.tm_min, at: 14, digits: 2, into: bytes)
        put(parts.tm_sec, at: 17, digits: 2, into: bytes)
        (bytes[4], bytes[7], bytes[10], bytes[13], bytes[16]) = (45, 45, 32, 58, 58)
    }

    private static func put(_ value: Int32, at index: Int, digits: Int, into bytes: UnsafeMutableBufferPointer<UInt8>) {
        var value = Int(value)
        for offset in stride(from: digits - 1, through: 0, by: -1) {
            bytes[index + offset] = UInt8(48 + value % 10)
            value /= 10
        }
    }
}
