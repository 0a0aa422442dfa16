import Foundation
import TernCore

/// Appends little-endian integers and length-prefixed bytes: the writing half of the binary
/// store format.
struct ByteWriter {
    private(set) var bytes: [UInt8] = []

    /// The number of bytes appended since the last ``removeAll()``.
    var count: Int { bytes.count }

    /// Calls `body` with the bytes, keeping its typed error.
    func withBytes(_ body: (UnsafeRawBufferPointer) throws(TernError) -> Void) throws(TernError) {
        var failure: TernError?
        bytes.withUnsafeBytes { raw in
            do throws(TernError) {
                try body(raw)
            } catch {
                failure = error
            }
        }
        if let failure { throw failure }
    }

    /// Forgets the bytes, keeping their room for the next ones.
    mutating func removeAll() { bytes.removeAll(keepingCapacity: true) }

    mutating func append(_ value: UInt8) { bytes.append(value) }

    mutating func append(contentsOf data: some Sequence<UInt8>) { bytes.append(contentsOf: data) }

    mutating func append(_ value: UInt32) {
        withUnsafeBytes(of: value.littleEndian) { bytes.append(contentsOf: $0) }
    }

    mutating func append(_ value: UInt64) {
        withUnsafeBytes(of: value.littleEndian) { bytes.append(contentsOf: $0) }
    }

    mutating func append(_ value: Int64) { append(UInt64(bitPattern: value)) }

    mutating func append(_ value: Double) { append(value.bitPattern) }

    /// Appends a count or index, which the format stores as 32 bits.
    mutating func appendCount(_ count: Int) throws(TernError) {
        guard let value = UInt32(exactly: count) else {
            throw TernError(
                .unwritableStore, "a binary store holds at most \(UInt32.max) items or bytes per list or value")
        }
        append(value)
    }

    /// Appends a 32-bit length, then the bytes.
    mutating func appendBytes(_ data: some Collection<UInt8>) throws(TernError) {
        try appendCount(data.count)
        bytes.append(contentsOf: data)
    }

    mutating func appendString(_ text: String) throws(TernError) {
        try appendBytes(text.utf8)
    }
}
