import CZlib
import Foundation
import TernCore

#if canImport(Glibc)
import Glibc
#elseif canImport(Musl)
import Musl
#elseif canImport(Darwin)
import Darwin
#endif

/// Reads a file front to back through a buffer of bounded size: the streaming counterpart of
/// ``ByteReader``, with the same checks, for files too large to hold in memory.
///
/// Reads may not go past ``limit``, which starts as the file's size. Once
/// ``startChecksum()`` is called, every byte read from the file from there on goes into
/// ``checksum``, chunk by chunk as the buffer fills, not value by value.
final class FileByteReader: BinaryInput {
    /// The file's path, for error messages.
    let path: String
    /// The file's size in bytes.
    let fileSize: Int
    /// Where reads must stop: no value may extend past this offset of the file.
    var limit: Int
    /// The CRC-32 of the bytes read since ``startChecksum()``.
    private(set) var checksum: UInt = 0

    private let descriptor: Int32
    private var buffer: UnsafeMutableRawPointer
    private var capacity: Int
    /// The unread bytes are `buffer[start..<end]`.
    private var start = 0
    private var end = 0
    /// The file offset of `buffer[0]`.
    private var bufferOffset = 0
    private var isChecksumming = false

    /// Opens a file for reading.
    ///
    /// - Parameters:
    ///   - url: The file.
    ///   - bufferSize: The bytes read at a time; a value larger than the buffer grows it.
    /// - Throws: ``/TernCore/TernError/Code/unreadableStore`` when the file cannot be opened.
    init(url: URL, bufferSize: Int) throws(TernError) {
        path = url.path
        descriptor = open(url.path, O_RDONLY | O_CLOEXEC)
        guard descriptor >= 0 else {
            throw TernError(
                .unreadableStore,
                "could not open the binary store (\(String(cString: strerror(errno)))); check that the file exists and is readable",
                path: url.path)
        }
        var status = stat()
        guard fstat(descriptor, &status) == 0 else {
            close(descriptor)
            throw TernError(
                .unreadableStore, "could not read the binary store's size (\(String(cString: strerror(errno))))",
                path: url.path)
        }
        fileSize = Int(status.st_size)
        limit = fileSize
        capacity = max(bufferSize, 64)
        buffer = UnsafeMutableRawPointer.allocate(byteCount: capacity, alignment: 16)
    }

    deinit {
        close(descriptor)
        buffer.deallocate()
    }

    /// The file offset of the next byte to read.
    var offset: Int { bufferOffset + start }

    /// The bytes left before ``limit``.
    var remaining: Int { limit - offset }

    /// Starts the checksum at the next byte to read.
    func startChecksum() {
        checksum = crc32(0, nil, 0)
        if end > start {
            checksum = crc32(
                checksum, buffer.advanced(by: start).assumingMemoryBound(to: Bytef.self), uInt(end - start))
        }
        isChecksumming = true
    }

    func readByte() throws(TernError) -> UInt8 {
        try need(1, "a byte")
        defer { start += 1 }
        return buffer.load(fromByteOffset: start, as: UInt8.self)
    }

    func readUInt32() throws(TernError) -> UInt32 {
        try need(4, "a 32-bit number")
        defer { start += 4 }
        return UInt32(littleEndian: buffer.loadUnaligned(fromByteOffset: start, as: UInt32.self))
    }

    func readUInt64() throws(TernError) -> UInt64 {
        try need(8, "a 64-bit number")
        defer { start += 8 }
        return UInt64(littleEndian: buffer.loadUnaligned(fromByteOffset: start, as: UInt64.self))
    }

    func readCount(minimumSize: Int) throws(TernError) -> Int {
        let count = Int(try readUInt32())
        guard count <= remaining / max(minimumSize, 1) else {
            throw corrupt("a list claims \(count) items, more than the \(remaining) bytes left can hold")
        }
        return count
    }

    func readBytes(count: Int) throws(TernError) -> UnsafeRawBufferPointer {
        try need(count, "\(count) bytes")
        defer { start += count }
        return UnsafeRawBufferPointer(start: buffer.advanced(by: start), count: count)
    }

    func corrupt(_ what: String) -> TernError {
        TernError(
            .unreadableStore,
            "the binary store is damaged: \(what) (at byte \(offset)); restore it from a backup", path: path)
    }

    // MARK: - Non public

    /// Makes sure `count` bytes are in the buffer, reading more of the file if needed.
    @inline(__always)
    private func need(_ count: Int, _ what: @autoclosure () -> String) throws(TernError) {
        guard count >= 0, count <= remaining else { throw corrupt("the data ends before \(what())") }
        if end - start < count { try fill(count, what()) }
    }

    /// Moves the unread bytes to the front of the buffer, grows it when `count` does not fit,
    /// and reads until `count` bytes are there.
    private func fill(_ count: Int, _ what: String) throws(TernError) {
        let unread = end - start
        if start > 0 {
            if unread > 0 { buffer.copyMemory(from: buffer.advanced(by: start), byteCount: unread) }
            bufferOffset += start
            start = 0
            end = unread
        }
        if count > capacity {
            let larger = UnsafeMutableRawPointer.allocate(byteCount: count, alignment: 16)
            larger.copyMemory(from: buffer, byteCount: end)
            buffer.deallocate()
            buffer = larger
            capacity = count
        }
        while end < count {
            let read = Foundation.read(descriptor, buffer.advanced(by: end), capacity - end)
            if read < 0 {
                if errno == EINTR { continue }
                throw TernError(
                    .unreadableStore, "could not read the binary store (\(String(cString: strerror(errno))))",
                    path: path)
            }
            guard read > 0 else { throw corrupt("the data ends before \(what)") }
            if isChecksumming {
                checksum = crc32(checksum, buffer.advanced(by: end).assumingMemoryBound(to: Bytef.self), uInt(read))
            }
            end += read
        }
    }
}
