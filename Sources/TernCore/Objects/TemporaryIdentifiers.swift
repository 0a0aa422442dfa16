import Foundation
import Synchronization

/// The random parts of temporary object IDs, made without asking the system for randomness
/// each time: one random prefix per process and a counter.
///
/// `UUID()` reads the system's random source on every call, which cost more than the rest of
/// inserting an object. A temporary ID only has to differ from every other one in this process.
enum TemporaryIdentifiers {
    /// A fresh identifier, unique in this process: a random half and a counter, in the bit
    /// layout of a version 4 UUID.
    static func next() -> UUID {
        let count = counter.add(1, ordering: .relaxed).newValue
        let (high, low) = (prefix, UInt64(bitPattern: Int64(count)))
        return UUID(
            uuid: (
                UInt8(truncatingIfNeeded: high >> 56), UInt8(truncatingIfNeeded: high >> 48),
                UInt8(truncatingIfNeeded: high >> 40), UInt8(truncatingIfNeeded: high >> 32),
                UInt8(truncatingIfNeeded: high >> 24), UInt8(truncatingIfNeeded: high >> 16),
                UInt8(truncatingIfNeeded: high >> 8) & 0x0F | 0x40, UInt8(truncatingIfNeeded: high),
                UInt8(truncatingIfNeeded: low >> 56) & 0x3F | 0x80, UInt8(truncatingIfNeeded: low >> 48),
                UInt8(truncatingIfNeeded: low >> 40), UInt8(truncatingIfNeeded: low >> 32),
                UInt8(truncatingIfNeeded: low >> 24), UInt8(truncatingIfNeeded: low >> 16),
                UInt8(truncatingIfNeeded: low >> 8), UInt8(truncatingIfNeeded: low)
            ))
    }

    /// The random half, chosen once per process.
    private static let prefix = UInt64.random(in: .min ... .max)
    /// How many identifiers were made.
    private static let counter = Atomic<Int>(0)
}
