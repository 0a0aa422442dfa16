import Foundation
import TernCore

/// Reads little-endian integers and length-prefixed bytes, checking every length against the
/// bytes left: the reading half of the binary store format.
///
/// A count read from the file is never trusted to size an allocation: ``readCount(minimumSize:)``
/// refuses a count whose elements could not fit in the bytes that remain.
struct ByteReader: BinaryInput {
    let bytes: UnsafeRawBufferPointer
    let path: String
    private(set) var offset = 0

    init(_ bytes: UnsafeRawBufferPointer, path: String) {
        self.bytes = bytes
        self.path = path
    }

    var remaining: Int { bytes.count - offset }
    var isAtEnd: Bool { offset == bytes.count }

    mutating func readByte() throws(TernError) -> UInt8 {
        try need(1, "a byte")
        defer { offset += 1 }
        return bytes[offset]
    }

    mutating func readUInt32() throws(TernError) -> UInt32 {
        try need(4, "a 32-bit number")
        defer { offset += 4 }
        return UInt32(littleEndian: bytes.loadUnaligned(fromByteOffset: offset, as: UInt32.self))
    }

    mutating func readUInt64() throws(TernError) -> UInt64 {
        try need(8, "a 64-bit number")
        defer { offset += 8 }
        return UInt64(littleEndian: bytes.loadUnaligned(fromByteOffset: offset, as: UInt64.self))
    }

    /// Reads a count of items, each taking at least `minimumSize` bytes, and checks they can fit.
    mutating func readCount(minimumSize: Int) throws(TernError) -> Int {
        let count = Int(try readUInt32())
        guard count <= remaining / max(minimumSize, 1) else {
            throw corrupt("a list claims \(count) items, more than the \(remaining) bytes left can hold")
        }
        return count
    }

    mutating func readBytes(count: Int) throws(TernError) -> UnsafeRawBufferPointer {
        try need(count, "\(count) bytes")
        defer { offset += count }
        return UnsafeRawBufferPointer(rebasing: bytes[offset..<(offset + count)])
    }

    /// An error saying the file is damaged, and where.
    func corrupt(_ what: String) -> TernError {
        TernError(
            .unreadableStore,
            "the binary store is damaged: \(what) (at byte \(offset)); restore it from a backup", path: path)
    }

    private func need(_ count: Int, _ what: String) throws(TernError) {
        guard count >= 0, count <= remaining else { throw corrupt("the data ends before \(what)") }
    }
}

/// What the binary format's decoding reads from: a whole file in memory (``ByteReader``) or a
/// file read front to back through a buffer (``FileByteReader``).
protocol BinaryInput {
    /// The file's path, for error messages.
    var path: String { get }
    /// The bytes left to read.
    var remaining: Int { get }
    /// Reads one byte.
    mutating func readByte() throws(TernError) -> UInt8
    /// Reads a little-endian 32-bit number.
    mutating func readUInt32() throws(TernError) -> UInt32
    /// Reads a little-endian 64-bit number.
    mutating func readUInt64() throws(TernError) -> UInt64
    /// Reads a count of items, each taking at least `minimumSize` bytes, and checks they can fit.
    mutating func readCount(minimumSize: Int) throws(TernError) -> Int
    /// Reads `count` bytes, valid until the next read.
    mutating func readBytes(count: Int) throws(TernError) -> UnsafeRawBufferPointer
    /// An error saying the file is damaged, and where.
    func corrupt(_ what: String) -> TernError
}

extension BinaryInput {
    mutating func readInt64() throws(TernError) -> Int64 { Int64(bitPattern: try readUInt64()) }

    mutating func readDouble() throws(TernError) -> Double { Double(bitPattern: try readUInt64()) }

    /// Reads a 32-bit length, then that many bytes.
    mutating func readData() throws(TernError) -> Data {
        Data(try readBytes(count: readCount(minimumSize: 1)))
    }

    /// Reads a 32-bit length, then that many bytes of UTF-8.
    mutating func readString() throws(TernError) -> String {
        let raw = try readBytes(count: readCount(minimumSize: 1))
        guard let text = String(validating: raw, as: UTF8.self) else { throw corrupt("a string is not valid UTF-8") }
        return text
    }
}
